// RunComparison.h — how the GPU tests compare two runs that should agree (one path against
// another, graphs against eager, an ensemble member against the run alone): the largest relative
// gap between their curves. It cannot pass by accident: a run that did not finish `done`, a
// value that is NaN or infinite in either run, or curves of different lengths make it infinite,
// so two runs that diverge alike (both NaN from the same step) fail the comparison instead of
// passing it. tests/core checks that on the CPU with runs made to diverge.
#pragma once

#include "core/config/RunResult.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace headlab::testing {

// The largest |a − b| / max(1, |a|) over the two runs' training and test curves; ∞ unless both
// runs finished done with curves of the same lengths and every value finite.
inline double relativeGap(const RunResult &a, const RunResult &b)
{
    if (a.status != RunStatus::Done || b.status != RunStatus::Done) return INFINITY;
    if (a.train.size() != b.train.size() || a.test.size() != b.test.size()) return INFINITY;
    double worst = 0.0;
    auto fold = [&](const Curve &x, const Curve &y) {
        for (size_t k = 0; k < x.size(); ++k) {
            const double u = x[k].value, v = y[k].value;
            if (!std::isfinite(u) || !std::isfinite(v)) worst = INFINITY;
            worst = std::max(worst, std::abs(u - v) / std::max(1.0, std::abs(u)));
        }
    };
    fold(a.train, b.train);
    fold(a.test, b.test);
    return worst;
}

// Why relativeGap is infinite, for a test's message ("" when it is finite).
inline std::string whyNotComparable(const RunResult &a, const RunResult &b)
{
    if (a.status != RunStatus::Done || b.status != RunStatus::Done)
        return std::string("a run did not finish done (") + toString(a.status) + ", " +
               toString(b.status) + ")";
    if (a.train.size() != b.train.size() || a.test.size() != b.test.size())
        return "the curves differ in length";
    for (const Curve *c : {&a.train, &a.test, &b.train, &b.test})
        for (const auto &p : *c)
            if (!std::isfinite(p.value)) return "a value is not finite";
    return {};
}

} // namespace headlab::testing
