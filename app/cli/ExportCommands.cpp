// ExportCommands.cpp — headlab-cli export-csv and export-yaml: a session's results as CSV tables or one YAML file (the command table: CliCommands.cpp).
#include "Commands.h"

#include "core/session/CsvExport.h"
#include "core/session/Session.h"

#include <cstdio>
#include <string>

namespace headlab::cli {

int exportCsvCommand(const std::string &sessionPath, const std::string &directory)
{
    const CsvExportSummary summary = exportSessionCsv(loadSweepRuns(sessionPath), directory);
    std::printf("wrote %s (%zu runs) and %s (%zu points)\n", summary.runsPath.c_str(), summary.runs,
                summary.curvesPath.c_str(), summary.points);
    return kExitOk;
}

int exportYamlCommand(const std::string &sessionPath, const std::string &output)
{
    const Session session = loadSweepRuns(sessionPath);
    saveSessionAtomic(session, output);
    std::printf("wrote %s (%zu runs)\n", output.c_str(), session.runs.size());
    return kExitOk;
}

} // namespace headlab::cli
