// CliOptions.cpp — see CliOptions.h.
#include "CliOptions.h"

#include <CLI/CLI.hpp>

#include <sstream>
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

namespace {

CLI::Validator numberRange(double low, double high, bool whole)
{
    auto shown = [whole](double x) {
        std::ostringstream out;
        if (whole)
            out << static_cast<long long>(x);
        else
            out << x;
        return out.str();
    };
    const std::string bounds = "from " + shown(low) + " to " + shown(high);
    return CLI::Validator(
        [low, high, bounds](std::string &text) -> std::string {
            double value = 0;
            if (!CLI::detail::lexical_cast(text, value))
                return "expected a number, got '" + text + "'";
            if (!(value >= low && value <= high)) return text + " is out of range: " + bounds;
            return {};
        },
        bounds);
}

} // namespace

CLI::Validator rangeValidator(int low, int high)
{
    return numberRange(low, high, true);
}

CLI::Validator rangeValidator(double low, double high)
{
    return numberRange(low, high, false);
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
