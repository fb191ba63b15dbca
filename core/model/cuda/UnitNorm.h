// UnitNorm.h — the post-norm residual step of the unit-scale norm models (nearest neighbour):
// y = g · (a + r) / ‖a + r‖ over each row of d features, forward and backward in one kernel each,
// where ATen takes an add, a norm reduction, a multiply and a divide forward and about eight
// passes backward, on tensors so small (8 runs × 4,096 rows × 64) that each pass costs its launch.
// Plain CUDA, no LibTorch.
#pragma once

#include <cstdint>

namespace headlab::cuda {

struct UnitNormArgs {
    const float *a, *r; // (runs, rows, d): the sublayer's output and the residual
    const float *gain;  // (runs): each run's scale g
    float *y;           // (runs, rows, d): g · s / n
    float *s;           // (runs, rows, d): s = a + r, kept for the backward pass
    float *norm;        // (runs, rows): ‖s‖ without the floor (the backward applies eps itself)
    int64_t runs, rows, d;
    float eps; // 0: no floor (a zero row gives NaN, as the paper's code)
};

struct UnitNormBackwardArgs {
    const float *dy, *s, *norm, *gain; // as above; dy (runs, rows, d)
    float *ds;                         // (runs, rows, d): the gradient of a and of r
    float *rowDot;                     // (runs, rows): dy · s / n, summed per run for g's gradient
    int64_t runs, rows, d;
    float eps;
};

// Enqueue on `stream` (a cudaStream_t), capturable in a CUDA graph; false if the launch failed.
bool unitNorm(const UnitNormArgs &args, void *stream);
bool unitNormBackward(const UnitNormBackwardArgs &args, void *stream);

} // namespace headlab::cuda
