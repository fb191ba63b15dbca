// Checkpoint.cpp — a run's state to and from a safetensors file.
#include "core/train/Checkpoint.h"
#include "core/train/CheckpointFormat.h"

#include "core/config/Files.h"
#include "core/config/Hash.h"
#include "core/config/Safetensors.h"
#include "core/model/Adam.h"
#include "core/model/Transformer.h"
#include "core/schema/RunConfigFields.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

namespace headlab {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using detail::bad;

safetensors::Tensor fromTorch(const std::string &name, const torch::Tensor &value)
{
    const auto t = value.detach().to(torch::kCPU).contiguous();
    safetensors::Tensor out;
    out.name = name;
    if (t.scalar_type() == torch::kFloat32)
        out.dtype = safetensors::DType::F32;
    else if (t.scalar_type() == torch::kFloat64)
        out.dtype = safetensors::DType::F64;
    else if (t.scalar_type() == torch::kInt64)
        out.dtype = safetensors::DType::I64;
    else
        throw std::logic_error("checkpoint: unsupported dtype for " + name);
    for (auto d : t.sizes()) out.shape.push_back(d);
    out.data.assign(static_cast<const char *>(t.data_ptr()),
                    static_cast<size_t>(t.numel()) * t.element_size());
    return out;
}

torch::Tensor toTorch(const safetensors::Tensor &t)
{
    const auto type = t.dtype == safetensors::DType::F32    ? torch::kFloat32
                      : t.dtype == safetensors::DType::F64  ? torch::kFloat64
                      : t.dtype == safetensors::DType::BF16 ? torch::kBFloat16
                                                            : torch::kInt64;
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
        } catch (...) {}
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
        scales.push_back(m.logitScale == LogitScale::InvSqrtHeadDim
                             ? 1.0 / std::sqrt(static_cast<double>(hd))
                         : m.logitScale == LogitScale::InvHeadDim ? 1.0 / static_cast<double>(hd)
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

const safetensors::Tensor &tensorOf(const safetensors::Contents &c, const std::string &name,
                                    const std::string &path, const torch::Tensor &like)
{
    const auto *t = c.find(name);
    if (!t) throw bad(path, "it has no tensor '" + name + "'");
    std::vector<int64_t> shape(like.sizes().begin(), like.sizes().end());
    // Weights-only checkpoints may keep weights in bfloat16 (kept_weights); copy_ widens them.
    if (t->shape != shape ||
        (t->dtype != safetensors::DType::F32 && t->dtype != safetensors::DType::BF16))
        throw bad(path, "tensor '" + name + "' has another shape or dtype than the model's");
    return *t;
}

} // namespace

void writeCheckpoint(const std::string &path, const Transformer &model, const Adam *adam,
                     int64_t run, const RunConfig &config, const RunResult &partial,
                     const TrainingPosition &position, const std::string &reason,
                     const std::map<std::string, std::string> &taskData,
                     const std::vector<std::string> &ensemble)
{
    torch::NoGradGuard noGrad;
    safetensors::Contents c;
    for (const auto &p : const_cast<Transformer &>(model).parameters())
        c.tensors.push_back(fromTorch(p.name, p.value[run]));
    for (const auto &b : const_cast<Transformer &>(model).buffers())
        c.tensors.push_back(fromTorch(b.name, b.value[run]));
    if (adam) {
        auto &a = const_cast<Adam &>(*adam);
        for (const auto &p : const_cast<Transformer &>(model).parameters()) {
            c.tensors.push_back(fromTorch("optimizer.exp_avg." + p.name, a.firstMoment(p, run)));
            c.tensors.push_back(
                fromTorch("optimizer.exp_avg_sq." + p.name, a.secondMoment(p, run)));
        }
    }
    c.tensors.push_back(fromTorch("curve.train", curveTensor(partial.train)));
    c.tensors.push_back(fromTorch("curve.test", curveTensor(partial.test)));
    for (const auto &[name, curve] : partial.extra)
        c.tensors.push_back(fromTorch("curve.extra." + name, curveTensor(curve)));
    c.tensors.push_back(fromTorch("run.phase_starts",
                                  torch::tensor(partial.phaseStarts, torch::kInt64).reshape({-1})));

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
    if (!taskData.empty()) m["task_data"] = json(taskData).dump();
    if (!ensemble.empty()) {
        std::string names;
        for (const auto &n : ensemble) names += (names.empty() ? "" : ",") + n;
        m["ensemble"] = names;
    }
    m["headlab"] = HEADLAB_VERSION;
    m["libtorch"] = TORCH_VERSION;
    detail::stampChecksum(c);
    makeDirectories(directoryOf(path));
    safetensors::write(path, c);
}

void checkCheckpointFits(const LoadedCheckpoint &checkpoint, Transformer &model, int64_t run)
{
    const auto &c = checkpoint.tensors->contents;
    for (auto &p : model.parameters()) {
        const auto like = p.value[run];
        tensorOf(c, p.name, checkpoint.path, like);
        if (checkpoint.hasMoments) {
            tensorOf(c, "optimizer.exp_avg." + p.name, checkpoint.path, like);
            tensorOf(c, "optimizer.exp_avg_sq." + p.name, checkpoint.path, like);
        }
    }
    for (auto &b : model.buffers()) tensorOf(c, b.name, checkpoint.path, b.value[run]);
}

void restoreWeights(const LoadedCheckpoint &checkpoint, Transformer &model, int64_t run)
{
    torch::NoGradGuard noGrad;
    for (auto &p : model.parameters()) {
        auto target = p.value[run];
        target.copy_(
            toTorch(tensorOf(checkpoint.tensors->contents, p.name, checkpoint.path, target)));
    }
    for (auto &b : model.buffers()) { // σReparam's power-iteration state
        auto target = b.value[run];
        target.copy_(
            toTorch(tensorOf(checkpoint.tensors->contents, b.name, checkpoint.path, target)));
    }
}

void restoreMoments(const LoadedCheckpoint &checkpoint, Adam &adam, const Transformer &model,
                    int64_t run)
{
    if (!checkpoint.hasMoments)
        throw bad(checkpoint.path,
                  "it holds no optimizer state, so training cannot resume from it");
    torch::NoGradGuard noGrad;
    for (const auto &p : const_cast<Transformer &>(model).parameters()) {
        auto exp = adam.firstMoment(p, run), expSq = adam.secondMoment(p, run);
        exp.copy_(toTorch(tensorOf(checkpoint.tensors->contents, "optimizer.exp_avg." + p.name,
                                   checkpoint.path, exp)));
        expSq.copy_(toTorch(tensorOf(checkpoint.tensors->contents, "optimizer.exp_avg_sq." + p.name,
                                     checkpoint.path, expSq)));
    }
    adam.stepCount().fill_(checkpoint.position.adamSteps);
}

} // namespace headlab
