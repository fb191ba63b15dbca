// CpuLayerNorm.cpp — see CpuLayerNorm.h.
//
// Each row's sums go into 16 partial sums, feature j into partial j mod 16, added in a fixed order
// at the end: the compiler vectorizes them for every instruction set the loops are cloned for
// (CpuClones.h) and every clone rounds alike. Built with the flags core/model/CMakeLists.txt sets
// for this file (a square root that sets no errno, no fused multiply-add), as Adam's pass.
#include "core/model/CpuLayerNorm.h"

#include "core/model/CpuClones.h"
#include "core/model/CpuParallel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace headlab::cpu {

namespace {

constexpr int64_t kPartials = 16;
// Rows a thread takes at least, and the backward pass's slice of a run's rows.
constexpr int64_t kSliceRows = 128;
using Partials = std::array<float, kPartials>;

float total(const Partials &p)
{
    float s = 0.0f;
    for (const float v : p) s += v;
    return s;
}

// Σ x over a row of d.
HEADLAB_CPU_CLONES float rowSum(const float *__restrict x, int64_t d)
{
    Partials p{};
    int64_t j = 0;
    for (; j + kPartials <= d; j += kPartials)
        for (int64_t k = 0; k < kPartials; ++k) p[k] += x[j + k];
    for (int64_t k = 0; j + k < d; ++k) p[k] += x[j + k];
    return total(p);
}

// Σ (x − μ)² over a row of d.
HEADLAB_CPU_CLONES float rowSquares(const float *__restrict x, float mu, int64_t d)
{
    Partials p{};
    int64_t j = 0;
    for (; j + kPartials <= d; j += kPartials)
        for (int64_t k = 0; k < kPartials; ++k) {
            const float c = x[j + k] - mu;
            p[k] += c * c;
        }
    for (int64_t k = 0; j + k < d; ++k) {
        const float c = x[j + k] - mu;
        p[k] += c * c;
    }
    return total(p);
}

HEADLAB_CPU_CLONES void normalizeRow(const float *__restrict x, const float *__restrict s,
                                     const float *__restrict b, float *__restrict y, float mu,
                                     float rstd, int64_t d)
{
    for (int64_t j = 0; j < d; ++j) y[j] = b[j] + ((x[j] - mu) * rstd) * s[j];
}

// One row of the backward pass: with x̂ = (x − μ) · rstd and ĝ = dy · s, dx = rstd · (ĝ − mean(ĝ)
// − x̂ · mean(ĝ · x̂)); dy · x̂ and dy added into the run's sums for g and b.
HEADLAB_CPU_CLONES void backwardRow(const float *__restrict dy, const float *__restrict x,
                                    const float *__restrict s, float *__restrict dx,
                                    float *__restrict sumDyXh, float *__restrict sumDy, float mu,
                                    float rstd, int64_t d)
{
    Partials pg{}, pgx{};
    int64_t j = 0;
    for (; j + kPartials <= d; j += kPartials)
        for (int64_t k = 0; k < kPartials; ++k) {
            const float gh = dy[j + k] * s[j + k];
            pg[k] += gh;
            pgx[k] += gh * ((x[j + k] - mu) * rstd);
        }
    for (int64_t k = 0; j + k < d; ++k) {
        const float gh = dy[j + k] * s[j + k];
        pg[k] += gh;
        pgx[k] += gh * ((x[j + k] - mu) * rstd);
    }
    const float n = static_cast<float>(d);
    const float meanG = total(pg) / n, meanGX = total(pgx) / n;
    for (int64_t i = 0; i < d; ++i) {
        const float xh = (x[i] - mu) * rstd;
        dx[i] = rstd * (dy[i] * s[i] - meanG - xh * meanGX);
        sumDyXh[i] += dy[i] * xh;
        sumDy[i] += dy[i];
    }
}

// Each run's scale c · g (runs, d), once per call.
std::vector<float> runScales(const float *gain, int64_t runs, int64_t d, float c)
{
    std::vector<float> s(static_cast<size_t>(runs * d));
    for (size_t i = 0; i < s.size(); ++i) s[i] = c * gain[i];
    return s;
}

} // namespace

void layerNorm(const LayerNormArgs &a)
{
    const int64_t d = a.d;
    const float n = static_cast<float>(d);
    const auto scales = runScales(a.gain, a.runs, d, a.scale);
    cpuParallelFor(0, a.runs * a.rows, kSliceRows, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
            const int64_t r = row / a.rows;
            const float *x = a.x + row * d;
            const float mu = rowSum(x, d) / n;
            const float rstd = 1.0f / std::sqrt(rowSquares(x, mu, d) / n + a.eps);
            a.mean[row] = mu;
            a.rstd[row] = rstd;
            normalizeRow(x, scales.data() + r * d, a.shift + r * d, a.y + row * d, mu, rstd, d);
        }
    });
}

void layerNormBackward(const LayerNormBackwardArgs &a)
{
    // Each run's rows in slices of kSliceRows, each slice's sums for g and b apart, then the slices
    // added in order: the same bits whatever the threads.
    const int64_t d = a.d, slicesPerRun = (a.rows + kSliceRows - 1) / kSliceRows;
    const auto scales = runScales(a.gain, a.runs, d, a.scale);
    std::vector<float> partial(static_cast<size_t>(a.runs * slicesPerRun * 2 * d), 0.0f);
    cpuParallelFor(0, a.runs * slicesPerRun, 1, [&](int64_t begin, int64_t end) {
        for (int64_t slice = begin; slice < end; ++slice) {
            const int64_t r = slice / slicesPerRun, first = (slice % slicesPerRun) * kSliceRows;
            float *dg = partial.data() + slice * 2 * d, *db = dg + d;
            for (int64_t i = first; i < std::min(first + kSliceRows, a.rows); ++i) {
                const int64_t row = r * a.rows + i;
                backwardRow(a.dy + row * d, a.x + row * d, scales.data() + r * d, a.dx + row * d,
                            dg, db, a.mean[row], a.rstd[row], d);
            }
        }
    });
    for (int64_t r = 0; r < a.runs; ++r) {
        float *dg = a.dgain + r * d, *db = a.dshift + r * d;
        for (int64_t j = 0; j < d; ++j) dg[j] = db[j] = 0.0f;
        for (int64_t k = 0; k < slicesPerRun; ++k) {
            const float *part = partial.data() + (r * slicesPerRun + k) * 2 * d;
            for (int64_t j = 0; j < d; ++j) {
                dg[j] += part[j];
                db[j] += part[d + j];
            }
        }
        for (int64_t j = 0; j < d; ++j) dg[j] *= a.scale;
    }
}

} // namespace headlab::cpu
