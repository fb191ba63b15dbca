// RunValues.h — one number per run from its curves: a statistic of a curve, `STAT(CURVE)`
// (min(test_loss), final(train_loss), best(test_accuracy), mean_last(test_digit_2)), beside the
// metrics a run stores (final_test_loss). The run filter's keys and its ranking terms
// (RunFilter.h), the loss figure's K best runs, the parallel coordinates' metric axes, `headlab-cli
// export-csv --value` and the Python package read runs through it. A statistic is one row of
// curveStatisticTable(). Torch-free.
#pragma once

#include "core/config/RunResult.h"

#include <optional>
#include <string>
#include <vector>

namespace headlab {

struct CurveStatisticSpec {
    const char *name;        // "min", as typed in STAT(CURVE)
    const char *title;       // "lowest"
    const char *description; // one sentence
};
// final, min, max, best, mean_last: the statistics of a curve, in the order menus list them.
const std::vector<CurveStatisticSpec> &curveStatisticTable();
const CurveStatisticSpec *findCurveStatistic(const std::string &name);

// The curves a run has, by the names STAT(CURVE) takes: test_loss (RunResult::test),
// train_loss (RunResult::train), and each extra curve (test_digit_0, test_accuracy,
// head.0.1.entropy, ...); nullptr for a name it has not.
const Curve *runCurve(const RunResult &result, const std::string &name);
// Whether a higher value of the curve is the better one (test_accuracy; metricTable()'s
// higherIsBetter): best is then its highest value, and the K best runs the highest.
bool higherIsBetter(const std::string &curve);

// A statistic of a curve: final, its last value; min and max, over its values that are numbers
// (an overflow to ±inf counts, NaN does not); best, min (max where higher is better); mean_last,
// the mean of its last tenth of points (at least one), NaN left out. NaN for an empty curve, or an
// unknown statistic.
double curveStatistic(const Curve &curve, const std::string &statistic, bool higherIsBetter);

// A run value's key: STAT(CURVE) split; false for any other text (a stored metric's name).
bool parseRunValueKey(const std::string &key, std::string *statistic, std::string *curve);
// Whether `key` names a run value: a stored metric (`metrics`), or STAT(CURVE) with a known
// statistic. `why` (when given) says what is wrong with a STAT(...) key.
bool isRunValueKey(const std::string &key, std::string *why = nullptr);
// A run's value of `key`: STAT(CURVE) of its curve, or its stored metric; nullopt where it has
// none (no such curve, an empty one, no such metric). A run stored without its curves (an
// archive's) gives final(CURVE) from its metric final_CURVE, and min(test_loss) (best) from
// min_test_loss: the same numbers. The value itself may be NaN (a diverged
// run's final loss).
std::optional<double> runValue(const RunResult &result, const std::string &key);
// A run value as people read it: "final test loss", "lowest train loss", "best test accuracy";
// a stored metric by its row's title (metricTable()), else its name.
std::string runValueTitle(const std::string &key);
// The curves STAT(CURVE) can name in these results: test_loss, train_loss, then each extra curve
// a run has (test_digit_0, test_accuracy, ...), the per-head ones left out.
std::vector<std::string> runCurveNames(const std::vector<const RunResult *> &results);

// Whether lower values of `key` are the better ones: false for STAT(CURVE) of a curve where higher
// is better, and for a stored metric such as steps_per_second or learned.
bool lowerIsBetter(const std::string &key);

} // namespace headlab
