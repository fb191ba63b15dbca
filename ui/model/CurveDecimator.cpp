// CurveDecimator.cpp — see CurveDecimator.h.
#include "ui/model/CurveDecimator.h"

#include <algorithm>
#include <cmath>

namespace headlab::ui {

QList<QPointF> CurveDecimator::decimate(const Curve &curve, const CurveView &view)
{
    QList<QPointF> out;
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
        out.reserve(qsizetype(curve.size()));
        for (const auto &p : curve)
            if (usable(p)) out.append(QPointF(double(p.step), p.value));
        return out;
    }
    const double a = view.logX ? std::log(lo) : lo;
    const double b = view.logX ? std::log(hi) : hi;
    const double width = (b - a) / buckets;
    out.reserve(2 * buckets + 2);
    int current = -1;
    const CurvePoint *minP = nullptr, *maxP = nullptr;
    auto flush = [&] {
        if (!minP) return;
        if (minP == maxP) {
            out.append(QPointF(double(minP->step), minP->value));
        } else if (minP->step < maxP->step) {
            out.append(QPointF(double(minP->step), minP->value));
            out.append(QPointF(double(maxP->step), maxP->value));
        } else {
            out.append(QPointF(double(maxP->step), maxP->value));
            out.append(QPointF(double(minP->step), minP->value));
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

Curve CurveDecimator::smooth(const Curve &curve, double weight)
{
    if (weight <= 0.0) return curve;
    weight = std::min(weight, 0.999);
    Curve out;
    out.reserve(curve.size());
    double last = 0.0;
    int n = 0;
    for (const auto &p : curve) {
        if (!std::isfinite(p.value)) {
            out.push_back(p);
            continue;
        }
        last = last * weight + (1.0 - weight) * p.value;
        ++n;
        const double debias = 1.0 - std::pow(weight, n);
        out.push_back({p.step, last / debias});
    }
    return out;
}

std::vector<Curve> CurveDecimator::phasePieces(const Curve &curve,
                                               const std::vector<int64_t> &starts)
{
    std::vector<Curve> pieces(1);
    size_t next = 1; // starts[0] is the first phase's own start
    for (const auto &p : curve) {
        while (next < starts.size() && p.step > starts[next]) {
            ++next;
            if (!pieces.back().empty()) pieces.emplace_back();
        }
        pieces.back().push_back(p);
    }
    return pieces;
}

} // namespace headlab::ui
