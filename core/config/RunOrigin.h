// RunOrigin.h — when, where and by what a run was trained: its start and end in UTC, the host,
// HeadLab's code commit, and the command line. What MLflow, W&B and TensorBoard lead with, so
// that a run keeps its identity and time when its results travel (runs.csv, the Python package).
// Torch-free and Qt-free.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace headlab {

struct RunOrigin {
    std::string startedAt;  // UTC, ISO 8601 ("2026-12-02T03:42:17Z"): when its training began
                            // (a resumed run keeps the time of its first start)
    std::string finishedAt; // when it finished; "" while it has not (stopped, queued)
    std::string host;       // the machine's host name
    std::string commit;     // HeadLab's code commit, "+dirty" when its tree had edits; "" unknown
    std::string command;    // the command line that trained it ("headlab-cli run grid.yaml")
    bool empty() const
    {
        return startedAt.empty() && finishedAt.empty() && host.empty() && commit.empty() &&
               command.empty();
    }
    bool operator==(const RunOrigin &) const = default;
};

// The fields of RunOrigin by their key: the YAML record `origin:` and runs.csv's columns.
struct OriginField {
    const char *key;
    std::string RunOrigin::*member;
};
inline constexpr std::array<OriginField, 5> kOriginFields = {{
    {"started_at", &RunOrigin::startedAt},
    {"finished_at", &RunOrigin::finishedAt},
    {"host", &RunOrigin::host},
    {"commit", &RunOrigin::commit},
    {"command", &RunOrigin::command},
}};

// Now, as RunOrigin writes times ("2026-12-02T03:42:17Z").
std::string utcTimestamp();
// Seconds since the epoch of such a time; -1 for a text that is not one.
int64_t utcSeconds(const std::string &timestamp);
// This machine's host name ("" when it has none).
std::string hostName();
// The commit HeadLab was built from (the build's `git rev-parse HEAD`, "+dirty" appended when
// tracked files had edits); "" for a build outside a git clone.
std::string buildCommit();
// The command line of this process, as main() records it (each argument quoted where the shell
// would need it); "" until then.
void setInvocation(int argc, const char *const *argv);
const std::string &invocation();
// A run's origin as a training that starts now gives it: this host, commit and command.
RunOrigin originNow();

} // namespace headlab
