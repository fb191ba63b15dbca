// ExportCommands.cpp — headlab-cli export-csv and export-yaml: a session's results as CSV tables or one YAML file (the command table: CliCommands.cpp).
#include "Commands.h"

#include "core/lab/SweepSession.h"
#include "core/session/CsvExport.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"

#include <cstdio>
#include <string>

namespace headlab::cli {

int exportCsvCommand(const std::string &sessionPath, const std::string &directory, bool running)
{
    Session session = loadSweepRuns(sessionPath);
    int live = 0;
    if (running) {
        std::vector<std::string> notes;
        live = addLiveRuns(session, sessionPath, &notes);
        for (const auto &note : notes) std::fprintf(stderr, "%s\n", note.c_str());
    }
    const CsvExportSummary summary = exportSessionCsv(session, directory);
    std::printf("wrote %s (%zu runs%s) and %s (%zu points)\n", summary.runsPath.c_str(),
                summary.runs,
                running ? (", " + std::to_string(live) + " of them in training now").c_str() : "",
                summary.curvesPath.c_str(), summary.points);
    return kExitOk;
}

int exportYamlCommand(const std::string &sessionPath, const std::string &output)
{
    // A session being trained is written by its trainer alone: an export over it would replace
    // the index the trainer keeps (as merge and prune, which take its lock, refuse to).
    std::string writers;
    if (const std::string holder = SessionStore::lockHolder(output); !holder.empty())
        writers += "\n  the whole sweep: " + holder;
    for (const auto &line : SessionStore::runningShards(output)) writers += "\n  " + line;
    if (!writers.empty())
        throw SessionError(
            output, 0, 0, "",
            "is being trained now, so export-yaml will not write over it:" + writers +
                "\nExport to another file (-o), or wait for it to finish.");
    const Session session = loadSweepRuns(sessionPath);
    saveSessionAtomic(session, output);
    std::printf("wrote %s (%zu runs)\n", output.c_str(), session.runs.size());
    return kExitOk;
}

} // namespace headlab::cli
