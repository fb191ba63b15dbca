// ExportCommands.cpp — headlab-cli export-csv and export-yaml: a session's results as CSV tables or one YAML file (the command table: CliCommands.cpp).
#include "CliOptions.h"
#include "Commands.h"

#include "core/lab/SweepSession.h"
#include "core/session/CsvExport.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
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

// ---------------------------------------------------------------------------------------------
// The command: its options and help (CLI11), registered with the command table.

namespace {

CommandAction defineExportCsv(CLI::App &app)
{
    struct Arguments {
        std::string session, output;
        bool running = false;
    };
    auto a = std::make_shared<Arguments>();
    CLI::App *csv = app.add_subcommand("export-csv", "Write runs.csv and curves.csv of a session");
    csv->footer(
        "DIR/runs.csv: one row per run (labels, key configuration, status, metrics); "
        "DIR/curves.csv:\n"
        "run,curve,step,value for every point of every curve (run is the row of runs.csv).\n"
        "See docs/SESSION_FORMAT.md.");
    csv->add_option("session", a->session, "The session file (SESSION.yaml)")->required();
    csv->add_option("-o,--output", a->output, "The directory (DIR)")->required();
    csv->add_flag("--running", a->running,
                  "Add the runs in training now, as their trainers list them (status running, "
                  "steps_done their step, their newest checkpoint)");
    return {csv, [a] { return exportCsvCommand(a->session, a->output, a->running); }};
}

const CommandRegistration kExportCsvCommand(50, defineExportCsv);

CommandAction defineExportYaml(CLI::App &app)
{
    struct Arguments {
        std::string session, output;
    };
    auto a = std::make_shared<Arguments>();
    CLI::App *yamlExport =
        app.add_subcommand("export-yaml", "Write a session with its results as one YAML file");
    yamlExport->footer(
        "The session file otherwise keeps its results in SESSION.results/, one file per run.");
    yamlExport->add_option("session", a->session, "The session file (SESSION.yaml)")->required();
    yamlExport->add_option("-o,--output", a->output, "The file to write (FILE.yaml)")->required();
    return {yamlExport, [a] { return exportYamlCommand(a->session, a->output); }};
}

const CommandRegistration kExportYamlCommand(130, defineExportYaml);

} // namespace

} // namespace headlab::cli
