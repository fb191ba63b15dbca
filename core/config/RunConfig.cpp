// RunConfig.cpp — enum names, the paper's addition protocol, and the checks a run must pass.
#include "core/config/RunConfig.h"

#include <cmath>
#include <sstream>

namespace headlab {

const char *toString(Objective v)
{
    switch (v) {
    case Objective::NextToken:
        return "next_token";
    case Objective::Answer:
        return "answer";
    case Objective::Regression:
        return "regression";
    }
    return "?";
}

const char *toString(OptimizerKind v)
{
    return v == OptimizerKind::Adam ? "adam" : "adamw";
}
const char *toString(InitKind v)
{
    return v == InitKind::Uniform ? "uniform" : "pytorch";
}
const char *toString(QkNorm v)
{
    return v == QkNorm::Off ? "off" : v == QkNorm::On ? "on" : "gain";
}
const char *toString(SigmaReparam v)
{
    return v == SigmaReparam::Off ? "off" : v == SigmaReparam::QueryKey ? "qk" : "all";
}
std::string describe(const StabilizerConfig &s)
{
    std::ostringstream out;
    out.precision(6);
    const char *sep = "";
    if (s.qkNorm != QkNorm::Off) out << sep << "qk_norm " << toString(s.qkNorm), sep = ", ";
    if (s.softcap > 0) out << sep << "softcap " << s.softcap, sep = ", ";
    if (s.zLoss > 0) out << sep << "z_loss " << s.zLoss, sep = ", ";
    if (s.sigmaReparam != SigmaReparam::Off)
        out << sep << "sigma_reparam " << toString(s.sigmaReparam), sep = ", ";
    if (s.independentWeightDecay > 0)
        out << sep << "independent_weight_decay " << s.independentWeightDecay, sep = ", ";
    const std::string text = out.str();
    return text.empty() ? "none" : text;
}
const char *toString(ScheduleKind v)
{
    return v == ScheduleKind::Constant ? "constant" : "warmup_cosine";
}
const char *toString(NormKind v)
{
    return v == NormKind::LayerNorm ? "layer_norm" : "unit_scale";
}
const char *toString(NormPlacement v)
{
    return v == NormPlacement::PreNorm ? "pre" : "post";
}
const char *toString(Activation v)
{
    return v == Activation::Gelu ? "gelu" : "relu";
}

const char *toString(LogitScale v)
{
    switch (v) {
    case LogitScale::InvSqrtHeadDim:
        return "inv_sqrt_head_dim";
    case LogitScale::InvHeadDim:
        return "inv_head_dim";
    case LogitScale::None:
        return "none";
    }
    return "?";
}

namespace {

template <typename T>
std::string str(const T &v)
{
    std::ostringstream s;
    s << v;
    return s.str();
}

} // namespace

std::string beyondLimit(int64_t maximum, int64_t got, const std::string &what)
{
    return "at most " + str(maximum) + (what.empty() ? "" : " " + what) +
           " (a HeadLab limit), got " + str(got);
}

namespace {

// The first RunLimits bound that `c` exceeds, or "".
std::string firstLimitExceeded(const RunConfig &c)
{
    const ModelConfig &m = c.model;
    const TaskConfig &t = c.task;
    struct Bound {
        const char *key;
        int64_t value;
        int64_t maximum;
    };
    const Bound bounds[] = {
        {"model.layers", m.layers(), RunLimits::kMaxLayers},
        {"model.d_model", m.dModel, RunLimits::kMaxDModel},
        {"model.head_dim", m.headDim, RunLimits::kMaxDModel},
        {"model.ffn_width", m.ffnWidth, RunLimits::kMaxFfnWidth},
        {"model.width_multiplier", m.widthMultiplier, RunLimits::kMaxWidthMultiplier},
        {"phases", static_cast<int64_t>(c.phases.size()), RunLimits::kMaxPhases},
        {"task.point_dim", t.pointDim, RunLimits::kMaxDModel},
        {"task.num_points", t.numPoints, RunLimits::kMaxPoints},
        {"task.context_length", t.contextLength, RunLimits::kMaxContextLength},
        {"task.train_pairs", t.trainPairs, RunLimits::kMaxTrainPairs},
        {"task.test_pairs", t.testPairs, RunLimits::kMaxTestPairs},
        {"task.test_pair_base", t.testPairBase, RunLimits::kMaxPairBase},
        {"task.corpus_bytes", t.corpusBytes, RunLimits::kMaxCorpusBytes},
        {"task.sample_length", t.sampleLength, RunLimits::kMaxSampleLength},
        {"task.sample_count", t.sampleCount, RunLimits::kMaxSampleCount},
        {"eval_every", c.evalEvery, RunLimits::kMaxSteps},
        {"log_every", c.logEvery, RunLimits::kMaxSteps},
        {"eval_batches", c.evalBatches, RunLimits::kMaxSteps},
    };
    for (const auto &b : bounds)
        if (b.value > b.maximum) return std::string(b.key) + ": " + beyondLimit(b.maximum, b.value);
    for (size_t l = 0; l < m.heads.size(); ++l)
        if (m.heads[l] > RunLimits::kMaxHeads)
            return "model.heads[" + str(l) +
                   "]: " + beyondLimit(RunLimits::kMaxHeads, m.heads[l], "heads");
    for (size_t i = 0; i < c.phases.size(); ++i) {
        const std::string where = "phases[" + str(i) + "]";
        if (c.phases[i].steps > RunLimits::kMaxSteps)
            return where + ".steps: " + beyondLimit(RunLimits::kMaxSteps, c.phases[i].steps);
        if (c.phases[i].batchSize > RunLimits::kMaxBatchSize)
            return where +
                   ".batch_size: " + beyondLimit(RunLimits::kMaxBatchSize, c.phases[i].batchSize);
    }
    return {};
}

} // namespace

std::string checkModelAndPhases(const RunConfig &c)
{
    const ModelConfig &m = c.model;
    if (std::string limit = firstLimitExceeded(c); !limit.empty()) return limit;
    if (m.dModel <= 0) return "model.d_model: must be positive, got " + str(m.dModel);
    if (m.heads.empty()) return "model.heads: at least one layer is needed";
    if (m.headDim < 0) return "model.head_dim: must be positive (or 0 to derive d_model / heads)";
    for (size_t l = 0; l < m.heads.size(); ++l) {
        const std::string where = "model.heads[" + str(l) + "]";
        if (m.heads[l] <= 0)
            return where + ": layer " + str(l) + " needs at least one head, got " + str(m.heads[l]);
        if (m.headDim == 0 && m.dModel % m.heads[l] != 0)
            return where + ": " + str(m.heads[l]) + " heads do not divide d_model " +
                   str(m.dModel) + " (layer " + str(l) +
                   "); set head_dim explicitly or pick a divisor";
    }
    if (m.ffnWidth < 0) return "model.ffn_width: must be positive (or 0 for 4 · d_model)";
    if (m.widthMultiplier <= 0) return "model.width_multiplier: must be at least 1";
    if (!(c.lr > 0) || !std::isfinite(c.lr))
        return "lr: the learning rate must be a positive number, got " + str(c.lr);
    if (c.phases.empty()) return "phases: at least one training phase is needed";
    for (size_t i = 0; i < c.phases.size(); ++i) {
        const PhaseConfig &p = c.phases[i];
        const std::string where = "phases[" + str(i) + "]";
        if (p.steps < 0) return where + ".steps: must not be negative, got " + str(p.steps);
        if (p.batchSize <= 0)
            return where + ".batch_size: must be positive, got " + str(p.batchSize);
        if (!p.useScannedLr && !(p.lr > 0))
            return where + ".lr: must be positive, got " + str(p.lr);
        const OptimizerConfig &o = p.optimizer;
        if (!(o.beta1 >= 0 && o.beta1 < 1))
            return where + ".optimizer.beta1: must be in [0, 1), got " + str(o.beta1);
        if (!(o.beta2 >= 0 && o.beta2 < 1))
            return where + ".optimizer.beta2: must be in [0, 1), got " + str(o.beta2);
        if (!(o.eps > 0)) return where + ".optimizer.eps: must be positive, got " + str(o.eps);
        if (o.weightDecay < 0) return where + ".optimizer.weight_decay: must not be negative";
        if (o.weightDecay > 0 && o.kind == OptimizerKind::Adam)
            return where + ".optimizer.weight_decay: Adam here has no weight decay; use kind adamw";
        if (!(p.schedule.warmupFraction >= 0 && p.schedule.warmupFraction <= 1))
            return where + ".schedule.warmup_fraction: must be in [0, 1]";
    }
    if (c.evalEvery <= 0) return "eval_every: must be positive, got " + str(c.evalEvery);
    if (c.logEvery <= 0) return "log_every: must be positive, got " + str(c.logEvery);
    if (c.qkRule.enabled && !(c.qkRule.referenceHeadDim > 0))
        return "qk_rule.reference_head_dim: must be positive";
    const StabilizerConfig &st = c.stabilizers;
    if (!(st.softcap >= 0) || std::isinf(st.softcap))
        return "stabilizers.softcap: must be 0 (off) or a positive cap, got " + str(st.softcap);
    if (!(st.zLoss >= 0) || std::isinf(st.zLoss))
        return "stabilizers.z_loss: must be 0 (off) or a positive coefficient, got " +
               str(st.zLoss);
    if (!(st.independentWeightDecay >= 0 && st.independentWeightDecay < 1))
        return "stabilizers.independent_weight_decay: must be in [0, 1), got " +
               str(st.independentWeightDecay);
    if (st.sigmaReparam == SigmaReparam::All && c.model.zeroInitOutputs)
        return "stabilizers.sigma_reparam: 'all' reparametrizes W_O and the MLP's W_2 too, which "
               "model.zero_init_outputs starts at zero (spectral norm 0); set "
               "model.zero_init_outputs: false, or use 'qk'";
    if (st.zLoss > 0)
        for (size_t i = 0; i < c.phases.size(); ++i)
            if (c.phases[i].objective == Objective::Regression)
                return "stabilizers.z_loss: phases[" + str(i) +
                       "] is a regression (no output logits to take log Z of); z-loss applies to "
                       "token outputs";
    return {};
}

std::string resolveTaskPath(const TaskConfig &task, const std::string &path)
{
    if (path.empty() || path.front() == '/' || task.baseDirectory.empty() ||
        task.baseDirectory == ".")
        return path;
    return task.baseDirectory + "/" + path;
}

} // namespace headlab
