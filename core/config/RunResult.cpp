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

bool isFinished(RunStatus status)
{
    return status == RunStatus::Done || status == RunStatus::Diverged || status == RunStatus::Failed;
}

} // namespace headlab
