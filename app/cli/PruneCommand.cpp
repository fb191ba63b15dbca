// PruneCommand.cpp — headlab-cli prune: free finished runs' checkpoints (the command table: CliCommands.cpp).
#include "Commands.h"

#include "core/lab/SweepSession.h"
#include "core/session/Session.h"

#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace headlab::cli {

// Frees the disk of finished runs' checkpoints, keeping those whose reason is in `keep`.
int pruneCommand(const std::string &sessionPath, const std::vector<std::string> &keepList,
                 bool dryRun)
{
    static const std::set<std::string> kReasons = {"final", "periodic", "stop", "plateau_entry",
                                                   "plateau_exit"};
    std::set<std::string> keep;
    for (const auto &reason : keepList) {
        if (reason == "plateau") {
            keep.insert({"plateau_entry", "plateau_exit"});
        } else if (reason == "none") {
        } else if (kReasons.count(reason)) {
            keep.insert(reason);
        } else {
            std::fprintf(stderr,
                         "headlab-cli prune: --keep: '%s' is not a checkpoint reason (final, "
                         "plateau, plateau_entry, plateau_exit, periodic, stop, none)\n",
                         reason.c_str());
            return kExitBadInput;
        }
    }
    Session session = loadSweepRuns(sessionPath);
    expandSweep(session);
    // The session's writer lock: never while it trains (its runs' checkpoints are in use).
    std::optional<SessionStore> store;
    if (!dryRun) store.emplace(sessionPath);
    const PruneSummary p = pruneCheckpoints(session, sessionPath, keep, dryRun);
    if (store) store->saveSession(session);
    std::string kept;
    for (const auto &k : keep) kept += (kept.empty() ? "" : ", ") + k;
    if (p.marked > 0)
        kept += (kept.empty() ? "" : ", ") + std::to_string(p.marked) + " marked to keep";
    std::printf("%s: %s %d checkpoint files of %d finished runs (%.1f MB); kept %d (%.1f MB: "
                "%s)\n",
                sessionPath.c_str(), dryRun ? "would remove" : "removed", p.removed, p.runs,
                double(p.bytesFreed) / 1e6, p.kept, double(p.bytesKept) / 1e6,
                kept.empty() ? "none" : kept.c_str());
    for (const auto &line : p.leftAlone) std::fprintf(stderr, "%s\n", line.c_str());
    for (const auto &line : p.problems) std::fprintf(stderr, "%s\n", line.c_str());
    return p.problems.empty() ? kExitOk : kExitRunFailed;
}

} // namespace headlab::cli
