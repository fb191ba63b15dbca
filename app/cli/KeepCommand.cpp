// KeepCommand.cpp — headlab-cli keep: mark a finished run's checkpoints that prune and the budget keep (the command table: CliCommands.cpp).
#include "CliOptions.h"
#include "Commands.h"

#include "core/lab/SweepSession.h"
#include "core/session/Session.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace headlab::cli {

// Marks a finished run's checkpoints as ones that `prune` and the budget keep (or, with `off`,
// takes the mark away), and saves the run's file.
int keepCommand(const std::string &sessionPath, const std::string &runText,
                const std::vector<long long> &steps, bool off)
{
    try {
        Session session = loadSweepRuns(sessionPath);
        expandSweep(session);
        std::string error;
        const int row = findRun(session, runText, &error);
        if (row < 0) {
            std::fprintf(stderr, "headlab-cli keep: %s: %s\n", sessionPath.c_str(), error.c_str());
            return kExitBadInput;
        }
        for (long long step : steps) markCheckpoint(session, row, step, !off);
        SessionStore store(sessionPath); // the writer lock: refused while the session trains
        store.saveRun(session.runs[size_t(row)]);
        for (long long step : steps)
            std::printf("%s: run %d's checkpoint at step %lld %s\n", sessionPath.c_str(), row, step,
                        off ? "is no longer marked: `prune` may remove it"
                            : "is marked: `prune` and the checkpoint budget keep it");
        return kExitOk;
    } catch (const SessionError &e) {
        std::fprintf(stderr, "headlab-cli keep: %s: %s\n", sessionPath.c_str(), e.what());
        return kExitBadInput;
    }
}

// ---------------------------------------------------------------------------------------------
// The command: its options and help (CLI11), registered with the command table.

namespace {

CommandAction defineKeep(CLI::App &app)
{
    struct Arguments {
        std::string session, markRun;     // the run
        std::vector<long long> markSteps; // its checkpoints' steps
        bool unmark = false;              // --off
    };
    auto a = std::make_shared<Arguments>();
    CLI::App *keep = app.add_subcommand(
        "keep", "Mark a finished run's checkpoints so that prune and the budget keep them");
    keep->footer("The mark is written in the run's file (`keep: true` in its checkpoint list) and "
                 "read by the\n"
                 "app's Inside the heads view, which can set it too. --off takes it away.");
    keep->add_option("session", a->session, "The session file (SESSION.yaml)")->required();
    keep->add_option("--run", a->markRun, "The run: its row (0-based) or its result file's hash")
        ->required();
    keep->add_option("--step", a->markSteps, "The checkpoints' steps (comma-separated)")
        ->required()
        ->delimiter(',')
        ->check(checkpointStepValidator());
    keep->add_flag("--off", a->unmark, "Take the mark away instead");
    return {keep, [a] { return keepCommand(a->session, a->markRun, a->markSteps, a->unmark); }};
}

const CommandRegistration kKeepCommand(100, defineKeep);

} // namespace

} // namespace headlab::cli
