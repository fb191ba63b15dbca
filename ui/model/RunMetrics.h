// RunMetrics.h — what the tables and figures read off a run: final losses, head dimension,
// learned or not, and how numbers and durations are written for people.
#pragma once

#include "core/schema/TaskSpec.h"
#include "core/session/Session.h"

#include <QColor>
#include <QString>
#include <QStringList>

#include <cmath>
#include <limits>

namespace headlab::ui {

inline const double kLn10 = std::log(10.0);
inline const double kLn22 = std::log(22.0);
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The last value of a curve at or before `step` (step < 0: the last value). NaN if none.
double valueAtStep(const Curve &curve, int64_t step);
// metrics["final_test_loss"] when present, else the last test point; NaN if nothing yet.
double finalTestLoss(const RunResult &result);
double finalTrainLoss(const RunResult &result);
// Test loss at `step` (< 0: final). Diverged runs give NaN.
double testLossAtStep(const RunResult &result, int64_t step);
// Runs whose final loss the figures that do not wait for every run show (Loss vs rank, total
// heads, the parallel coordinates): finished, diverged (drawn along the top), or stopped by the
// user or a time limit with the loss it reached.
bool reachedAnOutcome(RunStatus status);
// Learned by the session's rule: core's one definition (core/metrics/LearnedRule.h); no verdict is false.
// runLearned without a verdict counted as not learned (the figures' counts).
bool isLearned(const Session &session, const RunResult &result);
// Whether the session's runs get a learned verdict: its task gives one (TaskSpec::learnedMeaning),
// and, for a task judged by its chance plateau (nearest neighbour, text), a run of it has one (runs
// trained before those tasks had a verdict have none). Figures of a session without verdicts call
// no run learned or not.
bool givesVerdicts(const Session &session);
// The unit of the session's task's losses, for axis titles ("nats", "MSE × d").
QString lossUnit(const Session &session);
// The session's task (its row of the task table), and the loss at initialisation its loss axes
// always show (0: none; ln 22 for addition). An unknown task (never loaded) gives nullptr / 0.
const TaskSpec *sessionTask(const Session &session);
double initialLossOf(const Session &session);
// The task's plateau lines (ln 10, ⅔ ln 10, ⅓ ln 10 for addition); empty for none.
std::vector<PlateauLine> plateausOf(const Session &session);
// A run's replicate among its configuration's (0, 1, 2, ...): its value's position on the first of
// the session's replicate axes that has several values, other than `except`; -1 when none does.
// Figures draw replicates of one colour as shades of it.
int replicateShade(const Session &session, const SessionRun &run, const std::string &except = {});
// `colour` shaded for replicate `shade`: `percent` lighter per replicate (darker on a dark theme);
// unchanged for <= 0.
QColor shadedColour(QColor colour, int shade, bool dark, int percent);
// m_H of the first layer (all layers for a constant schedule).
int64_t headDimension(const RunConfig &config);
// n_H of the first layer, or total heads / layers for a schedule that varies.
double headsPerLayer(const RunConfig &config);

// "d_model=96 heads=3 lr=1e-3 seed=0" in the session's axis order.
QString runLabel(const Session &session, const SessionRun &run, bool includeSeed = true);
// The label of one axis for a run, "" if that axis is not swept.
QString axisLabel(const SessionRun &run, const std::string &axis);

QString statusText(RunStatus status);
QColor statusColor(RunStatus status, bool dark);
QString formatLoss(double value);
QString formatDuration(double seconds); // "3 m 12 s", "—" for unknown
QString formatNumber(double value);     // compact, 1e-3 style for small values: for reading only
// The shortest text that reads back as exactly `value` ("0.000316227766", "16384", "1e-05"): what
// an editable field shows, so that opening and saving a session never changes a number.
QString exactNumber(double value);
// An axis value label as people read it: numbers compact ("5.48e-5" for 5.4772255750516611e-05),
// anything else unchanged. Matching always uses the stored label.
QString displayLabel(const QString &label);
// A configuration's key as a legend writes it: "d_model=48 heads=3" reads "d_model = 48, heads =
// 3", each value through displayLabel. A name that is not all axis=value words is unchanged.
QString displayKey(const QString &key);
// An axis's value as a legend writes it: "heads = 3", "η = 0.001" (the axis row's symbol), the
// value through displayLabel.
QString axisValueText(const std::string &axis, const QString &value);

// Axis names a session sweeps, in order; "d_model" and "heads" first when present.
QStringList sweptAxes(const Session &session);
// The value labels of an axis, in the session's order.
QStringList axisValueLabels(const Session &session, const std::string &axis);

} // namespace headlab::ui
