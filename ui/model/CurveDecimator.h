// CurveDecimator.h — turns a run's full loss history into what a chart of a given width needs.
//
// The model keeps every point; a chart draws about two points per pixel, decimated by core's
// decimateCurve (each pixel column's minimum and maximum). Smoothing is a debiased exponential
// moving average, as TensorBoard's. A train curve is cut where a phase begins, since its
// objective changes there.
#pragma once

#include "core/config/RunResult.h"
#include "core/metrics/CurveDecimation.h"

#include <QList>
#include <QPointF>

#include <cstdint>
#include <vector>

namespace headlab::ui {

using CurveView = DecimationView; // core/metrics/CurveDecimation.h

class CurveDecimator {
public:
    // At most 2 · buckets points; non-finite values are dropped.
    static QList<QPointF> decimate(const Curve &curve, const CurveView &view);
    // weight in [0, 1): 0 returns the curve unchanged.
    static Curve smooth(const Curve &curve, double weight);
    // A train curve cut where each phase begins (RunResult::phaseStarts): a point at step s is
    // the mean loss of the steps up to s, so a point at a phase's first step belongs to the phase
    // before. One piece, the whole curve, without a later phase; no empty pieces.
    static std::vector<Curve> phasePieces(const Curve &curve, const std::vector<int64_t> &starts);
};

} // namespace headlab::ui
