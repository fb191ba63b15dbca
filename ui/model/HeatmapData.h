// HeatmapData.h — the numbers behind the heatmap: test loss over any two swept axes, at chosen
// values of the other axes and at a chosen step (final by default). Torch-free and widget-free,
// so tests and CSV export use exactly what is painted.
#pragma once

#include "core/session/Session.h"
#include "core/session/search/SearchReport.h"

#include "ui/model/RunMetrics.h" // sweptAxes, axisValueLabels: the axes the heatmap chooses from

#include <QList>
#include <QString>
#include <QStringList>

#include <map>
#include <string>
#include <vector>

namespace headlab::ui {

// What a cell shows of its replicates (the runs that differ only in the axes not fixed: seeds):
// the mean or median test loss, or the fraction that learned (by the session's rule); for a
// boundary search, the cell's critical η* (log10 in `value`, its interval in low–high).
// LrSensitivity: the cell's learning-rate sensitivity over its η values (the lr axis is pooled,
// whatever it is fixed to), median over its replicates with their spread (core Replicates.h).
enum class HeatmapStat { Mean, Median, LearnedFraction, CriticalLr, LrSensitivity };
// "mean", "median", "p_learned", "critical_lr", "lr_sensitivity"
const char *toString(HeatmapStat stat);
HeatmapStat heatmapStatFromString(const std::string &text); // unknown: Mean

struct HeatmapCell {
    enum class State { Empty, Queued, Running, Value, Diverged, Failed, Stopped, Skipped };
    State state = State::Empty;
    double value = 0.0; // the statistic over the cell's runs with a finite value (or verdict)
    QList<int> runs;    // run indices in this cell
    QString note;       // skip reason, failure message, diverged step
    int replicates = 0; // runs with a finite value
    int learned = 0, verdicts = 0; // runs that learned / that have a verdict (LearnedRule.h)
    double low = 0.0,
           high = 0.0;         // the spread of the values: inter-quartile range (min–max under 4)
    double sd = 0.0, se = 0.0; // their standard deviation and standard error
    // The replicates disagree on learned / not learned: the cell is on the trainability boundary.
    bool split() const { return learned > 0 && learned < verdicts; }
    double learnedFraction() const { return verdicts ? double(learned) / verdicts : 0.0; }
};

struct HeatmapData {
    std::string xAxis, yAxis; // yAxis empty: a single row
    QStringList xLabels, yLabels;
    std::vector<HeatmapCell> cells; // row-major: cells[row * xLabels.size() + col]
    double vmin = 0.0, vmax = 1.0;  // colour scale
    int64_t step = -1;              // -1: final
    HeatmapStat stat = HeatmapStat::Mean;

    int rows() const { return int(yLabels.size()); }
    int columns() const { return int(xLabels.size()); }
    const HeatmapCell &cell(int row, int column) const
    {
        return cells[size_t(row * columns() + column)];
    }
    int filledCount() const; // cells with a value, diverged or failed

    // `fixed` maps each other axis to the label its value must have; an axis absent from it
    // is aggregated over with `stat` (seeds, typically: its runs are replicates). CriticalLr
    // reads the search's `report` when given (SessionModel::searchReport, computed once per
    // change), else computes it.
    static HeatmapData compute(const Session &session, const std::string &xAxis,
                               const std::string &yAxis,
                               const std::map<std::string, std::string> &fixed, int64_t step,
                               HeatmapStat stat = HeatmapStat::Mean,
                               const SearchReport *report = nullptr);
    QString csv() const;
};

} // namespace headlab::ui
