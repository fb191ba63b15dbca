// Kernels.cpp — see Kernels.h.
#include "core/model/Kernels.h"

#include "core/config/Switches.h"

#ifdef HEADLAB_HAVE_CUDA_KERNELS
#include "core/model/cuda/UnitPoints.h"

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

} // namespace headlab
