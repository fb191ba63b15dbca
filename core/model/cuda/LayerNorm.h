// LayerNorm.h — the LayerNorm of the text and addition models with each run's own scale and
// shift: y = b + (x − μ) · rstd · s, with rstd = 1 / sqrt(biased var + eps) and s = c · g (the
// caller's c turns the unbiased-variance convention of Transformer::norm into this one). Forward
// in one kernel, where ATen takes layer_norm, a multiply and addcmul; backward in one kernel plus
// a sum over row slices, where ATen takes addcmul's three passes and two reductions and the
// layer norm's backward. One warp per row; the row's features stay in registers (d ≤ 1024).
// Plain CUDA, no LibTorch.
#pragma once

#include <cstdint>

namespace headlab::cuda {

inline constexpr int64_t kLayerNormMaxWidth = 1024;

struct LayerNormArgs {
    const float *x;            // (runs, rows, d)
    const float *gain, *shift; // (runs, d): g and b
    float *y;                  // (runs, rows, d)
    float *mean, *rstd;        // (runs, rows): kept for the backward pass
    int64_t runs, rows, d;
    float eps;   // added to the biased variance
    float scale; // c: s = c · g
};

struct LayerNormBackwardArgs {
    const float *dy, *x, *mean, *rstd, *gain; // as above; dy (runs, rows, d)
    float *dx;                                // (runs, rows, d)
    // (runs, slices, 2, d): per row slice, c · Σ dy · x̂ (g's gradient) and Σ dy (b's); the caller
    // sums the slices, in a fixed order, so the same bits come every run.
    float *partial;
    int64_t runs, rows, d, slices;
    float scale;
};

// How many row slices the backward pass cuts each run's rows into (its partial's second size).
int64_t layerNormSlices(int64_t runs, int64_t rows);

// Enqueue on `stream` (a cudaStream_t), capturable in a CUDA graph; false if the launch failed or
// d is over kLayerNormMaxWidth.
bool layerNorm(const LayerNormArgs &args, void *stream);
bool layerNormBackward(const LayerNormBackwardArgs &args, void *stream);

} // namespace headlab::cuda
