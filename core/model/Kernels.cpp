// Kernels.cpp — see Kernels.h.
#include "core/model/Kernels.h"

#include "core/config/Switches.h"

#ifdef HEADLAB_HAVE_CUDA_KERNELS
#include "core/model/cuda/LtEpilogue.h"
#include "core/model/cuda/UnitPoints.h"

#include <ATen/Context.h>

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace headlab {

std::optional<torch::Tensor> fusedUnitPoints(const torch::Tensor &seedKeys,
                                             const torch::Tensor &step, int64_t points, int64_t dim)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!seedKeys.is_cuda() || !step.is_cuda() || !switchOn(Switch::FusedPoints, true))
        return std::nullopt;
    if (seedKeys.scalar_type() != torch::kInt64 || step.scalar_type() != torch::kInt64 ||
        seedKeys.dim() != 2 || seedKeys.size(1) != 3 || step.numel() != 1)
        return std::nullopt;
    if (2 * points * dim >= (int64_t{1} << 32)) return std::nullopt; // 32-bit counters
    const c10::cuda::CUDAGuard guard(seedKeys.device());
    const auto keys = seedKeys.contiguous();
    auto out = torch::empty({keys.size(0), points, dim}, keys.options().dtype(torch::kFloat32));
    cuda::UnitPointsArgs a{keys.data_ptr<int64_t>(),
                           step.data_ptr<int64_t>(),
                           out.data_ptr<float>(),
                           keys.size(0),
                           points,
                           dim};
    if (cuda::unitPoints(a, c10::cuda::getCurrentCUDAStream(keys.device().index()).stream()))
        return out;
#else
    (void)seedKeys, (void)step, (void)points, (void)dim;
#endif
    return std::nullopt;
}

#ifdef HEADLAB_HAVE_CUDA_KERNELS
namespace {

// The ReLU mask's column length in bits: cuBLASLt wants a multiple of 128.
int64_t maskBits(int64_t F)
{
    return (F + 127) / 128 * 128;
}

bool float32OnOneGpu(std::initializer_list<const torch::Tensor *> tensors)
{
    const auto device = (*tensors.begin())->device();
    for (const auto *t : tensors)
        if (!t->defined() || !t->is_cuda() || t->device() != device ||
            t->scalar_type() != torch::kFloat32 || !t->is_contiguous())
            return false;
    return true;
}

// Column-major, as cuBLASLt sees row-major tensors: hᵀ (F × N) = w1ᵀ (F × m) · xᵀ (m × N), bias
// and mask over hᵀ's F rows.
cuda::LtProduct forwardProduct(const torch::Tensor &x, const torch::Tensor &w1, const float *b1,
                               void *mask)
{
    const int64_t R = x.size(0), N = x.size(1), m = x.size(2), F = w1.size(2);
    cuda::LtProduct p;
    p.rows = F, p.cols = N, p.inner = m, p.batch = R;
    p.a = w1.data_ptr<float>(), p.lda = F, p.strideA = m * F;
    p.b = x.data_ptr<float>(), p.ldb = m, p.strideB = N * m;
    p.ldd = F, p.strideD = N * F;
    p.epilogue = cuda::Epilogue::ReluAuxBias;
    p.bias = const_cast<float *>(b1), p.biasStride = F;
    p.aux = mask, p.auxLd = maskBits(F), p.auxStride = maskBits(F) * N;
    p.tf32 = at::globalContext().allowTF32CuBLAS();
    p.device = x.device().index();
    return p;
}

// dhᵀ (F × N) = w2 (F × m, stored as w2ᵀ column-major: transposed) · dyᵀ (m × N), ⊙ mask; the
// bias gradient over dhᵀ's F rows.
cuda::LtProduct backwardProduct(const torch::Tensor &w2, int64_t N, const float *dy, float *dh,
                                float *gb1, const void *mask)
{
    const int64_t R = w2.size(0), F = w2.size(1), m = w2.size(2);
    cuda::LtProduct p;
    p.rows = F, p.cols = N, p.inner = m, p.batch = R;
    p.transA = true;
    p.a = w2.data_ptr<float>(), p.lda = m, p.strideA = F * m;
    p.b = dy, p.ldb = m, p.strideB = N * m;
    p.d = dh, p.ldd = F, p.strideD = N * F;
    p.epilogue = cuda::Epilogue::DReluBGrad;
    p.bias = gb1, p.biasStride = F;
    p.aux = const_cast<void *>(mask), p.auxLd = maskBits(F), p.auxStride = maskBits(F) * N;
    p.tf32 = at::globalContext().allowTF32CuBLAS();
    p.device = w2.device().index();
    return p;
}

// A pointer aligned as the caching allocator aligns a fresh tensor, for asking the heuristic
// about tensors that do not exist yet (activations, gradients, the mask).
void *allocatorAligned()
{
    return reinterpret_cast<void *>(uintptr_t{1} << 20);
}

} // namespace
#endif

bool fusedFeedForwardSupported(const torch::Tensor &x, const torch::Tensor &w1,
                               const torch::Tensor &b1, const torch::Tensor &w2,
                               const torch::Tensor &gb1)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!switchOn(Switch::FusedFfn, true) || !float32OnOneGpu({&x, &w1, &b1, &w2, &gb1}))
        return false;
    if (x.dim() != 3 || w1.dim() != 3 || w2.dim() != 3 || b1.dim() != 2 || gb1.dim() != 2)
        return false;
    const int64_t R = x.size(0), N = x.size(1), m = x.size(2), F = w1.size(2);
    if (w1.size(0) != R || w1.size(1) != m || b1.size(0) != R || b1.size(1) != F ||
        w2.size(0) != R || w2.size(1) != F || gb1.sizes() != b1.sizes())
        return false;
    const c10::cuda::CUDAGuard guard(x.device());
    auto *any = static_cast<float *>(allocatorAligned());
    auto forward = forwardProduct(x, w1, b1.data_ptr<float>(), any);
    forward.b = any, forward.d = any;
    const auto backward = backwardProduct(w2, N, any, any, gb1.data_ptr<float>(), any);
    return cuda::ltProductSupported(forward) && cuda::ltProductSupported(backward);
#else
    (void)x, (void)w1, (void)b1, (void)w2, (void)gb1;
    return false;
#endif
}

std::optional<ReluProduct> fusedLinearRelu(const torch::Tensor &x, const torch::Tensor &w1,
                                           const torch::Tensor &b1)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!float32OnOneGpu({&x, &w1, &b1})) return std::nullopt;
    const c10::cuda::CUDAGuard guard(x.device());
    const int64_t R = x.size(0), N = x.size(1), F = w1.size(2);
    ReluProduct out;
    out.h = torch::empty({R, N, F}, x.options());
    out.mask = torch::empty({R, maskBits(F) * N / 8}, x.options().dtype(torch::kUInt8));
    const auto workspace =
        torch::empty({static_cast<int64_t>(cuda::kLtWorkspaceBytes)}, out.mask.options());
    auto p = forwardProduct(x, w1, b1.data_ptr<float>(), out.mask.data_ptr());
    p.d = out.h.data_ptr<float>();
    p.workspace = workspace.data_ptr(), p.workspaceBytes = cuda::kLtWorkspaceBytes;
    if (cuda::ltProduct(p, c10::cuda::getCurrentCUDAStream(x.device().index()).stream()))
        return out;
#else
    (void)x, (void)w1, (void)b1;
#endif
    return std::nullopt;
}

bool fusedReluBackward(const torch::Tensor &dy, const torch::Tensor &w2, const torch::Tensor &mask,
                       torch::Tensor &dh, torch::Tensor &gb1)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!float32OnOneGpu({&dy, &w2, &dh, &gb1}) || !mask.is_cuda()) return false;
    const c10::cuda::CUDAGuard guard(dy.device());
    const auto workspace =
        torch::empty({static_cast<int64_t>(cuda::kLtWorkspaceBytes)}, mask.options());
    auto p = backwardProduct(w2, dy.size(1), dy.data_ptr<float>(), dh.data_ptr<float>(),
                             gb1.data_ptr<float>(), mask.data_ptr());
    p.workspace = workspace.data_ptr(), p.workspaceBytes = cuda::kLtWorkspaceBytes;
    return cuda::ltProduct(p, c10::cuda::getCurrentCUDAStream(dy.device().index()).stream());
#else
    (void)dy, (void)w2, (void)mask, (void)dh, (void)gb1;
    return false;
#endif
}

} // namespace headlab
