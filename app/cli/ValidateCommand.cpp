// ValidateCommand.cpp — headlab-cli validate: whether a session reads and what it would train (the command table: CliCommands.cpp).
#include "Commands.h"

#include "core/session/Search.h"
#include "core/session/Session.h"

#include <cstdio>
#include <string>

namespace headlab::cli {

int validateCommand(const std::string &path)
{
    Session session;
    session = loadSessionReporting(path);
    expandSweep(session);
    const size_t pending = pendingRuns(session).size();
    size_t missing = 0; // runs of the sweep whose finished result's file is gone
    for (const auto &run : session.runs)
        missing += !isFinished(run.result.status) &&
                   session.missingRunFiles.count(runFileName(run.config)) > 0;
    std::printf("%s: valid session '%s' (schema %d): %zu runs (%zu finished, %zu to run%s), %zu "
                "skipped\n",
                path.c_str(), session.name.c_str(), session.schemaVersion, session.runs.size(),
                session.runs.size() - pending - missing, pending,
                missing > 0 ? (", " + std::to_string(missing) + " finished but missing").c_str()
                            : "",
                session.skipped.size());
    if (!session.missingRunFiles.empty())
        std::fprintf(stderr, "%s\n", missingResultsMessage(session, path).c_str());
    if (session.search) {
        // What run would train next: the current round, or the next one it plans.
        Session next = session;
        const int planned = pending == 0 ? planSearchRound(next) : 0;
        const SearchReport report = searchReport(session);
        std::printf("  a boundary search along %s over %zu configurations: %d rounds so far, %s\n",
                    session.search->axis.c_str(), report.configurations.size(), report.rounds,
                    report.finished ? "finished"
                    : pending > 0
                        ? (std::to_string(pending) + " runs of the current round to train").c_str()
                        : ("the next round trains " + std::to_string(planned) + " runs").c_str());
        for (const auto &s : next.skipped)
            std::printf("  skipped %s: %s\n", labelsText(s.labels).c_str(), s.reason.c_str());
    }
    for (const auto &s : session.skipped)
        std::printf("  skipped %s: %s\n", labelsText(s.labels).c_str(), s.reason.c_str());
    printProvenanceSpread(session, stdout);
    if (session.runs.empty() && !session.skipped.empty()) {
        std::fprintf(
            stderr,
            "%s: nothing can run: every combination of the sweep is skipped (why is above)\n",
            path.c_str());
        return kExitBadInput;
    }
    return kExitOk;
}

} // namespace headlab::cli
