// BiasRelu.cu — see BiasRelu.h.
#include "core/model/cuda/BiasRelu.h"

#include <cuda_runtime.h>

namespace headlab::cuda {

namespace {

constexpr int kBlock = 256;

// The rows [first, last) of slice `slice` when `rows` are cut into `slices` slices.
__device__ __forceinline__ void sliceRows(int64_t rows, int64_t slices, int64_t slice,
                                          int64_t &first, int64_t &last)
{
    const int64_t per = (rows + slices - 1) / slices;
    first = slice * per < rows ? slice * per : rows;
    last = first + per < rows ? first + per : rows;
}

// Block (x, y, z): kBlock consecutive columns of run z over slice y of the rows (as below); the
// thread's bias is read once.
__global__ void biasReluKernel(BiasReluArgs a)
{
    const int64_t column = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (column >= a.width) return;
    const int64_t run = blockIdx.z;
    int64_t first = 0, last = 0;
    sliceRows(a.rows, a.slices, blockIdx.y, first, last);
    const float b = a.bias[run * a.width + column];
#pragma unroll 4
    for (int64_t row = first; row < last; ++row) {
        const int64_t i = (run * a.rows + row) * a.width + column;
        const float v = a.h[i] + b;
        a.h[i] = (v > 0.0f || v != v) ? v : 0.0f; // relu, NaN kept
    }
}

// Block (x, y, z): kBlock consecutive columns of run z over slice y of the rows; each thread walks
// its column down the slice (reads along a row are coalesced), masking dh and summing it.
__global__ void reluBackwardKernel(ReluBackwardArgs a)
{
    const int64_t column = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (column >= a.width) return;
    const int64_t run = blockIdx.z, slice = blockIdx.y;
    int64_t first = 0, last = 0;
    sliceRows(a.rows, a.slices, slice, first, last);
    float sum = 0.0f;
#pragma unroll 4
    for (int64_t row = first; row < last; ++row) {
        const int64_t i = (run * a.rows + row) * a.width + column;
        const float g = a.h[i] > 0.0f ? a.dh[i] : 0.0f;
        a.dh[i] = g;
        sum += g;
    }
    a.partial[(run * a.slices + slice) * a.width + column] = sum;
}

} // namespace

int64_t rowSlices(int64_t runs, int64_t rows, int64_t width)
{
    // About 2,048 blocks in all (a dozen per SM on an H100), each slice at least 32 rows.
    const int64_t columnBlocks = (width + kBlock - 1) / kBlock;
    int64_t slices = 1;
    while (slices < 1024 && runs * columnBlocks * slices * 2 <= 2048 && rows / (slices * 2) >= 32)
        slices *= 2;
    return slices;
}

namespace {

dim3 gridOf(int64_t runs, int64_t width, int64_t slices)
{
    return dim3(static_cast<unsigned>((width + kBlock - 1) / kBlock), static_cast<unsigned>(slices),
                static_cast<unsigned>(runs));
}

} // namespace

bool biasRelu(const BiasReluArgs &args, void *stream)
{
    if (args.runs * args.rows * args.width == 0) return true;
    if (args.runs > 65535 || args.slices < 1 || args.slices > 65535) return false;
    biasReluKernel<<<gridOf(args.runs, args.width, args.slices), kBlock, 0,
                     static_cast<cudaStream_t>(stream)>>>(args);
    return cudaPeekAtLastError() == cudaSuccess;
}

bool reluBackward(const ReluBackwardArgs &args, void *stream)
{
    if (args.runs * args.rows * args.width == 0) return true;
    if (args.runs > 65535 || args.slices < 1 || args.slices > 65535) return false;
    reluBackwardKernel<<<gridOf(args.runs, args.width, args.slices), kBlock, 0,
                         static_cast<cudaStream_t>(stream)>>>(args);
    return cudaPeekAtLastError() == cudaSuccess;
}

} // namespace headlab::cuda
