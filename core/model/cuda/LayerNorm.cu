// LayerNorm.cu — see LayerNorm.h. A warp per row: lane l holds features l, l + 32, … (K of them,
// K = ceil(d / 32), a template parameter so that they stay in registers). Mean and variance in two
// passes over the registers. The backward pass's blocks each take one slice of one run's rows;
// their warps keep per-feature sums for the scale's and shift's gradients, which the block adds in
// warp order into its slice's partial.
#include "core/model/cuda/LayerNorm.h"

#include "core/model/cuda/WarpSum.cuh"

#include <cuda_runtime.h>

#include <type_traits>

namespace headlab::cuda {

namespace {

constexpr int kWarps = 8;

template <int K>
__global__ void layerNormKernel(LayerNormArgs a)
{
    const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= a.runs * a.rows) return; // the whole warp leaves together
    const int64_t run = row / a.rows;
    const float *x = a.x + row * a.d;
    float v[K];
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int64_t j = lane + 32 * k;
        v[k] = j < a.d ? x[j] : 0.0f;
        sum += v[k];
    }
    const float n = static_cast<float>(a.d);
    const float mean = warpSum(sum) / n;
    float sq = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int64_t j = lane + 32 * k;
        const float c = j < a.d ? v[k] - mean : 0.0f;
        sq += c * c;
    }
    const float rstd = rsqrtf(warpSum(sq) / n + a.eps);
    if (lane == 0) {
        a.mean[row] = mean;
        a.rstd[row] = rstd;
    }
    const float *g = a.gain + run * a.d, *b = a.shift + run * a.d;
    float *y = a.y + row * a.d;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int64_t j = lane + 32 * k;
        if (j < a.d) y[j] = b[j] + ((v[k] - mean) * rstd) * (g[j] * a.scale);
    }
}

// With x̂ = (x − μ) · rstd and ĝ = dy · s: dx = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ · x̂)).
template <int K>
__global__ void layerNormBackwardKernel(LayerNormBackwardArgs a)
{
    extern __shared__ float shared[]; // (kWarps, d)
    const int64_t run = blockIdx.y, slice = blockIdx.x;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t per = (a.rows + a.slices - 1) / a.slices;
    const int64_t first = slice * per < a.rows ? slice * per : a.rows;
    const int64_t last = first + per < a.rows ? first + per : a.rows;
    const float *g = a.gain + run * a.d;
    float s[K], gSum[K] = {}, bSum[K] = {};
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int64_t j = lane + 32 * k;
        s[k] = j < a.d ? g[j] * a.scale : 0.0f;
    }
    const float n = static_cast<float>(a.d);
    for (int64_t r = first + warp; r < last; r += kWarps) {
        const int64_t row = run * a.rows + r;
        const float mean = a.mean[row], rstd = a.rstd[row];
        const float *x = a.x + row * a.d, *dy = a.dy + row * a.d;
        float xh[K], gh[K];
        float sumG = 0.0f, sumGX = 0.0f;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int64_t j = lane + 32 * k;
            const float d = j < a.d ? dy[j] : 0.0f;
            xh[k] = j < a.d ? (x[j] - mean) * rstd : 0.0f;
            gh[k] = d * s[k];
            gSum[k] += d * xh[k];
            bSum[k] += d;
            sumG += gh[k];
            sumGX += gh[k] * xh[k];
        }
        const float meanG = warpSum(sumG) / n, meanGX = warpSum(sumGX) / n;
        float *dx = a.dx + row * a.d;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int64_t j = lane + 32 * k;
            if (j < a.d) dx[j] = rstd * (gh[k] - meanG - xh[k] * meanGX);
        }
    }
    // The warps' per-feature sums, added in warp order: first c · Σ dy · x̂, then Σ dy.
    float *out = a.partial + (run * a.slices + slice) * 2 * a.d;
    for (int which = 0; which < 2; ++which) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int64_t j = lane + 32 * k;
            if (j < a.d) shared[warp * a.d + j] = which == 0 ? gSum[k] : bSum[k];
        }
        __syncthreads();
        for (int64_t j = threadIdx.x; j < a.d; j += blockDim.x) {
            float total = 0.0f;
            for (int w = 0; w < kWarps; ++w) total += shared[w * a.d + j];
            out[which * a.d + j] = which == 0 ? total * a.scale : total;
        }
        __syncthreads();
    }
}

template <int K>
bool launch(const LayerNormArgs &a, cudaStream_t s)
{
    const int64_t rows = a.runs * a.rows;
    layerNormKernel<K>
        <<<static_cast<unsigned>((rows + kWarps - 1) / kWarps), 32 * kWarps, 0, s>>>(a);
    return cudaPeekAtLastError() == cudaSuccess;
}

template <int K>
bool launchBackward(const LayerNormBackwardArgs &a, cudaStream_t s)
{
    const dim3 grid(static_cast<unsigned>(a.slices), static_cast<unsigned>(a.runs));
    const size_t bytes = sizeof(float) * kWarps * static_cast<size_t>(a.d);
    layerNormBackwardKernel<K><<<grid, 32 * kWarps, bytes, s>>>(a);
    return cudaPeekAtLastError() == cudaSuccess;
}

// The instantiation for d: K = 1, 2, 4, 8, 12, 16, 24 or 32 registers a lane (the smallest that
// holds ceil(d / 32)); -1 above 1,024.
int registersFor(int64_t d)
{
    const int64_t k = (d + 31) / 32;
    for (int K : {1, 2, 4, 8, 12, 16, 24, 32})
        if (k <= K) return K;
    return -1;
}

template <typename Args, typename F>
bool dispatch(const Args &a, F &&f)
{
    switch (registersFor(a.d)) {
    case 1:
        return f(std::integral_constant<int, 1>{});
    case 2:
        return f(std::integral_constant<int, 2>{});
    case 4:
        return f(std::integral_constant<int, 4>{});
    case 8:
        return f(std::integral_constant<int, 8>{});
    case 12:
        return f(std::integral_constant<int, 12>{});
    case 16:
        return f(std::integral_constant<int, 16>{});
    case 24:
        return f(std::integral_constant<int, 24>{});
    case 32:
        return f(std::integral_constant<int, 32>{});
    default:
        return false;
    }
}

} // namespace

int64_t layerNormSlices(int64_t runs, int64_t rows)
{
    // About 1,024 blocks in all, each slice at least 64 rows (8 a warp).
    int64_t slices = 1;
    while (slices < 65535 && runs * slices * 2 <= 1024 && rows / (slices * 2) >= 64) slices *= 2;
    return slices;
}

bool layerNorm(const LayerNormArgs &args, void *stream)
{
    if (args.runs * args.rows == 0 || args.d == 0) return true;
    if ((args.runs * args.rows + kWarps - 1) / kWarps >= (int64_t{1} << 31)) return false;
    const auto s = static_cast<cudaStream_t>(stream);
    return dispatch(args, [&](auto k) { return launch<decltype(k)::value>(args, s); });
}

bool layerNormBackward(const LayerNormBackwardArgs &args, void *stream)
{
    if (args.runs * args.rows == 0 || args.d == 0) return true;
    if (args.runs > 65535 || args.slices < 1 || args.slices > 65535) return false;
    const auto s = static_cast<cudaStream_t>(stream);
    return dispatch(args, [&](auto k) { return launchBackward<decltype(k)::value>(args, s); });
}

} // namespace headlab::cuda
