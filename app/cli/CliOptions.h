// CliOptions.h — what several headlab-cli commands check their options with: a device list
// (run, slurm), a checkpoint's step (keep, inspect), a number's range (every bounded option).
#pragma once

namespace CLI {
class Validator;
}

namespace headlab::cli {

// auto, cpu, cuda, cuda:N, a comma list of them, or all.
CLI::Validator deviceListValidator();
// A checkpoint's step: a whole number, 0 or more.
CLI::Validator checkpointStepValidator();
// A number from `low` to `high`, refused in HeadLab's words ("65 is out of range: from 1 to 64"),
// as the integers beyond 64 bits are, whichever CLI11 the build found (CLI::Range's wording
// changed between its versions).
CLI::Validator rangeValidator(int low, int high);
CLI::Validator rangeValidator(double low, double high);

} // namespace headlab::cli
