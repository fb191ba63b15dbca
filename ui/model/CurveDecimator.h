// CurveDecimator.h — turns a run's full loss history into what a chart of a given width needs.
//
// The model keeps every point; a chart draws about two points per pixel. Each pixel column keeps
// its minimum and its maximum (in step order), so plateaus, spikes and divergences survive
// decimation. Smoothing is a debiased exponential moving average, as TensorBoard's. A train curve
// is cut where a phase begins, since its objective changes there.
#pragma once

#include "core/config/RunResult.h"

#include <QList>
#include <QPointF>

#include <cstdint>
#include <vector>

namespace headlab::ui {

struct CurveView {
    bool logX = false; // drop steps <= 0 and bucket in log space
    bool logY = false; // drop values <= 0
    double xMin = 0;   // visible step range; xMax <= xMin means the curve's own range
    double xMax = 0;
    int buckets = 800; // usually the plot width in pixels
};

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
