// CliCommands.h — headlab-cli: run, validate, presets, export-csv, export-yaml (CLI11).
//
// runCli parses argv and runs the command, returning the process exit status:
// 0 success; 1 a run failed with an error, or results could not be saved; 2 bad input (usage,
// an invalid session, an unknown preset, an output holding other results); 128+N stopped by
// signal N (SIGINT, SIGTERM, SIGHUP; results saved).
#pragma once

#include "core/session/Session.h"

#include <string>
#include <vector>

namespace headlab::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;
inline constexpr int kExitBadInput = 2;

// Reads a session (loadSession) and names each run file that could not be read on stderr: such
// a file is skipped and blocks no other run.
Session loadSessionReporting(const std::string &path);
// The same, also leaving out (and naming) stored runs that are not runs of the sweep as it is now
// (setAsideRunsOutsideTheSweep): what exports, merge and summary work from.
Session loadSweepRuns(const std::string &path);

// Parses argv (the usage and every --help come from the same CLI11 definitions) and runs the
// command.
int runCli(int argc, char **argv);

} // namespace headlab::cli
