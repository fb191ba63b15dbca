// FigureData.h — the numbers behind the paper's Figures 3 and 4, and the loss-against-rank and
// loss-against-total-heads figures of the nearest-neighbour and head-schedule experiments,
// computed from a session.
//
// Figure 3: final test loss against m (d_model) and against m_H = m / n_H, one line per n_H, at
// one learning rate. Figure 4: final test loss, and learned / not learned, against η and against
// η·sqrt(m_H), one line per configuration. Only finished runs count; the figures fill in live as
// runs finish. Seeds (and any axis not plotted) are replicates: a point is their median, with
// whiskers over their range (min–max) and each replicate drawn as a faint dot.
#pragma once

#include "core/metrics/Metrics.h"
#include "core/session/Replicates.h"
#include "core/session/Session.h"
#include "ui/model/ColourTable.h"

#include <QList>
#include <QPointF>
#include <QString>

#include <limits>
#include <vector>

namespace headlab::ui {

struct FigureSeries {
    QString name; // its identity (one line per name, live)
    // Appended to the name in the legend, changing as runs finish (the LR sensitivity).
    QString note;
    // The line's style: 0 solid, 1 dashed, 2 dotted, 3 dash-dot; the loss-against-η figure gives
    // each stabilizer (or QK rule, logit scale) its own, the colours staying per configuration.
    int dash = 0;
    // Its colour: the session's colour table's (ColourTable.h) for the value of the colour axis
    // its runs share, else its place among every configuration the session sweeps, in the
    // sweep's order (stable while runs finish, the same in every mode); -1: its place among the
    // series. Lines that share a colour (the widths of one head count) are told apart by
    // `shade`, 0 … shades − 1, from a darker to a lighter shade of it in the sweep's order.
    int colour = -1;
    int shade = 0;
    int shades = 1;
    QList<QPointF> points;   // sorted by x; y is the replicates' median
    QList<bool> learned;     // per point: most of its replicates learned (the session's rule)
    QList<double> divergedX; // x of points where every run diverged, drawn at the top
    // Per point, over its replicates: their values, the whisker's ends (min and max), how many
    // learned out of how many with a verdict.
    QList<QList<double>> replicates;
    QList<std::pair<double, double>> spread;
    QList<std::pair<int, int>> learnedOf;
    // Per point, and per diverged point, the runs it stands for (indices in the session): a
    // point pools only runs of one configuration (tests/ui's harness checks it on every figure).
    QList<QList<int>> runs;
    QList<QList<int>> divergedRuns;
};

struct FigureData {
    QString title;
    QString xTitle;
    QString yTitle;
    bool logX = true;
    bool logY = false;     // base 10
    bool yFromZero = true; // linear y: from 0, or around the data (small differences stay visible)
    std::vector<FigureSeries> series;
    double yMax = 0.0;
    QString yColumn = QString::fromLatin1(metric::kFinalTestLoss); // the CSV's name for y
    // Filled / hollow markers for learned below ln 10 (addition); off: every point filled.
    bool learnedMarkers = true;
    // A dashed horizontal reference line (not drawn when NaN); the addition figures draw ln 10.
    double referenceY = std::numeric_limits<double>::quiet_NaN();
    QString referenceName;
    // y is a loss (the task's plateau lines and loss range apply); false for a head statistic.
    bool lossAxis = true;
    // Why there is nothing to draw, shown over the empty plot; "" when something is drawn.
    QString empty;
    // For many lines whose colours and shades stand for two axes (25 configurations against η:
    // heads as colours, widths as shades), one entry per colour and one per shade: the legend the
    // figure shows when the lines' own entries do not fit its height.
    std::vector<LegendEntry> shortLegend;
    QString csv() const;
};

// What the figures against m, m_H, η and η·√m_H put on y: the final test loss, or a per-head
// statistic (core/metrics: headStatTable) averaged over the run's heads, either 100 steps into its
// last phase (the addition answer phase: how fast the heads sharpen) or at its end — so that the
// addition paper's explanation (logit growth ∝ η·√m_H) can be tested on a sweep.
struct FigureY {
    QString stat;       // "" the final test loss; else a head statistic ("logit_rms")
    bool early = false; // at the first evaluation 100 steps into the last phase, else the last
    // The largest over the run's heads instead of their mean (the largest attention logit, whose
    // growth Wortsman et al. tie to divergence).
    bool largest = false;
    // The fraction of a point's runs that learned (by the session's rule; a diverged run did not),
    // with its 95 % Wilson interval as the whisker: against η·√m_H, the paper's collapse from a
    // grid as from a search (issue 52 item 1).
    bool learnedFraction = false;
    bool operator==(const FigureY &) const = default;
};
// The choices, for a figure's y menu, with their view-state names ("final_test_loss",
// "logit_rms@100", "logit_rms@end", ...).
QList<std::pair<QString, FigureY>> figureYChoices();
QString figureYName(const FigureY &y);
FigureY figureYFromName(const QString &name);
// A run's y (NaN when it has no such statistic).
double figureYOf(const RunResult &result, const FigureY &y);

// What a point is over its replicates: the median with a whisker over min–max (the default), or the
// mean with one over ± sd or ± se.
struct ReplicatePoint {
    ReplicateStat stat = ReplicateStat::Median;
    ReplicateSpread spread = ReplicateSpread::MinMax;
};

// Figure 3. byHeadDim: x is m_H instead of m. lrLabel: the lr axis label to keep ("" keeps all).
FigureData scalingFigure(const Session &session, bool byHeadDim, const QString &lrLabel,
                         ReplicatePoint point = {}, const FigureY &y = {});
// Figure 4. scaled: x is η·m_H^exponent instead of η (η·√m_H by default; a boundary search's
// fitted α redraws the collapse with the measured exponent, or a grid's with a chosen one:
// `exponentFitted` false, as the title then says).
FigureData learningRateFigure(const Session &session, bool scaled, ReplicatePoint point = {},
                              const FigureY &y = {}, double exponent = 0.5,
                              bool exponentFitted = true);

// Nearest-neighbour (EXPERIMENTS.md §2): best_epoch_mean (final_test_loss where absent), best over
// seeds and any other swept axis, against rank m_H on log-log axes; one line per (layers, w), and
// the dashed "predict 0" line at 1. Stopped runs count with the loss they reached.
FigureData rankFigure(const Session &session);
// Head schedules (EXPERIMENTS.md §3): final test loss, mean over seeds, against total heads; one
// line per scheme (the part of the head_schedule label before ':'), one line if there is none.
FigureData totalHeadsLossFigure(const Session &session);
// Training speed beside it: steps/s (metrics steps_per_second, else steps / wall seconds), mean
// over seeds, against total heads. Runs trained together as one ensemble share a clock; the titles
// say so when they do.
FigureData totalHeadsSpeedFigure(const Session &session);
// Whether runs share one clock: two or more finished runs with the same, non-zero wall time.
bool sharesEnsembleClock(const Session &session);

} // namespace headlab::ui
