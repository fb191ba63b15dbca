// AxisRange.h — axis ranges that a few wild points cannot flatten, and ticks on round values.
//
// A run that blew up to a loss of 1e31 before it was caught, or one inf, must not scale a loss
// chart so that every other curve lies flat on its floor. The figures draw up to a robust top
// and say how many points lie above it; a "Full y range" box shows everything.
// Ticks fall on 1, 2 and 5 × 10^k on linear axes (0, 0.5, 1, ... not 0.81, 1.62, 2.43) and on
// whole decades on log axes, as a reader of a paper's figure expects. Qt-free.
#pragma once

#include <string>
#include <utility>
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

// Ticks at first, first + step, ... up to `hi`, on a linear axis over [lo, hi]: step is 1, 2 or
// 5 × 10^k, the smallest giving at most `maxTicks` ticks; first is the first multiple of step at
// or above lo. `decimals` is how many digits after the point label every tick exactly; where
// the ticks reach 10^6 or their step is below 10^-4 they are labelled in scientific notation
// (`scientific`, with `decimals` digits of the mantissa): 1e80 is "1.0e+80", not 81 digits
// across the figure.
struct LinearTicks {
    double first = 0.0;
    double step = 1.0;
    int count = 0;
    int decimals = 0;
    bool scientific = false;
};
LinearTicks niceTicks(double lo, double hi, int maxTicks = 7);
// The printf format of the ticks' labels ("%.2f", "%.1e"), as Qt Charts' labelFormat takes it.
std::string tickFormat(const LinearTicks &ticks);
// One tick's label in that format.
std::string tickLabel(const LinearTicks &ticks, double value);

// [lo, hi] widened to whole decades for a log axis: [0.0003, 2.3] -> [0.0001, 10].
std::pair<double, double> decadeRange(double lo, double hi);

// The round values between the decades of a log axis that spans at most two decades (2 and 5 ×
// 10^k): such an axis labelled at its decades alone shows two or three numbers (0.001, 0.01 on
// η·√m_H's 2e-3 … 2e-2). Empty for a wider axis, whose decades suffice.
std::vector<double> roundLogTicks(double lo, double hi);

} // namespace headlab::ui
