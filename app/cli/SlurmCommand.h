// SlurmCommand.h — `headlab-cli slurm`: a sweep as a Slurm job array, one shard per array task.
//
// The sbatch script is written beside the results and handed to `sbatch` as an argument vector
// (posix_spawnp): no shell ever sees a path or an option. Every value written into the script is
// quoted for the reader of its line (sbatch for #SBATCH lines, bash for the command), and a value
// holding a newline, a carriage return or a NUL is refused, naming its option.
#pragma once

#include <string>
#include <vector>

namespace headlab::cli {

struct SlurmArguments {
    int array = 0, gpusPerTask = 0, cpusPerTask = 0;
    std::string partition, time, account, device;
    bool dryRun = false;
};

// The script for `sessionPath` run by `cli` (headlab-cli's absolute path). Throws
// std::invalid_argument naming the option whose value cannot be written safely.
std::string slurmScript(const std::string &sessionPath, const SlurmArguments &s,
                        const std::string &cli);

// A boundary search's next step, run by Slurm once a round's array has ended (any way): merge the
// results (which plans the next round) and submit again with the same options, until the search is
// finished. The script is written beside the array's (next.sbatch).
std::string searchChainScript(const std::string &sessionPath, const SlurmArguments &s,
                              const std::string &cli);

int slurmCommand(const std::string &sessionPath, const SlurmArguments &s);

// What a child process printed (stdout and stderr together) and how it ended.
struct ProcessOutput {
    int exitCode = -1; // -1: it did not start or did not exit normally
    std::string output;
    std::string error; // why it did not start, if it did not
};
// Runs argv[0] (looked up on PATH) with `argv` as its arguments, without a shell.
ProcessOutput runProcess(const std::vector<std::string> &argv);

// Shell quoting for bash: 'text' with each ' written as '\''.
std::string shellQuoted(const std::string &text);
// Quoting for an #SBATCH line, as sbatch reads it: "text" with \ and " escaped by a backslash.
std::string sbatchQuoted(const std::string &text);
// A path for an sbatch filename pattern (--output): each literal '%' doubled.
std::string slurmFilenamePattern(const std::string &path);

} // namespace headlab::cli
