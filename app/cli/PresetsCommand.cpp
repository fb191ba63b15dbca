// PresetsCommand.cpp — headlab-cli presets: the built-in sessions (the command table: CliCommands.cpp).
#include "CliOptions.h"
#include "Commands.h"

#include "core/session/Presets.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace headlab::cli {

int presetsCommand()
{
    const auto presets = builtinPresets();
    size_t width = 0;
    for (const auto &p : presets) width = std::max(width, p.name.size());
    for (const auto &p : presets)
        std::printf("%-*s  %s\n", static_cast<int>(width), p.name.c_str(), p.description.c_str());
    return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// The command: its options and help (CLI11), registered with the command table.

namespace {

CommandAction definePresets(CLI::App &app)
{
    CLI::App *presets = app.add_subcommand("presets", "List the built-in presets");
    presets->footer(
        "The presets are compiled into the binary. Run one with: headlab-cli run --preset NAME.");
    return {presets, [] { return presetsCommand(); }};
}

const CommandRegistration kPresetsCommand(30, definePresets);

} // namespace

} // namespace headlab::cli
