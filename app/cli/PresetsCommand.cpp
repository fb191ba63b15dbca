// PresetsCommand.cpp — headlab-cli presets: the built-in sessions (the command table: CliCommands.cpp).
#include "Commands.h"

#include "core/session/Presets.h"

#include <algorithm>
#include <cstdio>

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

} // namespace headlab::cli
