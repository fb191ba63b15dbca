// HeatmapData.h — the numbers behind the heatmap: test loss over any two swept axes, at chosen
// values of the other axes and at a chosen step (final by default). Torch-free and widget-free,
// so tests and CSV export use exactly what is painted.
#pragma once

#include "core/session/Session.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <map>
#include <string>
#include <vector>

namespace headlab::ui {

struct HeatmapCell {
    enum class State { Empty, Queued, Running, Value, Diverged, Failed, Stopped, Skipped };
    State state = State::Empty;
    double value = 0.0; // mean test loss of the cell's runs with a finite value
    QList<int> runs;    // run indices in this cell
    QString note;       // skip reason, failure message, diverged step
};

struct HeatmapData {
    std::string xAxis, yAxis; // yAxis empty: a single row
    QStringList xLabels, yLabels;
    std::vector<HeatmapCell> cells; // row-major: cells[row * xLabels.size() + col]
    double vmin = 0.0, vmax = 1.0;  // colour scale
    int64_t step = -1;              // -1: final

    int rows() const { return int(yLabels.size()); }
    int columns() const { return int(xLabels.size()); }
    const HeatmapCell &cell(int row, int column) const
    {
        return cells[size_t(row * columns() + column)];
    }
    int filledCount() const; // cells with a value, diverged or failed

    // `fixed` maps each other axis to the label its value must have; an axis absent from it
    // is averaged over (seeds, typically).
    static HeatmapData compute(const Session &session, const std::string &xAxis,
                               const std::string &yAxis,
                               const std::map<std::string, std::string> &fixed, int64_t step);
    QString csv() const;
};

// Axis names a session sweeps, in order; "d_model" and "heads" first when present.
QStringList sweptAxes(const Session &session);
// The value labels of an axis, in the session's order.
QStringList axisValueLabels(const Session &session, const std::string &axis);

} // namespace headlab::ui
