// UnitPoints.h — the nearest-neighbour task's training points (NearestNeighbourTask::unitPoints)
// in one CUDA kernel: the counter hash, the 24-bit uniforms, Box–Muller and the projection onto the
// unit sphere, where the ATen path takes about 60 element-wise kernels over int64 tensors (a
// quarter of an nn step's GPU time on an H100, issue 24's profile). Plain CUDA, no LibTorch.
#pragma once

#include <cstdint>

namespace headlab::cuda {

struct UnitPointsArgs {
    const int64_t *seedKeys; // (runs, 3), each in [0, 2^32)
    const int64_t *step;     // device: the step whose points these are
    float *out;              // (runs, points, dim)
    int64_t runs, points, dim;
};

// Enqueues the kernel on `stream` (a cudaStream_t), capturable in a CUDA graph. Needs
// 2 · points · dim < 2^32 (the hash's counters are 32-bit). Returns false if the launch failed.
bool unitPoints(const UnitPointsArgs &args, void *stream);

} // namespace headlab::cuda
