// UnitNorm.cu — see UnitNorm.h. One warp per row: each lane takes every 32nd feature, and the row's
// sums go round the warp by shuffles. The same operations as ATen's path, in its order:
// y = (g · s) / n (only the norm's sum is in another order: last-bit differences).
#include "core/model/cuda/UnitNorm.h"

#include "core/model/cuda/WarpSum.cuh"

#include <cuda_runtime.h>

namespace headlab::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;

__global__ void unitNormKernel(UnitNormArgs a)
{
    const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= a.runs * a.rows) return; // the whole warp leaves together
    const int64_t base = row * a.d;
    float sumSq = 0.0f;
    for (int64_t j = lane; j < a.d; j += 32) {
        const float s = a.a[base + j] + a.r[base + j];
        a.s[base + j] = s;
        sumSq += s * s;
    }
    const float exact = sqrtf(warpSum(sumSq));
    const float n = a.eps > 0.0f ? fmaxf(exact, a.eps) : exact;
    const float g = a.gain[row / a.rows];
    if (lane == 0) a.norm[row] = exact; // the backward derives n and whether the floor applied
    __syncwarp();
    for (int64_t j = lane; j < a.d; j += 32) a.y[base + j] = (g * a.s[base + j]) / n;
}

// With u = s / n: ds = (g / n) · (dy − u (dy · u)), and dy · u for g's gradient; where eps floors
// the norm (n = eps > ‖s‖), n is a constant: ds = (g / n) · dy.
__global__ void unitNormBackwardKernel(UnitNormBackwardArgs a)
{
    const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= a.runs * a.rows) return;
    const int64_t base = row * a.d;
    const float exact = a.norm[row];
    const bool floored = a.eps > 0.0f && exact < a.eps;
    const float n = floored ? a.eps : exact;
    float dot = 0.0f;
    for (int64_t j = lane; j < a.d; j += 32) dot += a.dy[base + j] * a.s[base + j];
    dot = warpSum(dot) / n; // dy · u
    const float g = a.gain[row / a.rows];
    if (lane == 0) a.rowDot[row] = dot;
    const float scale = g / n;
    for (int64_t j = lane; j < a.d; j += 32) {
        const float dy = a.dy[base + j];
        a.ds[base + j] = floored ? scale * dy : scale * (dy - (a.s[base + j] / n) * dot);
    }
}

unsigned blocksFor(int64_t rows)
{
    return static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
}

} // namespace

bool unitNorm(const UnitNormArgs &args, void *stream)
{
    const int64_t rows = args.runs * args.rows;
    if (rows == 0 || args.d == 0) return true;
    if ((rows + kWarpsPerBlock - 1) / kWarpsPerBlock >= (int64_t{1} << 31)) return false;
    unitNormKernel<<<blocksFor(rows), 32 * kWarpsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
        args);
    return cudaPeekAtLastError() == cudaSuccess;
}

bool unitNormBackward(const UnitNormBackwardArgs &args, void *stream)
{
    const int64_t rows = args.runs * args.rows;
    if (rows == 0 || args.d == 0) return true;
    if ((rows + kWarpsPerBlock - 1) / kWarpsPerBlock >= (int64_t{1} << 31)) return false;
    unitNormBackwardKernel<<<blocksFor(rows), 32 * kWarpsPerBlock, 0,
                             static_cast<cudaStream_t>(stream)>>>(args);
    return cudaPeekAtLastError() == cudaSuccess;
}

} // namespace headlab::cuda
