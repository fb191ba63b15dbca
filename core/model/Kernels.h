// Kernels.h — what other layers call of HeadLab's own CUDA kernels (core/model/cuda/). Each entry
// returns nothing where the build has no kernels, the tensors are not on a GPU, the shape is out of
// the kernel's range or its switch is off, and the caller keeps its ATen path (the reference the
// kernel is tested against in tests/cuda).
#pragma once

#include "core/attention/AttentionPlan.h"

#include <torch/torch.h>

#include <optional>
#include <utility>

namespace headlab {

// NearestNeighbourTask::unitPoints in one kernel: seedKeys (R, 3) int64 and step (0-dim int64) on
// one CUDA device; (R, points, dim) float32 points on the unit sphere. On the CPU, the same
// arithmetic in one loop (Kernels.cpp). HEADLAB_FUSED_POINTS=0: off on both.
std::optional<torch::Tensor> fusedUnitPoints(const torch::Tensor &seedKeys,
                                             const torch::Tensor &step, int64_t points,
                                             int64_t dim);

// The ReLU feed-forward block's element-wise work on its hidden tensor (cuda/BiasRelu.h), each
// in one kernel. HEADLAB_FUSED_FFN=0: off (fusedFeedForward says whether it is on for a device).
bool fusedFeedForward(const torch::Device &device);

// h ← relu(h + b) in place, for h (R, N, F) and b (R, F), FP32 contiguous on one CUDA device.
// false where it could not run (nothing changed).
bool fusedBiasRelu(torch::Tensor &h, const torch::Tensor &b);

// h = relu(x·w1 + b1) as one CUTLASS product with the bias and ReLU in its epilogue
// (cuda/BiasReluProduct.h), for x (R, N, m), w1 (R, m, F), b1 (R, F): fusedFfnProductFits says
// whether it takes these tensors (the build has CUTLASS, FP32 contiguous on one CUDA device, TF32
// off, m ≤ 64 and F ≥ 1,024, where it was measured faster; HEADLAB_FFN_PRODUCT=0: never), and
// fusedBiasReluProduct returns h, or nothing where the launch failed.
bool fusedFfnProductFits(const torch::Tensor &x, const torch::Tensor &w1, const torch::Tensor &b1);
std::optional<torch::Tensor> fusedBiasReluProduct(const torch::Tensor &x, const torch::Tensor &w1,
                                                  const torch::Tensor &b1);

// dh ← dh ⊙ [h > 0] in place, and the bias gradient gb (R, F) ← Σ over the N rows of dh (written),
// for dh and h (R, N, F). false where it could not run (nothing changed).
bool fusedReluBackward(torch::Tensor &dh, const torch::Tensor &h, torch::Tensor &gb);

// The unit-scale norm's post-norm residual step (cuda/UnitNorm.h): y = g · (a + r) / ‖a + r‖ over
// the last dimension, for a and r (R, rows, d) and g (R) (or (R, 1)), FP32 contiguous on one CUDA
// device; eps > 0 floors the norm. s = a + r and the norms (R, rows; before the floor) are kept
// for the backward pass. HEADLAB_FUSED_NORM=0: off (fusedUnitNorm says whether it is on for a device).
bool fusedUnitNorm(const torch::Device &device);
struct UnitNormParts {
    torch::Tensor y, s, norm;
};
std::optional<UnitNormParts> fusedResidualUnitNorm(const torch::Tensor &a, const torch::Tensor &r,
                                                   const torch::Tensor &gain, double eps);

// Its backward pass: the gradient of a (and of r), and each row's dy · s / n (R, rows), whose sum
// per run is g's gradient.
std::optional<std::pair<torch::Tensor, torch::Tensor>>
fusedResidualUnitNormBackward(const torch::Tensor &dy, const UnitNormParts &saved,
                              const torch::Tensor &gain, double eps);

// The token embedding and the learned positions on the CPU, one loop each way (CpuEmbedding.h):
// x (R, B, T, d) = table[r, token] + positions[r, t], for tokens (B, T) shared by the runs or
// (R, B, T), a table (R, vocab, d) and positions (R, maxPositions, d) or undefined, FP32 contiguous
// on the CPU. HEADLAB_FUSED_EMBEDDING=0: ATen's path (fusedEmbedding says whether it is on for a
// device; fusedEmbeddingFits whether the tensors qualify). The forward pass throws on a token
// outside the vocabulary; the backward pass gives the table's and the positions' gradients.
bool fusedEmbedding(const torch::Device &device);
bool fusedEmbeddingFits(const torch::Tensor &tokens, const torch::Tensor &table,
                        const torch::Tensor &positions);
torch::Tensor fusedEmbeddingForward(const torch::Tensor &tokens, const torch::Tensor &table,
                                    const torch::Tensor &positions);
std::pair<torch::Tensor, torch::Tensor> fusedEmbeddingBackward(const torch::Tensor &tokens,
                                                               const torch::Tensor &dy,
                                                               const torch::Tensor &table,
                                                               const torch::Tensor &positions);

// The LayerNorm with each run's scale and shift (cuda/LayerNorm.h, CpuLayerNorm.h): y = b + (x − μ)
// · rstd · (c · g) over the last dimension, rstd = 1 / sqrt(biased var + eps), for x (R, rows, d)
// and g, b (R, d), FP32 contiguous on one CUDA device or on the CPU, d ≤ 1,024. The row means and
// rstd (R, rows) are kept for the backward pass. HEADLAB_FUSED_LAYER_NORM=0: off (fusedLayerNorm
// says whether it is on for a device).
bool fusedLayerNorm(const torch::Device &device);
inline constexpr int64_t kFusedLayerNormMaxWidth = 1024;
struct LayerNormParts {
    torch::Tensor y, mean, rstd;
};
std::optional<LayerNormParts> fusedLayerNormForward(const torch::Tensor &x,
                                                    const torch::Tensor &gain,
                                                    const torch::Tensor &shift, double eps,
                                                    double scale);

// Its backward pass: dx, g's gradient and b's gradient (R, d).
struct LayerNormGradients {
    torch::Tensor dx, gain, shift;
};
std::optional<LayerNormGradients> fusedLayerNormBackward(const torch::Tensor &dy,
                                                         const torch::Tensor &x,
                                                         const LayerNormParts &saved,
                                                         const torch::Tensor &gain, double scale);

// Attention over micro-heads for short sequences (cuda/MicroAttention.h): for each run, sample and
// micro-head, o = softmax(scale · q kᵀ, the future masked where causal) v, one kernel each way.
// q, k and v are (R, B, T, M·dm) FP32 on one CUDA device with contiguous rows evenly spaced (a
// third of one Q/K/V product's output qualifies); o is contiguous. HEADLAB_FUSED_ATTENTION=0: off
// (fusedMicroAttention says whether it is on for a device, fusedMicroAttentionFits whether a shape
// fits a block: T = 64 mostly does not, and keeps ATen's path).
bool fusedMicroAttention(const torch::Device &device);
bool fusedMicroAttentionFits(int64_t positions, int64_t microHeads, int64_t width);
// The device as the attention plan sees it (core/attention/AttentionPlan.h): a GPU or not, and the
// micro-heads kernel there (on, and which shapes fit it).
AttentionDevice attentionDevice(const torch::Device &device);
std::optional<torch::Tensor> fusedMicroAttentionForward(const torch::Tensor &q,
                                                        const torch::Tensor &k,
                                                        const torch::Tensor &v, int64_t microHeads,
                                                        double scale, bool causal);

// Its backward pass from do (R, B, T, M·dm): writes every element of dq, dk and dv (shaped as q,
// rows evenly spaced: they may be thirds of one tensor). false where it could not run.
bool fusedMicroAttentionBackward(const torch::Tensor &dout, const torch::Tensor &q,
                                 const torch::Tensor &k, const torch::Tensor &v, int64_t microHeads,
                                 double scale, bool causal, torch::Tensor &dq, torch::Tensor &dk,
                                 torch::Tensor &dv);

} // namespace headlab
