// Presets.cpp — lists and loads the presets embedded from resources/presets/.
#include "core/session/Presets.h"
#include "core/session/SessionYaml.h"

#include "core/config/Yaml.h"
#include "core/schema/RunConfigFields.h"
#include "core/session/PresetData.h"

#include <algorithm>

namespace headlab {

namespace {

std::string presetFile(const std::string &name)
{
    return "resources/presets/" + name + ".yaml";
}

std::string presetText(const detail::EmbeddedPreset &preset)
{
    return std::string(reinterpret_cast<const char *>(preset.data), preset.size);
}

} // namespace

std::vector<PresetInfo> builtinPresets()
{
    std::vector<PresetInfo> presets;
    for (size_t i = 0; i < detail::kEmbeddedPresetCount; ++i) {
        const auto &embedded = detail::kEmbeddedPresets[i];
        PresetInfo info;
        info.name = embedded.name;
        info.yaml = presetText(embedded);
        try {
            info.description = sessionFromYaml(info.yaml, presetFile(info.name)).description;
        } catch (const SessionError &e) {
            info.description = std::string("(broken preset) ") + e.what();
        }
        presets.push_back(std::move(info));
    }
    std::sort(presets.begin(), presets.end(),
              [](const auto &a, const auto &b) { return a.name < b.name; });
    return presets;
}

Session loadPreset(const std::string &name)
{
    std::vector<std::string> names;
    for (size_t i = 0; i < detail::kEmbeddedPresetCount; ++i) {
        const auto &embedded = detail::kEmbeddedPresets[i];
        if (name == embedded.name) return sessionFromYaml(presetText(embedded), presetFile(name));
        names.push_back(embedded.name);
    }
    std::sort(names.begin(), names.end());
    std::string message = "no built-in preset '" + name + "'";
    const std::string suggestion = yaml::nearestKey(name, names);
    if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
    message += " (built-in:";
    for (const auto &n : names) message += " " + n;
    throw SessionError("presets", 0, 0, "", message + ")");
}

} // namespace headlab
