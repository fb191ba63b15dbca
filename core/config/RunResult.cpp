// RunResult.cpp — run status names.
#include "core/config/RunResult.h"

#include <array>
#include <utility>

namespace headlab {

namespace {
constexpr std::array<std::pair<RunStatus, const char *>, 7> kStatusNames = {{
    {RunStatus::Queued, "queued"},
    {RunStatus::Running, "running"},
    {RunStatus::Paused, "paused"},
    {RunStatus::Done, "done"},
    {RunStatus::Diverged, "diverged"},
    {RunStatus::Failed, "failed"},
    {RunStatus::Stopped, "stopped"},
}};
} // namespace

const char *toString(RunStatus status)
{
    for (const auto &[s, name] : kStatusNames)
        if (s == status) return name;
    return "?";
}

bool parseRunStatus(const std::string &text, RunStatus *out)
{
    for (const auto &[s, name] : kStatusNames) {
        if (text == name) {
            if (out) *out = s;
            return true;
        }
    }
    return false;
}

std::vector<std::string> runStatusNames()
{
    std::vector<std::string> names;
    for (const auto &[s, name] : kStatusNames) names.push_back(name);
    return names;
}

bool failedOnACheckpoint(const RunResult &result)
{
    if (result.status != RunStatus::Failed) return false;
    for (const char *what : {"is not a usable checkpoint", "is not a valid checkpoint",
                             "an ensemble resumes all its runs from checkpoints or none",
                             "the runs of an ensemble resume from checkpoints of different steps"})
        if (result.message.find(what) != std::string::npos) return true;
    return false;
}

bool isFinished(RunStatus status)
{
    return status == RunStatus::Done || status == RunStatus::Diverged ||
           status == RunStatus::Failed;
}

std::vector<std::string> provenanceDifferences(const RunResult &a, const RunResult &b)
{
    std::vector<std::string> out;
    auto value = [](const RunResult &r, const std::string &key) {
        const auto it = r.provenance.find(key);
        return it == r.provenance.end() ? std::string("(not recorded)") : it->second;
    };
    std::map<std::string, bool> keys;
    for (const auto &[key, v] : a.provenance) keys[key] = true;
    for (const auto &[key, v] : b.provenance) keys[key] = true;
    for (const auto &[key, unused] : keys)
        if (value(a, key) != value(b, key))
            out.push_back(key + ": " + value(a, key) + " → " + value(b, key));
    return out;
}

} // namespace headlab
