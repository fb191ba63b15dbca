// LaneAttention.h — attention over short sequences on the CPU, every (sequence, head) pair one lane
// of the vector unit: the scores, the causal softmax and the weighted values of 16 pairs at once
// (one AVX-512 register, two AVX2 ones or four SSE ones, the widest the CPU has chosen when the
// program loads), one pass each way. ATen's CPU kernel for scaled_dot_product_attention works one
// (sequence, head) block at a time: at the classroom's 12 heads 2 wide over 19 positions each block
// is a few hundred multiply-adds, and the kernel took 59 % of the step (headlab-bench single
// --profile 1, docs/PERFORMANCE.md). The attention plan takes this path on the CPU for narrow heads
// (kLaneMaxHeadDim) over sequences up to kExplicitAttentionMaxLength (core/attention/
// AttentionPlan.h; HEADLAB_CPU_ATTENTION=0: ATen's kernel). Internal to core/.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace headlab {

// Sequences this long at most (the lanes' per-query buffers are sized by it).
inline constexpr int64_t kLaneAttentionMaxLength = 64;

// q (R, B, Tq, H·hd), k and v (R, B, T, H·hd), float32 on the CPU → (R, B, Tq, H·hd): softmax(scale ·
// q kᵀ) v per head. Tq = T, masked causally where `causal`, or Tq < T: the last Tq positions, each
// seeing the keys up to its own position (every key for the last one). Differentiable in q, k, v.
torch::Tensor laneAttention(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                            int64_t heads, int64_t headDim, double scale, bool causal);

} // namespace headlab
