// Replicates.cpp — statistics over replicates (Replicates.h).
#include "core/session/Replicates.h"

#include "core/config/Files.h"
#include "core/schema/Dimensions.h"

#include "core/config/Yaml.h"
#include "core/metrics/LearnedRule.h"
#include "core/metrics/Metrics.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace headlab {

namespace {

// Linear interpolation between order statistics: position p · (n − 1) of the sorted values.
double quantile(const std::vector<double> &sorted, double p)
{
    const double position = p * double(sorted.size() - 1);
    const size_t below = size_t(std::floor(position));
    const size_t above = std::min(below + 1, sorted.size() - 1);
    return sorted[below] + (position - double(below)) * (sorted[above] - sorted[below]);
}

} // namespace

SampleStats sampleStats(std::vector<double> values)
{
    values.erase(
        std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
        values.end());
    SampleStats s;
    s.count = int(values.size());
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    double sum = 0;
    for (double v : values) sum += v;
    s.mean = sum / double(values.size());
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.sd = values.size() > 1 ? std::sqrt(squares / double(values.size() - 1)) : 0.0;
    s.se = s.sd / std::sqrt(double(values.size()));
    s.median = quantile(values, 0.5);
    s.q1 = quantile(values, 0.25);
    s.q3 = quantile(values, 0.75);
    s.min = values.front();
    s.max = values.back();
    return s;
}

namespace {
constexpr int kQuartilesFrom = 4; // replicates from which the band is the quartiles
}

std::pair<double, double> replicateBand(const SampleStats &s)
{
    return s.count >= kQuartilesFrom ? std::make_pair(s.q1, s.q3) : std::make_pair(s.min, s.max);
}

const char *replicateBandName(int count)
{
    return count >= kQuartilesFrom ? "interquartile range" : "range";
}

std::vector<std::pair<int64_t, SampleStats>> curveStats(const std::vector<const Curve *> &curves)
{
    std::map<int64_t, std::vector<double>> atStep;
    for (const Curve *c : curves)
        for (const auto &p : *c) atStep[p.step].push_back(p.value);
    std::vector<std::pair<int64_t, SampleStats>> out;
    for (auto &[step, values] : atStep) out.emplace_back(step, sampleStats(std::move(values)));
    return out;
}

const char *toString(ReplicateStat stat)
{
    return stat == ReplicateStat::Median ? "median" : "mean";
}

const char *toString(ReplicateSpread spread)
{
    switch (spread) {
    case ReplicateSpread::Iqr:
        return "iqr";
    case ReplicateSpread::Sd:
        return "sd";
    case ReplicateSpread::Se:
        return "se";
    case ReplicateSpread::MinMax:
        return "minmax";
    }
    return "?";
}

bool parseReplicateStat(const std::string &text, ReplicateStat *out)
{
    for (ReplicateStat stat : {ReplicateStat::Median, ReplicateStat::Mean})
        if (text == toString(stat)) return *out = stat, true;
    return false;
}

bool parseReplicateSpread(const std::string &text, ReplicateSpread *out)
{
    for (ReplicateSpread spread :
         {ReplicateSpread::Iqr, ReplicateSpread::Sd, ReplicateSpread::Se, ReplicateSpread::MinMax})
        if (text == toString(spread)) return *out = spread, true;
    return false;
}

double statValue(const SampleStats &s, ReplicateStat stat)
{
    return stat == ReplicateStat::Median ? s.median : s.mean;
}

std::pair<double, double> spreadRange(const SampleStats &s, ReplicateSpread spread)
{
    switch (spread) {
    case ReplicateSpread::Iqr:
        return {s.q1, s.q3};
    case ReplicateSpread::Sd:
        return {s.mean - s.sd, s.mean + s.sd};
    case ReplicateSpread::Se:
        return {s.mean - s.se, s.mean + s.se};
    case ReplicateSpread::MinMax:
        return {s.min, s.max};
    }
    return {s.min, s.max};
}

std::vector<std::string> replicateAxes(const Session &session)
{
    if (!session.replicateAxes.empty()) return session.replicateAxes;
    return {"seed", "init_seed", "data_seed"};
}

std::vector<std::string> configurationAxes(const Session &session)
{
    std::vector<std::string> axes;
    auto add = [&](const std::string &name) {
        if (std::find(axes.begin(), axes.end(), name) == axes.end()) axes.push_back(name);
    };
    for (const auto &axis : session.axes) add(axis.name);
    for (const auto &combination : session.combinations)
        for (const auto &[name, value] : combination) add(name);
    for (const auto &run : session.runs) // axes only some runs carry (a rerun's seed)
        for (const auto &[name, value] : run.labels) add(name);
    return axes;
}

namespace {

void complete(std::map<std::string, std::string> &labels, const std::vector<std::string> &axes,
              const RunConfig &config, DimensionLookup &rows)
{
    for (const auto &axis : axes) {
        if (labels.count(axis)) continue;
        const auto &row = rows(axis);
        labels[axis] = row && row->resolved ? row->resolved(config) : std::string();
    }
}

} // namespace

std::vector<std::map<std::string, std::string>> configurationLabels(const Session &session)
{
    const std::vector<std::string> axes = configurationAxes(session);
    DimensionLookup rows;
    std::vector<std::map<std::string, std::string>> out;
    out.reserve(session.runs.size());
    for (const auto &run : session.runs) {
        out.push_back(run.labels);
        complete(out.back(), axes, run.config, rows);
    }
    return out;
}

std::map<std::string, std::string> configurationLabels(const std::vector<std::string> &axes,
                                                       std::map<std::string, std::string> labels,
                                                       const RunConfig &config)
{
    DimensionLookup rows;
    complete(labels, axes, config, rows);
    return labels;
}

std::vector<std::string> configurationKeys(const Session &session)
{
    const std::vector<std::string> axes = configurationAxes(session);
    const std::vector<std::string> replicates = replicateAxes(session);
    std::vector<std::string> keys;
    keys.reserve(session.runs.size());
    for (const auto &labels : configurationLabels(session)) {
        std::string key;
        for (const auto &axis : axes) {
            if (std::find(replicates.begin(), replicates.end(), axis) != replicates.end()) continue;
            const auto it = labels.find(axis);
            if (it == labels.end()) continue;
            key += (key.empty() ? "" : " ") + axis + "=" + it->second;
        }
        keys.push_back(std::move(key));
    }
    return keys;
}

bool matchesFixed(const std::map<std::string, std::string> &labels,
                  const std::map<std::string, std::string> &fixed)
{
    for (const auto &[axis, value] : fixed) {
        const auto it = labels.find(axis);
        if (it == labels.end() || it->second != value) return false;
    }
    return true;
}

std::vector<ReplicateGroup> groupReplicates(const Session &session,
                                            const std::vector<std::string> &byAxes)
{
    std::vector<std::string> by = byAxes;
    if (by.empty()) {
        const auto replicates = replicateAxes(session);
        for (const auto &axis : configurationAxes(session))
            if (std::find(replicates.begin(), replicates.end(), axis) == replicates.end())
                by.push_back(axis);
    }
    const auto labelsOf = configurationLabels(session);
    std::vector<ReplicateGroup> groups;
    std::map<std::map<std::string, std::string>, size_t> index;
    std::vector<std::vector<double>> losses;
    for (size_t i = 0; i < session.runs.size(); ++i) {
        const SessionRun &run = session.runs[i];
        std::map<std::string, std::string> key;
        for (const auto &axis : by) {
            const auto it = labelsOf[i].find(axis);
            key[axis] = it == labelsOf[i].end() ? "" : it->second;
        }
        auto [it, added] = index.emplace(key, groups.size());
        if (added) {
            groups.push_back({key, {}, {}, 0, 0});
            losses.emplace_back();
        }
        ReplicateGroup &g = groups[it->second];
        g.runs.push_back(int(i));
        const RunResult &r = run.result;
        if (r.status == RunStatus::Done) {
            const auto final = r.metrics.find(metric::kFinalTestLoss);
            if (final != r.metrics.end())
                losses[it->second].push_back(final->second);
            else if (!r.test.empty())
                losses[it->second].push_back(r.test.back().value);
        }
        if (const auto verdict = runLearned(session, r)) {
            ++g.verdicts;
            g.learned += *verdict;
        }
    }
    for (size_t k = 0; k < groups.size(); ++k) groups[k].finalLoss = sampleStats(losses[k]);
    return groups;
}

std::string replicateSummaryCsv(const Session &session, const std::vector<ReplicateGroup> &groups,
                                const std::vector<std::string> &byAxes, ReplicateStat stat,
                                ReplicateSpread spread)
{
    std::vector<std::string> by = byAxes;
    if (by.empty() && !groups.empty())
        for (const auto &[axis, value] : groups.front().labels) by.push_back(axis);
    std::string out;
    for (const auto &axis : by) out += csvField(axis) + ",";
    out += std::string("runs,finished,final_test_loss_") + toString(stat) + ",spread_" +
           toString(spread) + "_low,spread_" + toString(spread) +
           "_high,mean,sd,se,median,q1,q3,min,max,learned,verdicts,p_learned,learned_rule\n";
    for (const auto &g : groups) {
        for (const auto &axis : by) {
            const auto it = g.labels.find(axis);
            out += csvField(it == g.labels.end() ? "" : it->second) + ",";
        }
        const SampleStats &s = g.finalLoss;
        auto number = [&](double v) { return s.count ? yaml::formatNumber(v) : std::string(); };
        const auto [low, high] = spreadRange(s, spread);
        out += std::to_string(g.runs.size()) + "," + std::to_string(s.count) + "," +
               number(statValue(s, stat)) + "," + number(low) + "," + number(high) + "," +
               number(s.mean) + "," + number(s.sd) + "," + number(s.se) + "," + number(s.median) +
               "," + number(s.q1) + "," + number(s.q3) + "," + number(s.min) + "," + number(s.max) +
               "," + std::to_string(g.learned) + "," + std::to_string(g.verdicts) + "," +
               (g.verdicts ? yaml::formatNumber(g.learnedFraction()) : std::string()) + "," +
               toString(session.learnedRule) + "\n";
    }
    return out;
}

LrSensitivity lrSensitivity(const Session &session, const std::vector<int> &runs)
{
    const auto replicates = replicateAxes(session);
    // Per replicate: η → (final loss, initial loss); a replicate with an unfinished run is out.
    std::map<std::map<std::string, std::string>, std::map<double, std::pair<double, double>>> by;
    std::set<std::map<std::string, std::string>> incomplete;
    for (int i : runs) {
        const SessionRun &run = session.runs[size_t(i)];
        std::map<std::string, std::string> key;
        for (const auto &axis : replicates)
            if (const auto it = run.labels.find(axis); it != run.labels.end())
                key[axis] = it->second;
        const RunResult &r = run.result;
        if (r.status != RunStatus::Done && r.status != RunStatus::Diverged) {
            incomplete.insert(key);
            continue;
        }
        const double initial = r.test.empty() ? NAN : r.test.front().value;
        double final = NAN;
        if (r.status == RunStatus::Done) {
            const auto it = r.metrics.find(metric::kFinalTestLoss);
            final =
                it != r.metrics.end() ? it->second : (r.test.empty() ? NAN : r.test.back().value);
        }
        by[key][run.config.lr] = {final, initial};
    }
    LrSensitivity out;
    std::vector<double> values;
    for (const auto &[key, points] : by) {
        if (incomplete.count(key) || points.size() < 2) continue;
        std::vector<double> initials;
        for (const auto &[lr, p] : points)
            if (std::isfinite(p.second)) initials.push_back(p.second);
        if (initials.empty()) continue;
        const double l0 = sampleStats(initials).median;
        double best = l0;
        for (const auto &[lr, p] : points)
            if (std::isfinite(p.first)) best = std::min(best, p.first);
        double sum = 0;
        for (const auto &[lr, p] : points)
            sum += (std::isfinite(p.first) ? std::min(p.first, l0) : l0) - best;
        values.push_back(sum / double(points.size()));
        out.lrValues = std::max(out.lrValues, int(points.size()));
    }
    out.stats = sampleStats(values);
    return out;
}

std::vector<ReplicateGroup> groupByConfigurationWithoutLr(const Session &session)
{
    const auto replicates = replicateAxes(session);
    std::vector<std::string> by;
    auto add = [&](const std::string &name) {
        if (name != "lr" && std::find(by.begin(), by.end(), name) == by.end() &&
            std::find(replicates.begin(), replicates.end(), name) == replicates.end())
            by.push_back(name);
    };
    for (const auto &axis : session.axes) add(axis.name);
    for (const auto &run : session.runs)
        for (const auto &[name, value] : run.labels) add(name);
    if (by.empty()) { // lr (and seeds) alone: one configuration
        ReplicateGroup all;
        for (size_t i = 0; i < session.runs.size(); ++i) all.runs.push_back(int(i));
        return {all};
    }
    return groupReplicates(session, by);
}

} // namespace headlab
