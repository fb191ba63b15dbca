// AttentionPlan.h — the attention path of each layer of an ensemble, decided once.
//
// A layer's runs attend either over micro-heads (the least common multiple M of the runs' head
// counts, each head a block of M / h adjacent micro-heads whose scores add up; one path for every
// head count, a few batched products, and on the GPU one kernel each way where every run has the
// same heads) or head by head through scaled_dot_product_attention (ATen's kernels; a group of
// runs per head count). Micro-heads pay on short sequences, where the fused kernels' backward is
// slow; long ones (text) always take sdpa. planLayer says which, and why, from:
// - the runs' heads (w·H each) and the layer's width: M must divide it and stay within a bound,
//   measured on an H200 (kMaxMicroHeads, kMaxMixedMicroHeads; on the CPU kMaxCpuMicroHeads, and a
//   uniform ensemble takes the lanes where heads are narrow, kLaneMaxHeadDim, else sdpa, which is
//   faster there than micro-heads);
// - the sequence length (up to kExplicitAttentionMaxLength);
// - the device, and whether the micro-heads kernel is built, switched on and fits the shape;
// - the stabilizers (a soft cap keeps the explicit softmax: the kernel cannot cap);
// - the switches HEADLAB_ATTENTION (sdpa, micro-heads) and HEADLAB_MICRO_HEADS_BOUND.
// The model builds its layers by the plan (and falls back from the kernel where a launch refuses
// a layout: fellBack), the scheduler prices an ensemble by it (attentionScoreWork), runs that
// differ only in head counts share an ensemble where it allows (headCountsShareAnEnsemble), and
// provenance records it as it ran (describe). Torch-free.
#pragma once

#include "core/config/RunConfig.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace headlab {

// Sequences up to this length may attend over micro-heads; longer ones take sdpa.
constexpr int64_t kExplicitAttentionMaxLength = 64;

// The bounds on M, measured on one H200 (2026-11-29, 28e42cf, five runs of the nn-fig1 slice at
// w 8, docs/data/issue24/micro-heads-beyond-64-h200-28e42cf.jsonl): micro-heads took 0.36, 0.92
// and 0.87 times sdpa's step at M 128, 256 and 512 with one head count, and 0.61 at M 128 with
// runs of 2, 8 and 16 heads (whose scores the (M, M) mix adds up per head). Mixed ensembles beyond
// 128 and the CPU (where a uniform ensemble never takes micro-heads) were not measured; they keep
// 64. HEADLAB_MICRO_HEADS_BOUND=n sets both GPU bounds to n (an earlier commit's, to time or price
// its runs again); HEADLAB_ATTENTION=micro-heads lifts them, =sdpa turns micro-heads off.
constexpr int64_t kMaxMicroHeads = 512;      // on the GPU, every run with the same heads
constexpr int64_t kMaxMixedMicroHeads = 128; // on the GPU, runs of several head counts
constexpr int64_t kMaxCpuMicroHeads = 64;
// On the CPU, one head count, heads this wide at most take the lanes (core/model/LaneAttention.h):
// measured on two cores of a Xeon (2026-12-05, headlab-bench single, batch 64, lanes and ATen's
// kernel in turn) a step took 0.77 times ATen's at head width 4 (24 × 6) and 0.88–0.90 at 8
// (24 × 3, 96 × 12), but 1.03–1.22 at 16 to 384 (48 × 3, 96 × 3, 192 × 6, 384 × 12, 384 × 1),
// where ATen's kernel vectorizes over the head width itself. The lever's table is in
// docs/PERFORMANCE.md (bench/cpu_peers.sh, part lanes).
constexpr int64_t kLaneMaxHeadDim = 8;

// M for these runs' heads (w·H each) in a layer of width `inner`, within the device's bound; 0
// where M does not divide the width, is beyond the bound, or the switch says sdpa.
int64_t microHeadCount(const std::vector<int64_t> &headsOfRuns, int64_t inner, bool gpu = true);
// Whether the runs' head counts in one layer differ: then an (M, M) mix adds the micro-heads'
// scores up per head, and microHeadCount bounds M by kMaxMixedMicroHeads.
bool headCountsDiffer(const std::vector<int64_t> &headsOfRuns);

// MicroHeads: over the layer's M micro-heads. Sdpa: head by head through ATen's
// scaled_dot_product_attention, a call per head-count group. Explicit: head by head with an
// explicit softmax, where a soft cap must act on the scores (ATen's kernels cannot cap them).
// Lanes: on the CPU, head by head with every (sequence, head) pair a lane of the vector unit
// (core/model/LaneAttention.h), for short sequences where ATen's kernel's blocks are too small.
enum class AttentionPath { MicroHeads, Sdpa, Explicit, Lanes };
const char *toString(AttentionPath path); // "micro-heads", "sdpa", "explicit", "lanes"

// What runs the layers: the device, and the micro-heads kernel there (built, switched on by
// HEADLAB_FUSED_ATTENTION, and whether it fits a shape: positions, micro-heads, their width).
struct AttentionDevice {
    bool gpu = false;
    bool kernel = false;
    std::function<bool(int64_t positions, int64_t microHeads, int64_t width)> kernelFits;
};

struct LayerAttention {
    AttentionPath path = AttentionPath::Sdpa;
    int64_t microHeads = 0; // M; 0 for sdpa
    bool mixed = false;     // the runs' head counts differ (micro-heads: the (M, M) mix)
    // Micro-heads through the MicroAttention kernel, one kernel each way (every run with the same
    // heads, no soft cap, the kernel on and fitting); else the explicit products.
    bool kernel = false;
    // sdpa at a short sequence with a head width that is a multiple of 4: ATen's memory-efficient
    // kernel, whose backward the scheduler prices higher (attentionScoreCounts).
    bool memoryEfficient = false;
    bool longSequence = false; // past kExplicitAttentionMaxLength: sdpa's fused kernels, any width
    std::string why;           // why this path, in a few words ("sequence of 128 > 64 positions")
    // Set by the model where the kernel refused a layout at a call and the explicit products ran
    // instead (the plan said kernel): what it said.
    std::string fellBack;
};

struct AttentionPlan {
    std::vector<LayerAttention> layers;
    // As provenance records it: "micro-heads", "sdpa" or "explicit" where every layer takes the
    // same path, else each layer's ("micro-heads, sdpa"); a layer that fell back from the kernel
    // adds " (kernel refused: why)".
    std::string describe() const;
    bool anyKernel() const; // a layer's plan takes the micro-heads kernel
};

// One layer: its runs' heads (w·H each), its width w·H·m_H, its head width m_H, the sequence
// length the model attends over (0: unknown, taken as short), the device, a soft cap.
LayerAttention planLayer(const std::vector<int64_t> &headsOfRuns, int64_t inner, int64_t headDim,
                         int64_t sequenceLength, const AttentionDevice &device, bool softcap);
// Every layer of an ensemble's model: `runHeads` each run's heads per layer (H, before w).
AttentionPlan planAttention(const ModelConfig &model,
                            const std::vector<std::vector<int64_t>> &runHeads,
                            int64_t sequenceLength, const AttentionDevice &device, bool softcap);

// Whether runs that differ only in head counts may train as one ensemble: where their layers take
// one path for every head count (a derived head width keeps every weight's shape, and sequences
// short enough for micro-heads). On long sequences each head-count group would need its own
// attention calls, which measured slower than separate ensembles side by side (bench/gpu_text.sh).
bool headCountsShareAnEnsemble(const ModelConfig &model, int64_t sequenceLength);

// What one run's attention scores cost in a layer, per query-key pair of one training step, counted
// by what prices them: the scheduler weighs each count by a constant fitted on the GPU
// (attentionScoreWork), and headlab-bench prints the counts so that bench/price_fit.py can refit
// the constants from measured steps.
struct ScoreCounts {
    double microHeads = 0; // the layer's M micro-heads' score passes
    double mix = 0;        // the mix's products where the runs' heads differ: 4·M² FLOPs
    double sdpaNarrow = 0; // heads through sdpa on a short sequence at a width not a multiple of 4
    double sdpaFused = 0;  // heads through sdpa's memory-efficient kernel on a short sequence
    double sdpaLong = 0;   // heads through sdpa on a long sequence (its fused kernels)
    // Runs through sdpa on a short sequence: what each pays whatever its heads (its q, k, v and
    // output moved to and from the head-major layout, and their gradients).
    double sdpaRuns = 0;
    double explicitSoftmax = 0; // heads through the explicit softmax a soft cap needs
    double lanes = 0;           // heads through the CPU's lanes (not fitted: priced as explicit)
    ScoreCounts &operator+=(const ScoreCounts &o);
    ScoreCounts operator*(double k) const;
};
// `ownHeads`: w·H of the run.
ScoreCounts attentionScoreCounts(const LayerAttention &layer, int64_t ownHeads);
// The counts in FLOP-equivalents of the products (SweepRunner.h, estimateStepFlops).
double attentionScoreWork(const ScoreCounts &counts);

} // namespace headlab
