// CliOptions.h — what several headlab-cli commands check their options with: a device list
// (run, slurm), a checkpoint's step (keep, inspect).
#pragma once

namespace CLI {
class Validator;
}

namespace headlab::cli {

// auto, cpu, cuda, cuda:N, a comma list of them, or all.
CLI::Validator deviceListValidator();
// A checkpoint's step: a whole number, 0 or more.
CLI::Validator checkpointStepValidator();

} // namespace headlab::cli
