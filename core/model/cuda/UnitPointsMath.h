// UnitPointsMath.h — one point of the nearest-neighbour task's training data, as the CUDA kernel
// (UnitPoints.cu) and the CPU loop (Kernels.cpp's fusedUnitPoints) both compute it: lowbias32
// (C. Wellons' integer hash) on 32-bit words keyed by (run, step), two 24-bit uniforms per
// coordinate, Box–Muller, then the projection onto the unit sphere with the norm summed in order.
// NearestNeighbourTask::unitPoints' ATen path is the reference both are tested against. Plain C++
// that nvcc compiles for the device too; no LibTorch.
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define HEADLAB_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define HEADLAB_HOST_DEVICE inline
#endif

namespace headlab::points {

HEADLAB_HOST_DEVICE uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

HEADLAB_HOST_DEVICE float uniform24(uint32_t bits)
{
    return (static_cast<float>(bits >> 8) + 0.5f) * (1.0f / 16777216.0f);
}

// The dim coordinates of point `point` of one run (seed keys s1, s2, s3 in [0, 2^32)) at `step`,
// written to out[0, dim). The hash's counters are 32-bit: 2 · points · dim < 2^32.
HEADLAB_HOST_DEVICE void unitPoint(uint32_t s1, uint32_t s2, uint32_t s3, int64_t step,
                                   int64_t point, int64_t dim, float *out)
{
    const uint32_t k1 = mix32(mix32(static_cast<uint32_t>(step & 0xffffffffLL) ^ s1) + s2);
    const uint32_t k2 = mix32(k1 + s3);
    const float twoPi = static_cast<float>(2.0 * 3.14159265358979323846);
    float sumSq = 0.0f;
    for (int64_t j = 0; j < dim; ++j) {
        const auto counter = static_cast<uint32_t>(2 * (point * dim + j));
        const float u0 = uniform24(mix32(mix32(counter ^ k1) + k2));
        const float u1 = uniform24(mix32(mix32((counter + 1) ^ k1) + k2));
        const float radius = sqrtf(-2.0f * logf(u0));
        const float normal = radius * cosf(u1 * twoPi);
        out[j] = normal;
        sumSq += normal * normal;
    }
    const float norm = fmaxf(sqrtf(sumSq), 1e-12f);
    for (int64_t j = 0; j < dim; ++j) out[j] = out[j] / norm;
}

} // namespace headlab::points

#undef HEADLAB_HOST_DEVICE
