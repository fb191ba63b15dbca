// Maximise.h — the largest value of a function of one variable on an interval, where the function
// is unimodal near its maximum but may be flat or ragged elsewhere: the profiles of the
// logistic fit (Logistic.cpp) and of the seeds' thresholds (Thresholds.cpp). Torch-free.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace headlab {

struct Maximum {
    double x = 0, value = -std::numeric_limits<double>::infinity();
};

// The best of `grid` + 1 evenly spaced points of [low, high], then `iterations` steps of golden-
// section search between that point's two neighbours; the largest value seen, and where.
template <class F>
Maximum maximiseOnGrid(F f, double low, double high, int grid, int iterations)
{
    Maximum best;
    int bestIndex = 0;
    for (int i = 0; i <= grid; ++i) {
        const double x = low + (high - low) * i / grid;
        const double v = f(x);
        if (v > best.value) {
            best = {x, v};
            bestIndex = i;
        }
    }
    const double step = (high - low) / grid;
    double left = low + step * std::max(0, bestIndex - 1);
    double right = low + step * std::min(grid, bestIndex + 1);
    const double g = (std::sqrt(5.0) - 1) / 2;
    double m1 = right - g * (right - left), m2 = left + g * (right - left);
    double v1 = f(m1), v2 = f(m2);
    for (int i = 0; i < iterations; ++i) {
        if (v1 < v2) {
            left = m1;
            m1 = m2;
            v1 = v2;
            m2 = left + g * (right - left);
            v2 = f(m2);
        } else {
            right = m2;
            m2 = m1;
            v2 = v1;
            m1 = right - g * (right - left);
            v1 = f(m1);
        }
    }
    if (v1 > best.value) best = {m1, v1};
    if (v2 > best.value) best = {m2, v2};
    return best;
}

} // namespace headlab
