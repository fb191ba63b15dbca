// Presets.h — the built-in sessions, embedded in the binaries at build time.
//
// Each preset is a session YAML file in resources/presets/ (its name is the file name without
// .yaml). cmake/EmbedPresets.cmake compiles their text into the core library, so an installed
// binary needs no resource path. Torch-free and Qt-free.
#pragma once

#include "core/session/SessionData.h"

#include <string>
#include <vector>

namespace headlab {

struct PresetInfo {
    std::string name;        // "quick-demo"
    std::string description; // the session's one-line description
    std::string yaml;        // the session file's text
};

// Every built-in preset, sorted by name. A preset whose YAML does not parse is still listed,
// with the parse error as its description (the tests make sure none does).
std::vector<PresetInfo> builtinPresets();

// The named preset as a session (not yet expanded). Throws SessionError for an unknown name,
// suggesting the nearest one. Errors inside a preset name resources/presets/NAME.yaml.
Session loadPreset(const std::string &name);

// The preset the desktop app opens.
inline constexpr const char *kDefaultPreset = "default";

} // namespace headlab
