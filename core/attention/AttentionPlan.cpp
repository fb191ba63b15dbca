// AttentionPlan.cpp — see AttentionPlan.h.
#include "core/attention/AttentionPlan.h"

#include "core/config/Switches.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace headlab {

namespace {

std::string attentionSwitch()
{
    const char *env = switchText(Switch::Attention);
    return env ? env : "";
}

// The bound on M for these runs on this device (HEADLAB_MICRO_HEADS_BOUND on the GPU).
int64_t microHeadBound(const std::vector<int64_t> &headsOfRuns, bool gpu)
{
    int64_t bound = !gpu                            ? kMaxCpuMicroHeads
                    : headCountsDiffer(headsOfRuns) ? kMaxMixedMicroHeads
                                                    : kMaxMicroHeads;
    if (const char *text = gpu ? switchText(Switch::MicroHeadsBound) : nullptr) {
        char *end = nullptr;
        const long long n = std::strtoll(text, &end, 10);
        if (end != text && *end == '\0' && n > 0) bound = n;
    }
    return bound;
}

int64_t leastCommonMultiple(const std::vector<int64_t> &headsOfRuns)
{
    int64_t M = 1;
    for (auto h : headsOfRuns) M = std::lcm(M, std::max<int64_t>(1, h));
    return M;
}

// The element-wise passes over one attention score (scores, softmax, probabilities and their
// gradients) in FLOP-equivalents of one training step, by the path the layer takes. Fitted on one
// H200 (2026-12-04, bench/price_fit.sh then bench/price_fit.py; data and fit in
// docs/data/issue72/: price-h200-390f083.jsonl, plan-h200-390f083.jsonl,
// price-fit-h200-390f083.json) with the per-step floor (core/train/SweepRunner.cpp), to 42
// ensembles timed alone: nn-fig1-full's 1-layer slice at w 8 through micro-heads, through sdpa
// forced, and with mixed head counts through sdpa (each head count its own call); and issue 57's
// two four-card plans (addition at d 24 to 384; nn at w 1 and 8). Against the products:
// - kMicroScoreWork (1,120) per score and micro-head;
// - sdpa on a short sequence pays kSdpaRunWork (543,000) per score and run whatever its heads
//   (the head-major copies of q, k, v and the output, each way), plus per head kNarrowSdpaScoreWork
//   (300) at head widths that are not a multiple of 4 (sdpa's own explicit path), or
//   kFusedScoreWork (700) at those that are (its memory-efficient kernel). Before the refit, sdpa's
//   narrow heads were priced as micro-heads and the run's share not at all: three runs of 32, 64
//   and 64 heads at w 8 were priced at 0.87 of their measured step (relative to the slice), now
//   0.97.
// Long sequences (text) take sdpa's fused kernels; their scores are priced at kScoreWork,
// unfitted; so is the explicit softmax of a soft cap.
constexpr double kScoreWork = 1000;
constexpr double kMicroScoreWork = 1120;
constexpr double kNarrowSdpaScoreWork = 300;
constexpr double kFusedScoreWork = 700;
constexpr double kSdpaRunWork = 5.43e5;

} // namespace

bool headCountsDiffer(const std::vector<int64_t> &headsOfRuns)
{
    return std::any_of(headsOfRuns.begin(), headsOfRuns.end(), [&](int64_t h) {
        return std::max<int64_t>(1, h) != std::max<int64_t>(1, headsOfRuns.front());
    });
}

int64_t microHeadCount(const std::vector<int64_t> &headsOfRuns, int64_t inner, bool gpu)
{
    const std::string mode = attentionSwitch();
    if (mode == "sdpa" || headsOfRuns.empty()) return 0;
    const int64_t M = leastCommonMultiple(headsOfRuns);
    if (inner % M != 0 || (M > microHeadBound(headsOfRuns, gpu) && mode != "micro-heads")) return 0;
    return M;
}

const char *toString(AttentionPath path)
{
    switch (path) {
    case AttentionPath::MicroHeads:
        return "micro-heads";
    case AttentionPath::Sdpa:
        return "sdpa";
    case AttentionPath::Lanes:
        return "lanes";
    case AttentionPath::Explicit:
        break;
    }
    return "explicit";
}

LayerAttention planLayer(const std::vector<int64_t> &headsOfRuns, int64_t inner, int64_t headDim,
                         int64_t sequenceLength, const AttentionDevice &device, bool softcap)
{
    LayerAttention layer;
    layer.mixed = headCountsDiffer(headsOfRuns);
    const bool shortSequence = sequenceLength <= kExplicitAttentionMaxLength;
    // Head by head: sdpa, or the explicit softmax a soft cap needs.
    auto headByHead = [&](std::string why) {
        layer.path = softcap ? AttentionPath::Explicit : AttentionPath::Sdpa;
        layer.microHeads = 0;
        layer.longSequence = !shortSequence;
        layer.memoryEfficient = !softcap && shortSequence && headDim % 4 == 0;
        layer.why = softcap ? why + "; a soft cap: an explicit softmax" : std::move(why);
        return layer;
    };
    if (!shortSequence)
        return headByHead("sequence of " + std::to_string(sequenceLength) + " > " +
                          std::to_string(kExplicitAttentionMaxLength) + " positions");
    const std::string mode = attentionSwitch();
    if (mode == "sdpa") return headByHead("HEADLAB_ATTENTION=sdpa");
    // One head count on the CPU, narrow heads: the lanes (kLaneMaxHeadDim); switched off, or wider
    // heads, sdpa, which measured 3–13 % a step faster than micro-heads.
    const bool lanesOn = switchOn(Switch::CpuAttention, true);
    const bool lanesEverywhere = switchOn(Switch::CpuAttention, false); // set to "1"
    if (!layer.mixed && !device.gpu && !softcap &&
        (headDim <= kLaneMaxHeadDim || lanesEverywhere)) {
        if (!lanesOn) return headByHead("one head count on the CPU, HEADLAB_CPU_ATTENTION=0");
        layer = headByHead("one head count on the CPU: every (sequence, head) a vector lane");
        layer.path = AttentionPath::Lanes;
        layer.memoryEfficient = false;
        return layer;
    }
    const int64_t M = microHeadCount(headsOfRuns, inner, device.gpu);
    if (M == 0) {
        const int64_t lcm = leastCommonMultiple(headsOfRuns);
        if (inner % lcm != 0)
            return headByHead(std::to_string(lcm) + " micro-heads do not divide the width " +
                              std::to_string(inner));
        return headByHead(std::to_string(lcm) + " micro-heads beyond the bound " +
                          std::to_string(microHeadBound(headsOfRuns, device.gpu)));
    }
    if (!layer.mixed && !device.gpu) // measured: 3–13 % a step faster at m 24–96 (headlab-bench)
        return headByHead("one head count on the CPU, where sdpa is faster");
    layer.path = AttentionPath::MicroHeads;
    layer.microHeads = M;
    const int64_t width = inner / M;
    layer.kernel =
        device.gpu && device.kernel && !layer.mixed && !softcap &&
        (sequenceLength <= 0 || (device.kernelFits && device.kernelFits(sequenceLength, M, width)));
    layer.why = std::to_string(M) + " micro-heads" + (layer.mixed ? ", mixed head counts" : "") +
                (layer.kernel ? ", the kernel" : "");
    return layer;
}

AttentionPlan planAttention(const ModelConfig &model,
                            const std::vector<std::vector<int64_t>> &runHeads,
                            int64_t sequenceLength, const AttentionDevice &device, bool softcap)
{
    AttentionPlan plan;
    const int64_t w = std::max<int64_t>(1, model.widthMultiplier);
    for (size_t l = 0; l < model.heads.size(); ++l) {
        const int64_t heads = model.heads[l] * w, headDim = model.headDimOfLayer(l);
        std::vector<int64_t> headsOfRuns;
        for (const auto &run : runHeads)
            headsOfRuns.push_back((l < run.size() ? run[l] : model.heads[l]) * w);
        if (headsOfRuns.empty()) headsOfRuns.push_back(heads);
        plan.layers.push_back(
            planLayer(headsOfRuns, heads * headDim, headDim, sequenceLength, device, softcap));
    }
    return plan;
}

std::string AttentionPlan::describe() const
{
    auto one = [](const LayerAttention &l) {
        std::string text = toString(l.path);
        if (!l.fellBack.empty()) text += " (kernel refused: " + l.fellBack + ")";
        return text;
    };
    std::string all;
    bool same = true;
    for (size_t l = 0; l < layers.size(); ++l) {
        same = same && one(layers[l]) == one(layers.front());
        all += (l ? ", " : "") + one(layers[l]);
    }
    return same && !layers.empty() ? one(layers.front()) : all;
}

bool AttentionPlan::anyKernel() const
{
    return std::any_of(layers.begin(), layers.end(),
                       [](const LayerAttention &l) { return l.kernel; });
}

bool headCountsShareAnEnsemble(const ModelConfig &model, int64_t sequenceLength)
{
    return model.headDim == 0 && sequenceLength <= kExplicitAttentionMaxLength;
}

ScoreCounts &ScoreCounts::operator+=(const ScoreCounts &o)
{
    microHeads += o.microHeads;
    mix += o.mix;
    sdpaNarrow += o.sdpaNarrow;
    sdpaFused += o.sdpaFused;
    sdpaLong += o.sdpaLong;
    sdpaRuns += o.sdpaRuns;
    explicitSoftmax += o.explicitSoftmax;
    lanes += o.lanes;
    return *this;
}

ScoreCounts ScoreCounts::operator*(double k) const
{
    return {microHeads * k, mix * k,      sdpaNarrow * k,      sdpaFused * k,
            sdpaLong * k,   sdpaRuns * k, explicitSoftmax * k, lanes * k};
}

ScoreCounts attentionScoreCounts(const LayerAttention &layer, int64_t ownHeads)
{
    ScoreCounts counts;
    const double heads = static_cast<double>(ownHeads);
    switch (layer.path) {
    case AttentionPath::MicroHeads: {
        const double M = static_cast<double>(layer.microHeads);
        counts.microHeads = M;
        // A mixed ensemble's mix is one more product each way (forward, and the scores' gradient;
        // the mix is constant): 2 · 2 · M² FLOPs per query-key pair.
        counts.mix = layer.mixed ? 4.0 * M * M : 0.0;
        break;
    }
    case AttentionPath::Sdpa:
        (layer.longSequence      ? counts.sdpaLong
         : layer.memoryEfficient ? counts.sdpaFused
                                 : counts.sdpaNarrow) = heads;
        counts.sdpaRuns = layer.longSequence ? 0.0 : 1.0;
        break;
    case AttentionPath::Explicit:
        counts.explicitSoftmax = heads;
        break;
    case AttentionPath::Lanes:
        counts.lanes = heads;
        break;
    }
    return counts;
}

double attentionScoreWork(const ScoreCounts &c)
{
    return c.microHeads * kMicroScoreWork + c.mix + c.sdpaNarrow * kNarrowSdpaScoreWork +
           c.sdpaFused * kFusedScoreWork + c.sdpaRuns * kSdpaRunWork +
           (c.sdpaLong + c.explicitSoftmax + c.lanes) * kScoreWork;
}

} // namespace headlab
