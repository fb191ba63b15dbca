// LtEpilogue.h — batched FP32 matrix products with cuBLASLt's fused epilogues, for the
// feed-forward block's ReLU (core/model/Transformer.cpp, FeedForwardRelu):
//   forward   h = relu(x·w + b), with the ReLU's bit mask kept for the backward pass;
//   backward  dh = (dy·wᵀ) ⊙ mask, and the bias gradient Σ_rows dh, in the product.
// Each replaces a product plus two to three element-wise passes over the block's widest tensor
// (the bias broadcast, the ReLU; the ReLU's backward and the bias gradient's sum), which issue
// 24's profile of nearest neighbour put at a quarter of the step. Plain CUDA, no LibTorch.
#pragma once

#include <cstddef>
#include <cstdint>

namespace headlab::cuda {

enum class Epilogue {
    ReluAuxBias, // D = relu(op(A)·op(B) + bias), and the mask of D > 0 into aux
    DReluBGrad,  // D = (op(A)·op(B)) ⊙ aux, and bias ← Σ over D's columns
};

// D(i) = op(A(i))·op(B(i)) for i < batch, column-major (cuBLAS's convention): D is rows × cols,
// op(A) rows × inner, op(B) inner × cols; ld* are leading dimensions and stride* the elements
// between batches. bias: rows floats per batch (biasStride apart), read (ReluAuxBias) or written
// (DReluBGrad). aux: the bit mask, auxLd bits per column (a multiple of 128, ≥ rows), auxStride
// bits between batches.
struct LtProduct {
    int64_t rows = 0, cols = 0, inner = 0, batch = 1;
    bool transA = false, transB = false;
    const float *a = nullptr;
    int64_t lda = 0, strideA = 0;
    const float *b = nullptr;
    int64_t ldb = 0, strideB = 0;
    float *d = nullptr;
    int64_t ldd = 0, strideD = 0;
    Epilogue epilogue = Epilogue::ReluAuxBias;
    float *bias = nullptr;
    int64_t biasStride = 0;
    void *aux = nullptr;
    int64_t auxLd = 0, auxStride = 0;
    bool tf32 = false; // TF32 tensor cores (the run's `tf32`), else FP32 throughout
    int device = 0;    // the CUDA device all pointers are on (and current)
    void *workspace = nullptr;
    size_t workspaceBytes = 0;
};

// The workspace an LtProduct may be given (bytes).
constexpr size_t kLtWorkspaceBytes = size_t{8} << 20;

// Whether cuBLASLt has an algorithm for this product (its shapes, epilogue and the alignment of
// its pointers; the pointers are not read). Cached: one heuristic query per shape.
bool ltProductSupported(const LtProduct &p);

// Enqueues the product on `stream` (a cudaStream_t), capturable in a CUDA graph. The first call of
// a shape outside a capture times the heuristic's candidates (up to 8) on its operands and keeps
// the fastest; from then on the shape always runs that algorithm, so results are repeatable within
// a process. (Under a capture before any timing: the heuristic's first.) Returns false, having
// enqueued nothing, where no algorithm fits or the handle cannot be made.
bool ltProduct(const LtProduct &p, void *stream);

} // namespace headlab::cuda
