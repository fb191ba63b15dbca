// CurveDecimation.cpp — see CurveDecimation.h.
#include "core/metrics/CurveDecimation.h"

#include <algorithm>
#include <cmath>

namespace headlab {

Curve decimateCurve(const Curve &curve, const DecimationView &view)
{
    Curve out;
    if (curve.empty()) return out;
    auto usable = [&](const CurvePoint &p) {
        return std::isfinite(p.value) && (!view.logX || p.step > 0) && (!view.logY || p.value > 0);
    };
    double lo = view.xMin, hi = view.xMax;
    if (hi <= lo) {
        lo = double(curve.front().step);
        hi = double(curve.back().step);
    }
    if (view.logX) lo = std::max(lo, 1.0);
    const int buckets = std::max(1, view.buckets);
    if (curve.size() <= size_t(2 * buckets) || hi <= lo) {
        out.reserve(curve.size());
        for (const auto &p : curve)
            if (usable(p)) out.push_back(p);
        return out;
    }
    const double a = view.logX ? std::log(lo) : lo;
    const double b = view.logX ? std::log(hi) : hi;
    const double width = (b - a) / buckets;
    out.reserve(2 * size_t(buckets) + 2);
    int current = -1;
    const CurvePoint *minP = nullptr, *maxP = nullptr;
    auto flush = [&] {
        if (!minP) return;
        if (minP == maxP) {
            out.push_back(*minP);
        } else if (minP->step < maxP->step) {
            out.push_back(*minP);
            out.push_back(*maxP);
        } else {
            out.push_back(*maxP);
            out.push_back(*minP);
        }
        minP = maxP = nullptr;
    };
    for (const auto &p : curve) {
        if (!usable(p)) continue;
        const double x = view.logX ? std::log(double(p.step)) : double(p.step);
        const int bucket = int(std::clamp((x - a) / width, -1.0, double(buckets)));
        if (bucket != current) {
            flush();
            current = bucket;
        }
        if (!minP || p.value < minP->value) minP = &p;
        if (!maxP || p.value > maxP->value) maxP = &p;
    }
    flush();
    return out;
}

} // namespace headlab
