// BiasRelu.h — the element-wise work of the ReLU feed-forward block on its widest tensor (R runs ×
// N rows × F hidden), as one kernel each way instead of ATen's three to four passes:
//   forward   h ← relu(h + b), in place on the product x·w1 (ATen: the bias broadcast into the
//             product's output, the product reading it back, then the ReLU);
//   backward  dh ← dh ⊙ [h > 0], in place, and b's gradient summed over the rows (ATen: the ReLU's
//             backward, then a reduction that reads dh again).
// Issue 24's profile of nearest neighbour (FFN 2048) put these passes at a quarter of the step.
// cuBLASLt's ReLU and bias-gradient epilogues were tried first: for batched FP32 products they run
// as a separate global kernel of their own, slower than ATen's passes (docs/data/issue24).
// Plain CUDA, no LibTorch.
#pragma once

#include <cstdint>

namespace headlab::cuda {

// Both kernels cut each run's rows into `slices` slices (rowSlices), a block per slice and 512
// columns (128 where a row is no multiple of 16 bytes), so that a thread walks 4 columns (or 1) down
// its slice with 16-byte accesses: no index arithmetic per element, the bias read once.
int64_t rowSlices(int64_t runs, int64_t rows, int64_t width);

struct BiasReluArgs {
    float *h;          // (runs, rows, width): the product, replaced by relu(h + bias)
    const float *bias; // (runs, width)
    int64_t runs, rows, width, slices;
};

// Enqueues the forward kernel on `stream` (a cudaStream_t), capturable in a CUDA graph. NaN stays
// NaN (as torch.relu). Returns false if the launch failed.
bool biasRelu(const BiasReluArgs &args, void *stream);

struct ReluBackwardArgs {
    float *dh;      // (runs, rows, width): the gradient of relu's output, replaced by its input's
    const float *h; // (runs, rows, width): relu's output
    float *partial; // (runs, slices, width): b's gradient summed over each slice of rows (the
                    // caller sums them, in a fixed order: the same bits every run)
    int64_t runs, rows, width, slices;
};

// Enqueues the backward kernel on `stream`, capturable. Returns false if the launch failed.
bool reluBackward(const ReluBackwardArgs &args, void *stream);

} // namespace headlab::cuda
