// LtEpilogue.cu — see LtEpilogue.h.
#include "core/model/cuda/LtEpilogue.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <algorithm>
#include <vector>

namespace headlab::cuda {

namespace {

// One cuBLASLt handle per device, made on first use and kept for the process.
cublasLtHandle_t handleFor(int device)
{
    static std::mutex mutex;
    static std::map<int, cublasLtHandle_t> handles;
    const std::lock_guard<std::mutex> lock(mutex);
    const auto found = handles.find(device);
    if (found != handles.end()) return found->second;
    cublasLtHandle_t handle = nullptr;
    if (cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS) return nullptr;
    handles[device] = handle;
    return handle;
}

// The descriptors of one product, destroyed with it.
struct Descriptors {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    bool ok = false;

    Descriptors(const Descriptors &) = delete;
    Descriptors &operator=(const Descriptors &) = delete;
    ~Descriptors()
    {
        if (d) cublasLtMatrixLayoutDestroy(d);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (op) cublasLtMatmulDescDestroy(op);
    }

    template <typename T>
    bool setOp(cublasLtMatmulDescAttributes_t attribute, T value)
    {
        return cublasLtMatmulDescSetAttribute(op, attribute, &value, sizeof(value)) ==
               CUBLAS_STATUS_SUCCESS;
    }

    static bool layout(cublasLtMatrixLayout_t &out, int64_t rows, int64_t cols, int64_t ld,
                       int64_t batch, int64_t stride)
    {
        if (cublasLtMatrixLayoutCreate(&out, CUDA_R_32F, static_cast<uint64_t>(rows),
                                       static_cast<uint64_t>(cols), ld) != CUBLAS_STATUS_SUCCESS)
            return false;
        const int32_t count = static_cast<int32_t>(batch);
        return cublasLtMatrixLayoutSetAttribute(out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                sizeof(count)) == CUBLAS_STATUS_SUCCESS &&
               cublasLtMatrixLayoutSetAttribute(out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                &stride, sizeof(stride)) == CUBLAS_STATUS_SUCCESS;
    }

    explicit Descriptors(const LtProduct &p)
    {
        const cublasComputeType_t compute =
            p.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        if (cublasLtMatmulDescCreate(&op, compute, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return;
        const cublasLtEpilogue_t epilogue = p.epilogue == Epilogue::ReluAuxBias
                                                ? CUBLASLT_EPILOGUE_RELU_AUX_BIAS
                                                : CUBLASLT_EPILOGUE_DRELU_BGRAD;
        const int32_t transA = p.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
        const int32_t transB = p.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
        ok = setOp(CUBLASLT_MATMUL_DESC_TRANSA, transA) &&
             setOp(CUBLASLT_MATMUL_DESC_TRANSB, transB) &&
             setOp(CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(epilogue)) &&
             setOp(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<void *>(p.bias)) &&
             setOp(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, p.biasStride) &&
             setOp(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, p.aux) &&
             setOp(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, p.auxLd) &&
             setOp(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, p.auxStride);
        ok = ok &&
             layout(a, p.transA ? p.inner : p.rows, p.transA ? p.rows : p.inner, p.lda, p.batch,
                    p.strideA) &&
             layout(b, p.transB ? p.cols : p.inner, p.transB ? p.inner : p.cols, p.ldb, p.batch,
                    p.strideB) &&
             layout(d, p.rows, p.cols, p.ldd, p.batch, p.strideD);
    }
};

// What decides the algorithm: the shapes, the epilogue, the precision and how each pointer is
// aligned (cuBLASLt picks kernels by alignment up to 16 bytes).
using Key =
    std::tuple<int, int64_t, int64_t, int64_t, int64_t, bool, bool, int64_t, int64_t, int64_t,
               int64_t, int64_t, int64_t, int, int64_t, int64_t, int64_t, bool, unsigned>;

unsigned alignmentOf(const void *pointer)
{
    const auto address = reinterpret_cast<uintptr_t>(pointer);
    unsigned bytes = 16;
    while (bytes > 1 && address % bytes != 0) bytes /= 2;
    return bytes;
}

Key keyOf(const LtProduct &p)
{
    const unsigned alignments = alignmentOf(p.a) | alignmentOf(p.b) << 5 | alignmentOf(p.d) << 10 |
                                alignmentOf(p.bias) << 15 | alignmentOf(p.aux) << 20;
    return {p.device,     p.rows,
            p.cols,       p.inner,
            p.batch,      p.transA,
            p.transB,     p.lda,
            p.strideA,    p.ldb,
            p.strideB,    p.ldd,
            p.strideD,    static_cast<int>(p.epilogue),
            p.biasStride, p.auxLd,
            p.auxStride,  p.tf32,
            alignments};
}

// The algorithms cuBLASLt's heuristic proposes for one product (asked once per key), and the one
// chosen among them by timing (chosen < 0: not yet timed).
struct Choice {
    std::vector<cublasLtMatmulAlgo_t> algos;
    int chosen = -1;
};

constexpr int kCandidates = 8;

std::mutex cacheMutex;

Choice &choiceFor(const LtProduct &p, cublasLtHandle_t handle, const Descriptors &desc)
{
    static std::map<Key, Choice> cache;
    const Key key = keyOf(p);
    const auto found = cache.find(key);
    if (found != cache.end()) return found->second;
    Choice choice;
    cublasLtMatmulPreference_t preference = nullptr;
    if (desc.ok && cublasLtMatmulPreferenceCreate(&preference) == CUBLAS_STATUS_SUCCESS) {
        const uint64_t bytes = kLtWorkspaceBytes;
        cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
        int count = 0;
        if (cublasLtMatmulPreferenceSetAttribute(preference,
                                                 CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes,
                                                 sizeof(bytes)) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulAlgoGetHeuristic(handle, desc.op, desc.a, desc.b, desc.d, desc.d,
                                           preference, kCandidates, results, &count) ==
                CUBLAS_STATUS_SUCCESS)
            for (int i = 0; i < count; ++i)
                if (results[i].state == CUBLAS_STATUS_SUCCESS &&
                    results[i].workspaceSize <= kLtWorkspaceBytes)
                    choice.algos.push_back(results[i].algo);
        cublasLtMatmulPreferenceDestroy(preference);
    }
    return cache.emplace(key, std::move(choice)).first->second;
}

cublasStatus_t launch(const LtProduct &p, cublasLtHandle_t handle, const Descriptors &desc,
                      const cublasLtMatmulAlgo_t &algo, cudaStream_t stream)
{
    const float alpha = 1.0f, beta = 0.0f;
    return cublasLtMatmul(handle, desc.op, &alpha, p.a, desc.a, p.b, desc.b, &beta, p.d, desc.d,
                          p.d, desc.d, &algo, p.workspace, p.workspaceBytes, stream);
}

// The fastest of the proposed algorithms on this product's own operands: each launched once to
// warm up, then timed over five launches. Only outside a CUDA graph capture (it waits for the
// stream); its launches write only the product's outputs, which the real launch then overwrites.
int fastest(const LtProduct &p, cublasLtHandle_t handle, const Descriptors &desc,
            const std::vector<cublasLtMatmulAlgo_t> &algos, cudaStream_t stream)
{
    if (algos.size() < 2) return 0;
    cudaEvent_t start = nullptr, stop = nullptr;
    if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
        if (start) cudaEventDestroy(start);
        return 0;
    }
    int best = 0;
    float bestMs = 0;
    for (size_t i = 0; i < algos.size(); ++i) {
        if (launch(p, handle, desc, algos[i], stream) != CUBLAS_STATUS_SUCCESS) continue;
        cudaEventRecord(start, stream);
        bool ok = true;
        for (int k = 0; k < 5 && ok; ++k)
            ok = launch(p, handle, desc, algos[i], stream) == CUBLAS_STATUS_SUCCESS;
        cudaEventRecord(stop, stream);
        float ms = 0;
        if (!ok || cudaEventSynchronize(stop) != cudaSuccess ||
            cudaEventElapsedTime(&ms, start, stop) != cudaSuccess)
            continue;
        if (i == 0 || ms < bestMs) best = static_cast<int>(i), bestMs = ms;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    (void)cudaGetLastError(); // a candidate that failed to launch leaves no error behind
    return best;
}

bool valid(const LtProduct &p)
{
    return p.rows > 0 && p.cols > 0 && p.inner > 0 && p.batch > 0 && p.batch < (int64_t{1} << 31) &&
           p.auxLd % 128 == 0 && p.auxLd >= p.rows && p.auxStride % 128 == 0;
}

} // namespace

bool ltProductSupported(const LtProduct &p)
{
    if (!valid(p)) return false;
    const cublasLtHandle_t handle = handleFor(p.device);
    if (!handle) return false;
    const Descriptors desc(p);
    const std::lock_guard<std::mutex> lock(cacheMutex);
    return !choiceFor(p, handle, desc).algos.empty();
}

bool ltProduct(const LtProduct &p, void *stream)
{
    if (!valid(p) || p.workspaceBytes < kLtWorkspaceBytes) return false;
    const cublasLtHandle_t handle = handleFor(p.device);
    if (!handle) return false;
    const auto s = static_cast<cudaStream_t>(stream);
    const Descriptors desc(p);
    cublasLtMatmulAlgo_t algo;
    {
        const std::lock_guard<std::mutex> lock(cacheMutex);
        Choice &choice = choiceFor(p, handle, desc);
        if (choice.algos.empty()) return false;
        cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
        if (choice.chosen < 0 && cudaStreamIsCapturing(s, &capturing) == cudaSuccess &&
            capturing == cudaStreamCaptureStatusNone)
            choice.chosen = fastest(p, handle, desc, choice.algos, s);
        algo = choice.algos[static_cast<size_t>(std::max(choice.chosen, 0))];
    }
    return launch(p, handle, desc, algo, s) == CUBLAS_STATUS_SUCCESS;
}

} // namespace headlab::cuda
