// CurveDecimation.h — a run's full loss history cut to what a figure of a given width needs: each
// pixel column keeps its minimum and its maximum (in step order), so plateaus, spikes and
// divergences survive. The app's charts (ui/model/CurveDecimator.h) and the report's curves
// (core/report) draw through it. Torch-free.
#pragma once

#include "core/config/RunResult.h"

namespace headlab {

struct DecimationView {
    bool logX = false; // drop steps <= 0 and bucket in log space
    bool logY = false; // drop values <= 0
    double xMin = 0;   // visible step range; xMax <= xMin means the curve's own range
    double xMax = 0;
    int buckets = 800; // usually the plot width in pixels
};

// At most 2 · buckets points (a curve that short is kept whole); non-finite values are dropped.
Curve decimateCurve(const Curve &curve, const DecimationView &view);

} // namespace headlab
