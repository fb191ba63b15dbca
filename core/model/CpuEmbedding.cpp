// CpuEmbedding.cpp — see CpuEmbedding.h.
#include "core/model/CpuEmbedding.h"

#include "core/model/CpuParallel.h"

#include <algorithm>

namespace headlab::cpu {

namespace {

const int64_t *tokensOf(const EmbeddingArgs &a, int64_t run)
{
    return a.tokens + (a.tokensPerRun ? run * a.batch * a.length : 0);
}

} // namespace

bool embed(const EmbeddingArgs &a, float *y)
{
    const int64_t count = (a.tokensPerRun ? a.runs : 1) * a.batch * a.length;
    if (std::any_of(a.tokens, a.tokens + count, [&](int64_t t) { return t < 0 || t >= a.vocab; }))
        return false;
    const int64_t d = a.d, rows = a.batch * a.length;
    cpuParallelFor(0, a.runs * rows, 256, [&](int64_t begin, int64_t end) {
        for (int64_t index = begin; index < end; ++index) {
            const int64_t r = index / rows, i = index % rows, t = i % a.length;
            const float *e = a.table + (r * a.vocab + tokensOf(a, r)[i]) * d;
            float *out = y + index * d;
            if (a.positions) {
                const float *p = a.positions + (r * a.maxPositions + t) * d;
                for (int64_t j = 0; j < d; ++j) out[j] = e[j] + p[j];
            } else {
                std::copy(e, e + d, out);
            }
        }
    });
    return true;
}

void embedBackward(const EmbeddingArgs &a, const float *dy, float *dTable, float *dPositions)
{
    const int64_t d = a.d, rows = a.batch * a.length;
    cpuParallelFor(0, a.runs, 1, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            float *dt = dTable + r * a.vocab * d;
            float *dp = dPositions ? dPositions + r * a.maxPositions * d : nullptr;
            std::fill(dt, dt + a.vocab * d, 0.0f);
            if (dp) std::fill(dp, dp + a.maxPositions * d, 0.0f);
            const int64_t *tokens = tokensOf(a, r);
            for (int64_t i = 0; i < rows; ++i) {
                const float *g = dy + (r * rows + i) * d;
                float *e = dt + tokens[i] * d;
                for (int64_t j = 0; j < d; ++j) e[j] += g[j];
                if (dp) {
                    float *p = dp + (i % a.length) * d;
                    for (int64_t j = 0; j < d; ++j) p[j] += g[j];
                }
            }
        }
    });
}

} // namespace headlab::cpu
