// Session.h — a HeadLab session: the experiment, its sweep, every run's results and the view.
//
// A session is what a user saves and reopens (YAML, see docs/SESSION_FORMAT.md). The sweep is a
// base RunConfig plus named axes; their Cartesian product is the list of runs. Combinations that
// cannot run (a head count that does not divide d_model, say) are listed as skipped, with why.
#pragma once

#include "core/RunConfig.h"
#include "core/RunResult.h"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace headlab {

// A located error: "file:line:col: key.path: message". line/column are 1-based, 0 if unknown.
class SessionError : public std::runtime_error {
public:
    SessionError(std::string file, int line, int column, std::string keyPath, std::string message);
    const std::string &file() const { return m_file; }
    int line() const { return m_line; }
    int column() const { return m_column; }
    const std::string &keyPath() const { return m_keyPath; }
    const std::string &message() const { return m_message; }

private:
    std::string m_file;
    int m_line = 0;
    int m_column = 0;
    std::string m_keyPath;
    std::string m_message;
};

// One value of a sweep axis: a number, a list of integers (a per-layer head schedule) or text.
struct AxisValue {
    enum class Kind { Number, IntList, Text };
    Kind kind = Kind::Number;
    double number = 0.0;
    std::vector<int64_t> ints;
    std::string text;
    std::string label() const; // "96", "[12,24,48,96]", "ascending"
};

struct SweepAxis {
    std::string name; // d_model, heads, head_dim, lr, seed, layers, width_multiplier, qk_rule, ...
    std::vector<AxisValue> values;
};

// Axis values that are set together, one map per combination. A sweep that is not a full
// product (the paper's Figure 4 scans a list of (n_H, m) pairs) lists them under
// `sweep.combinations`; the runs are then every combination × the product of the axes.
using SweepCombination = std::map<std::string, AxisValue>;

struct SessionRun {
    std::map<std::string, std::string> labels; // axis name -> value label
    RunConfig config;
    RunResult result;
};

struct SkippedRun {
    std::map<std::string, std::string> labels;
    std::string reason;
};

struct Session {
    static constexpr int kSchemaVersion = 1;
    int schemaVersion = kSchemaVersion;
    std::string name;
    std::string description;
    RunConfig base;
    std::vector<SweepAxis> axes;
    std::vector<SweepCombination> combinations; // empty: the product of the axes alone
    std::vector<SessionRun> runs;
    std::vector<SkippedRun> skipped;
    std::map<std::string, std::string> view; // GUI view state: chart, heatmap_lr, log_x, ...
};

// Rebuilds runs and skipped from base and axes. A run whose resolved config is unchanged keeps
// its result, so editing one axis does not throw away finished work.
void expandSweep(Session &session);

// Parses YAML text. `file` is used in error messages only. Throws SessionError.
Session sessionFromYaml(const std::string &yamlText, const std::string &file = "<session>");
Session loadSession(const std::string &path);
std::string sessionToYaml(const Session &session);
// Writes to a temporary file beside `path`, flushes it, then renames it over `path`.
// On any failure the previous file is left untouched and SessionError is thrown.
void saveSessionAtomic(const Session &session, const std::string &path);

// Indices of runs that still have to run (Queued, Running, Paused or Stopped).
std::vector<int> pendingRuns(const Session &session);

} // namespace headlab
