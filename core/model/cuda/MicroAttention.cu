// MicroAttention.cu — see MicroAttention.h.
#include "core/model/cuda/MicroAttention.h"

#include <cuda_runtime.h>

#include <cmath>

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

// The block's tile of one tensor: rows [row0, row0 + T), columns [col0, col0 + cols), into dst at
// `pitch` floats a row. Consecutive threads read consecutive columns.
__device__ __forceinline__ void loadTile(float *dst, const float *src, int64_t stride, int64_t row0,
                                         int64_t col0, int T, int cols, int pitch)
{
    for (int i = threadIdx.x; i < T * cols; i += blockDim.x) {
        const int t = i / cols, c = i - t * cols;
        dst[t * pitch + c] = src[(row0 + t) * stride + col0 + c];
    }
}

// p (G × T × T) ← each of the block's micro-heads' softmax(scale · q kᵀ), the future masked where
// causal. As ATen's softmax: exp(x − max) over its sum; a NaN score makes its row NaN.
__device__ void probabilities(float *p, const float *sq, const float *sk,
                              const MicroAttentionShape &s, int pitch)
{
    const int T = s.positions, TT = T * T, dm = s.width;
    for (int idx = threadIdx.x; idx < s.perBlock * TT; idx += blockDim.x) {
        const int g = idx / TT, ij = idx - g * TT, i = ij / T, j = ij - i * T;
        const float *a = sq + i * pitch + g * dm, *b = sk + j * pitch + g * dm;
        float acc = 0.0f;
        for (int e = 0; e < dm; ++e) acc = fmaf(a[e], b[e], acc);
        p[idx] = (s.causal && j > i) ? -INFINITY : acc * s.scale;
    }
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

// A block per (group, G consecutive micro-heads).
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
    loadTile(sq, a.q, a.qStride, row0, col0, T, cols, pitch);
    loadTile(sk, a.k, a.kStride, row0, col0, T, cols, pitch);
    loadTile(sv, a.v, a.vStride, row0, col0, T, cols, pitch);
    __syncthreads();
    probabilities(p, sq, sk, s, pitch);
    for (int idx = threadIdx.x; idx < T * cols; idx += blockDim.x) {
        const int t = idx / cols, c = idx - t * cols, g = c / dm;
        const float *pr = p + (g * T + t) * T;
        float acc = 0.0f;
        for (int j = 0; j < T; ++j) acc = fmaf(pr[j], sv[j * pitch + c], acc);
        a.o[(row0 + t) * oStride + col0 + c] = acc;
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
    loadTile(sq, a.q, a.qStride, row0, col0, T, cols, pitch);
    loadTile(sk, a.k, a.kStride, row0, col0, T, cols, pitch);
    loadTile(sv, a.v, a.vStride, row0, col0, T, cols, pitch);
    loadTile(sd, a.dout, oStride, row0, col0, T, cols, pitch);
    __syncthreads();
    probabilities(p, sq, sk, s, pitch);
    for (int idx = threadIdx.x; idx < s.perBlock * TT; idx += blockDim.x) {
        const int g = idx / TT, ij = idx - g * TT, i = ij / T, j = ij - i * T;
        const float *x = sd + i * pitch + g * dm, *y = sv + j * pitch + g * dm;
        float acc = 0.0f;
        for (int e = 0; e < dm; ++e) acc = fmaf(x[e], y[e], acc);
        ds[idx] = acc;
    }
    __syncthreads();
    for (int row = threadIdx.x; row < s.perBlock * T; row += blockDim.x) {
        const float *pr = p + row * T;
        float *dr = ds + row * T;
        float dot = 0.0f;
        for (int j = 0; j < T; ++j) dot = fmaf(pr[j], dr[j], dot);
        for (int j = 0; j < T; ++j) dr[j] = pr[j] * (dr[j] - dot) * s.scale;
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < T * cols; idx += blockDim.x) {
        const int t = idx / cols, c = idx - t * cols, g = c / dm;
        const float *dsRow = ds + (g * T + t) * T; // dS[t][·]
        const float *dsCol = ds + g * TT + t;      // dS[·][t], T apart
        const float *pCol = p + g * TT + t;        // P[·][t]
        float gq = 0.0f, gk = 0.0f, gv = 0.0f;
        for (int j = 0; j < T; ++j) {
            gq = fmaf(dsRow[j], sk[j * pitch + c], gq);
            gk = fmaf(dsCol[j * T], sq[j * pitch + c], gk);
            gv = fmaf(pCol[j * T], sd[j * pitch + c], gv);
        }
        a.dq[(row0 + t) * a.dqStride + col0 + c] = gq;
        a.dk[(row0 + t) * a.dkStride + col0 + c] = gk;
        a.dv[(row0 + t) * a.dvStride + col0 + c] = gv;
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
