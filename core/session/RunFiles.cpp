// RunFiles.cpp — see RunFiles.h.
#include "core/session/RunFiles.h"

#include "core/session/HtmlEmbed.h"

#include "core/config/Files.h"
#include "core/config/Hash.h"
#include "core/config/Safetensors.h"
#include "core/config/Yaml.h"
#include "core/metrics/Metrics.h"
#include "core/schema/RunConfigFields.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <dirent.h>
#ifdef HEADLAB_HAVE_ZLIB
#include <zlib.h>
#endif
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace headlab {

// ---------------------------------------------------------------------------------------------
// Per-head curves beside a run file

namespace {

constexpr const char *kHeadCurvesFormat = "headlab-head-curves";
constexpr const char *kHeadCurvesInfix = ".heads-";
constexpr const char *kHeadCurvesSuffix = ".safetensors";

bool endsWith(const std::string &text, const std::string &tail)
{
    return text.size() >= tail.size() &&
           text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

template <typename T>
void appendLittleEndian(std::string &bytes, T value)
{
    static_assert(std::endian::native == std::endian::little, "HeadLab writes little-endian");
    bytes.append(reinterpret_cast<const char *>(&value), sizeof value);
}

template <typename T>
T readLittleEndian(const std::string &bytes, size_t index)
{
    T value;
    std::memcpy(&value, bytes.data() + index * sizeof(T), sizeof(T));
    return value;
}

} // namespace

bool isHeadCurve(const std::string &curveName)
{
    return curveName.rfind(metric::kHeadPrefix, 0) == 0;
}

bool isHeadCurvesFileName(const std::string &name)
{
    return !name.empty() && name[0] != '.' && name.find('/') == std::string::npos &&
           name.find(kHeadCurvesInfix) != std::string::npos && endsWith(name, kHeadCurvesSuffix);
}

std::string headCurvesFileName(const std::string &runStem, const std::string &bytes)
{
    return runStem + kHeadCurvesInfix + hex16(fnv1a(bytes)) + kHeadCurvesSuffix;
}

std::string headCurvesBytes(const RunResult &result)
{
    // Curves that share their steps (every per-head curve of a run, evaluated together) form one
    // group: steps.G (I64 [points]) and values.G ([curves, points]), names.G in the metadata.
    std::map<std::vector<int64_t>, std::vector<std::pair<std::string, const Curve *>>> groups;
    for (const auto &[name, curve] : result.extra) {
        if (!isHeadCurve(name)) continue;
        std::vector<int64_t> steps;
        steps.reserve(curve.size());
        for (const auto &p : curve) steps.push_back(p.step);
        groups[steps].push_back({name, &curve});
    }
    if (groups.empty()) return {};
    safetensors::Contents contents;
    contents.metadata["format"] = kHeadCurvesFormat;
    contents.metadata["format_version"] = "1";
    contents.metadata["groups"] = std::to_string(groups.size());
    int g = 0;
    for (const auto &[steps, curves] : groups) {
        const std::string suffix = "." + std::to_string(g++);
        safetensors::Tensor stepTensor{
            "steps" + suffix, safetensors::DType::I64, {int64_t(steps.size())}, {}};
        for (int64_t step : steps) appendLittleEndian(stepTensor.data, step);
        bool asFloat = true; // exact in float32: half the bytes
        std::string names;
        for (const auto &[name, curve] : curves) {
            names += (names.empty() ? "" : "\n") + name;
            for (const auto &p : *curve)
                asFloat = asFloat &&
                          (std::isnan(p.value) || double(static_cast<float>(p.value)) == p.value);
        }
        safetensors::Tensor values{"values" + suffix,
                                   asFloat ? safetensors::DType::F32 : safetensors::DType::F64,
                                   {int64_t(curves.size()), int64_t(steps.size())},
                                   {}};
        values.data.reserve(curves.size() * steps.size() * (asFloat ? 4 : 8));
        for (const auto &[name, curve] : curves)
            for (const auto &p : *curve) {
                if (asFloat)
                    appendLittleEndian(values.data, static_cast<float>(p.value));
                else
                    appendLittleEndian(values.data, p.value);
            }
        contents.metadata["names" + suffix] = names;
        contents.tensors.push_back(std::move(stepTensor));
        contents.tensors.push_back(std::move(values));
    }
    return safetensors::serialize(contents);
}

uint64_t headCurvesFileLimit(int64_t expectedCurves)
{
    return (64ull << 20) + uint64_t(std::clamp<int64_t>(expectedCurves, 0, 1 << 20)) * (1ull << 20);
}

std::map<std::string, Curve> readHeadCurves(const std::string &path, int64_t expectedCurves)
{
    // Its size is bounded by the curves its run file declares before a byte is read: a sparse or
    // hostile file of gigabytes is refused, not read into memory.
    const safetensors::Contents contents =
        safetensors::read(path, "per-head curves file", headCurvesFileLimit(expectedCurves));
    auto bad = [&](const std::string &what) {
        return fileError(path, "is not a valid per-head curves file: " + what);
    };
    auto meta = [&](const std::string &key) {
        const auto it = contents.metadata.find(key);
        if (it == contents.metadata.end()) throw bad("its metadata has no '" + key + "'");
        return it->second;
    };
    if (meta("format") != kHeadCurvesFormat) throw bad("its format is '" + meta("format") + "'");
    if (meta("format_version") != "1")
        throw bad("format version " + meta("format_version") + " is newer than this HeadLab reads");
    const std::string groupText = meta("groups");
    if (groupText.empty() || groupText.size() > 6 ||
        groupText.find_first_not_of("0123456789") != std::string::npos)
        throw bad("'groups' is not a count");
    const int groups = std::stoi(groupText);
    std::map<std::string, Curve> curves;
    for (int g = 0; g < groups; ++g) {
        const std::string suffix = "." + std::to_string(g);
        const auto *steps = contents.find("steps" + suffix);
        const auto *values = contents.find("values" + suffix);
        if (!steps || !values) throw bad("group " + std::to_string(g) + " is incomplete");
        std::vector<std::string> names;
        std::stringstream list(meta("names" + suffix));
        for (std::string name; std::getline(list, name);) names.push_back(name);
        if (steps->dtype != safetensors::DType::I64 || steps->shape.size() != 1 ||
            values->shape.size() != 2 ||
            (values->dtype != safetensors::DType::F32 &&
             values->dtype != safetensors::DType::F64) ||
            values->shape[0] != int64_t(names.size()) || values->shape[1] != steps->shape[0])
            throw bad("group " + std::to_string(g) + " has tensors of other shapes than " +
                      std::to_string(names.size()) + " curves of its steps");
        const size_t n = size_t(steps->shape[0]);
        const bool asFloat = values->dtype == safetensors::DType::F32;
        for (size_t c = 0; c < names.size(); ++c) {
            if (!isHeadCurve(names[c]) || curves.count(names[c]))
                throw bad("'" + names[c] + "' is not a per-head curve name, or comes twice");
            Curve &curve = curves[names[c]];
            curve.resize(n);
            for (size_t i = 0; i < n; ++i) {
                curve[i].step = readLittleEndian<int64_t>(steps->data, i);
                curve[i].value = asFloat ? double(readLittleEndian<float>(values->data, c * n + i))
                                         : readLittleEndian<double>(values->data, c * n + i);
            }
        }
    }
    if (int64_t(curves.size()) != expectedCurves)
        throw bad("it holds " + std::to_string(curves.size()) + " curves, the run file says " +
                  std::to_string(expectedCurves));
    return curves;
}

namespace {
// The text of a gzip file (an export as NOTEBOOKS.md keeps them: S.export.yaml.gz), inflated to
// at most kMaxFileBytes: a gzip bomb stops there with the file named.
std::string gunzipped(const std::string &path, const std::string &compressed)
{
#ifdef HEADLAB_HAVE_ZLIB
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) // 15 + 32: a gzip or zlib header, found by itself
        throw SessionError(path, 0, 0, "", "cannot start inflating it");
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(compressed.data()));
    z.avail_in = uInt(compressed.size());
    std::string out;
    char buffer[1 << 16];
    int status = Z_OK;
    while (status != Z_STREAM_END) {
        z.next_out = reinterpret_cast<Bytef *>(buffer);
        z.avail_out = sizeof buffer;
        status = inflate(&z, Z_NO_FLUSH);
        if (status != Z_OK && status != Z_STREAM_END) {
            const std::string why = z.msg ? z.msg : "the data end too soon";
            inflateEnd(&z);
            throw SessionError(path, 0, 0, "", "is not a whole gzip file (" + why + ")");
        }
        out.append(buffer, sizeof buffer - z.avail_out);
        if (out.size() > SessionLimits::kMaxFileBytes) {
            inflateEnd(&z);
            throw SessionError(path, 0, 0, "",
                               "inflates to more than " +
                                   std::to_string(SessionLimits::kMaxFileBytes >> 20) +
                                   " MiB, more than a session file may hold");
        }
        if (status == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
            inflateEnd(&z);
            throw SessionError(path, 0, 0, "", "is not a whole gzip file (it ends too soon)");
        }
    }
    inflateEnd(&z);
    return out;
#else
    (void)compressed;
    throw SessionError(path, 0, 0, "",
                       "is gzip-compressed, and this build of HeadLab was made without zlib: "
                       "gunzip it first (gunzip -k " +
                           path + ")");
#endif
}
} // namespace

std::string readSessionText(const std::string &path, const char *what)
{
    if (endsWith(path, ".gz"))
        return gunzipped(path, readFileLimited(path, SessionLimits::kMaxFileBytes, what));
    if (isHtmlReportPath(path)) { // a report: the session it carries (HtmlEmbed.h)
        const EmbeddedSession embedded =
            embeddedSession(path, readFileLimited(path, 2 * SessionLimits::kMaxFileBytes, what));
        std::string text = embedded.gzip ? gunzipped(path, embedded.bytes) : embedded.bytes;
        if (text.size() != embedded.textBytes)
            throw SessionError(path, 0, 0, "",
                               "holds a HeadLab session of " + std::to_string(text.size()) +
                                   " bytes where it says " + std::to_string(embedded.textBytes));
        return text;
    }
    return readFileLimited(path, SessionLimits::kMaxFileBytes, what);
}

bool isReadOnlySessionPath(const std::string &path)
{
    return endsWith(path, ".gz") || isHtmlReportPath(path);
}

std::string sessionFileOf(const std::string &path)
{
    namespace fs = std::filesystem;
    fs::path p = path;
    std::error_code error;
    for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, error)); ++hops) {
        const fs::path target = fs::read_symlink(p, error);
        if (error) break;
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    return p.string();
}

std::string resultsDirFor(const std::string &givenPath)
{
    const std::string sessionPath = sessionFileOf(givenPath);
    std::string base = baseName(sessionPath);
    for (const char *extension : {".yaml", ".yml"}) {
        const size_t n = std::strlen(extension);
        if (base.size() > n && base.compare(base.size() - n, n, extension) == 0) {
            base.resize(base.size() - n);
            break;
        }
    }
    const std::string dir = directoryOf(sessionPath);
    const std::string name = base + ".results";
    return sessionPath.find('/') == std::string::npos ? name : dir + "/" + name;
}

std::string runId(const RunConfig &config)
{
    return hex16(fnv1a(yaml::canonicalYaml(config)));
}

std::string runFileName(const RunConfig &config)
{
    return runId(config) + ".yaml";
}

} // namespace headlab
