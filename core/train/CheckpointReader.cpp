// CheckpointReader.cpp — reading and checking checkpoints, torch-free (scripts/fuzz.sh builds it
// into the checkpoint fuzzer). The writer and the tensor copies are in Checkpoint.cpp.
#include "core/train/CheckpointFormat.h"

#include "core/config/Files.h"
#include "core/config/Yaml.h"
#include "core/schema/RunConfigFields.h"

#include <nlohmann/json.hpp>
#ifdef HEADLAB_HAVE_ZLIB
#include <zlib.h>
#else
#include <caffe2/serialize/crc_alt.h> // LibTorch's header-only CRC-32: this file includes it alone
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string_view>

namespace headlab {

namespace fs = std::filesystem;
using json = nlohmann::json;
using detail::bad;
using detail::dataHash;
using detail::hex;

std::string detail::dataCrc32(const std::vector<safetensors::Tensor> &tensors)
{
    uint32_t crc = 0;
    for (const auto &t : tensors)
#ifdef HEADLAB_HAVE_ZLIB
        crc = uint32_t(crc32_z(crc, reinterpret_cast<const Bytef *>(t.data.data()), t.data.size()));
#else
        crc = crc32_fast(t.data.data(), t.data.size(), crc);
#endif
    char text[9];
    std::snprintf(text, sizeof text, "%08lx", static_cast<unsigned long>(crc));
    return text;
}

namespace {

Curve curveOf(const safetensors::Tensor &t, const std::string &path)
{
    if (t.dtype != safetensors::DType::F64 || t.shape.size() != 2 || t.shape[1] != 2)
        throw bad(path, "'" + t.name + "' is not an (n, 2) F64 curve");
    Curve out;
    const double *v = reinterpret_cast<const double *>(t.data.data());
    for (int64_t i = 0; i < t.shape[0]; ++i) {
        const double step = v[2 * i];
        // Checked before the cast: a step beyond int64's range (or NaN) has no value as an integer.
        if (!(step >= 0.0 && step <= 9.0e15) || step != std::floor(step))
            throw bad(path, "'" + t.name + "' has a step that is not a whole number of steps (" +
                                std::to_string(step) + ")");
        out.push_back({static_cast<int64_t>(step), v[2 * i + 1]});
    }
    return out;
}

std::string meta(const safetensors::Contents &c, const std::string &key, const std::string &path)
{
    const auto it = c.metadata.find(key);
    if (it == c.metadata.end()) throw bad(path, "its metadata has no '" + key + "'");
    return it->second;
}

int64_t metaInt(const safetensors::Contents &c, const std::string &key, const std::string &path)
{
    const std::string text = meta(c, key, path);
    try {
        size_t used = 0;
        const long long v = std::stoll(text, &used);
        if (used == text.size()) return v;
    } catch (...) {}
    throw bad(path, "metadata '" + key + "' is '" + text + "', not an integer");
}

double metaDouble(const safetensors::Contents &c, const std::string &key, const std::string &path)
{
    const std::string text = meta(c, key, path);
    try {
        size_t used = 0;
        const double v = std::stod(text, &used);
        if (used == text.size()) return v;
    } catch (...) {}
    throw bad(path, "metadata '" + key + "' is '" + text + "', not a number");
}

// Format, version and checksum.
void verify(const safetensors::Contents &c, const std::string &path, bool data)
{
    const auto format = c.metadata.find("format");
    if (format == c.metadata.end() || format->second != kCheckpointFormat)
        throw bad(path, "it is a safetensors file but not a HeadLab checkpoint (no format: "
                        "headlab-checkpoint)");
    const int64_t version = metaInt(c, "format_version", path);
    if (version > kCheckpointVersion)
        throw bad(path, "format version " + std::to_string(version) +
                            " is newer than this HeadLab reads (" +
                            std::to_string(kCheckpointVersion) + ")");
    if (!data) return;
    const bool intact =
        c.metadata.count("data_crc32")
            ? c.metadata.at("data_crc32") == detail::dataCrc32(c.tensors)
            : meta(c, "data_fnv1a64", path) == hex(dataHash(c.tensors)); // version 1
    if (!intact)
        throw bad(path, "its tensor data does not match its checksum (the file is damaged)");
}

} // namespace

std::string checkpointFileName(int64_t step)
{
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "step-%09lld.safetensors", static_cast<long long>(step));
    return buffer;
}

bool isCheckpointFileName(const std::string &name)
{
    auto isStepName = [](std::string_view n) { // step-NNNNNNNNN.safetensors, 9 or more digits
        constexpr std::string_view prefix = "step-", suffix = ".safetensors";
        if (n.size() < prefix.size() + 9 + suffix.size() || !n.starts_with(prefix) ||
            !n.ends_with(suffix))
            return false;
        const std::string_view digits =
            n.substr(prefix.size(), n.size() - prefix.size() - suffix.size());
        return std::all_of(digits.begin(), digits.end(),
                           [](char c) { return c >= '0' && c <= '9'; });
    };
    std::string_view n = name;
    if (isStepName(n)) return true;
    if (n.ends_with(".unusable")) return isStepName(n.substr(0, n.size() - 9));
    if (isTemporaryName(name) && n.starts_with(".")) { // ".step-....safetensors.tmp-XXXXXX"
        const size_t tmp = n.rfind(".tmp-");
        return n.size() - tmp > 5 && isStepName(n.substr(1, tmp - 1));
    }
    return false;
}

CheckpointInfo inspectCheckpoint(const std::string &path, bool verifyData)
try {
    const auto contents = verifyData ? safetensors::read(path) : safetensors::readHeader(path);
    verify(contents, path, verifyData);
    CheckpointInfo info;
    info.path = path;
    info.step = metaInt(contents, "step", path);
    info.reason = meta(contents, "reason", path);
    if (!parseRunStatus(meta(contents, "status", path), &info.status))
        throw bad(path, "metadata 'status' is '" + meta(contents, "status", path) + "'");
    std::error_code error;
    info.bytes = fs::file_size(path, error);
    if (const auto it = contents.metadata.find("kept"); it != contents.metadata.end())
        info.weightsOnly = it->second == "weights";
    if (const auto it = contents.metadata.find("ensemble"); it != contents.metadata.end()) {
        std::string name;
        for (char ch : it->second + ",")
            if (ch != ',')
                name += ch;
            else if (!name.empty())
                info.ensemble.push_back(std::move(name)), name.clear();
    }
    if (info.step < 0) throw bad(path, "its step " + std::to_string(info.step) + " is negative");
    return info;
} catch (const SessionError &) {
    throw;
} catch (const std::exception &e) {
    throw bad(path, e.what());
}

namespace {

// float32 → bfloat16, round to nearest even; NaN stays a (quiet) NaN.
uint16_t toBfloat16(float value)
{
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return uint16_t((bits >> 16) | 0x0040u);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return uint16_t(bits >> 16);
}

} // namespace

uint64_t slimCheckpoint(const std::string &path, bool bf16)
{
    safetensors::Contents c = safetensors::read(path);
    verify(c, path, true);
    if (const auto it = c.metadata.find("kept"); it != c.metadata.end() && it->second == "weights")
        return 0;
    const uint64_t before = fs::file_size(path);
    std::erase_if(c.tensors,
                  [](const safetensors::Tensor &t) { return t.name.rfind("optimizer.", 0) == 0; });
    if (bf16) {
        for (auto &t : c.tensors) {
            if (t.dtype != safetensors::DType::F32 || t.name.rfind("curve.", 0) == 0 ||
                t.name.rfind("run.", 0) == 0)
                continue;
            std::string half(t.data.size() / 2, '\0');
            for (size_t i = 0; i < t.data.size() / 4; ++i) {
                float v;
                std::memcpy(&v, t.data.data() + 4 * i, 4);
                const uint16_t b = toBfloat16(v);
                std::memcpy(half.data() + 2 * i, &b, 2);
            }
            t.data = std::move(half);
            t.dtype = safetensors::DType::BF16;
        }
        c.metadata["kept_weights"] = "bfloat16";
    }
    c.metadata["optimizer"] = "none";
    c.metadata["kept"] = "weights";
    detail::stampChecksum(c);
    safetensors::write(path, c);
    const uint64_t after = fs::file_size(path);
    return before > after ? before - after : 0;
}

std::vector<CheckpointInfo> listCheckpoints(const std::string &dir,
                                            std::vector<std::string> *problems, bool verifyData)
{
    std::vector<CheckpointInfo> out;
    std::error_code error;
    if (!fs::is_directory(dir, error)) return out;
    fs::directory_iterator entries(dir, error);
    if (error) { // a folder that exists but cannot be read must not look like a run with no checkpoints
        if (problems)
            problems->push_back(dir + ": cannot read the checkpoint folder (" + error.message() +
                                ")");
        return out;
    }
    for (const auto &entry : entries) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("step-", 0) != 0 || entry.path().extension() != ".safetensors") continue;
        if (pathKindAt(entry.path().string()) == PathKind::Link) { // never read through one
            if (problems)
                problems->push_back(
                    entry.path().string() +
                    ": is a symbolic link, not a checkpoint HeadLab wrote; left "
                    "alone (remove it, or copy the file it points to in its place)");
            continue;
        }
        try {
            out.push_back(inspectCheckpoint(entry.path().string(), verifyData));
        } catch (const SessionError &e) {
            if (problems) problems->push_back(e.what());
        }
    }
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.step > b.step; });
    return out;
}

std::vector<int64_t> stepsEveryMemberHas(const std::vector<std::map<int64_t, std::string>> &members)
{
    std::vector<int64_t> steps;
    if (members.empty()) return steps;
    for (auto it = members.front().rbegin(); it != members.front().rend(); ++it)
        if (std::all_of(members.begin(), members.end(),
                        [&](const auto &m) { return m.count(it->first) > 0; }))
            steps.push_back(it->first);
    return steps;
}

std::vector<std::string> ensembleMembers(const std::vector<std::string> &dirs)
{
    std::vector<std::string> names;
    for (const auto &d : dirs)
        if (!d.empty()) names.push_back(fs::path(d).filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

uint64_t directoryBytes(const std::string &dir)
{
    uint64_t total = 0;
    std::error_code error;
    if (!fs::is_directory(dir, error)) return 0;
    for (auto it = fs::recursive_directory_iterator(dir, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error))
        if (it->is_regular_file(error)) total += it->file_size(error);
    return total;
}

namespace {

// The position and result a checkpoint claims, against its run's protocol: a damaged or edited
// file must not mark a run done early, diverged while healthy, or somewhere it never was.
void checkPosition(const LoadedCheckpoint &c, const std::string &path)
{
    const TrainingPosition &p = c.position;
    const RunConfig &config = c.config;
    const int64_t total = config.totalSteps(), phases = static_cast<int64_t>(config.phases.size());
    auto refuse = [&](const std::string &what) {
        throw bad(path, what + " (the run's protocol has " + std::to_string(total) + " steps in " +
                            std::to_string(phases) + " phases)");
    };
    if (p.step < 0 || p.step > total)
        refuse("its step " + std::to_string(p.step) + " lies outside the run's protocol");
    if (p.phase < 0 || p.phase > phases)
        refuse("its phase " + std::to_string(p.phase) + " does not exist");
    int64_t before = 0;
    for (int64_t k = 0; k < p.phase; ++k) before += config.phases[static_cast<size_t>(k)].steps;
    const int64_t phaseSteps =
        p.phase < phases ? config.phases[static_cast<size_t>(p.phase)].steps : 0;
    if (p.phaseStep < 0 || p.phaseStep > phaseSteps || before + p.phaseStep != p.step)
        refuse("its step " + std::to_string(p.step) + " is not step " +
               std::to_string(p.phaseStep) + " of phase " + std::to_string(p.phase));
    if (p.windowSteps < 0 || p.windowSteps > std::max<int64_t>(1, config.logEvery) ||
        !std::isfinite(p.windowSum))
        refuse("its unfinished training-loss window (" + std::to_string(p.windowSteps) +
               " steps) does not fit log_every");
    if (!(p.adamSteps >= 0.0 && p.adamSteps <= static_cast<double>(p.step)) ||
        !(p.wallSeconds >= 0.0 && std::isfinite(p.wallSeconds)))
        refuse("its optimizer step count or wall time is out of range");
    const RunResult &r = c.partial;
    // Done before the protocol's end only when stop_after_learned ended it (issue 50: every
    // learned run of the classroom preset has such a final checkpoint, and Inside the heads
    // refused to open it).
    if (r.status == RunStatus::Done && p.step != total && config.stopAfterLearned <= 0)
        refuse("it calls the run done after " + std::to_string(p.step) + " steps");
    if (r.status == RunStatus::Failed)
        refuse("it records a failed run, which has nothing to resume");
    if (r.status == RunStatus::Diverged && (r.divergedAtStep < 0 || r.divergedAtStep > p.step))
        refuse("it calls the run diverged at step " + std::to_string(r.divergedAtStep) +
               ", after its own step " + std::to_string(p.step));
    if (r.status != RunStatus::Diverged && r.divergedAtStep != -1 && r.divergedAtStep != 0)
        refuse("it gives a divergence step (" + std::to_string(r.divergedAtStep) +
               ") for a run that did not diverge");
    auto checkCurve = [&](const Curve &curve, const std::string &name) {
        for (const auto &point : curve)
            if (point.step > p.step)
                refuse("its curve '" + name + "' has a point at step " +
                       std::to_string(point.step) + ", after its own step");
    };
    checkCurve(r.train, "train");
    checkCurve(r.test, "test");
    for (const auto &[name, curve] : r.extra) checkCurve(curve, name);
    if (static_cast<int64_t>(r.phaseStarts.size()) > phases)
        refuse("it lists more phase starts than the run has phases");
    for (const int64_t start : r.phaseStarts)
        if (start < 0 || start > p.step)
            refuse("it lists a phase start at step " + std::to_string(start));
}

} // namespace

LoadedCheckpoint checkpointFromContents(safetensors::Contents contents, const std::string &path,
                                        const RunConfig *expected)
{
    auto impl = std::make_shared<LoadedCheckpoint::Impl>();
    impl->contents = std::move(contents);
    const auto &c = impl->contents;
    verify(c, path, true);
    LoadedCheckpoint out;
    out.path = path;
    const std::string configText = meta(c, "config_yaml", path);
    try {
        out.config = yaml::readRunConfig(yaml::parseDocument(configText, path + " (config_yaml)"));
    } catch (const SessionError &e) {
        throw bad(path, std::string("its config does not read: ") + e.what());
    }
    // Compared with the run's before anything is built from it (a model, a task). The device is
    // where it trained ("cuda:0" for a session's "auto"), not what it is.
    if (expected) {
        RunConfig mine = *expected, theirs = out.config;
        mine.device = theirs.device = "";
        if (yaml::canonicalYaml(mine) != yaml::canonicalYaml(theirs))
            throw bad(path, "it was written for another configuration than this run's");
    }
    out.position.step = metaInt(c, "step", path);
    out.position.phase = metaInt(c, "phase", path);
    out.position.phaseStep = metaInt(c, "phase_step", path);
    out.position.windowSteps = metaInt(c, "window_steps", path);
    out.position.windowSum = static_cast<float>(metaDouble(c, "window_sum", path));
    out.position.adamSteps = metaDouble(c, "optimizer_steps", path);
    out.position.wallSeconds = metaDouble(c, "wall_seconds", path);
    out.reason = meta(c, "reason", path);
    out.hasMoments = meta(c, "optimizer", path) == "adam";
    if (const auto it = c.metadata.find("task_data"); it != c.metadata.end()) {
        const json data =
            json::parse(it->second); // a flat object of strings (checked: depth ≤ 8 in the header)
        if (!data.is_object()) throw bad(path, "metadata 'task_data' is not an object");
        for (const auto &[k, v] : data.items())
            out.taskData[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
    RunResult &r = out.partial;
    if (!parseRunStatus(meta(c, "status", path), &r.status))
        throw bad(path, "metadata 'status' is not a run status");
    r.message = meta(c, "message", path);
    r.divergedAtStep = metaInt(c, "diverged_at_step", path);
    r.stepsDone = r.status == RunStatus::Diverged ? r.divergedAtStep : out.position.step;
    for (const auto &t : c.tensors) {
        if (t.name == "curve.train")
            r.train = curveOf(t, path);
        else if (t.name == "curve.test")
            r.test = curveOf(t, path);
        else if (t.name.rfind("curve.extra.", 0) == 0)
            r.extra[t.name.substr(12)] = curveOf(t, path);
        else if (t.name == "run.phase_starts") {
            if (t.dtype != safetensors::DType::I64)
                throw bad(path, "'run.phase_starts' is not I64");
            const auto *v = reinterpret_cast<const int64_t *>(t.data.data());
            r.phaseStarts.assign(v, v + t.numel());
        }
    }
    checkPosition(out, path);
    out.tensors = impl;
    return out;
}

LoadedCheckpoint loadCheckpoint(const std::string &path, const RunConfig *expected)
{
    // Every library's exception becomes a message that names the file (a JSON library's range
    // error, LibTorch's, the allocator's), so that the caller can fall back to another checkpoint.
    try {
        return checkpointFromContents(safetensors::read(path), path, expected);
    } catch (const SessionError &) {
        throw;
    } catch (const std::exception &e) {
        throw bad(path, e.what());
    }
}

} // namespace headlab
