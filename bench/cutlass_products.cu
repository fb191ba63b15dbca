// cutlass_products.cu — issue 56's lever test: the matrix products of nearest neighbour's
// feed-forward block (w 1: 8 runs, 4,096 rows, d 64, FFN 2,048) timed four ways on one card, each
// product alone, back to back (CUDA events, the least of 5 repeats of 50 calls):
//   cublas     cublasSgemmStridedBatched in FP32, what ATen's bmm calls and HeadLab takes today,
//              followed by its separate bias (+ ReLU) pass where the product has one;
//   simt       CUTLASS's FP32 SIMT batched GEMM with the bias (+ ReLU) in its epilogue;
//   3xtf32     CUTLASS's tensor-core GEMM that splits each FP32 operand into a TF32 big and small
//              part and sums three TF32 products (OpMultiplyAddFastF32), epilogue fused too;
//   tf32       cuBLAS in TF32 (one TF32 product), for the tensor cores' rate at these shapes.
// Each variant's error is measured on 2,048 sampled outputs against the same products in FP64,
// as max |x − x64| / Σ|a·b| (the bound a dot product's rounding obeys), beside FP32 cuBLAS's.
// Writes one JSON line per (product, variant) to stdout.
//
// Build (the GPU machine; CUTLASS's headers from its PyPI wheel, bench/cutlass_products.sh):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I. -I$CUTLASS/include bench/cutlass_products.cu \
//        core/model/cuda/BiasRelu.cu -lcublas
// `focus` as the first argument: only the block's products around its ReLU, fused (focus()).
// `addition`: addition 384×12's products (one run) at CUTLASS SIMT's tiles and K splits (addition()).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/epilogue/thread/linear_combination_relu.h>
#include <cutlass/gemm/device/gemm_universal.h>

#include "core/model/cuda/BiasRelu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CHECK_CUDA(x)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));        \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

namespace {

using Row = cutlass::layout::RowMajor;
using Col = cutlass::layout::ColumnMajor;

// The ReLU's backward in a product's epilogue: D = A·B where the source C (relu's output h) is
// positive, else 0 (beta must be non-zero for the epilogue to read C).
template <int Count>
struct ReluMask : cutlass::epilogue::thread::LinearCombination<float, Count, float, float> {
    using Base = cutlass::epilogue::thread::LinearCombination<float, Count, float, float>;
    using Base::Base;
    CUTLASS_HOST_DEVICE typename Base::FragmentOutput
    operator()(typename Base::FragmentAccumulator const &acc,
               typename Base::FragmentSource const &h) const
    {
        typename Base::FragmentOutput out;
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < Count; ++i) out[i] = h[i] > 0.f ? acc[i] : 0.f;
        return out;
    }
    CUTLASS_HOST_DEVICE typename Base::FragmentOutput
    operator()(typename Base::FragmentAccumulator const &acc) const
    {
        return Base::operator()(acc);
    }
};

// One product of the block, per run: D (M×N, row-major) = A (M×K) · B (K×N) [+ bias] [ReLU].
struct Product {
    const char *name;
    int m, n, k;
    bool aRow, bRow; // row-major operands (else column-major, i.e. a transposed row-major tensor)
    bool bias, relu;
};

__global__ void biasReluKernel(float *d, const float *bias, int64_t rows, int n,
                               int64_t batchStride, bool relu)
{
    const int64_t r = blockIdx.z;
    float *dr = d + r * batchStride;
    const float *br = bias + r * n;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * n / 4;
         i += int64_t(gridDim.x) * blockDim.x) {
        float4 v = reinterpret_cast<float4 *>(dr)[i];
        const int c = int((i * 4) % n);
        v.x += br[c];
        v.y += br[c + 1];
        v.z += br[c + 2];
        v.w += br[c + 3];
        if (relu) {
            v.x = fmaxf(v.x, 0.f);
            v.y = fmaxf(v.y, 0.f);
            v.z = fmaxf(v.z, 0.f);
            v.w = fmaxf(v.w, 0.f);
        }
        reinterpret_cast<float4 *>(dr)[i] = v;
    }
}

// FP64 reference of sampled outputs: out[s] = Σ_k A[b,i,k]·B[b,k,j] (+ bias, ReLU) and Σ|a·b|.
__global__ void referenceKernel(const float *a, const float *b, const float *bias, Product p,
                                int64_t strideA, int64_t strideB, const int *samples, int count,
                                double *out, double *scale)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= count) return;
    const int run = samples[3 * s], i = samples[3 * s + 1], j = samples[3 * s + 2];
    const float *ar = a + run * strideA, *br = b + run * strideB;
    double sum = 0, mag = 0;
    for (int k = 0; k < p.k; ++k) {
        const double x = p.aRow ? ar[int64_t(i) * p.k + k] : ar[int64_t(k) * p.m + i];
        const double y = p.bRow ? br[int64_t(k) * p.n + j] : br[int64_t(j) * p.k + k];
        sum += x * y;
        mag += std::fabs(x * y);
    }
    if (p.bias) sum += bias[run * p.n + j], mag += std::fabs(bias[run * p.n + j]);
    if (p.relu) sum = sum > 0 ? sum : 0;
    out[s] = sum;
    scale[s] = mag;
}

template <typename LayoutA, typename LayoutB, typename OpClass, typename Operator, typename Tb,
          typename Warp, typename Inst, int Stages, int Align, bool Relu>
struct Cutlass {
    using Epilogue = std::conditional_t<
        Relu, cutlass::epilogue::thread::LinearCombinationRelu<float, Align, float, float>,
        cutlass::epilogue::thread::LinearCombination<float, Align, float, float>>;
    using Gemm = cutlass::gemm::device::GemmUniversal<
        float, LayoutA, float, LayoutB, float, Row, float, OpClass, cutlass::arch::Sm80, Tb, Warp,
        Inst, Epilogue, cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, Stages, Align,
        Align, Operator>;

    // D = A·B + bias (stride 0: the same bias row under every output row), or A·B without bias.
    static bool run(const Product &p, int runs, const float *a, const float *b, const float *bias,
                    float *d, cudaStream_t stream)
    {
        typename Gemm::Arguments args(
            cutlass::gemm::GemmUniversalMode::kBatched, {p.m, p.n, p.k}, runs,
            {1.0f, p.bias ? 1.0f : 0.0f}, a, b, p.bias ? bias : d, d, int64_t(p.m) * p.k,
            int64_t(p.k) * p.n, p.bias ? int64_t(p.n) : int64_t(p.m) * p.n, int64_t(p.m) * p.n,
            typename LayoutA::Stride(p.aRow ? p.k : p.m),
            typename LayoutB::Stride(p.bRow ? p.n : p.k), typename Row::Stride(p.bias ? 0 : p.n),
            typename Row::Stride(p.n));
        Gemm gemm;
        if (gemm.can_implement(args) != cutlass::Status::kSuccess) return false;
        if (gemm.initialize(args, nullptr, stream) != cutlass::Status::kSuccess) return false;
        return gemm.run(stream) == cutlass::Status::kSuccess;
    }
};

using Simt = cutlass::arch::OpClassSimt;
using TensorOp = cutlass::arch::OpClassTensorOp;
using Fma = cutlass::arch::OpMultiplyAdd;
using Fast = cutlass::arch::OpMultiplyAddFastF32;
template <int M, int N, int K>
using Shape = cutlass::gemm::GemmShape<M, N, K>;

template <typename LA, typename LB, bool Relu>
using SimtGemm =
    Cutlass<LA, LB, Simt, Fma, Shape<128, 128, 8>, Shape<32, 64, 8>, Shape<1, 1, 1>, 4, 1, Relu>;
template <typename LA, typename LB, bool Relu>
using Tf32x3Gemm = Cutlass<LA, LB, TensorOp, Fast, Shape<128, 128, 16>, Shape<64, 64, 16>,
                           Shape<16, 8, 8>, 3, 4, Relu>;

template <template <typename, typename, bool> class G>
bool runCutlass(const Product &p, int runs, const float *a, const float *b, const float *bias,
                float *d, cudaStream_t s)
{
    if (p.aRow && p.bRow)
        return p.relu ? G<Row, Row, true>::run(p, runs, a, b, bias, d, s)
                      : G<Row, Row, false>::run(p, runs, a, b, bias, d, s);
    if (p.aRow && !p.bRow) return G<Row, Col, false>::run(p, runs, a, b, bias, d, s);
    if (!p.aRow && p.bRow) return G<Col, Row, false>::run(p, runs, a, b, bias, d, s);
    return false;
}

// cuBLAS is column-major: a row-major D = A·B is the column-major Dᵀ = Bᵀ·Aᵀ.
bool runCublas(cublasHandle_t h, const Product &p, int runs, const float *a, const float *b,
               const float *bias, float *d, cudaStream_t s)
{
    const float one = 1, zero = 0;
    const cublasOperation_t opB = p.bRow ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t opA = p.aRow ? CUBLAS_OP_N : CUBLAS_OP_T;
    if (cublasSgemmStridedBatched(h, opB, opA, p.n, p.m, p.k, &one, b, p.bRow ? p.n : p.k,
                                  int64_t(p.k) * p.n, a, p.aRow ? p.k : p.m, int64_t(p.m) * p.k,
                                  &zero, d, p.n, int64_t(p.m) * p.n, runs) != CUBLAS_STATUS_SUCCESS)
        return false;
    if (p.bias)
        biasReluKernel<<<dim3(264, 1, runs), 256, 0, s>>>(d, bias, p.m, p.n, int64_t(p.m) * p.n,
                                                          p.relu);
    return cudaGetLastError() == cudaSuccess;
}

// An FP32 SIMT product with any epilogue, its source C given with its own row stride and batch
// stride (0 and the bias: the bias under every row; n and m·n: a full tensor such as h), scaled by
// beta. Batched over `runs` where there are several; one product (runs 1) may be split `splits`
// ways along K (serial split-K: each slice's partial sums added in turn into D, CUTLASS's
// semaphore in `workspace`).
template <typename LayoutA, typename LayoutB, typename Epilogue, typename Tb, typename Warp,
          int Stages>
struct SimtFused {
    using Gemm = cutlass::gemm::device::GemmUniversal<
        float, LayoutA, float, LayoutB, float, Row, float, Simt, cutlass::arch::Sm80, Tb, Warp,
        Shape<1, 1, 1>, Epilogue, cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>,
        Stages, 1, 1, Fma>;
    static bool run(const Product &p, int runs, const float *a, const float *b, const float *c,
                    int64_t ldc, int64_t batchC, float *d, cudaStream_t stream, float beta = 1.0f,
                    int splits = 1, void *workspace = nullptr, size_t workspaceBytes = 0)
    {
        const bool batched = runs > 1;
        typename Gemm::Arguments args(batched ? cutlass::gemm::GemmUniversalMode::kBatched
                                              : cutlass::gemm::GemmUniversalMode::kGemm,
                                      {p.m, p.n, p.k}, batched ? runs : splits, {1.0f, beta}, a, b,
                                      c, d, int64_t(p.m) * p.k, int64_t(p.k) * p.n, batchC,
                                      int64_t(p.m) * p.n,
                                      typename LayoutA::Stride(p.aRow ? p.k : p.m),
                                      typename LayoutB::Stride(p.bRow ? p.n : p.k),
                                      typename Row::Stride(ldc), typename Row::Stride(p.n));
        Gemm gemm;
        if (gemm.can_implement(args) != cutlass::Status::kSuccess) return false;
        if (Gemm::get_workspace_size(args) > workspaceBytes) return false;
        if (gemm.initialize(args, workspace, stream) != cutlass::Status::kSuccess) return false;
        return gemm.run(stream) == cutlass::Status::kSuccess;
    }
};

__global__ void sumSlices(const float *partial, float *out, int64_t slices, int64_t width,
                          int64_t runs)
{
    const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
    if (i >= runs * width) return;
    const int64_t r = i / width, c = i % width;
    float s = 0;
    for (int64_t k = 0; k < slices; ++k) s += partial[(r * slices + k) * width + c];
    out[i] = s;
}

float timeIt(cudaStream_t stream, const std::function<bool()> &call)
{
    if (!call()) return -1;
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    float best = 1e30f;
    for (int rep = 0; rep < 6; ++rep) {
        cudaEventRecord(t0, stream);
        for (int i = 0; i < 50; ++i) call();
        cudaEventRecord(t1, stream);
        CHECK_CUDA(cudaEventSynchronize(t1));
        float ms;
        cudaEventElapsedTime(&ms, t0, t1);
        if (rep > 0) best = std::min(best, ms / 50);
    }
    return best * 1e3f;
}

// The feed-forward block's two products around its ReLU, as HeadLab runs them today (cuBLAS, then
// HeadLab's own bias-ReLU and ReLU-backward kernels, core/model/cuda/BiasRelu.cu) and with the
// element-wise work in CUTLASS SIMT epilogues at several tile shapes; each fused result checked
// against the unfused one (max |difference|).
void focus(int runs, int rows, cublasHandle_t handle, cudaStream_t stream, const char *card)
{
    const int d = 64, f = 2048;
    const Product fwd{"ffn1 x.w1+b1 relu", rows, f, d, true, true, true, true};
    const Product bwd{"dh = (dy.w2^T)[h>0], db1", rows, f, d, true, false, false, false};
    const int64_t nx = int64_t(runs) * rows * d, nw = int64_t(runs) * d * f,
                  nh = int64_t(runs) * rows * f;
    std::vector<float> hx(nx), hw(nw), hb(int64_t(runs) * f);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.f, 1.f);
    for (auto &v : hx) v = normal(rng);
    for (auto &v : hw) v = normal(rng) / 8.f;
    for (auto &v : hb) v = 0.1f * normal(rng);
    float *x, *w, *b, *h, *h2, *dh, *dh2, *db, *db2, *ones, *partial;
    CHECK_CUDA(cudaMalloc(&x, nx * 4));
    CHECK_CUDA(cudaMalloc(&w, nw * 4));
    CHECK_CUDA(cudaMalloc(&b, hb.size() * 4));
    CHECK_CUDA(cudaMalloc(&h, nh * 4));
    CHECK_CUDA(cudaMalloc(&h2, nh * 4));
    CHECK_CUDA(cudaMalloc(&dh, nh * 4));
    CHECK_CUDA(cudaMalloc(&dh2, nh * 4));
    CHECK_CUDA(cudaMalloc(&db, hb.size() * 4));
    CHECK_CUDA(cudaMalloc(&db2, hb.size() * 4));
    CHECK_CUDA(cudaMalloc(&ones, rows * 4));
    const int64_t slices = headlab::cuda::rowSlices(runs, rows, f);
    CHECK_CUDA(cudaMalloc(&partial, int64_t(runs) * slices * f * 4));
    CHECK_CUDA(cudaMemcpy(x, hx.data(), nx * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(w, hw.data(), nw * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(b, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
    std::vector<float> hones(rows, 1.f);
    CHECK_CUDA(cudaMemcpy(ones, hones.data(), rows * 4, cudaMemcpyHostToDevice));
    cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH);
    const float one = 1, zero = 0;

    auto maxDiff = [&](const float *p, const float *q, int64_t n) {
        std::vector<float> a(n), c(n);
        CHECK_CUDA(cudaMemcpy(a.data(), p, n * 4, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(c.data(), q, n * 4, cudaMemcpyDeviceToHost));
        double m = 0;
        for (int64_t i = 0; i < n; ++i) m = std::max(m, double(std::fabs(a[i] - c[i])));
        return m;
    };
    auto line = [&](const Product &p, const char *variant, float us, double diff) {
        std::printf("{\"device\": \"%s\", \"focus\": \"%s\", \"runs\": %d, \"rows\": %d, "
                    "\"variant\": \"%s\", \"us\": %.2f, \"max_abs_diff\": %.3g}\n",
                    card, p.name, runs, rows, variant, us, diff);
        std::fflush(stdout);
    };
    // Forward, today: cuBLAS x·w1 into h, HeadLab's biasRelu in place.
    auto today = [&] {
        if (cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, f, rows, d, &one, w, f,
                                      int64_t(d) * f, x, d, int64_t(rows) * d, &zero, h, f,
                                      int64_t(rows) * f, runs) != CUBLAS_STATUS_SUCCESS)
            return false;
        return headlab::cuda::biasRelu(
            {h, b, runs, rows, f, headlab::cuda::rowSlices(runs, rows, f)}, stream);
    };
    line(fwd, "cublas + headlab biasRelu", timeIt(stream, today), 0);
    using BiasReluEp = cutlass::epilogue::thread::LinearCombinationRelu<float, 1, float, float>;
    auto fused = [&](auto tag, const char *name) {
        using G = decltype(tag);
        const float us =
            timeIt(stream, [&] { return G::run(fwd, runs, x, w, b, 0, f, h2, stream); });
        line(fwd, name, us, us > 0 ? maxDiff(h, h2, nh) : -1);
    };
    fused(SimtFused<Row, Row, BiasReluEp, Shape<128, 128, 8>, Shape<32, 64, 8>, 4>{},
          "simt 128x128 w32x64 s4");
    fused(SimtFused<Row, Row, BiasReluEp, Shape<128, 128, 8>, Shape<64, 32, 8>, 3>{},
          "simt 128x128 w64x32 s3");
    fused(SimtFused<Row, Row, BiasReluEp, Shape<256, 128, 8>, Shape<64, 64, 8>, 3>{},
          "simt 256x128 w64x64 s3");
    fused(SimtFused<Row, Row, BiasReluEp, Shape<128, 256, 8>, Shape<64, 64, 8>, 3>{},
          "simt 128x256 w64x64 s3");
    fused(SimtFused<Row, Row, BiasReluEp, Shape<64, 128, 8>, Shape<32, 64, 8>, 4>{},
          "simt 64x128 w32x64 s4");
    fused(SimtFused<Row, Row, BiasReluEp, Shape<128, 64, 8>, Shape<64, 32, 8>, 4>{},
          "simt 128x64 w64x32 s4");

    // Backward, today: cuBLAS dy·w2ᵀ into dh, HeadLab's reluBackward (mask + db1's partial sums),
    // then the partial sums added. dy is x's buffer (rows × 64), w2ᵀ is w's (stored 2048 × 64).
    auto backToday = [&] {
        if (cublasSgemmStridedBatched(handle, CUBLAS_OP_T, CUBLAS_OP_N, f, rows, d, &one, w, d,
                                      int64_t(d) * f, x, d, int64_t(rows) * d, &zero, dh, f,
                                      int64_t(rows) * f, runs) != CUBLAS_STATUS_SUCCESS)
            return false;
        if (!headlab::cuda::reluBackward({dh, h, partial, runs, rows, f, slices}, stream))
            return false;
        sumSlices<<<(runs * f + 255) / 256, 256, 0, stream>>>(partial, db, slices, f, runs);
        return cudaGetLastError() == cudaSuccess;
    };
    line(bwd, "cublas + headlab reluBackward", timeIt(stream, backToday), 0);
    auto backFused = [&](auto tag, const char *name) {
        using G = decltype(tag);
        const float us = timeIt(stream, [&] {
            if (!G::run(bwd, runs, x, w, h, f, int64_t(rows) * f, dh2, stream)) return false;
            // db1 = the masked dh summed over rows: dh (row-major rows × f) is column-major f × rows.
            return cublasSgemvStridedBatched(handle, CUBLAS_OP_N, f, rows, &one, dh2, f,
                                             int64_t(rows) * f, ones, 1, 0, &zero, db2, 1, f,
                                             runs) == CUBLAS_STATUS_SUCCESS;
        });
        line(bwd, name, us,
             us > 0 ? std::max(maxDiff(dh, dh2, nh), maxDiff(db, db2, runs * f)) : -1);
    };
    backFused(SimtFused<Row, Col, ReluMask<1>, Shape<128, 128, 8>, Shape<32, 64, 8>, 4>{},
              "simt 128x128 w32x64 s4 + gemv");
    backFused(SimtFused<Row, Col, ReluMask<1>, Shape<256, 128, 8>, Shape<64, 64, 8>, 3>{},
              "simt 256x128 w64x64 s3 + gemv");
    backFused(SimtFused<Row, Col, ReluMask<1>, Shape<128, 256, 8>, Shape<64, 64, 8>, 3>{},
              "simt 128x256 w64x64 s3 + gemv");
    for (float *p : {x, w, b, h, h2, dh, dh2, db, db2, ones, partial}) cudaFree(p);
}

// A plain FP32 SIMT product at one tile (no epilogue work, beta 0), for addition's sweep.
template <typename LayoutA, typename LayoutB, typename Tb, typename Warp, int Stages>
using SimtTile = SimtFused<LayoutA, LayoutB,
                           cutlass::epilogue::thread::LinearCombination<float, 1, float, float>, Tb,
                           Warp, Stages>;

// Addition 384×12's products, one run (1,152 rows: 64 sequences of 18 tokens; d 384, FFN 1,536),
// as bench/gpu_products.sh's profile lists them: cuBLAS FP32 (what HeadLab takes) against CUTLASS
// FP32 SIMT at the tiles CUTLASS's own generator lists for SM80 SIMT SGEMM, each split 1–4 ways
// along K where the product is one matrix. Each variant's output is compared with cuBLAS's (max
// |difference| over max |cuBLAS|), so a tile that computes something else shows.
template <typename LA, typename LB>
void additionSweep(const Product &p, int batch, int calls, cublasHandle_t handle,
                   cudaStream_t stream, const char *card)
{
    const int64_t na = int64_t(batch) * p.m * p.k, nb = int64_t(batch) * p.k * p.n,
                  nd = int64_t(batch) * p.m * p.n;
    std::mt19937 rng(384);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<float> ha(na), hb(nb);
    for (auto &x : ha) x = normal(rng);
    for (auto &x : hb) x = normal(rng) / std::sqrt(float(p.k));
    float *a, *b, *ref, *out;
    void *workspace;
    const size_t workspaceBytes = size_t(1) << 22;
    CHECK_CUDA(cudaMalloc(&a, na * 4));
    CHECK_CUDA(cudaMalloc(&b, nb * 4));
    CHECK_CUDA(cudaMalloc(&ref, nd * 4));
    CHECK_CUDA(cudaMalloc(&out, nd * 4));
    CHECK_CUDA(cudaMalloc(&workspace, workspaceBytes));
    CHECK_CUDA(cudaMemcpy(a, ha.data(), na * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(b, hb.data(), nb * 4, cudaMemcpyHostToDevice));
    cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH);
    const double flop = 2.0 * batch * p.m * p.n * p.k;
    std::vector<float> hr(nd), ho(nd);
    auto line = [&](const char *variant, int splits, float us) {
        double diff = -1, mag = 0;
        if (us > 0) {
            CHECK_CUDA(cudaMemcpy(ho.data(), out, nd * 4, cudaMemcpyDeviceToHost));
            diff = 0;
            for (int64_t i = 0; i < nd; ++i) {
                diff = std::max(diff, double(std::fabs(ho[i] - hr[i])));
                mag = std::max(mag, double(std::fabs(hr[i])));
            }
            diff /= mag;
        }
        std::printf("{\"device\": \"%s\", \"addition\": \"%s\", \"batch\": %d, \"m\": %d, "
                    "\"n\": %d, \"k\": %d, \"a\": \"%s\", \"b\": \"%s\", \"calls_per_step\": %d, "
                    "\"variant\": \"%s\", \"splits\": %d, \"us\": %.2f, \"tflops\": %.2f, "
                    "\"max_rel_diff\": %.3g}\n",
                    card, p.name, batch, p.m, p.n, p.k, p.aRow ? "row" : "col",
                    p.bRow ? "row" : "col", calls, variant, splits, us,
                    us > 0 ? flop / (us * 1e-6) / 1e12 : 0.0, diff);
        std::fflush(stdout);
    };
    const float cublasUs =
        timeIt(stream, [&] { return runCublas(handle, p, batch, a, b, nullptr, ref, stream); });
    CHECK_CUDA(cudaMemcpy(hr.data(), ref, nd * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(out, ref, nd * 4, cudaMemcpyDeviceToDevice));
    line("cublas", 1, cublasUs);
    auto tile = [&](auto tag, const char *name) {
        using G = decltype(tag);
        for (int splits = 1; splits <= (batch > 1 ? 1 : 4); ++splits) {
            CHECK_CUDA(cudaMemsetAsync(out, 0, nd * 4, stream));
            const float us = timeIt(stream, [&] {
                return G::run(p, batch, a, b, out, p.n, int64_t(p.m) * p.n, out, stream, 0.0f,
                              splits, workspace, workspaceBytes);
            });
            line(name, splits, us);
        }
    };
    tile(SimtTile<LA, LB, Shape<128, 128, 8>, Shape<32, 64, 8>, 4>{}, "simt 128x128 w32x64 s4");
    tile(SimtTile<LA, LB, Shape<128, 64, 8>, Shape<64, 32, 8>, 5>{}, "simt 128x64 w64x32 s5");
    tile(SimtTile<LA, LB, Shape<64, 128, 8>, Shape<32, 64, 8>, 5>{}, "simt 64x128 w32x64 s5");
    tile(SimtTile<LA, LB, Shape<64, 64, 8>, Shape<32, 64, 8>, 5>{}, "simt 64x64 w32x64 s5");
    tile(SimtTile<LA, LB, Shape<128, 32, 8>, Shape<64, 32, 8>, 5>{}, "simt 128x32 w64x32 s5");
    tile(SimtTile<LA, LB, Shape<32, 128, 8>, Shape<32, 64, 8>, 5>{}, "simt 32x128 w32x64 s5");
    for (void *q : {(void *)a, (void *)b, (void *)ref, (void *)out, workspace}) cudaFree(q);
}

void addition(cublasHandle_t handle, cudaStream_t stream, const char *card)
{
    const int rows = 1152, d = 384, f = 1536, slice = 288;
    // The forward products are x·w (w stored in × out, both row-major), the input gradients
    // dy·wᵀ (w read column-major), the weight gradients xᵀ·dy over 4 slices of 288 rows; a step's
    // calls of each, as the profile counts them.
    struct AdditionProduct {
        Product p;
        int batch, calls;
    };
    const AdditionProduct products[] = {
        {{"proj x.w", rows, d, d, true, true, false, false}, 1, 6},
        {{"proj dx = dy.w^T", rows, d, d, true, false, false, false}, 1, 6},
        {{"proj dw = x^T.dy", d, d, slice, false, true, false, false}, 4, 6},
        {{"ffn1 x.w1", rows, f, d, true, true, false, false}, 1, 1},
        {{"ffn dh = dy.w2^T", rows, f, d, true, false, false, false}, 1, 1},
        {{"ffn2 h.w2", rows, d, f, true, true, false, false}, 1, 1},
        {{"ffn dx = dh.w1^T", rows, d, f, true, false, false, false}, 1, 1},
        {{"ffn dw1 = x^T.dh", d, f, slice, false, true, false, false}, 4, 1},
        {{"ffn dw2 = h^T.dy", f, d, slice, false, true, false, false}, 4, 1},
    };
    for (const auto &[p, batch, calls] : products) {
        if (p.aRow && p.bRow)
            additionSweep<Row, Row>(p, batch, calls, handle, stream, card);
        else if (p.aRow)
            additionSweep<Row, Col>(p, batch, calls, handle, stream, card);
        else
            additionSweep<Col, Row>(p, batch, calls, handle, stream, card);
    }
}

} // namespace

int main(int argc, char **argv)
{
    const std::string mode = argc > 1 ? argv[1] : "";
    const bool focusOnly = mode == "focus";
    const int runs = argc > 1 + focusOnly ? std::atoi(argv[1 + focusOnly]) : 8;
    const int rows = argc > 2 + focusOnly ? std::atoi(argv[2 + focusOnly]) : 4096;
    const int d = 64, f = 2048;
    const Product products[] = {
        {"ffn1 x.w1+b1 relu", rows, f, d, true, true, true, true},
        {"ffn2 h.w2+b2", rows, d, f, true, true, true, false},
        {"dh = dy.w2^T", rows, f, d, true, false, false, false},
        {"dx = dh.w1^T", rows, d, f, true, false, false, false},
        {"dw2 = h^T.dy", f, d, rows, false, true, false, false},
        {"dw1 = x^T.dh", d, f, rows, false, true, false, false},
    };
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    cublasHandle_t handle;
    cublasCreate(&handle);
    cublasSetStream(handle, stream);
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));

    if (mode == "addition") {
        addition(handle, stream, prop.name);
        cublasDestroy(handle);
        return 0;
    }
    if (focusOnly) {
        focus(runs, rows, handle, stream, prop.name);
        cublasDestroy(handle);
        return 0;
    }
    std::mt19937 rng(56);
    std::normal_distribution<float> normal(0.f, 1.f);
    for (const Product &p : products) {
        const int64_t na = int64_t(runs) * p.m * p.k, nb = int64_t(runs) * p.k * p.n,
                      nd = int64_t(runs) * p.m * p.n;
        std::vector<float> ha(na), hb(nb), hbias(int64_t(runs) * p.n);
        for (auto &x : ha) x = normal(rng);
        for (auto &x : hb) x = normal(rng) / std::sqrt(float(p.k));
        for (auto &x : hbias) x = 0.1f * normal(rng);
        float *a, *b, *bias, *out;
        CHECK_CUDA(cudaMalloc(&a, na * 4));
        CHECK_CUDA(cudaMalloc(&b, nb * 4));
        CHECK_CUDA(cudaMalloc(&bias, hbias.size() * 4));
        CHECK_CUDA(cudaMalloc(&out, nd * 4));
        CHECK_CUDA(cudaMemcpy(a, ha.data(), na * 4, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(b, hb.data(), nb * 4, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(bias, hbias.data(), hbias.size() * 4, cudaMemcpyHostToDevice));

        const int count = 2048;
        std::vector<int> hs(3 * count);
        for (int s = 0; s < count; ++s) {
            hs[3 * s] = int(rng() % runs);
            hs[3 * s + 1] = int(rng() % p.m);
            hs[3 * s + 2] = int(rng() % p.n);
        }
        int *samples;
        double *ref, *scale;
        CHECK_CUDA(cudaMalloc(&samples, hs.size() * 4));
        CHECK_CUDA(cudaMalloc(&ref, count * 8));
        CHECK_CUDA(cudaMalloc(&scale, count * 8));
        CHECK_CUDA(cudaMemcpy(samples, hs.data(), hs.size() * 4, cudaMemcpyHostToDevice));
        referenceKernel<<<(count + 127) / 128, 128>>>(
            a, b, bias, p, int64_t(p.m) * p.k, int64_t(p.k) * p.n, samples, count, ref, scale);
        std::vector<double> href(count), hscale(count);
        CHECK_CUDA(cudaMemcpy(href.data(), ref, count * 8, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(hscale.data(), scale, count * 8, cudaMemcpyDeviceToHost));

        struct Variant {
            const char *name;
            std::function<bool()> call;
        };
        const Variant variants[] = {
            {"cublas",
             [&] {
                 cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH);
                 return runCublas(handle, p, runs, a, b, bias, out, stream);
             }},
            {"simt", [&] { return runCutlass<SimtGemm>(p, runs, a, b, bias, out, stream); }},
            {"3xtf32", [&] { return runCutlass<Tf32x3Gemm>(p, runs, a, b, bias, out, stream); }},
            {"tf32",
             [&] {
                 cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH);
                 return runCublas(handle, p, runs, a, b, bias, out, stream);
             }},
        };
        const double flop = 2.0 * runs * p.m * p.n * p.k;
        for (const Variant &v : variants) {
            CHECK_CUDA(cudaMemsetAsync(out, 0, nd * 4, stream));
            const bool ok = v.call();
            CHECK_CUDA(cudaStreamSynchronize(stream));
            double worst = 0;
            if (ok) {
                std::vector<float> hd(nd);
                CHECK_CUDA(cudaMemcpy(hd.data(), out, nd * 4, cudaMemcpyDeviceToHost));
                for (int s = 0; s < count; ++s) {
                    const int64_t at =
                        (int64_t(hs[3 * s]) * p.m + hs[3 * s + 1]) * p.n + hs[3 * s + 2];
                    worst = std::max(worst, std::fabs(hd[at] - href[s]) / hscale[s]);
                }
            }
            const float us = ok ? timeIt(stream, v.call) : -1.0f;
            std::printf(
                "{\"device\": \"%s\", \"product\": \"%s\", \"runs\": %d, \"m\": %d, \"n\": %d, "
                "\"k\": %d, \"variant\": \"%s\", \"ok\": %s, \"us\": %.2f, "
                "\"tflops\": %.2f, \"max_rel_error\": %.3g}\n",
                prop.name, p.name, runs, p.m, p.n, p.k, v.name, ok ? "true" : "false", us,
                ok ? flop / (us * 1e-6) / 1e12 : 0.0, worst);
            std::fflush(stdout);
        }
        cudaFree(a);
        cudaFree(b);
        cudaFree(bias);
        cudaFree(out);
        cudaFree(samples);
        cudaFree(ref);
        cudaFree(scale);
    }
    cublasDestroy(handle);
    return 0;
}
