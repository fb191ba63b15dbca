// Checkpoint.cpp — a run's state to and from a safetensors file.
#include "core/train/Checkpoint.h"

#include "core/config/Files.h"
#include "core/config/Hash.h"
#include "core/model/Adam.h"
#include "core/model/Safetensors.h"
#include "core/model/Transformer.h"
#include "core/tasks/RunConfigFields.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

namespace headlab {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct LoadedCheckpoint::Impl {
    safetensors::Contents contents;
};

namespace {

// FNV-1a of every tensor's bytes, in file order.
uint64_t dataHash(const std::vector<safetensors::Tensor> &tensors)
{
    uint64_t hash = kFnv1aOffset;
    for (const auto &t : tensors) hash = fnv1a(t.data, hash);
    return hash;
}

std::string hex(uint64_t v)
{
    char buffer[24];
    std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(v));
    return buffer;
}

SessionError bad(const std::string &path, const std::string &what)
{
    return fileError(path, "is not a usable checkpoint: " + what);
}

safetensors::Tensor fromTorch(const std::string &name, const torch::Tensor &value)
{
    const auto t = value.detach().to(torch::kCPU).contiguous();
    safetensors::Tensor out;
    out.name = name;
    if (t.scalar_type() == torch::kFloat32) out.dtype = safetensors::DType::F32;
    else if (t.scalar_type() == torch::kFloat64) out.dtype = safetensors::DType::F64;
    else if (t.scalar_type() == torch::kInt64) out.dtype = safetensors::DType::I64;
    else throw std::logic_error("checkpoint: unsupported dtype for " + name);
    for (auto d : t.sizes()) out.shape.push_back(d);
    out.data.assign(static_cast<const char *>(t.data_ptr()), static_cast<size_t>(t.numel()) * t.element_size());
    return out;
}

torch::Tensor toTorch(const safetensors::Tensor &t)
{
    const auto type = t.dtype == safetensors::DType::F32 ? torch::kFloat32 : t.dtype == safetensors::DType::F64 ? torch::kFloat64 : torch::kInt64;
    auto out = torch::empty(t.shape, torch::TensorOptions().dtype(type));
    std::memcpy(out.data_ptr(), t.data.data(), t.data.size());
    return out;
}

torch::Tensor curveTensor(const Curve &curve)
{
    auto t = torch::empty({static_cast<int64_t>(curve.size()), 2}, torch::kFloat64);
    auto a = t.accessor<double, 2>();
    for (size_t i = 0; i < curve.size(); ++i) {
        a[static_cast<int64_t>(i)][0] = static_cast<double>(curve[i].step);
        a[static_cast<int64_t>(i)][1] = curve[i].value;
    }
    return t;
}

Curve curveOf(const safetensors::Tensor &t, const std::string &path)
{
    if (t.dtype != safetensors::DType::F64 || t.shape.size() != 2 || t.shape[1] != 2)
        throw bad(path, "'" + t.name + "' is not an (n, 2) F64 curve");
    Curve out;
    const double *v = reinterpret_cast<const double *>(t.data.data());
    for (int64_t i = 0; i < t.shape[0]; ++i) out.push_back({static_cast<int64_t>(v[2 * i]), v[2 * i + 1]});
    return out;
}

json yamlToJson(const YAML::Node &node)
{
    if (node.IsMap()) {
        json out = json::object();
        for (const auto &kv : node) out[kv.first.as<std::string>()] = yamlToJson(kv.second);
        return out;
    }
    if (node.IsSequence()) {
        json out = json::array();
        for (const auto &item : node) out.push_back(yamlToJson(item));
        return out;
    }
    if (node.IsNull()) return nullptr;
    const std::string text = node.as<std::string>();
    if (node.Tag() != "!") { // an unquoted scalar: a number or a boolean when it reads as one
        if (text == "true" || text == "false") return text == "true";
        try {
            size_t used = 0;
            const long long i = std::stoll(text, &used);
            if (used == text.size()) return i;
            const double d = std::stod(text, &used);
            if (used == text.size()) return d;
        } catch (...) {
        }
    }
    return text;
}

// The model's shapes and conventions, spelled out for a notebook (docs/CHECKPOINTS.md).
json modelJson(const Transformer &model, const RunConfig &config)
{
    const ModelConfig &m = config.model;
    json heads = json::array(), headDims = json::array(), scales = json::array();
    for (size_t l = 0; l < m.heads.size(); ++l) {
        const int64_t hd = m.headDimOfLayer(l);
        heads.push_back(m.heads[l]);
        headDims.push_back(hd);
        scales.push_back(m.logitScale == LogitScale::InvSqrtHeadDim ? 1.0 / std::sqrt(static_cast<double>(hd))
                         : m.logitScale == LogitScale::InvHeadDim   ? 1.0 / static_cast<double>(hd)
                                                                     : 1.0);
    }
    return {{"d_model", m.dModel},
            {"heads", heads},
            {"head_dims", headDims},
            {"logit_scales", scales},
            {"width_multiplier", m.widthMultiplier},
            {"ffn_width", m.ffn()},
            {"activation", m.activation == Activation::Gelu ? "gelu" : "relu"},
            {"norm", m.norm == NormKind::LayerNorm ? "layer_norm_unbiased_eps_1e-9" : "unit_scale"},
            {"placement", m.placement == NormPlacement::PreNorm ? "pre" : "post"},
            {"final_norm", m.finalNorm},
            {"causal", m.causal},
            {"bias", m.bias},
            {"vocab_size", model.vocabSize()},
            {"parameters", model.parameterCount()}};
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
    } catch (...) {
    }
    throw bad(path, "metadata '" + key + "' is '" + text + "', not an integer");
}

double metaDouble(const safetensors::Contents &c, const std::string &key, const std::string &path)
{
    const std::string text = meta(c, key, path);
    try {
        size_t used = 0;
        const double v = std::stod(text, &used);
        if (used == text.size()) return v;
    } catch (...) {
    }
    throw bad(path, "metadata '" + key + "' is '" + text + "', not a number");
}

// Format, version and checksum.
void verify(const safetensors::Contents &c, const std::string &path, bool data)
{
    const auto format = c.metadata.find("format");
    if (format == c.metadata.end() || format->second != kCheckpointFormat)
        throw bad(path, "it is a safetensors file but not a HeadLab checkpoint (no format: headlab-checkpoint)");
    const int64_t version = metaInt(c, "format_version", path);
    if (version > kCheckpointVersion)
        throw bad(path, "format version " + std::to_string(version) + " is newer than this HeadLab reads (" +
                            std::to_string(kCheckpointVersion) + ")");
    if (data && meta(c, "data_fnv1a64", path) != hex(dataHash(c.tensors)))
        throw bad(path, "its tensor data does not match its checksum (the file is damaged)");
}

const safetensors::Tensor &tensorOf(const safetensors::Contents &c, const std::string &name, const std::string &path,
                                    const torch::Tensor &like)
{
    const auto *t = c.find(name);
    if (!t) throw bad(path, "it has no tensor '" + name + "'");
    std::vector<int64_t> shape(like.sizes().begin(), like.sizes().end());
    if (t->shape != shape || t->dtype != safetensors::DType::F32)
        throw bad(path, "tensor '" + name + "' has another shape or dtype than the model's");
    return *t;
}

} // namespace

std::string checkpointFileName(int64_t step)
{
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "step-%09lld.safetensors", static_cast<long long>(step));
    return buffer;
}

CheckpointInfo inspectCheckpoint(const std::string &path, bool verifyData)
{
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
    return info;
}

std::vector<CheckpointInfo> listCheckpoints(const std::string &dir, std::vector<std::string> *problems, bool verifyData)
{
    std::vector<CheckpointInfo> out;
    std::error_code error;
    if (!fs::is_directory(dir, error)) return out;
    for (const auto &entry : fs::directory_iterator(dir, error)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("step-", 0) != 0 || entry.path().extension() != ".safetensors") continue;
        try {
            out.push_back(inspectCheckpoint(entry.path().string(), verifyData));
        } catch (const SessionError &e) {
            if (problems) problems->push_back(e.what());
        }
    }
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.step > b.step; });
    return out;
}

uint64_t directoryBytes(const std::string &dir)
{
    uint64_t total = 0;
    std::error_code error;
    if (!fs::is_directory(dir, error)) return 0;
    for (auto it = fs::recursive_directory_iterator(dir, error); !error && it != fs::recursive_directory_iterator(); it.increment(error))
        if (it->is_regular_file(error)) total += it->file_size(error);
    return total;
}

void writeCheckpoint(const std::string &path, const Transformer &model, const Adam *adam, int64_t run,
                     const RunConfig &config, const RunResult &partial, const TrainingPosition &position,
                     const std::string &reason)
{
    torch::NoGradGuard noGrad;
    safetensors::Contents c;
    for (const auto &p : const_cast<Transformer &>(model).parameters()) c.tensors.push_back(fromTorch(p.name, p.value[run]));
    if (adam) {
        auto &a = const_cast<Adam &>(*adam);
        for (const auto &p : const_cast<Transformer &>(model).parameters()) {
            c.tensors.push_back(fromTorch("optimizer.exp_avg." + p.name, a.firstMoment(p, run)));
            c.tensors.push_back(fromTorch("optimizer.exp_avg_sq." + p.name, a.secondMoment(p, run)));
        }
    }
    c.tensors.push_back(fromTorch("curve.train", curveTensor(partial.train)));
    c.tensors.push_back(fromTorch("curve.test", curveTensor(partial.test)));
    for (const auto &[name, curve] : partial.extra) c.tensors.push_back(fromTorch("curve.extra." + name, curveTensor(curve)));
    c.tensors.push_back(fromTorch("run.phase_starts", torch::tensor(partial.phaseStarts, torch::kInt64).reshape({-1})));

    auto &m = c.metadata;
    m["format"] = kCheckpointFormat;
    m["format_version"] = std::to_string(kCheckpointVersion);
    m["step"] = std::to_string(position.step);
    m["phase"] = std::to_string(position.phase);
    m["phase_step"] = std::to_string(position.phaseStep);
    m["window_steps"] = std::to_string(position.windowSteps);
    char number[64];
    std::snprintf(number, sizeof number, "%.9g", static_cast<double>(position.windowSum));
    m["window_sum"] = number;
    std::snprintf(number, sizeof number, "%.17g", position.adamSteps);
    m["optimizer_steps"] = number;
    std::snprintf(number, sizeof number, "%.17g", position.wallSeconds);
    m["wall_seconds"] = number;
    m["optimizer"] = adam ? "adam" : "none";
    m["reason"] = reason;
    m["status"] = toString(partial.status);
    m["message"] = partial.message;
    m["diverged_at_step"] = std::to_string(partial.divergedAtStep);
    m["config_yaml"] = yaml::canonicalYaml(config);
    m["config"] = yamlToJson(YAML::Load(yaml::canonicalYaml(config))).dump();
    m["model"] = modelJson(model, config).dump();
    m["headlab"] = HEADLAB_VERSION;
    m["libtorch"] = TORCH_VERSION;
    m["data_fnv1a64"] = hex(dataHash(c.tensors));
    makeDirectories(directoryOf(path));
    safetensors::write(path, c);
}

LoadedCheckpoint loadCheckpoint(const std::string &path, const RunConfig *expected)
{
    auto impl = std::make_shared<LoadedCheckpoint::Impl>();
    impl->contents = safetensors::read(path);
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
    if (expected && yaml::canonicalYaml(*expected) != configText)
        throw bad(path, "it was written for another configuration than this run's");
    out.position.step = metaInt(c, "step", path);
    out.position.phase = metaInt(c, "phase", path);
    out.position.phaseStep = metaInt(c, "phase_step", path);
    out.position.windowSteps = metaInt(c, "window_steps", path);
    out.position.windowSum = static_cast<float>(metaDouble(c, "window_sum", path));
    out.position.adamSteps = metaDouble(c, "optimizer_steps", path);
    out.position.wallSeconds = metaDouble(c, "wall_seconds", path);
    out.reason = meta(c, "reason", path);
    out.hasMoments = meta(c, "optimizer", path) == "adam";
    RunResult &r = out.partial;
    if (!parseRunStatus(meta(c, "status", path), &r.status)) throw bad(path, "metadata 'status' is not a run status");
    r.message = meta(c, "message", path);
    r.divergedAtStep = metaInt(c, "diverged_at_step", path);
    r.stepsDone = r.status == RunStatus::Diverged ? r.divergedAtStep : out.position.step;
    for (const auto &t : c.tensors) {
        if (t.name == "curve.train") r.train = curveOf(t, path);
        else if (t.name == "curve.test") r.test = curveOf(t, path);
        else if (t.name.rfind("curve.extra.", 0) == 0) r.extra[t.name.substr(12)] = curveOf(t, path);
        else if (t.name == "run.phase_starts") {
            if (t.dtype != safetensors::DType::I64) throw bad(path, "'run.phase_starts' is not I64");
            const auto *v = reinterpret_cast<const int64_t *>(t.data.data());
            r.phaseStarts.assign(v, v + t.numel());
        }
    }
    if (out.position.phase < 0 || out.position.phase > static_cast<int64_t>(out.config.phases.size()) ||
        out.position.step < 0 || out.position.step > out.config.totalSteps())
        throw bad(path, "its step " + std::to_string(out.position.step) + " or phase lies outside the run's protocol");
    out.tensors = impl;
    return out;
}

void restoreWeights(const LoadedCheckpoint &checkpoint, Transformer &model, int64_t run)
{
    torch::NoGradGuard noGrad;
    for (auto &p : model.parameters()) {
        auto target = p.value[run];
        target.copy_(toTorch(tensorOf(checkpoint.tensors->contents, p.name, checkpoint.path, target)));
    }
}

void restoreMoments(const LoadedCheckpoint &checkpoint, Adam &adam, const Transformer &model, int64_t run)
{
    if (!checkpoint.hasMoments) throw bad(checkpoint.path, "it holds no optimizer state, so training cannot resume from it");
    torch::NoGradGuard noGrad;
    for (const auto &p : const_cast<Transformer &>(model).parameters()) {
        auto exp = adam.firstMoment(p, run), expSq = adam.secondMoment(p, run);
        exp.copy_(toTorch(tensorOf(checkpoint.tensors->contents, "optimizer.exp_avg." + p.name, checkpoint.path, exp)));
        expSq.copy_(toTorch(tensorOf(checkpoint.tensors->contents, "optimizer.exp_avg_sq." + p.name, checkpoint.path, expSq)));
    }
    adam.stepCount().fill_(checkpoint.position.adamSteps);
}

} // namespace headlab
