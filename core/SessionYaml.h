// SessionYaml.h — located reading and exact writing of the YAML that sessions are made of.
//
// Used by Session.cpp (and usable by anything else that reads HeadLab YAML): a YamlField is a
// YAML node together with the file it came from and its key path (`experiment.model.heads[1]`),
// so that every type, range or unknown-key error becomes a SessionError that says where.
// Numbers are written in the shortest form that reads back to the same double, and nan/inf as
// .nan/.inf/-.inf. Torch-free and Qt-free.
#pragma once

#include "core/RunConfig.h"
#include "core/Session.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

// The document root of `text`; a malformed document throws a located SessionError.
YamlField parseDocument(const std::string &text, const std::string &file);

std::string joinPath(const std::string &parent, const std::string &key);
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
void writeNumber(YAML::Emitter &out, double value);
// A curve as the one line `{steps: [...], values: [...]}` that parseDocument reads without
// yaml-cpp (PreparsedCurves): the writers put it into their YAML text as it is.
inline constexpr std::string_view kCurveOpen = "{steps: [", kCurveMiddle = "], values: [",
                                  kCurveClose = "]}";
std::string curveText(const Curve &curve);

// An attention-logit scale by name (inv_sqrt_head_dim, inv_head_dim, none).
LogitScale readLogitScale(const YamlField &field);

// The RunConfig mapping (the session's `experiment:` and each run's `config:`).
RunConfig readRunConfig(const YamlField &field);
void writeRunConfig(YAML::Emitter &out, const RunConfig &config);
// The config as YAML text, the same for equal configs: used to keep results on re-expansion.
std::string canonicalYaml(const RunConfig &config);

} // namespace headlab::yaml
