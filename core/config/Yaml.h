// Yaml.h — located reading and exact writing of the YAML that HeadLab's files are made of.
//
// A YamlField is a YAML node together with the file it came from and its key path
// (`experiment.model.heads[1]`), so that every type, range or unknown-key error becomes a
// SessionError that says where. Numbers are written in the shortest form that reads back to the
// same double, and nan/inf as .nan/.inf/-.inf. Used by the field tables (RunConfigFields.h, the
// task specs) and the session files. Torch-free and Qt-free.
#pragma once

#include "core/config/RunResult.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
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

} // namespace headlab

namespace headlab::yaml {

// Curves written as one line, `{steps: [...], values: [...]}`, read without yaml-cpp: by 0-based
// line of the mapping. yaml-cpp scans ~10 MB/s, so a session with 2,000 runs of 300 points took
// 20 s to open; parseDocument reads such lines itself and hands yaml-cpp `{steps: [], values: []}`
// in their place (same lines, same columns up to the brackets). A line it cannot read exactly
// is left to yaml-cpp, whose messages then say where the problem is.
using PreparsedCurves = std::map<int, Curve>;

// A YAML node and where it is: the file, its key path and its mark (0-based, from yaml-cpp).
struct YamlField {
    std::string file;
    std::string path; // "experiment.model.heads[1]"; empty for the document root
    YAML::Node node;  // undefined (IsDefined() false) when the key is absent
    YAML::Mark mark;  // of the value; of the enclosing mapping when the key is absent
    std::shared_ptr<const PreparsedCurves> curves; // of the whole document

    // The key is there, with a value or without one ("lr:" is present, and null).
    bool present() const { return node.IsDefined(); }
    bool isNull() const { return node.IsDefined() && node.IsNull(); }
};

[[noreturn]] void fail(const YamlField &field, const std::string &message);
[[noreturn]] void failAt(const YamlField &field, const YAML::Mark &mark, const std::string &path,
                         const std::string &message);

// The curve whose one-line mapping starts on `field`'s line, read by parseDocument, if any.
const Curve *preparsedCurve(const YamlField &field);

// The document root of `text`; a malformed document throws a located SessionError, as does one
// of more values than its size could hold from HeadLab (one per 6 bytes, 100,000 in any file)
// or nested more than 64 levels, counted before any node is built. The top-level blocks named
// in `unread` (written by HeadLab, never read) are left out unbuilt.
YamlField parseDocument(const std::string &text, const std::string &file,
                        const std::vector<std::string> &unread = {});

std::string joinPath(const std::string &parent, const std::string &key);
// "'text'", "a list", "a mapping", "nothing": what a node is, for "expected ..., got ..." messages.
std::string describeType(const YAML::Node &node);
std::string lower(std::string text); // ASCII
// The allowed key nearest to `key` by edit distance, or "" when none is close.
std::string nearestKey(const std::string &key, const std::vector<std::string> &allowed);

// Mapping access. requireMap fails unless the node is a mapping; checkKeys fails on the first key
// (in document order) that is not allowed, suggesting the nearest allowed one.
void requireMap(const YamlField &field);
void checkKeys(const YamlField &field, const std::vector<std::string> &allowed);
YamlField child(const YamlField &map, const std::string &key);
YamlField item(const YamlField &sequence, size_t index);
std::vector<YamlField> items(const YamlField &sequence); // fails unless a sequence
// Every key of a mapping with its value, in document order.
std::vector<std::pair<std::string, YamlField>> entries(const YamlField &map);

// Scalars. Each fails with "expected ..." on a wrong type.
bool isScalar(const YamlField &field);
int64_t readInt(const YamlField &field);
uint64_t readUnsigned(const YamlField &field);
double readNumber(const YamlField &field); // also .nan, .inf, -.inf, nan, inf
bool readBool(const YamlField &field);
std::string readString(const YamlField &field); // null reads as ""

// Range checks: "must be at least 1, got 0".
int64_t readIntAtLeast(const YamlField &field, int64_t minimum);
// Also at most `maximum`: "at most 256 (a HeadLab limit), got 666666666" (RunLimits).
int64_t readIntInRange(const YamlField &field, int64_t minimum, int64_t maximum);
double readPositive(const YamlField &field); // > 0, finite
double readNumberInRange(const YamlField &field, double low, bool lowInclusive, double high,
                         bool highInclusive);

// Text → number parsing without YAML, exact for anything written by formatNumber.
bool parseInt(const std::string &text, int64_t *out);
bool parseNumber(const std::string &text, double *out);
// Shortest text that reads back to exactly `value`; always has a '.' before an exponent so
// that YAML 1.1 readers (PyYAML) see a float: 0.001, 1.0e-05, 500, .nan, .inf, -.inf.
std::string formatNumber(double value);

// Writing. writeText quotes text that a YAML reader would take for a number, bool or null.
void writeText(YAML::Emitter &out, const std::string &text);
// A map of text to text on one line, each value as writeText writes it ({d_model: "24", heads:
// "12"}): run labels, a search's configuration.
void writeTextMap(YAML::Emitter &out, const std::map<std::string, std::string> &map);
// What writeTextMap writes, read back: each value as text; an absent or null map is empty.
std::map<std::string, std::string> readTextMap(const YamlField &field);
void writeNumber(YAML::Emitter &out, double value);
// A curve as the one line `{steps: [...], values: [...]}` that parseDocument reads without
// yaml-cpp (PreparsedCurves): the writers put it into their YAML text as it is.
inline constexpr std::string_view kCurveOpen = "{steps: [", kCurveMiddle = "], values: [",
                                  kCurveClose = "]}";
std::string curveText(const Curve &curve);

// Enums by name: the documented spelling of each value or its toString() name, compared without case, '_', '-' or
// spaces; an unknown one fails naming the nearest and listing them all.
template <typename Enum>
struct EnumName {
    Enum value;
    const char *name; // the documented spelling
};
std::string normalisedName(const std::string &text);
[[noreturn]] void failUnknownName(const YamlField &field, const std::vector<std::string> &allowed);

template <typename Enum, typename Names>
Enum readEnumOf(const YamlField &field, const Names &names)
{
    if (isScalar(field)) {
        const std::string text = normalisedName(readString(field));
        for (const auto &n : names)
            if (text == normalisedName(n.name) || text == normalisedName(toString(n.value)))
                return n.value;
    }
    std::vector<std::string> allowed;
    for (const auto &n : names) allowed.push_back(n.name);
    failUnknownName(field, allowed);
}

template <typename Enum>
Enum readEnum(const YamlField &field, std::initializer_list<EnumName<Enum>> names)
{
    return readEnumOf<Enum>(field, names);
}

} // namespace headlab::yaml
