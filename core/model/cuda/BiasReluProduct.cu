// BiasReluProduct.cu — see BiasReluProduct.h.
#include "core/model/cuda/BiasReluProduct.h"

#include <cutlass/epilogue/thread/linear_combination_relu.h>
#include <cutlass/gemm/device/gemm_universal.h>

#include <cuda_runtime.h>

#include <limits>

namespace headlab::cuda {

namespace {

using Row = cutlass::layout::RowMajor;
template <int M, int N, int K>
using Shape = cutlass::gemm::GemmShape<M, N, K>;

// D = relu(1 · x·w + 1 · C), C the bias row under every row of h (row stride 0). The tile, 256 rows
// × 128 columns × 8 deep with 64 × 64 per warp and three stages, was the fastest of six at nearest
// neighbour's shape (bench/cutlass_products.cu's focus): 36 KB of shared memory, under the 48 KB a
// kernel gets without asking. One float per access: the epilogue reads the bias through a zero row
// stride, and x's rows of `inner` floats need not be 16-byte multiples.
using Epilogue = cutlass::epilogue::thread::LinearCombinationRelu<float, 1, float, float>;
using Gemm = cutlass::gemm::device::GemmUniversal<
    float, Row, float, Row, float, Row, float, cutlass::arch::OpClassSimt, cutlass::arch::Sm80,
    Shape<256, 128, 8>, Shape<64, 64, 8>, Shape<1, 1, 1>, Epilogue,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3, 1, 1,
    cutlass::arch::OpMultiplyAdd>;

} // namespace

bool biasReluProduct(const BiasReluProductArgs &a, void *stream)
{
    constexpr int64_t kMax = std::numeric_limits<int>::max();
    if (a.runs < 1 || a.rows < 1 || a.inner < 1 || a.width < 1 || a.runs > kMax || a.rows > kMax ||
        a.inner > kMax || a.width > kMax)
        return false;
    const int m = static_cast<int>(a.rows), n = static_cast<int>(a.width),
              k = static_cast<int>(a.inner);
    typename Gemm::Arguments args(cutlass::gemm::GemmUniversalMode::kBatched, {m, n, k},
                                  static_cast<int>(a.runs), {1.0f, 1.0f}, a.x, a.w, a.bias, a.h,
                                  a.rows * a.inner, a.inner * a.width, a.width, a.rows * a.width,
                                  Row::Stride(k), Row::Stride(n), Row::Stride(0), Row::Stride(n));
    Gemm gemm;
    const auto s = static_cast<cudaStream_t>(stream);
    if (gemm.can_implement(args) != cutlass::Status::kSuccess ||
        gemm.initialize(args, nullptr, s) != cutlass::Status::kSuccess)
        return false;
    return gemm.run(s) == cutlass::Status::kSuccess && cudaPeekAtLastError() == cudaSuccess;
}

} // namespace headlab::cuda
