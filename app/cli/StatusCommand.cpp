// StatusCommand.cpp — headlab-cli status: the progress of a sweep that other processes write, and its disk (the command table: CliCommands.cpp).
#include "CliOptions.h"
#include "Commands.h"

#include "core/config/Files.h"
#include "core/lab/SweepSession.h"
#include "core/session/Session.h"
#include "core/train/Checkpoint.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace headlab::cli {

// The progress of a sweep written by other processes or machines: finished runs from the run
// files, the shards running now.
int statusCommand(const std::string &sessionPath)
{
    Session session = loadSessionReporting(sessionPath);
    expandSweep(session);
    const SweepCounts c = countRuns(session);
    const int total = int(session.runs.size()), finished = c.done + c.diverged + c.failed;
    // Runs in the part of a shard (or the whole sweep) that runs now are in training, whatever
    // their stored status says (a run file is written when a run ends).
    const auto active = activeRuns(session, sessionPath);
    std::set<int> training;
    std::map<std::string, std::vector<int64_t>> byTrainer; // trainer -> its runs' checkpoint steps
    for (const auto &a : active) {
        training.insert(a.runIndex);
        byTrainer[a.trainer].push_back(a.step);
    }
    int stopped = 0;
    for (size_t i = 0; i < session.runs.size(); ++i)
        stopped += session.runs[i].result.status == RunStatus::Stopped && !training.count(int(i));
    std::printf("%s: %d of %d runs finished (%d done, %d diverged, %d failed), %zu in training "
                "now, %d stopped (they "
                "resume from their checkpoints), %d not started\n",
                sessionPath.c_str(), finished, total, c.done, c.diverged, c.failed, training.size(),
                stopped, total - finished - int(training.size()) - stopped);
    for (const auto &[trainer, steps] : byTrainer) {
        std::string where;
        int withCheckpoint = 0;
        for (const int64_t step : steps)
            if (step >= 0) where += (withCheckpoint++ ? ", " : "") + std::to_string(step);
        std::printf("  running: %s: %zu runs to train%s\n", trainer.c_str(), steps.size(),
                    withCheckpoint ? (", checkpoints at steps " + where).c_str()
                                   : ", no checkpoint yet");
    }
    {
        const std::string results = resultsDirFor(sessionPath);
        const uint64_t runs = directoryBytes(results + "/runs"),
                       checkpoints = directoryBytes(results + "/checkpoints");
        std::printf("  disk: %.1f MB (run files %.1f MB, checkpoints %.1f MB; `headlab-cli "
                    "prune` frees finished runs' checkpoints)\n",
                    double(runs + checkpoints) / 1e6, double(runs) / 1e6,
                    double(checkpoints) / 1e6);
    }
    if (active.empty()) {
        for (const auto &line : SessionStore::runningShards(sessionPath))
            std::printf("  running: %s (its runs are finished)\n", line.c_str());
        if (SessionStore::lockHolder(sessionPath).empty() &&
            SessionStore::runningShards(sessionPath).empty())
            std::printf("  nothing is running\n");
    }
    return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// The command: its options and help (CLI11), registered with the command table.

namespace {

CommandAction defineStatus(CLI::App &app)
{
    struct Arguments {
        std::string session;
    };
    auto a = std::make_shared<Arguments>();
    CLI::App *status =
        app.add_subcommand("status", "Progress of a sweep run by other processes or machines");
    status->add_option("session", a->session, "The session file (SESSION.yaml)")->required();
    return {status, [a] { return statusCommand(a->session); }};
}

const CommandRegistration kStatusCommand(80, defineStatus);

} // namespace

} // namespace headlab::cli
