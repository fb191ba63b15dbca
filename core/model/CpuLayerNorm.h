// CpuLayerNorm.h — the LayerNorm with each run's own scale and shift on the CPU, one loop each way:
// the arithmetic of the CUDA kernel (cuda/LayerNorm.h), y = b + (x − μ) · rstd · (c · g) with
// rstd = 1 / sqrt(biased var + eps). ATen's path takes layer_norm, a multiply and addcmul forward,
// and addcmul's three passes, two reductions and the norm's backward back: at the classroom's
// widths each of those calls costs about what its arithmetic does. Raw FP32 pointers, contiguous;
// the rows split over the intra-op threads. Internal to core/model (Kernels.h is the entry point).
#pragma once

#include "core/model/cuda/LayerNorm.h"

#include <cstdint>

namespace headlab::cpu {

// The forward pass takes the CUDA kernel's arguments (cuda::LayerNormArgs, plain C++).
using cuda::LayerNormArgs;

struct LayerNormBackwardArgs {
    const float *dy, *x, *mean, *rstd, *gain; // as LayerNormArgs; dy (runs, rows, d)
    float *dx;                                // (runs, rows, d)
    float *dgain, *dshift; // (runs, d): c · Σ dy · x̂ and Σ dy over the rows
    int64_t runs, rows, d;
    float scale;
};

void layerNorm(const LayerNormArgs &args);
void layerNormBackward(const LayerNormBackwardArgs &args);

} // namespace headlab::cpu
