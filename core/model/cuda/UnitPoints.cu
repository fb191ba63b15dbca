// UnitPoints.cu — see UnitPoints.h. The arithmetic is NearestNeighbourTask::unitPoints' step for
// step: lowbias32 on 32-bit words (the ATen path emulates it on int64 tensors, mod 2^32), the same
// float operations for the uniforms and Box–Muller (bit for bit), then the norm over the point's
// coordinates summed in order (ATen's reduction sums in another order: last-bit differences).
#include "core/model/cuda/UnitPoints.h"

#include <cuda_runtime.h>

namespace headlab::cuda {

namespace {

__device__ __forceinline__ uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

__device__ __forceinline__ float uniform24(uint32_t bits)
{
    return (static_cast<float>(bits >> 8) + 0.5f) * (1.0f / 16777216.0f);
}

// One thread per point of one run: its dim coordinates, then their norm.
__global__ void unitPointsKernel(UnitPointsArgs a)
{
    const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (index >= a.runs * a.points) return;
    const int64_t run = index / a.points, point = index % a.points;
    const uint32_t s1 = static_cast<uint32_t>(a.seedKeys[3 * run]);
    const uint32_t s2 = static_cast<uint32_t>(a.seedKeys[3 * run + 1]);
    const uint32_t s3 = static_cast<uint32_t>(a.seedKeys[3 * run + 2]);
    const uint32_t step = static_cast<uint32_t>(*a.step & 0xffffffffLL);
    const uint32_t k1 = mix32(mix32(step ^ s1) + s2);
    const uint32_t k2 = mix32(k1 + s3);
    const float twoPi = static_cast<float>(2.0 * 3.14159265358979323846);
    float *out = a.out + index * a.dim;
    float sumSq = 0.0f;
    for (int64_t j = 0; j < a.dim; ++j) {
        const uint32_t counter = static_cast<uint32_t>(2 * (point * a.dim + j));
        const float u0 = uniform24(mix32(mix32(counter ^ k1) + k2));
        const float u1 = uniform24(mix32(mix32((counter + 1) ^ k1) + k2));
        const float radius = sqrtf(-2.0f * logf(u0));
        const float normal = radius * cosf(u1 * twoPi);
        out[j] = normal;
        sumSq += normal * normal;
    }
    const float norm = fmaxf(sqrtf(sumSq), 1e-12f);
    for (int64_t j = 0; j < a.dim; ++j) out[j] = out[j] / norm;
}

} // namespace

bool unitPoints(const UnitPointsArgs &args, void *stream)
{
    const int64_t threads = args.runs * args.points;
    if (threads == 0) return true;
    constexpr int kBlock = 128;
    const int64_t blocks = (threads + kBlock - 1) / kBlock;
    unitPointsKernel<<<static_cast<unsigned>(blocks), kBlock, 0,
                       static_cast<cudaStream_t>(stream)>>>(args);
    return cudaPeekAtLastError() == cudaSuccess;
}

} // namespace headlab::cuda
