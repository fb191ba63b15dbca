// UnitPoints.cu — see UnitPoints.h. The arithmetic (UnitPointsMath.h) is NearestNeighbourTask::
// unitPoints' step for step: lowbias32 on 32-bit words (the ATen path emulates it on int64
// tensors, mod 2^32), the same float operations for the uniforms and Box–Muller (bit for bit),
// then the norm over the point's coordinates summed in order (ATen's reduction sums in another
// order: last-bit differences).
#include "core/model/cuda/UnitPoints.h"

#include "core/model/cuda/UnitPointsMath.h"

#include <cuda_runtime.h>

namespace headlab::cuda {

namespace {

// One thread per point of one run: its dim coordinates, then their norm (UnitPointsMath.h).
__global__ void unitPointsKernel(UnitPointsArgs a)
{
    const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (index >= a.runs * a.points) return;
    const int64_t run = index / a.points, point = index % a.points;
    headlab::points::unitPoint(static_cast<uint32_t>(a.seedKeys[3 * run]),
                               static_cast<uint32_t>(a.seedKeys[3 * run + 1]),
                               static_cast<uint32_t>(a.seedKeys[3 * run + 2]), *a.step, point,
                               a.dim, a.out + index * a.dim);
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
