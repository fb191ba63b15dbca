// PruneCommand.cpp — headlab-cli prune: free finished runs' checkpoints (the command table: CliCommands.cpp).
#include "CliOptions.h"
#include "Commands.h"

#include "core/lab/SweepSession.h"
#include "core/session/Session.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
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

// ---------------------------------------------------------------------------------------------
// The command: its options and help (CLI11), registered with the command table.

namespace {

CommandAction definePrune(CLI::App &app)
{
    struct Arguments {
        std::string session;
        std::vector<std::string> keep = {"final", "plateau"};
        bool dryRun = false;
    };
    auto a = std::make_shared<Arguments>();
    CLI::App *prune = app.add_subcommand(
        "prune", "Remove finished runs' checkpoints, keeping the final and plateau ones");
    prune->footer("Checkpoints of done, diverged and failed runs whose reason is not kept are "
                  "removed, with files\n"
                  "their run no longer lists; unfinished runs keep theirs (they resume from "
                  "them). Takes the\n"
                  "session's lock: refused while the session trains. `status` shows the disk "
                  "used.");
    prune->add_option("session", a->session, "The session file (SESSION.yaml)")->required();
    prune
        ->add_option("--keep", a->keep,
                     "Reasons kept: final, plateau (entry and exit), periodic, stop, or none "
                     "(default: final plateau)")
        ->delimiter(',');
    prune->add_flag("--dry-run", a->dryRun, "Count what would be removed; remove nothing");
    return {prune, [a] { return pruneCommand(a->session, a->keep, a->dryRun); }};
}

const CommandRegistration kPruneCommand(90, definePrune);

} // namespace

} // namespace headlab::cli
