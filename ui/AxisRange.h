// AxisRange.h — y ranges that a few wild points cannot flatten.
//
// A run that blew up to a loss of 1e31 before it was caught, or one inf, must not scale a loss
// chart so that every other curve lies flat on its floor. The figures draw up to a robust top
// and say how many points lie above it; a "Full y range" box shows everything. Qt-free.
#pragma once

#include <vector>

namespace headlab::ui {

struct RobustRange {
    double top = 0.0; // the largest value kept in range
    int above = 0;    // finite values above `top` (outliers left off the chart)
};

// The largest finite value that is not an outlier: values above max(floor, 10 x the 90th
// percentile of the finite values) are left out. Non-finite values are always left out (and not
// counted). With `full`, the largest finite value. top is 0 when there is no finite value.
RobustRange robustTop(const std::vector<double> &values, double floor, bool full = false);

} // namespace headlab::ui
