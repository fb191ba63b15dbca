// BiasReluProduct.h — the feed-forward block's first product with its bias and ReLU in the
// product's epilogue, h = relu(x·w1 + b1) for every run of an ensemble in one CUTLASS kernel (FP32,
// CUDA cores), instead of cuBLAS's product and then BiasRelu.h's pass over h (issue 56).
//
// Where it is faster, measured (bench/cutlass_products.sh, NVIDIA H200, 2026-12-03): nearest
// neighbour's block, x (R, 4096, 64) · w1 (R, 64, 2048), 274 µs against 395 at 8 runs and 2.10 ms
// against 2.99 at 64, the same bits. Its inner dimension (64) leaves cuBLAS's FP32 kernels at half
// the card's rate, and h (256 MB at 8 runs) is written once instead of written, read and written
// again. At an inner dimension of 2,048 CUTLASS's FP32 kernels ran at half cuBLAS's rate, so
// Kernels.cpp takes this path only for narrow inputs and wide hidden layers (fusedFfnProductFits).
//
// Compiled only where the build found CUTLASS's headers (cmake/HeadlabCutlass.cmake: the pinned
// nvidia-cutlass wheel). No LibTorch.
#pragma once

#include <cstdint>

namespace headlab::cuda {

struct BiasReluProductArgs {
    const float *x;    // (runs, rows, inner), row-major
    const float *w;    // (runs, inner, width), row-major
    const float *bias; // (runs, width)
    float *h;          // (runs, rows, width): written
    int64_t runs, rows, inner, width;
};

// Enqueues the product on `stream` (a cudaStream_t), capturable in a CUDA graph (no workspace, no
// host synchronisation). NaN stays NaN, as torch.relu. Returns false where CUTLASS cannot take
// the shape or the launch failed (nothing written).
bool biasReluProduct(const BiasReluProductArgs &args, void *stream);

} // namespace headlab::cuda
