// RunValues.cpp — see RunValues.h.
#include "core/metrics/RunValues.h"

#include "core/metrics/Metrics.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace headlab {

const std::vector<CurveStatisticSpec> &curveStatisticTable()
{
    static const std::vector<CurveStatisticSpec> table = {
        {"final", "final", "the curve's last value"},
        {"min", "lowest", "the lowest value over the curve"},
        {"max", "highest", "the highest value over the curve"},
        {"best", "best",
         "the lowest value, or the highest for a curve where higher is better "
         "(test_accuracy)"},
        {"mean_last", "last-tenth mean",
         "the mean of the last tenth of the curve's points (at least one): the final value "
         "without one evaluation's noise"},
    };
    return table;
}

const CurveStatisticSpec *findCurveStatistic(const std::string &name)
{
    for (const auto &row : curveStatisticTable())
        if (name == row.name) return &row;
    return nullptr;
}

const Curve *runCurve(const RunResult &result, const std::string &name)
{
    if (name == "test_loss") return &result.test;
    if (name == "train_loss") return &result.train;
    const auto it = result.extra.find(name);
    return it == result.extra.end() ? nullptr : &it->second;
}

bool higherIsBetter(const std::string &curve)
{
    const MetricSpec *row = findMetric(curve);
    return row && row->higherIsBetter;
}

double curveStatistic(const Curve &curve, const std::string &statistic, bool higherIsBetter)
{
    if (curve.empty()) return NAN;
    const std::string stat = statistic == "best" ? (higherIsBetter ? "max" : "min") : statistic;
    if (stat == "final") return curve.back().value;
    if (stat == "min" || stat == "max") {
        double best = NAN;
        for (const auto &p : curve) {
            if (std::isnan(p.value)) continue;
            if (std::isnan(best) || (stat == "min" ? p.value < best : p.value > best))
                best = p.value;
        }
        return best;
    }
    if (stat == "mean_last") {
        const size_t n = std::max<size_t>(1, curve.size() / 10);
        double sum = 0;
        size_t count = 0;
        for (size_t i = curve.size() - n; i < curve.size(); ++i)
            if (!std::isnan(curve[i].value)) {
                sum += curve[i].value;
                ++count;
            }
        return count ? sum / double(count) : NAN;
    }
    return NAN;
}

bool parseRunValueKey(const std::string &key, std::string *statistic, std::string *curve)
{
    const size_t open = key.find('(');
    if (open == std::string::npos || open == 0 || key.size() < open + 3 || key.back() != ')')
        return false;
    *statistic = key.substr(0, open);
    *curve = key.substr(open + 1, key.size() - open - 2);
    return curve->find_first_of("()") == std::string::npos;
}

bool isRunValueKey(const std::string &key, std::string *why)
{
    std::string statistic, curve;
    if (!parseRunValueKey(key, &statistic, &curve)) return false;
    if (findCurveStatistic(statistic)) return true;
    if (why) {
        *why = "no statistic '" + statistic + "' (";
        for (const auto &row : curveStatisticTable())
            *why += std::string(row.name) + (&row == &curveStatisticTable().back() ? ")" : ", ");
    }
    return false;
}

std::optional<double> runValue(const RunResult &result, const std::string &key)
{
    std::string statistic, curve;
    if (parseRunValueKey(key, &statistic, &curve)) {
        const Curve *c = runCurve(result, curve);
        if (c && !c->empty()) return curveStatistic(*c, statistic, higherIsBetter(curve));
        // A run stored without its curves (an archive keeps the metrics only): the metric that
        // holds the same number, where there is one.
        const bool lowest = statistic == "min" || (statistic == "best" && !higherIsBetter(curve));
        const std::string stored = statistic == "final"             ? metric::kFinalPrefix + curve
                                   : lowest && curve == "test_loss" ? metric::kMinTestLoss
                                                                    : "";
        const auto it = result.metrics.find(stored);
        if (stored.empty() || it == result.metrics.end()) return std::nullopt;
        return it->second;
    }
    const auto it = result.metrics.find(key);
    if (it == result.metrics.end()) return std::nullopt;
    return it->second;
}

std::string runValueTitle(const std::string &key)
{
    std::string statistic, curve;
    if (parseRunValueKey(key, &statistic, &curve)) {
        const CurveStatisticSpec *row = findCurveStatistic(statistic);
        std::string words = curve;
        std::replace(words.begin(), words.end(), '_', ' ');
        return (row ? std::string(row->title) : statistic) + " " + words;
    }
    const MetricSpec *row = findMetric(key);
    return row && !row->family ? row->title : key;
}

std::vector<std::string> runCurveNames(const std::vector<const RunResult *> &results)
{
    std::vector<std::string> names = {"test_loss", "train_loss"};
    std::set<std::string> extra;
    for (const RunResult *r : results)
        for (const auto &[name, curve] : r->extra)
            if (name.rfind(metric::kHeadPrefix, 0) != 0) extra.insert(name);
    names.insert(names.end(), extra.begin(), extra.end());
    return names;
}

bool lowerIsBetter(const std::string &key)
{
    std::string statistic, curve;
    if (parseRunValueKey(key, &statistic, &curve)) {
        return !higherIsBetter(curve); // whatever the statistic: the curve says which way is up
    }
    const MetricSpec *row = findMetric(key);
    if (row && row->higherIsBetter) return false;
    const std::string final = metric::kFinalPrefix;
    if (key.rfind(final, 0) == 0) return !higherIsBetter(key.substr(final.size()));
    return true;
}

} // namespace headlab
