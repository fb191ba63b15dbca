// AxisRange.cpp — see AxisRange.h.
#include "ui/AxisRange.h"

#include <algorithm>
#include <cmath>

namespace headlab::ui {

RobustRange robustTop(const std::vector<double> &values, double floor, bool full)
{
    std::vector<double> finite;
    finite.reserve(values.size());
    for (double v : values)
        if (std::isfinite(v)) finite.push_back(v);
    RobustRange range;
    if (finite.empty()) return range;
    std::sort(finite.begin(), finite.end());
    if (full || finite.size() < 5) {
        range.top = finite.back();
        return range;
    }
    const double p90 = finite[static_cast<size_t>(0.9 * static_cast<double>(finite.size() - 1))];
    const double limit = std::max(floor, 10.0 * std::abs(p90));
    const auto end = std::upper_bound(finite.begin(), finite.end(), limit);
    range.top = end == finite.begin() ? limit : *(end - 1);
    range.above = static_cast<int>(finite.end() - end);
    return range;
}

} // namespace headlab::ui
