// ExportCommands.cpp — headlab-cli export-csv and export-yaml: a session's results as CSV tables or one YAML file (the command table: CliCommands.cpp).
#include "CliOptions.h"
#include "Commands.h"

#include "core/lab/SweepSession.h"
#include "core/metrics/RunValues.h"
#include "core/session/CsvExport.h"
#include "core/session/RunFilter.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

namespace headlab::cli {

int exportCsvCommand(const std::string &sessionPath, const std::string &directory, bool running,
                     const std::string &filterText, const std::vector<std::string> &values)
{
    Session session = loadSweepRuns(sessionPath);
    int live = 0;
    if (running) {
        std::vector<std::string> notes;
        live = addLiveRuns(session, sessionPath, &notes);
        for (const auto &note : notes) std::fprintf(stderr, "%s\n", note.c_str());
    }
    CsvExportOptions options;
    if (!filterText.empty()) {
        const RunFilter filter = RunFilter::parse(filterText, session);
        if (!filter.error.empty()) {
            std::fprintf(stderr, "headlab-cli export-csv: --filter: %s\n", filter.error.c_str());
            return kExitBadInput;
        }
        if (!filter.note.empty())
            std::fprintf(stderr, "headlab-cli export-csv: --filter: %s\n", filter.note.c_str());
        options.runs = filter.select(session);
    }
    for (const auto &key : values) {
        std::string why;
        if (!isRunValueKey(key, &why)) {
            std::fprintf(stderr, "headlab-cli export-csv: --value %s: %s\n", key.c_str(),
                         why.empty() ? "expected STAT(CURVE), such as min(test_loss)"
                                     : why.c_str());
            return kExitBadInput;
        }
        options.values.push_back(key);
    }
    const CsvExportSummary summary = exportSessionCsv(session, directory, options);
    std::printf("wrote %s (%zu runs%s%s) and %s (%zu points)\n", summary.runsPath.c_str(),
                summary.runs,
                filterText.empty()
                    ? ""
                    : (" of " + std::to_string(session.runs.size()) + " by the filter").c_str(),
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
        std::string session, output, filter;
        bool running = false;
        std::vector<std::string> values;
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
    csv->add_option("--filter", a->filter,
                    "Only the runs that meet this run filter, as the app's run table takes it "
                    "(\"heads=12 best:10:min(test_loss)\"; docs/SESSION_FORMAT.md, \"Run "
                    "filters\")");
    csv->add_option("--value", a->values,
                    "A column of runs.csv per statistic of a curve, STAT(CURVE): final, min, "
                    "max, best or mean_last of test_loss, train_loss, test_accuracy, ... "
                    "(repeatable)");
    return {csv, [a] {
                return exportCsvCommand(a->session, a->output, a->running, a->filter, a->values);
            }};
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
