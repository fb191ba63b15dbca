// Commands.h — the entry point of each headlab-cli command, one source file each, and what
// they share. Each command file defines its subcommand (options, help, footer) and registers it
// with one CommandRegistration; the command table (CliCommands.cpp) adds every registered command
// to the app, parses the arguments and runs the one asked for. A command lets a SessionError (bad
// input, located) go: the table's one guarded runner prints it and exits 2.
#pragma once

#include "CliCommands.h"

#include "core/session/Session.h"

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace headlab::cli {

// A command as its file defines it: the subcommand it added to the app, and what runs it once
// the arguments are parsed (its options are bound to state the function owns).
struct CommandAction {
    CLI::App *command = nullptr;
    std::function<int()> run;
};
using CommandDefinition = CommandAction (*)(CLI::App &app);
// One per command, at namespace scope in its file: `rank` orders the commands in --help (run
// first).
struct CommandRegistration {
    CommandRegistration(int rank, CommandDefinition define);
};
// Every registered command, in rank order.
std::vector<CommandDefinition> registeredCommands();

// "d_model=96 heads=3", "(base)" for no labels.
std::string labelsText(const std::map<std::string, std::string> &labels);
// Says which settings outside the config differ between the session's runs (RunResult::provenance).
void printProvenanceSpread(const Session &session, std::FILE *stream);

struct RunArguments {
    std::string sessionPath, presetName, outputPath, device, shard;
    bool shardGiven = false; // --shard "" is a mistake, not the whole sweep
    int threads = 0, concurrent = 0, maxEnsemble = 0;
    double progressEvery = 10.0; // seconds between plain progress lines (stderr not a terminal)
    bool overwrite = false;
};

// validate: reads the session and says what it would train (ValidateCommand.cpp); with
// planGpus > 0, also how `run --device all` on that many GPUs would group and place it.
int validateCommand(const std::string &path, int planGpus = 0);
// presets: the built-in sessions (PresetsCommand.cpp).
int presetsCommand();
// export-csv and export-yaml (ExportCommands.cpp).
// `filter`: a run filter (RunFilter.h), "" for every run; `values`: STAT(CURVE) columns.
int exportCsvCommand(const std::string &sessionPath, const std::string &directory, bool running,
                     const std::string &filter = "", const std::vector<std::string> &values = {});
int exportYamlCommand(const std::string &sessionPath, const std::string &output);
// merge: folds the shards' run files into the session (MergeCommand.cpp).
int mergeCommand(const std::string &sessionPath);
// prune: frees finished runs' checkpoints (PruneCommand.cpp).
int pruneCommand(const std::string &sessionPath, const std::vector<std::string> &keepList,
                 bool dryRun);
// keep: marks checkpoints that prune keeps (KeepCommand.cpp).
int keepCommand(const std::string &sessionPath, const std::string &runText,
                const std::vector<long long> &steps, bool off);
// status: the progress of a sweep others write (StatusCommand.cpp).
int statusCommand(const std::string &sessionPath);
// summary: a row per configuration over its replicates (SummaryCommand.cpp).
// How `summary` reads a search: the law's axes (empty: the session's), the model (empty: the
// session's; separate or joint) and the round it stops at (−1: every round), for a replay.
struct SearchSummaryOptions {
    std::string lawX;
    std::vector<std::string> lawAlso;
    std::string model;
    int untilRound = -1;
};
// Applies --model and --until-round to a search session and checks --law-x/--law-also against
// the law dimensions; on a mistake prints it (naming `command`) and returns false.
bool applySearchOptions(Session &session, const SearchSummaryOptions &options, const char *command);
// predict: η* with its prediction interval for a configuration not searched (PredictCommand.cpp).
struct PredictArguments {
    std::string session;
    std::map<std::string, std::string> values; // dimension → its value, as YAML would give it
    SearchSummaryOptions search;
    bool json = false;
    std::string into;           // a search not begun: its round 0 placed by the prediction
    std::string law = "chosen"; // LawChoice: the law the report's test chooses, power or bent
};
int predictCommand(const PredictArguments &a);
int summaryCommand(const std::string &sessionPath, const std::vector<std::string> &by,
                   const std::string &statName, const std::string &spreadName,
                   const std::string &output, const SearchSummaryOptions &search, bool sensitivity);
// run: trains the pending runs, round after round for a search (RunCommand.cpp).
int runCommand(RunArguments a);

} // namespace headlab::cli
