// CliOptions.cpp — see CliOptions.h.
#include "CliOptions.h"

#include <CLI/CLI.hpp>

#include <string>

namespace headlab::cli {

// A checkpoint's step on the command line: a whole number, 0 or more, said in words (CLI11's
// NonNegativeNumber printed its range up to 1.8e308).
CLI::Validator checkpointStepValidator()
{
    return CLI::Validator(
        [](std::string &text) -> std::string {
            long long step = 0;
            if (!CLI::detail::lexical_cast(text, step))
                return "'" + text + "' is not a checkpoint's step (a whole number, 0 or more)";
            if (step < 0) return "a checkpoint's step is 0 or more, got " + text;
            return {};
        },
        "STEP");
}

// auto, cpu, cuda, cuda:N, a comma list of them, or all.
CLI::Validator deviceListValidator()
{
    return CLI::Validator(
        [](std::string &value) -> std::string {
            if (value == "all") return {};
            size_t start = 0;
            for (;;) {
                const size_t comma = value.find(',', start);
                const std::string one = value.substr(start, comma - start);
                const bool known = one == "auto" || one == "cpu" || one == "cuda" ||
                                   (one.rfind("cuda:", 0) == 0 && one.size() > 5 &&
                                    one.find_first_not_of("0123456789", 5) == std::string::npos);
                if (!known)
                    return "unknown device '" + one +
                           "' (expected auto, cpu, cuda, cuda:N, a comma list of them, or all)";
                if (comma == std::string::npos) return {};
                start = comma + 1;
            }
        },
        "DEVICE");
}

} // namespace headlab::cli
