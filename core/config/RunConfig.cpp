// RunConfig.cpp — enum names, the paper's addition protocol and the checks a run must pass.
#include "core/config/RunConfig.h"

#include "core/config/Switches.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
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

std::string checkCombinations(const RunConfig &c)
{
    const ModelConfig &m = c.model;
    for (size_t l = 0; l < m.heads.size(); ++l)
        if (m.headDim == 0 && m.heads[l] > 0 && m.dModel % m.heads[l] != 0)
            return "model.heads[" + str(l) + "]: " + str(m.heads[l]) +
                   " heads do not divide d_model " + str(m.dModel) + " (layer " + str(l) +
                   "); set head_dim explicitly or pick a divisor";
    for (size_t i = 0; i < c.phases.size(); ++i) {
        const OptimizerConfig &o = c.phases[i].optimizer;
        if (o.weightDecay > 0 && o.kind == OptimizerKind::Adam)
            return "phases[" + str(i) +
                   "].optimizer.weight_decay: Adam here has no weight decay; use kind adamw";
    }
    const StabilizerConfig &st = c.stabilizers;
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
