// BiasRelu.cu — see BiasRelu.h.
#include "core/model/cuda/BiasRelu.h"

#include <cuda_runtime.h>

namespace headlab::cuda {

namespace {

constexpr int kBlock = 128;

// V consecutive floats at p: one 16-byte access for V = 4 (p 16-byte aligned), else one float.
template <int V>
struct Floats {
    float v[V];
    __device__ __forceinline__ void load(const float *p)
    {
        if constexpr (V == 4) {
            const float4 q = *reinterpret_cast<const float4 *>(p);
            v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
        } else {
            for (int k = 0; k < V; ++k) v[k] = p[k];
        }
    }
    __device__ __forceinline__ void store(float *p) const
    {
        if constexpr (V == 4) {
            *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
            for (int k = 0; k < V; ++k) p[k] = v[k];
        }
    }
};

// The rows [first, last) of slice `slice` when `rows` are cut into `slices` slices.
__device__ __forceinline__ void sliceRows(int64_t rows, int64_t slices, int64_t slice,
                                          int64_t &first, int64_t &last)
{
    const int64_t per = (rows + slices - 1) / slices;
    first = slice * per < rows ? slice * per : rows;
    last = first + per < rows ? first + per : rows;
}

// Block (x, y, z): kBlock · V consecutive columns of run z over slice y of the rows; each thread
// walks its V columns down the slice (a warp's reads along a row are coalesced), its bias read once.
template <int V>
__global__ void biasReluKernel(BiasReluArgs a)
{
    const int64_t column = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V;
    if (column >= a.width) return;
    const int64_t run = blockIdx.z;
    int64_t first = 0, last = 0;
    sliceRows(a.rows, a.slices, blockIdx.y, first, last);
    float b[V];
    for (int k = 0; k < V; ++k) b[k] = a.bias[run * a.width + column + k];
#pragma unroll 4
    for (int64_t row = first; row < last; ++row) {
        float *p = a.h + (run * a.rows + row) * a.width + column;
        Floats<V> x;
        x.load(p);
        for (int k = 0; k < V; ++k) {
            const float v = x.v[k] + b[k];
            x.v[k] = (v > 0.0f || v != v) ? v : 0.0f; // relu, NaN kept
        }
        x.store(p);
    }
}

// The same blocks: each thread masks its V columns of dh down the slice and sums them.
template <int V>
__global__ void reluBackwardKernel(ReluBackwardArgs a)
{
    const int64_t column = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V;
    if (column >= a.width) return;
    const int64_t run = blockIdx.z, slice = blockIdx.y;
    int64_t first = 0, last = 0;
    sliceRows(a.rows, a.slices, slice, first, last);
    float sum[V] = {};
#pragma unroll 4
    for (int64_t row = first; row < last; ++row) {
        const int64_t i = (run * a.rows + row) * a.width + column;
        Floats<V> g, h;
        g.load(a.dh + i);
        h.load(a.h + i);
        for (int k = 0; k < V; ++k) {
            g.v[k] = h.v[k] > 0.0f ? g.v[k] : 0.0f;
            sum[k] += g.v[k];
        }
        g.store(a.dh + i);
    }
    for (int k = 0; k < V; ++k) a.partial[(run * a.slices + slice) * a.width + column + k] = sum[k];
}

// 4 columns a thread where every row starts 16-byte aligned, else 1.
bool fourWide(const void *p, const void *q, int64_t width)
{
    return width % 4 == 0 && reinterpret_cast<uintptr_t>(p) % 16 == 0 &&
           reinterpret_cast<uintptr_t>(q) % 16 == 0;
}

} // namespace

int64_t rowSlices(int64_t runs, int64_t rows, int64_t width)
{
    // About 2,048 blocks in all (a dozen per SM on an H100), each slice at least 32 rows.
    const int64_t columnBlocks = (width + 4 * kBlock - 1) / (4 * kBlock);
    int64_t slices = 1;
    while (slices < 1024 && runs * columnBlocks * slices * 2 <= 2048 && rows / (slices * 2) >= 32)
        slices *= 2;
    return slices;
}

namespace {

dim3 gridOf(int64_t runs, int64_t width, int64_t slices, int v)
{
    return dim3(static_cast<unsigned>((width + v * kBlock - 1) / (v * kBlock)),
                static_cast<unsigned>(slices), static_cast<unsigned>(runs));
}

} // namespace

bool biasRelu(const BiasReluArgs &args, void *stream)
{
    if (args.runs * args.rows * args.width == 0) return true;
    if (args.runs > 65535 || args.slices < 1 || args.slices > 65535) return false;
    const auto s = static_cast<cudaStream_t>(stream);
    if (fourWide(args.h, args.h, args.width))
        biasReluKernel<4><<<gridOf(args.runs, args.width, args.slices, 4), kBlock, 0, s>>>(args);
    else
        biasReluKernel<1><<<gridOf(args.runs, args.width, args.slices, 1), kBlock, 0, s>>>(args);
    return cudaPeekAtLastError() == cudaSuccess;
}

bool reluBackward(const ReluBackwardArgs &args, void *stream)
{
    if (args.runs * args.rows * args.width == 0) return true;
    if (args.runs > 65535 || args.slices < 1 || args.slices > 65535) return false;
    const auto s = static_cast<cudaStream_t>(stream);
    if (fourWide(args.dh, args.h, args.width))
        reluBackwardKernel<4>
            <<<gridOf(args.runs, args.width, args.slices, 4), kBlock, 0, s>>>(args);
    else
        reluBackwardKernel<1>
            <<<gridOf(args.runs, args.width, args.slices, 1), kBlock, 0, s>>>(args);
    return cudaPeekAtLastError() == cudaSuccess;
}

} // namespace headlab::cuda
