// Kernels.h — what other layers call of HeadLab's own CUDA kernels (core/model/cuda/). Each entry
// returns nothing where the build has no kernels, the tensors are not on a GPU, the shape is out of
// the kernel's range or its switch is off, and the caller keeps its ATen path (the reference the
// kernel is tested against in tests/cuda).
#pragma once

#include <torch/torch.h>

#include <optional>

namespace headlab {

// NearestNeighbourTask::unitPoints in one kernel: seedKeys (R, 3) int64 and step (0-dim int64) on
// one CUDA device; (R, points, dim) float32 points on the unit sphere. HEADLAB_FUSED_POINTS=0: off.
std::optional<torch::Tensor> fusedUnitPoints(const torch::Tensor &seedKeys,
                                             const torch::Tensor &step, int64_t points,
                                             int64_t dim);

// The feed-forward block relu(x·w1 + b1)·w2 + b2 with cuBLASLt's epilogues (cuda/LtEpilogue.h),
// for x (R, N, m), w1 (R, m, F), b1 (R, F), w2 (R, F, m), FP32 contiguous on one CUDA device.
// HEADLAB_FUSED_FFN=0: off.
//
// Whether both fused products have an algorithm for these shapes (and the bias gradient gb1's
// alignment), and the switch is on: the caller then takes the fused path for the whole step.
bool fusedFeedForwardSupported(const torch::Tensor &x, const torch::Tensor &w1,
                               const torch::Tensor &b1, const torch::Tensor &w2,
                               const torch::Tensor &gb1);

// h = relu(x·w1 + b1) (R, N, F) in one product, and the ReLU's bit mask for the backward pass.
struct ReluProduct {
    torch::Tensor h, mask;
};
std::optional<ReluProduct> fusedLinearRelu(const torch::Tensor &x, const torch::Tensor &w1,
                                           const torch::Tensor &b1);

// The backward pass through h's product and ReLU from dy (R, N, m): dh = (dy·w2ᵀ) ⊙ mask, written
// into dh (R, N, F), and the bias gradient Σ over N of dh written into gb1 (R, F), in one product.
// false where it could not run (nothing written).
bool fusedReluBackward(const torch::Tensor &dy, const torch::Tensor &w2, const torch::Tensor &mask,
                       torch::Tensor &dh, torch::Tensor &gb1);

} // namespace headlab
