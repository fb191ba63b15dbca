// CliCommands.h — the subcommands of headlab-cli: run, validate, presets, export-csv.
//
// Each takes its arguments (after the subcommand's name) and returns the process exit status:
// 0 success; 1 a run failed with an error, or results could not be saved; 2 bad input (usage,
// an invalid session, an unknown preset, an output holding other results); 128+N stopped by
// signal N (SIGINT, SIGTERM, SIGHUP; results saved).
#pragma once

#include <string>
#include <vector>

namespace headlab::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;
inline constexpr int kExitBadInput = 2;

int runCommand(const std::vector<std::string> &args);
int validateCommand(const std::vector<std::string> &args);
int presetsCommand(const std::vector<std::string> &args);
int exportCsvCommand(const std::vector<std::string> &args);
int exportYamlCommand(const std::vector<std::string> &args);

// Dispatches argv to a subcommand; prints the usage for --help or a missing command.
int runCli(int argc, char **argv);

} // namespace headlab::cli
