// Switches.h — the HEADLAB_* environment switches of the training core, for bench/ and tests: one
// table, read only through its rows (by id), so that a switch's name is written once. A run's
// provenance records each one that is set (core/train/Trainer.cpp), and the tests that must not
// run under an outside setting walk the table. Torch-free.
#pragma once

#include <cstdlib>
#include <cstring>

namespace headlab {

enum class Switch {
    Attention,       // sdpa: no micro-heads; micro-heads: beyond microHeadCount's bounds
    FusedAdam,       // 0: ATen's Adam passes (GPU and CPU)
    DirectGradients, // 0: autograd adds the linear layers' weight gradients
    CudaGraphs,      // 0: every step launched eagerly
    HeadStats,       // 0: no per-head statistics
    FusedQkv,        // 0: Q, K, V as three products on the GPU; 1: one product on the CPU too
    SplitK,          // 0: no row-split weight gradients on the GPU; 1: split on the CPU too
    UnitNormEps,     // e: the unit-scale norm divides by max(||x||, e)
    FusedPoints,     // 0: the nearest-neighbour task's points by ATen's passes (GPU and CPU)
    FusedFfn,        // 0: the ReLU feed-forward block's bias and ReLU as ATen's passes on the GPU
    FfnProduct,      // 0: the block's first product by cuBLAS, its bias and ReLU in a pass after it
    FusedNorm,       // 0: the unit-scale norm's residual step as ATen's passes on the GPU
    FusedLayerNorm,  // 0: the LayerNorm with each run's scale and shift as ATen's passes
    FusedAttention,  // 0: attention over micro-heads as ATen's products and softmax on the GPU
    Placement,       // 0: on several GPUs, ensembles go to whichever device's worker is free first
    HeadGroups,      // 0: on the GPU, runs of one weight shape train together whatever their heads
    MicroHeadsBound, // n: on the GPU, micro-heads up to n, for one head count and several alike
    CpuAttention,   // 0: on the CPU, short sequences through ATen's sdpa; 1: the lanes at any width
    FlushDenormals, // 0: on the CPU, denormal floats computed in full instead of flushed to zero
    CpuLoopThreads, // 0: HeadLab's own CPU loops on one thread instead of the intra-op threads
    FusedEmbedding, // 0: on the CPU, the token embedding and positions as ATen's passes
};

struct EnvSwitch {
    Switch id;
    const char *name;
    const char *help;
};

inline constexpr EnvSwitch kEnvSwitches[] = {
    {Switch::Attention, "HEADLAB_ATTENTION",
     "sdpa: scaled_dot_product_attention instead of explicit micro-heads; micro-heads: explicit "
     "micro-heads at any count that divides the layer's width, not only up to the bounds (on the "
     "GPU 512 for one head count, 128 for several; 64 on the CPU)"},
    {Switch::FusedAdam, "HEADLAB_FUSED_ADAM",
     "0: ATen's Adam passes instead of the fused CUDA kernel (on the GPU) or one pass over the "
     "parameters (on the CPU)"},
    {Switch::DirectGradients, "HEADLAB_DIRECT_GRADIENTS",
     "0: autograd adds the linear layers' weight gradients"},
    {Switch::CudaGraphs, "HEADLAB_CUDA_GRAPHS", "0: every step launched eagerly"},
    {Switch::HeadStats, "HEADLAB_HEAD_STATS", "0: no per-head statistics at evaluations"},
    {Switch::FusedQkv, "HEADLAB_FUSED_QKV",
     "0: Q, K, V as three products on the GPU; 1: one product on the CPU too"},
    {Switch::SplitK, "HEADLAB_SPLIT_K",
     "0: no row-split weight gradients on the GPU; 1: split on the CPU too"},
    {Switch::UnitNormEps, "HEADLAB_UNIT_NORM_EPS",
     "e: the unit-scale norm divides by max(||x||, e)"},
    {Switch::FusedPoints, "HEADLAB_FUSED_POINTS",
     "0: the nearest-neighbour task's training points by ATen's passes instead of one CUDA kernel "
     "(on the GPU) or one loop (on the CPU)"},
    {Switch::FusedFfn, "HEADLAB_FUSED_FFN",
     "0: the ReLU feed-forward block's bias, ReLU and their gradients as ATen's passes instead of "
     "one CUDA kernel each way"},
    {Switch::FfnProduct, "HEADLAB_FFN_PRODUCT",
     "0: the ReLU feed-forward block's first product by cuBLAS with its bias and ReLU in a kernel "
     "after it, instead of one CUTLASS product with them in its epilogue (where the input is at "
     "most 64 wide and the hidden layer at least 1,024)"},
    {Switch::FusedNorm, "HEADLAB_FUSED_NORM",
     "0: the unit-scale norm's residual step (add, norm, scale) and its gradient as ATen's passes "
     "instead of one CUDA kernel each way"},
    {Switch::FusedLayerNorm, "HEADLAB_FUSED_LAYER_NORM",
     "0: the LayerNorm with each run's scale and shift (text, addition) and its gradients as "
     "ATen's passes instead of one CUDA kernel (on the GPU) or one loop (on the CPU) each way"},
    {Switch::FusedAttention, "HEADLAB_FUSED_ATTENTION",
     "0: attention over micro-heads for short sequences (nearest neighbour, addition) as ATen's "
     "batched products, softmax and layout copies instead of one CUDA kernel each way"},
    {Switch::Placement, "HEADLAB_PLACEMENT",
     "0: on several GPUs, each ensemble trains on whichever device's worker takes it first, "
     "instead of the device it is placed on (least work first) before the sweep starts"},
    {Switch::HeadGroups, "HEADLAB_HEAD_GROUPS",
     "0: on the GPU, runs of one weight shape train as one ensemble whatever their head counts, "
     "instead of apart where the least common multiple of their heads costs a tenth of the work"},
    {Switch::MicroHeadsBound, "HEADLAB_MICRO_HEADS_BOUND",
     "n: on the GPU, explicit micro-heads up to n for one head count and for several alike, "
     "instead of 512 and 128 (the bound of 64 that commits before 6ebf4fa had, to time or price "
     "their runs again: bench/multi4_balance.py --bound)"},
    {Switch::CpuAttention, "HEADLAB_CPU_ATTENTION",
     "0: on the CPU, attention over short sequences (addition, nearest neighbour) by ATen's "
     "scaled_dot_product_attention instead of HeadLab's lanes, every (sequence, head) pair a lane "
     "of the vector unit; 1: the lanes at every head width, not only where they measured faster"},
    {Switch::FlushDenormals, "HEADLAB_FLUSH_DENORMALS",
     "0: on the CPU, floats below 1.2e-38 (denormals) computed in full, each on the processor's "
     "slow path, instead of flushed to zero (the training threads' FTZ and DAZ modes)"},
    {Switch::CpuLoopThreads, "HEADLAB_CPU_LOOP_THREADS",
     "0: HeadLab's own CPU loops (Adam's pass, the LayerNorm, the embedding, the lanes, the "
     "nearest-neighbour points) on one thread instead of the intra-op threads (--threads)"},
    {Switch::FusedEmbedding, "HEADLAB_FUSED_EMBEDDING",
     "0: on the CPU, the token embedding and the learned positions as ATen's index_select and add, "
     "and their gradients as index_add_ and a sum, instead of one loop each way"},
};

// The row of a switch.
inline constexpr const EnvSwitch &envSwitchRow(Switch id)
{
    for (const auto &row : kEnvSwitches)
        if (row.id == id) return row;
    return kEnvSwitches[0]; // unreachable: every id has a row (tests/core checks)
}

// A switch's text, or nullptr when it is not set.
inline const char *switchText(Switch id)
{
    return std::getenv(envSwitchRow(id).name);
}

// An on/off switch: "0" off, "1" on, otherwise (unset or another value) `fallback`.
inline bool switchOn(Switch id, bool fallback)
{
    const char *v = switchText(id);
    if (v && std::strcmp(v, "0") == 0) return false;
    if (v && std::strcmp(v, "1") == 0) return true;
    return fallback;
}

} // namespace headlab
