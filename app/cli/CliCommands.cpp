// CliCommands.cpp — headlab-cli: its command table (CLI11), and each command on top of the core.
//
// The arguments, the usage lines and every --help text come from the CLI11 definitions each
// command's file registers (Commands.h); this file adds them all to one app, parses, and runs the
// command asked for with the one guard every command shares. Sweeps run and store their results
// the way the app does (core/lab/SweepSession.h).
#include "CliCommands.h"

#include "Commands.h"

#include "core/lab/SweepSession.h"
#include "core/session/Session.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace headlab::cli {

Session loadSessionReporting(const std::string &path)
{
    Session session = loadSession(path);
    for (const auto &line : session.unreadableRunFiles) std::fprintf(stderr, "%s\n", line.c_str());
    return session;
}

Session loadSweepRuns(const std::string &path)
{
    Session session = loadSessionReporting(path);
    for (const auto &line : setAsideRunsOutsideTheSweep(session, path))
        std::fprintf(stderr, "%s\n", line.c_str());
    return session;
}

std::string labelsText(const std::map<std::string, std::string> &labels)
{
    std::string text;
    for (const auto &[key, value] : labels) text += (text.empty() ? "" : " ") + key + "=" + value;
    return text.empty() ? "(base)" : text;
}

void printProvenanceSpread(const Session &session, std::FILE *stream)
{
    const auto spread = provenanceSpread(session);
    if (spread.empty()) return;
    std::fprintf(stream, "runs of this session were trained under different settings:\n");
    for (const auto &line : spread) std::fprintf(stream, "  %s\n", line.c_str());
}

namespace {

const char *kExitStatus =
    "Exit status: 0 success; 1 a run failed with an error or results could not be saved;\n"
    "2 bad input (usage, invalid session, unknown preset, an output that holds other results);\n"
    "128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; results saved).\n"
    "The session format is described in docs/SESSION_FORMAT.md.";

// ---------------------------------------------------------------------------------------------
// The command table: what the command files registered.

std::vector<std::pair<int, CommandDefinition>> &registry()
{
    static std::vector<std::pair<int, CommandDefinition>> commands;
    return commands;
}

} // namespace

CommandRegistration::CommandRegistration(int rank, CommandDefinition define)
{
    registry().emplace_back(rank, define);
}

std::vector<CommandDefinition> registeredCommands()
{
    auto ranked = registry();
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto &x, const auto &y) { return x.first < y.first; });
    std::vector<CommandDefinition> out;
    for (const auto &[rank, define] : ranked) out.push_back(define);
    return out;
}

namespace {

// Every integer option reads its value in decimal, as users type numbers: leading zeros allowed
// (the digits of step-000000020.safetensors), no octal, hex or binary, which CLI11 would read
// ("010" as 8, "0x10" as 16), and a value beyond 64 bits refused with its range in words rather
// than clamped. Applied once to every option whose type is an integer, after the commands have
// added theirs, before any check of its own (a range) runs.
void readIntegersAsDecimal(CLI::App &app)
{
    for (CLI::App *sub : app.get_subcommands({})) readIntegersAsDecimal(*sub);
    for (CLI::Option *option : app.get_options()) {
        const std::string type = option->get_type_name();
        const bool isUnsigned = type.rfind("UINT", 0) == 0;
        if (!isUnsigned && type.rfind("INT", 0) != 0) continue;
        option->transform(CLI::Validator(
            [isUnsigned](std::string &text) -> std::string {
                size_t i = 0;
                const bool negative = !text.empty() && text[0] == '-';
                if (!text.empty() && (text[0] == '-' || text[0] == '+')) ++i;
                if (i == text.size() ||
                    text.find_first_not_of("0123456789", i) != std::string::npos)
                    return "expected a whole number in decimal digits, got '" + text + "'";
                std::string digits = text.substr(i);
                digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
                if (negative && isUnsigned && digits != "0")
                    return "expected 0 or more, got " + text;
                // The largest a 64-bit option holds; narrower ones check their own range.
                const std::string most =
                    isUnsigned ? "18446744073709551615"
                               : (negative ? "9223372036854775808" : "9223372036854775807");
                if (digits.size() > most.size() || (digits.size() == most.size() && digits > most))
                    return text + " is out of range: " +
                           (isUnsigned ? "at most 18446744073709551615"
                                       : "from -9223372036854775808 to 9223372036854775807");
                text = (negative ? "-" : "") + digits;
                return {};
            },
            "", "DECIMAL"));
    }
}

} // namespace

int runCli(int argc, char **argv)
{
    CLI::App app("headlab-cli: run and inspect HeadLab sessions without a display.", "headlab-cli");
    app.footer(kExitStatus);
    app.require_subcommand(1);
    app.get_formatter()->column_width(30);
    std::vector<CommandAction> commands;
    for (CommandDefinition define : registeredCommands()) commands.push_back(define(app));
    readIntegersAsDecimal(app);
    auto command = [&commands] {
        for (const auto &[subcommand, run] : commands)
            if (subcommand->parsed()) return run();
        return kExitBadInput;
    };
    std::string names;
    bool known = false;
    for (const CLI::App *sub : app.get_subcommands({})) {
        names += (names.empty() ? "" : ", ") + sub->get_name();
        known = known || (argc > 1 && sub->get_name() == argv[1]);
    }
    if (argc > 1 && argv[1][0] != '-' && !known) {
        std::fprintf(stderr,
                     "headlab-cli: unknown command '%s' (the commands are %s; see --help)\n",
                     argv[1], names.c_str());
        return kExitBadInput;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e); // the help of the command asked, on stdout, exit 0
    } catch (const CLI::ParseError &e) {
        std::string where = "headlab-cli";
        for (const CLI::App *sub : app.get_subcommands()) where += " " + sub->get_name();
        std::fprintf(stderr, "%s: %s\nRun '%s --help' for the options.\n", where.c_str(), e.what(),
                     where.c_str());
        return kExitBadInput;
    }
    // Nothing ends the process with an uncaught exception: the limits keep sessions from asking
    // for absurd memory, and whatever still escapes gets a message and exit 1.
    // What a command printed must have reached its stream: `schema > /dev/full` is a failure, not
    // an empty file and exit 0.
    auto written = [](int status) {
        std::cout.flush();
        if (std::fflush(stdout) == 0 && !std::ferror(stdout) && !std::cout.fail()) return status;
        std::fprintf(stderr,
                     "headlab-cli: could not write the output (%s); nothing printed is "
                     "complete\n",
                     std::strerror(errno ? errno : EIO));
        return status == 0 ? kExitRunFailed : status;
    };
    try {
        return written(command());
    } catch (const SessionError &e) { // bad input, located by whoever read it: exit 2
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    } catch (const std::bad_alloc &) {
        std::fprintf(
            stderr,
            "headlab-cli: out of memory; the session asks for more than this machine has\n");
    } catch (const std::exception &e) {
        std::fprintf(stderr, "headlab-cli: %s\n", e.what());
    }
    return kExitRunFailed;
}

} // namespace headlab::cli
