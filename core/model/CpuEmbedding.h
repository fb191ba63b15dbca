// CpuEmbedding.h — the token embedding and the learned positions on the CPU, one loop each way:
// y[r, b, t] = E[r, token] + P[r, t]. ATen's path takes index_select (or gather) and an add
// forward, and index_add_ into a zeroed table and a sum over the batch back; at the classroom's
// widths index_add_ alone was 2–3 % of a step. Raw pointers, contiguous. Internal to core/model
// (Kernels.h is the entry point).
#pragma once

#include <cstdint>

namespace headlab::cpu {

struct EmbeddingArgs {
    const int64_t *tokens; // (B, T) shared by the runs, or (runs, B, T)
    bool tokensPerRun;
    const float *table;     // (runs, vocab, d)
    const float *positions; // (runs, maxPositions, d), or nullptr: none
    int64_t runs, batch, length, vocab, maxPositions, d;
};

// y (runs, B, T, d); false, with nothing written, when a token is outside [0, vocab).
bool embed(const EmbeddingArgs &args, float *y);

// The table's gradient (runs, vocab, d) and the positions' (runs, maxPositions, d, or nullptr),
// written whole (zero where no token or position took part), from dy (runs, B, T, d); each run's
// rows added in order, so the bits do not depend on the thread count.
void embedBackward(const EmbeddingArgs &args, const float *dy, float *dTable, float *dPositions);

} // namespace headlab::cpu
