// MicroAttention.cu — see MicroAttention.h.
#include "core/model/cuda/MicroAttention.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace headlab::cuda {

namespace {

constexpr int kThreads = 128;
constexpr int kMaxSharedFloats = 48 * 1024 / 4; // without opting in to more

// Shared memory of a block, in floats: its rows of q, k, v (and do) at a pitch of one more than
// its columns (so that a warp reading down a column meets every bank once), and its probabilities
// (and their gradients), G × T × T.
int forwardFloats(int T, int G, int dm)
{
    return 3 * T * (G * dm + 1) + G * T * T;
}

int backwardFloats(int T, int G, int dm)
{
    return 4 * T * (G * dm + 1) + 2 * G * T * T;
}

bool inRange(const MicroAttentionShape &s)
{
    if (s.groups < 1 || s.positions < 1 || s.microHeads < 1 || s.width < 1 || s.perBlock < 1 ||
        s.microHeads % s.perBlock != 0)
        return false;
    if (backwardFloats(s.positions, s.perBlock, s.width) > kMaxSharedFloats) return false;
    return s.groups * (s.microHeads / s.perBlock) < (int64_t{1} << 31);
}

// The block's tiles of N tensors (q, k, v, and do backward): rows [row0, row0 + T), columns
// [col0, col0 + cols) of each, into dst[n] at `pitch` floats a row. One loop for all N, so that a
// thread has N loads in flight before its stores; 16 bytes a load where every tile row starts
// 16-byte aligned (the same for every thread of the block), else one float. Consecutive threads
// read consecutive columns.
template <int N>
__device__ __forceinline__ void loadTiles(float *const (&dst)[N], const float *const (&src)[N],
                                          const int64_t (&stride)[N], int64_t row0, int64_t col0,
                                          int T, int cols, int pitch)
{
    bool wide = cols % 4 == 0 && col0 % 4 == 0;
#pragma unroll
    for (int n = 0; n < N; ++n)
        wide = wide && stride[n] % 4 == 0 && reinterpret_cast<uintptr_t>(src[n]) % 16 == 0;
    if (wide) {
        const int quads = cols / 4;
        for (int i = threadIdx.x; i < T * quads; i += blockDim.x) {
            const int t = i / quads, c = 4 * (i - t * quads);
            float4 x[N];
#pragma unroll
            for (int n = 0; n < N; ++n)
                x[n] = __ldg(
                    reinterpret_cast<const float4 *>(src[n] + (row0 + t) * stride[n] + col0 + c));
#pragma unroll
            for (int n = 0; n < N; ++n) {
                float *d = dst[n] + t * pitch + c;
                d[0] = x[n].x, d[1] = x[n].y, d[2] = x[n].z, d[3] = x[n].w;
            }
        }
    } else {
        for (int i = threadIdx.x; i < T * cols; i += blockDim.x) {
            const int t = i / cols, c = i - t * cols;
            float x[N];
#pragma unroll
            for (int n = 0; n < N; ++n) x[n] = __ldg(src[n] + (row0 + t) * stride[n] + col0 + c);
#pragma unroll
            for (int n = 0; n < N; ++n) dst[n][t * pitch + c] = x[n];
        }
    }
}

// x (G × T × T) ← scale · a bᵀ for each of the block's micro-heads: x[g][i][j] = scale · Σ_e
// a[i][g·dm + e] · b[j][g·dm + e], the future (j > i) −∞ where `mask`. Each thread takes a 2 × 4
// tile: per e, six reads of shared memory for eight products (one read per product for a single
// entry's two). A tile's rows and columns past T read row T − 1 and are not written.
__device__ void products(float *x, const float *a, const float *b, const MicroAttentionShape &s,
                         int pitch, float scale, bool mask)
{
    const int T = s.positions, dm = s.width;
    const int rowTiles = (T + 1) / 2, columnTiles = (T + 3) / 4, tiles = rowTiles * columnTiles;
    for (int idx = threadIdx.x; idx < s.perBlock * tiles; idx += blockDim.x) {
        const int g = idx / tiles, rem = idx - g * tiles, ib = rem / columnTiles;
        const int i0 = 2 * ib, j0 = 4 * (rem - ib * columnTiles);
        const float *ar[2], *br[4];
#pragma unroll
        for (int u = 0; u < 2; ++u) ar[u] = a + min(i0 + u, T - 1) * pitch + g * dm;
#pragma unroll
        for (int v = 0; v < 4; ++v) br[v] = b + min(j0 + v, T - 1) * pitch + g * dm;
        float acc[2][4] = {};
        for (int e = 0; e < dm; ++e) {
            float av[2], bv[4];
#pragma unroll
            for (int u = 0; u < 2; ++u) av[u] = ar[u][e];
#pragma unroll
            for (int v = 0; v < 4; ++v) bv[v] = br[v][e];
#pragma unroll
            for (int u = 0; u < 2; ++u)
#pragma unroll
                for (int v = 0; v < 4; ++v) acc[u][v] = fmaf(av[u], bv[v], acc[u][v]);
        }
#pragma unroll
        for (int u = 0; u < 2; ++u)
#pragma unroll
            for (int v = 0; v < 4; ++v) {
                const int i = i0 + u, j = j0 + v;
                if (i < T && j < T)
                    x[(g * T + i) * T + j] = (mask && j > i) ? -INFINITY : acc[u][v] * scale;
            }
    }
}

// p (G × T × T) ← each of the block's micro-heads' softmax(scale · q kᵀ), the future masked where
// causal. As ATen's softmax: exp(x − max) over its sum; a NaN score makes its row NaN.
__device__ void probabilities(float *p, const float *sq, const float *sk,
                              const MicroAttentionShape &s, int pitch)
{
    const int T = s.positions;
    products(p, sq, sk, s, pitch, s.scale, s.causal);
    __syncthreads();
    for (int row = threadIdx.x; row < s.perBlock * T; row += blockDim.x) {
        float *r = p + row * T;
        float top = -INFINITY;
        bool nan = false;
        for (int j = 0; j < T; ++j) {
            nan = nan || r[j] != r[j];
            top = fmaxf(top, r[j]);
        }
        float sum = 0.0f;
        for (int j = 0; j < T; ++j) {
            const float e = expf(r[j] - top);
            r[j] = e;
            sum += e;
        }
        const float inv = nan ? NAN : 1.0f / sum;
        for (int j = 0; j < T; ++j) r[j] *= inv;
    }
    __syncthreads();
}

// A block per (group, G consecutive micro-heads). The output's rows four at a time a thread, over
// one column: per key, one read of v for four products.
__global__ void __launch_bounds__(kThreads) forwardKernel(MicroAttentionArgs a)
{
    extern __shared__ float smem[];
    const MicroAttentionShape &s = a.shape;
    const int T = s.positions, dm = s.width, cols = s.perBlock * dm, pitch = cols + 1;
    const int blocksPerGroup = s.microHeads / s.perBlock;
    const int64_t group = blockIdx.x / blocksPerGroup;
    const int64_t col0 = static_cast<int64_t>(blockIdx.x % blocksPerGroup) * cols;
    const int64_t row0 = group * T, oStride = static_cast<int64_t>(s.microHeads) * dm;
    float *sq = smem, *sk = sq + T * pitch, *sv = sk + T * pitch, *p = sv + T * pitch;
    {
        float *const dst[3] = {sq, sk, sv};
        const float *const src[3] = {a.q, a.k, a.v};
        const int64_t stride[3] = {a.qStride, a.kStride, a.vStride};
        loadTiles<3>(dst, src, stride, row0, col0, T, cols, pitch);
    }
    __syncthreads();
    probabilities(p, sq, sk, s, pitch);
    const int quads = (T + 3) / 4;
    for (int idx = threadIdx.x; idx < quads * cols; idx += blockDim.x) {
        const int t0 = 4 * (idx / cols), c = idx % cols, g = c / dm;
        const float *pr[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) pr[u] = p + (g * T + min(t0 + u, T - 1)) * T;
        float acc[4] = {};
        for (int j = 0; j < T; ++j) {
            const float vj = sv[j * pitch + c];
#pragma unroll
            for (int u = 0; u < 4; ++u) acc[u] = fmaf(pr[u][j], vj, acc[u]);
        }
#pragma unroll
        for (int u = 0; u < 4; ++u)
            if (t0 + u < T) a.o[(row0 + t0 + u) * oStride + col0 + c] = acc[u];
    }
}

// The same blocks. With P the probabilities and S the scaled scores:
//   dP = do vᵀ,  dS = P ⊙ (dP − rowsum(P ⊙ dP)),  dq = scale · dS k,  dk = scale · dSᵀ q,  dv = Pᵀ do.
__global__ void __launch_bounds__(kThreads) backwardKernel(MicroAttentionBackwardArgs a)
{
    extern __shared__ float smem[];
    const MicroAttentionShape &s = a.shape;
    const int T = s.positions, TT = T * T, dm = s.width, cols = s.perBlock * dm, pitch = cols + 1;
    const int blocksPerGroup = s.microHeads / s.perBlock;
    const int64_t group = blockIdx.x / blocksPerGroup;
    const int64_t col0 = static_cast<int64_t>(blockIdx.x % blocksPerGroup) * cols;
    const int64_t row0 = group * T, oStride = static_cast<int64_t>(s.microHeads) * dm;
    float *sq = smem, *sk = sq + T * pitch, *sv = sk + T * pitch, *sd = sv + T * pitch;
    float *p = sd + T * pitch, *ds = p + s.perBlock * TT;
    {
        float *const dst[4] = {sq, sk, sv, sd};
        const float *const src[4] = {a.q, a.k, a.v, a.dout};
        const int64_t stride[4] = {a.qStride, a.kStride, a.vStride, oStride};
        loadTiles<4>(dst, src, stride, row0, col0, T, cols, pitch);
    }
    __syncthreads();
    probabilities(p, sq, sk, s, pitch);
    products(ds, sd, sv, s, pitch, 1.0f, false); // dP
    __syncthreads();
    for (int row = threadIdx.x; row < s.perBlock * T; row += blockDim.x) {
        const float *pr = p + row * T;
        float *dr = ds + row * T;
        float dot = 0.0f;
        for (int j = 0; j < T; ++j) dot = fmaf(pr[j], dr[j], dot);
        for (int j = 0; j < T; ++j) dr[j] = pr[j] * (dr[j] - dot) * s.scale;
    }
    __syncthreads();
    // Four rows t a thread, over one column: per j, three reads of q, k and do for twelve products.
    const int quads = (T + 3) / 4;
    for (int idx = threadIdx.x; idx < quads * cols; idx += blockDim.x) {
        const int t0 = 4 * (idx / cols), c = idx % cols, g = c / dm;
        const float *dsRow[4];
        int tc[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            tc[u] = min(t0 + u, T - 1);
            dsRow[u] = ds + (g * T + tc[u]) * T; // dS[t][·]
        }
        const float *dsHead = ds + g * TT, *pHead = p + g * TT;
        float gq[4] = {}, gk[4] = {}, gv[4] = {};
        for (int j = 0; j < T; ++j) {
            const float kj = sk[j * pitch + c], qj = sq[j * pitch + c], dj = sd[j * pitch + c];
            const float *dsj = dsHead + j * T, *pj = pHead + j * T; // dS[j][·], P[j][·]
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                gq[u] = fmaf(dsRow[u][j], kj, gq[u]);
                gk[u] = fmaf(dsj[tc[u]], qj, gk[u]);
                gv[u] = fmaf(pj[tc[u]], dj, gv[u]);
            }
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            if (t0 + u >= T) continue;
            const int64_t r = row0 + t0 + u;
            a.dq[r * a.dqStride + col0 + c] = gq[u];
            a.dk[r * a.dkStride + col0 + c] = gk[u];
            a.dv[r * a.dvStride + col0 + c] = gv[u];
        }
    }
}

unsigned blocksOf(const MicroAttentionShape &s)
{
    return static_cast<unsigned>(s.groups * (s.microHeads / s.perBlock));
}

} // namespace

int microAttentionPerBlock(int positions, int microHeads, int width)
{
    if (positions < 1 || microHeads < 1 || width < 1 ||
        backwardFloats(positions, 1, width) > kMaxSharedFloats)
        return 0;
    int g = 1;
    while (g * width < 64 && microHeads % (2 * g) == 0 &&
           backwardFloats(positions, 2 * g, width) <= kMaxSharedFloats)
        g *= 2;
    return g;
}

bool microAttention(const MicroAttentionArgs &args, void *stream)
{
    const auto &s = args.shape;
    if (s.groups == 0) return true;
    if (!inRange(s)) return false;
    const size_t bytes = sizeof(float) * forwardFloats(s.positions, s.perBlock, s.width);
    forwardKernel<<<blocksOf(s), kThreads, bytes, static_cast<cudaStream_t>(stream)>>>(args);
    return cudaPeekAtLastError() == cudaSuccess;
}

bool microAttentionBackward(const MicroAttentionBackwardArgs &args, void *stream)
{
    const auto &s = args.shape;
    if (s.groups == 0) return true;
    if (!inRange(s)) return false;
    const size_t bytes = sizeof(float) * backwardFloats(s.positions, s.perBlock, s.width);
    backwardKernel<<<blocksOf(s), kThreads, bytes, static_cast<cudaStream_t>(stream)>>>(args);
    return cudaPeekAtLastError() == cudaSuccess;
}

} // namespace headlab::cuda
