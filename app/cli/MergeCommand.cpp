// MergeCommand.cpp — headlab-cli merge: fold the shards' run files into the session, and plan a search's next round (the command table: CliCommands.cpp).
#include "CliOptions.h"
#include "Commands.h"

#include "core/lab/SweepSession.h"
#include "core/session/Session.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

namespace headlab::cli {

// Folds the shards' run files into the session file (atomic, idempotent; takes what has finished
// while shards still run). Run files that are not runs of the session's sweep are named and left
// where they are.
int mergeCommand(const std::string &sessionPath)
{
    Session session = loadSweepRuns(sessionPath);
    expandSweep(session);
    // A search plans its next round from the merged results (once all shards are done).
    const int planned = session.search && SessionStore::runningShards(sessionPath).empty()
                            ? planSearchRound(session)
                            : 0;
    SessionStore store(sessionPath, {}, SessionStore::Role::Merger);
    store.saveSession(session);
    if (session.search) {
        const SearchReport report = searchReport(session);
        if (planned > 0)
            std::printf("%s: round %d planned: %d runs to train (run the shards again)\n",
                        sessionPath.c_str(), report.rounds - 1, planned);
        else if (report.finished)
            std::printf("%s: the search is finished\n", sessionPath.c_str());
    }
    const SweepCounts c = countRuns(session);
    std::printf("%s: merged %d results (%d done, %d diverged, %d failed), %d runs still to train\n",
                sessionPath.c_str(), c.done + c.diverged + c.failed, c.done, c.diverged, c.failed,
                c.unfinished);
    for (const auto &line : SessionStore::runningShards(sessionPath))
        std::printf("  still running: %s\n", line.c_str());
    return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// The command: its options and help (CLI11), registered with the command table.

namespace {

CommandAction defineMerge(CLI::App &app)
{
    struct Arguments {
        std::string session;
    };
    auto a = std::make_shared<Arguments>();
    CLI::App *merge = app.add_subcommand(
        "merge", "Fold the results of shards (run --shard) into the session file");
    merge->footer("Atomic and idempotent; while shards still run it takes what has finished. "
                  "Refuses run files whose\n"
                  "config is not a run of the session's sweep, naming each.");
    merge->add_option("session", a->session, "The session file (SESSION.yaml)")->required();
    return {merge, [a] { return mergeCommand(a->session); }};
}

const CommandRegistration kMergeCommand(60, defineMerge);

} // namespace

} // namespace headlab::cli
