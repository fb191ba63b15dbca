// CurveDecimator.cpp — see CurveDecimator.h.
#include "ui/model/CurveDecimator.h"

#include <algorithm>
#include <cmath>

namespace headlab::ui {

QList<QPointF> CurveDecimator::decimate(const Curve &curve, const CurveView &view)
{
    const Curve kept = decimateCurve(curve, view);
    QList<QPointF> out;
    out.reserve(qsizetype(kept.size()));
    for (const auto &p : kept) out.append(QPointF(double(p.step), p.value));
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
