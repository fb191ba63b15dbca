// AxisRange.cpp — see AxisRange.h.
#include "ui/model/AxisRange.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

LinearTicks niceTicks(double lo, double hi, int maxTicks)
{
    LinearTicks ticks;
    if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) {
        ticks.first = std::isfinite(lo) ? lo : 0.0;
        ticks.count = 1;
        return ticks;
    }
    maxTicks = std::max(2, maxTicks);
    const double rough = (hi - lo) / (maxTicks - 1);
    double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
    double step = 10 * magnitude;
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        const double candidate = m * magnitude;
        // A tiny tolerance: 3.14 / 0.5 is 6.28 ticks, 30500 / 5000 is 6.1.
        if (std::floor(hi / candidate + 1e-9) - std::ceil(lo / candidate - 1e-9) + 1 <= maxTicks) {
            step = candidate;
            break;
        }
    }
    ticks.step = step;
    ticks.first = std::ceil(lo / step - 1e-9) * step;
    ticks.count = static_cast<int>(std::floor(hi / step + 1e-9) - std::ceil(lo / step - 1e-9)) + 1;
    ticks.decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
    const double largest = std::max(std::abs(lo), std::abs(hi));
    if (largest >= 1e6 || step < 1e-4) {
        // The mantissa's digits that tell the ticks apart: those of the step below the
        // largest value's leading digit.
        ticks.scientific = true;
        ticks.decimals = std::clamp(static_cast<int>(std::floor(std::log10(largest) + 1e-9) -
                                                     std::floor(std::log10(step) + 1e-9)),
                                    0, 15);
    }
    if (ticks.first == 0.0) ticks.first = 0.0; // no "-0"
    return ticks;
}

std::string tickFormat(const LinearTicks &ticks)
{
    return "%." + std::to_string(ticks.decimals) + (ticks.scientific ? "e" : "f");
}

std::string tickLabel(const LinearTicks &ticks, double value)
{
    char text[64];
    std::snprintf(text, sizeof text, tickFormat(ticks).c_str(), value);
    return text;
}

std::pair<double, double> decadeRange(double lo, double hi)
{
    if (!(lo > 0) || !(hi >= lo)) return {1.0, 10.0};
    const double low = std::pow(10.0, std::floor(std::log10(lo) + 1e-12));
    double high = std::pow(10.0, std::ceil(std::log10(hi) - 1e-12));
    if (high <= low) high = low * 10;
    return {low, high};
}

std::vector<double> roundLogTicks(double lo, double hi)
{
    std::vector<double> ticks;
    if (!(lo > 0) || !(hi > lo) || hi / lo > 100.0 * (1 + 1e-9)) return ticks;
    const double first = std::pow(10.0, std::floor(std::log10(lo) + 1e-12));
    for (double decade = first; decade < hi * (1 + 1e-9); decade *= 10)
        for (const double m : {2.0, 5.0}) {
            const double v = m * decade;
            if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
        }
    return ticks;
}

} // namespace headlab::ui
