// MicroAttention.h — attention over micro-heads for short sequences, one kernel each way:
//   forward   o = softmax(scale · q kᵀ (+ the causal mask)) v for every run, sample and micro-head;
//   backward  dq, dk and dv from do, the probabilities recomputed (nothing is kept between them).
// ATen's path (Transformer::attendMicro) runs a batched product, a scale, a softmax and a second
// product over q, k and v viewed as (R, B, M, T, dm), and copies each of them, and the output and
// their gradients, between that layout and the projections' (R, B, T, M·dm). At w 64 those copies
// took 4.6 of the nearest-neighbour step's 15.8 ms and the small products another few (issue 24's
// profile of nn-fig1-full, 2026-11-29). Here a block reads its rows of q, k and v in the
// projections' layout straight into shared memory, and writes o (and the gradients) in it too.
// Plain CUDA, no LibTorch.
#pragma once

#include <cstdint>

namespace headlab::cuda {

struct MicroAttentionShape {
    int64_t groups = 0;  // runs × samples: each group has T rows of q, k, v and o
    int positions = 0;   // T (queries and keys alike)
    int microHeads = 0;  // M
    int width = 0;       // dm: each micro-head's columns (a row holds M · dm)
    int perBlock = 0;    // G: micro-heads a block takes (microAttentionPerBlock)
    float scale = 1.0f;  // the logit scale
    bool causal = false; // key j > query i masked
};

// How many micro-heads one block takes (G, a divisor of M): enough for 64 columns where M allows,
// within 48 KB of shared memory for the backward pass. 0: T is too long for a block (the caller
// keeps ATen's path).
int microAttentionPerBlock(int positions, int microHeads, int width);

struct MicroAttentionArgs {
    const float *q, *k, *v;            // row r of each at r · its stride; column c contiguous
    int64_t qStride, kStride, vStride; // in floats, ≥ M · dm
    float *o;                          // (groups · T, M · dm), contiguous
    MicroAttentionShape shape;
};

// Enqueues the forward kernel on `stream` (a cudaStream_t), capturable in a CUDA graph. Returns
// false if the launch failed or the shape is out of range.
bool microAttention(const MicroAttentionArgs &args, void *stream);

struct MicroAttentionBackwardArgs {
    const float *q, *k, *v;
    int64_t qStride, kStride, vStride;
    const float *dout;   // (groups · T, M · dm), contiguous
    float *dq, *dk, *dv; // every element written (none added to)
    int64_t dqStride, dkStride, dvStride;
    MicroAttentionShape shape;
};

// Enqueues the backward kernel on `stream`, capturable. Returns false if the launch failed.
bool microAttentionBackward(const MicroAttentionBackwardArgs &args, void *stream);

} // namespace headlab::cuda
