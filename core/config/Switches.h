// Switches.h — the HEADLAB_* environment switches of the training core, for bench/ and tests:
// one table (a run's provenance records each one that is set, core/train/Trainer.cpp) and one
// reader. Torch-free.
#pragma once

#include <cstdlib>
#include <cstring>

namespace headlab {

struct EnvSwitch {
    const char *name;
    const char *help;
};

inline constexpr EnvSwitch kEnvSwitches[] = {
    {"HEADLAB_ATTENTION", "sdpa: scaled_dot_product_attention instead of explicit micro-heads"},
    {"HEADLAB_FUSED_ADAM", "0: ATen's Adam passes instead of the fused CUDA kernel"},
    {"HEADLAB_DIRECT_GRADIENTS", "0: autograd adds the linear layers' weight gradients"},
    {"HEADLAB_CUDA_GRAPHS", "0: every step launched eagerly"},
    {"HEADLAB_HEAD_STATS", "0: no per-head statistics at evaluations"},
    {"HEADLAB_FUSED_QKV", "0: Q, K, V as three products on the GPU; 1: one product on the CPU too"},
    {"HEADLAB_SPLIT_K", "0: no row-split weight gradients on the GPU; 1: split on the CPU too"},
    {"HEADLAB_UNIT_NORM_EPS", "e: the unit-scale norm divides by max(||x||, e)"},
};

// An on/off switch: "0" off, "1" on, otherwise (unset or another value) `fallback`.
inline bool envSwitch(const char *name, bool fallback)
{
    const char *v = std::getenv(name);
    if (v && std::strcmp(v, "0") == 0) return false;
    if (v && std::strcmp(v, "1") == 0) return true;
    return fallback;
}

} // namespace headlab
