// HeatmapData.cpp — see HeatmapData.h.
#include "ui/model/HeatmapData.h"
#include "ui/model/CsvCell.h"

#include "core/session/search/SearchReport.h"

#include "core/metrics/LearnedRule.h"
#include "core/session/Replicates.h"

#include "ui/model/RunMetrics.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <tuple>

namespace headlab::ui {

int HeatmapData::filledCount() const
{
    int n = 0;
    for (const auto &c : cells)
        n += c.state == HeatmapCell::State::Value || c.state == HeatmapCell::State::Diverged ||
             c.state == HeatmapCell::State::Failed;
    return n;
}

const char *toString(HeatmapStat stat)
{
    switch (stat) {
    case HeatmapStat::Mean:
        return "mean";
    case HeatmapStat::Median:
        return "median";
    case HeatmapStat::LearnedFraction:
        return "p_learned";
    case HeatmapStat::CriticalLr:
        return "critical_lr";
    case HeatmapStat::LrSensitivity:
        return "lr_sensitivity";
    }
    return "mean";
}

HeatmapStat heatmapStatFromString(const std::string &text)
{
    for (HeatmapStat stat : {HeatmapStat::Mean, HeatmapStat::Median, HeatmapStat::LearnedFraction,
                             HeatmapStat::CriticalLr, HeatmapStat::LrSensitivity})
        if (text == toString(stat)) return stat;
    return HeatmapStat::Mean;
}

namespace {

// What the runs of each cell came to, by the cell's index.
struct CellTally {
    explicit CellTally(size_t cells)
        : values(cells)
        , diverged(cells, 0)
        , failed(cells, 0)
        , running(cells, 0)
        , stopped(cells, 0)
    {}
    std::vector<std::vector<double>> values; // final (or at-step) test losses
    std::vector<int> diverged, failed, running, stopped;
};
using Locate = std::function<int(const std::map<std::string, std::string> &labels)>;

// A boundary search: each configuration's η* in its cell (log10), on the searched range.
void criticalLrCells(HeatmapData &d, const Session &session,
                     const std::map<std::string, std::string> &fixed, const Locate &locate,
                     const SearchReport *given)
{
    for (auto &cell : d.cells)
        if (cell.state != HeatmapCell::State::Skipped && !cell.runs.isEmpty())
            cell.state = HeatmapCell::State::Queued;
    if (!session.search) return;
    SearchReport computed;
    if (!given) computed = searchReport(session);
    const SearchReport &report = given ? *given : computed;
    const std::vector<std::string> axes = configurationAxes(session);
    for (const auto &c : report.configurations) {
        const auto labels = configurationLabels(axes, c.configuration, c.config);
        if (!matchesFixed(labels, fixed) || !c.interval.ok) continue;
        const int at = locate(labels);
        if (at < 0) continue;
        auto &cell = d.cells[size_t(at)];
        const double lo = toSearchUnits(*session.search, session.search->low);
        const double hi = toSearchUnits(*session.search, session.search->high);
        cell.value = std::clamp(c.interval.estimate, lo, hi);
        cell.low = std::clamp(c.interval.low, lo, hi);
        cell.high = std::clamp(c.interval.high, lo, hi);
        cell.replicates = c.verdicts;
        cell.state = c.stopped() ? HeatmapCell::State::Value : HeatmapCell::State::Running;
        cell.note = QString::fromLatin1(toString(c.state));
    }
    d.vmin = toSearchUnits(*session.search, session.search->low);
    d.vmax = toSearchUnits(*session.search, session.search->high);
    return;
}

// Each cell's learning-rate sensitivity over the η it pools.
void lrSensitivityCells(HeatmapData &d, const Session &session, const CellTally &tally)
{
    double top = 0.0;
    for (size_t k = 0; k < d.cells.size(); ++k) {
        auto &cell = d.cells[k];
        if (cell.state == HeatmapCell::State::Skipped || cell.runs.isEmpty()) continue;
        const LrSensitivity sens =
            lrSensitivity(session, std::vector<int>(cell.runs.begin(), cell.runs.end()));
        cell.replicates = sens.stats.count;
        if (sens.stats.count == 0) {
            cell.state =
                tally.running[k] ? HeatmapCell::State::Running : HeatmapCell::State::Queued;
            continue;
        }
        cell.value = sens.stats.median;
        std::tie(cell.low, cell.high) = replicateBand(sens.stats);
        cell.sd = sens.stats.sd;
        cell.se = sens.stats.se;
        cell.state = tally.running[k] ? HeatmapCell::State::Running : HeatmapCell::State::Value;
        cell.note = QStringLiteral("over %1 η").arg(sens.lrValues);
        top = std::max(top, cell.value);
    }
    d.vmin = 0.0;
    d.vmax = top > 0 ? top : 1.0;
    return;
}

// The mean, median or fraction learned of each cell's replicates, and the colour scale.
void statisticCells(HeatmapData &d, const Session &session, const CellTally &tally)
{
    double lo = 1e300, hi = -1e300;
    const bool fraction = d.stat == HeatmapStat::LearnedFraction;
    for (size_t k = 0; k < d.cells.size(); ++k) {
        auto &cell = d.cells[k];
        if (cell.state == HeatmapCell::State::Skipped) continue;
        if (cell.runs.isEmpty()) continue;
        const SampleStats sample = sampleStats(tally.values[k]);
        const int counted = fraction ? cell.verdicts : sample.count;
        cell.replicates = sample.count;
        // The spread of the replicates: the inter-quartile range, or the whole range of fewer than 4.
        std::tie(cell.low, cell.high) = replicateBand(sample);
        cell.sd = sample.sd;
        cell.se = sample.se;
        if (tally.failed[k] && !fraction)
            cell.state = HeatmapCell::State::Failed;
        else if (counted == 0 && tally.diverged[k])
            cell.state = HeatmapCell::State::Diverged;
        else if (counted > 0) {
            cell.value = fraction                        ? cell.learnedFraction()
                         : d.stat == HeatmapStat::Median ? sample.median
                                                         : sample.mean;
            cell.state = tally.running[k] ? HeatmapCell::State::Running : HeatmapCell::State::Value;
            lo = std::min(lo, cell.value);
            hi = std::max(hi, cell.value);
        } else if (tally.running[k])
            cell.state = HeatmapCell::State::Running;
        else if (tally.stopped[k])
            cell.state = HeatmapCell::State::Stopped;
        else
            cell.state = HeatmapCell::State::Queued;
        if (tally.diverged[k] && counted > 0)
            cell.note = QStringLiteral("%1 of %2 runs diverged")
                            .arg(tally.diverged[k])
                            .arg(cell.runs.size());
    }
    if (fraction) { // a probability: its own scale
        d.vmin = 0.0;
        d.vmax = 1.0;
        return;
    }
    // The colour scale starts at 0 and spans at least the task's loss at initialisation (ln 22 for
    // addition).
    d.vmin = 0.0;
    d.vmax = hi > 0 ? hi : 1.0;
    d.vmax = std::max(d.vmax, initialLossOf(session));
    if (lo < 0) d.vmin = lo;
    return;
}

} // namespace

HeatmapData HeatmapData::compute(const Session &session, const std::string &xAxis,
                                 const std::string &yAxis,
                                 const std::map<std::string, std::string> &fixedAxes, int64_t step,
                                 HeatmapStat stat, const SearchReport *report)
{
    // Sensitivity is over η: the lr axis is pooled whatever value it is fixed to.
    std::map<std::string, std::string> fixed = fixedAxes;
    if (stat == HeatmapStat::LrSensitivity) fixed.erase("lr");
    HeatmapData d;
    d.stat = stat;
    d.xAxis = xAxis;
    d.yAxis = yAxis;
    d.step = step;
    d.xLabels = axisValueLabels(session, xAxis);
    if (d.xLabels.isEmpty()) d.xLabels << QString();
    if (!yAxis.empty()) d.yLabels = axisValueLabels(session, yAxis);
    if (d.yLabels.isEmpty()) d.yLabels << QString();
    d.cells.assign(size_t(d.rows() * d.columns()), HeatmapCell{});

    auto locate = [&](const std::map<std::string, std::string> &labels) -> int {
        int col = 0, row = 0;
        if (!xAxis.empty()) {
            auto it = labels.find(xAxis);
            if (it == labels.end()) return -1;
            col = int(d.xLabels.indexOf(QString::fromStdString(it->second)));
        }
        if (!yAxis.empty()) {
            auto it = labels.find(yAxis);
            if (it == labels.end()) return -1;
            row = int(d.yLabels.indexOf(QString::fromStdString(it->second)));
        }
        if (col < 0 || row < 0) return -1;
        return row * d.columns() + col;
    };

    CellTally tally(d.cells.size());
    auto &[values, diverged, failed, running, stopped] = tally;
    // Which runs a cell holds is core's one definition (Replicates.h, configurationLabels): a run
    // matches a fixed axis only by its own value on it, never by lacking a label (issue 50: the
    // stabilizer heatmap pooled three different combinations as "seeds").
    const auto labelsOf = configurationLabels(session);
    for (int i = 0; i < int(session.runs.size()); ++i) {
        const auto &run = session.runs[size_t(i)];
        if (!matchesFixed(labelsOf[size_t(i)], fixed)) continue;
        const int at = locate(labelsOf[size_t(i)]);
        if (at < 0) continue;
        auto &cell = d.cells[size_t(at)];
        cell.runs << i;
        const auto &r = run.result;
        if (step < 0) { // the verdict is of the finished run
            if (const auto verdict = runLearned(session, r)) {
                ++cell.verdicts;
                cell.learned += *verdict;
            }
        }
        switch (r.status) {
        case RunStatus::Diverged:
            if (step < 0 || (r.divergedAtStep >= 0 && step >= r.divergedAtStep)) {
                ++diverged[size_t(at)];
                cell.note = QStringLiteral("diverged at step %1").arg(r.divergedAtStep);
                continue;
            }
            break;
        case RunStatus::Failed:
            ++failed[size_t(at)];
            cell.note = QString::fromStdString(r.message);
            continue;
        case RunStatus::Running:
        case RunStatus::Paused:
            ++running[size_t(at)];
            break;
        case RunStatus::Stopped:
            ++stopped[size_t(at)];
            break;
        default:
            break;
        }
        const double v = testLossAtStep(r, step);
        if (std::isfinite(v)) values[size_t(at)].push_back(v);
    }
    for (const auto &skip : session.skipped) {
        if (!matchesFixed(skip.labels, fixed)) continue;
        const int at = locate(skip.labels);
        if (at < 0) continue;
        auto &cell = d.cells[size_t(at)];
        if (cell.runs.isEmpty()) {
            cell.state = HeatmapCell::State::Skipped;
            cell.note = QString::fromStdString(skip.reason);
        }
    }
    if (stat == HeatmapStat::CriticalLr) {
        criticalLrCells(d, session, fixed, locate, report);
        return d;
    }
    if (stat == HeatmapStat::LrSensitivity) {
        lrSensitivityCells(d, session, tally);
        return d;
    }
    statisticCells(d, session, tally);
    return d;
}

QString HeatmapData::csv() const
{
    QString out =
        QStringLiteral("%1,%2,state,%3,replicates,low,high,learned,verdicts,split,runs,note\n")
            .arg(yAxis.empty() ? QStringLiteral("row") : csvCell(yAxis), csvCell(xAxis),
                 stat == HeatmapStat::LearnedFraction ? QStringLiteral("p_learned")
                 : stat == HeatmapStat::CriticalLr    ? QStringLiteral("log10_critical_lr")
                 : stat == HeatmapStat::LrSensitivity
                     ? QStringLiteral("lr_sensitivity_median")
                     : QStringLiteral("test_loss_%1").arg(toString(stat)));
    static const char *states[] = {"empty",    "queued", "running", "value",
                                   "diverged", "failed", "stopped", "skipped"};
    for (int r = 0; r < rows(); ++r) {
        for (int c = 0; c < columns(); ++c) {
            const auto &cell = this->cell(r, c);
            QStringList runIds;
            for (int i : cell.runs) runIds << QString::number(i);
            const bool hasValue = cell.state == HeatmapCell::State::Value ||
                                  cell.state == HeatmapCell::State::Running;
            out += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8,%9,")
                       .arg(csvCell(yLabels[r]), csvCell(xLabels[c]),
                            QString::fromLatin1(states[int(cell.state)]),
                            hasValue ? QString::number(cell.value, 'g', 10) : QString())
                       .arg(cell.replicates)
                       .arg(cell.replicates ? QString::number(cell.low, 'g', 10) : QString(),
                            cell.replicates ? QString::number(cell.high, 'g', 10) : QString())
                       .arg(cell.learned)
                       .arg(cell.verdicts);
            out += QStringLiteral("%1,%2,%3\n")
                       .arg(cell.split() ? "1" : "0", runIds.join(' '), csvCell(cell.note));
        }
    }
    return out;
}

} // namespace headlab::ui
