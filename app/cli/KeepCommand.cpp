// KeepCommand.cpp — headlab-cli keep: mark a finished run's checkpoints that prune and the budget keep (the command table: CliCommands.cpp).
#include "Commands.h"

#include "core/lab/SweepSession.h"
#include "core/session/Session.h"

#include <cstdio>
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

} // namespace headlab::cli
