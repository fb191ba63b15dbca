// SearchReport.cpp — see SearchReport.h; the design is argued in docs/SEARCH.md.
#include "core/session/search/SearchReport.h"

#include "core/config/Files.h"
#include "core/metrics/Thresholds.h"
#include "core/session/SweepExpansion.h"
#include "core/session/search/ConfigurationState.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace headlab {

using namespace headlab::yaml;
using namespace headlab::search;

namespace {

std::map<std::string, std::string> configurationOf(const SessionRun &run, const SearchSpec &spec)
{
    std::map<std::string, std::string> labels = run.labels;
    labels.erase(spec.axis);
    labels.erase("seed");
    return labels;
}

// Each law axis's span (its least and greatest value, x then also) over the configurations fitted
// (a LawFit or a LawBend).
template <class Law>
void setAxisSpans(Law &law, const std::vector<const ConfigurationSearch *> &fitted)
{
    const std::vector<std::string> axes = law.axes();
    law.axisLow.assign(axes.size(), INFINITY);
    law.axisHigh.assign(axes.size(), -INFINITY);
    for (const ConfigurationSearch *c : fitted)
        for (size_t k = 0; k < axes.size(); ++k) {
            const double v = dimensionNumber(c->config, axes[k]);
            law.axisLow[k] = std::min(law.axisLow[k], v);
            law.axisHigh[k] = std::max(law.axisHigh[k], v);
        }
}

// The joint model over some of a report's configurations: those with both outcomes among their
// verdicts and finite law axes (`members`, indices into the report), the fit, and its law.
struct JointOutcome {
    std::vector<size_t> members;
    JointFit fit;
    LawFit law;
};

CrossingInterval jointInterval(const JointFit &fit, size_t j)
{
    CrossingInterval interval;
    if (!fit.ok) return interval;
    interval.ok = true;
    interval.estimate = fit.crossing[j];
    interval.low = fit.low[j];
    interval.high = fit.high[j];
    interval.lowOpen = fit.lowOpen[j];
    interval.highOpen = fit.highOpen[j];
    return interval;
}

// The joint fit's law in LawFit's terms: α = −c1, β_k = −c_{k+1}, log10 C = c0; the band's centre
// where the intercept's error is independent of α's; α = ½, ¾, 1 by likelihood-ratio tests.
LawFit lawOfJoint(const JointFit &fit, const SearchSpec &spec, const std::string &lawX,
                  const std::vector<std::string> &lawAlso, int configurations)
{
    LawFit law;
    law.model = "joint";
    law.x = lawX;
    law.also = lawAlso;
    law.level = spec.level;
    law.configurations = configurations;
    if (!fit.ok) {
        law.note = "joint model: " + fit.note;
        return law;
    }
    if (fit.coef.size() < 2) {
        law.note = "joint model: no law axis (law.x)";
        return law;
    }
    law.ok = true;
    law.tau = fit.tau;
    law.predictionCovariance = fit.coefCovariance;
    law.scatter = fit.tauUsed;
    law.log10C = fit.coef[0];
    law.log10CLow = fit.coefLow[0];
    law.log10CHigh = fit.coefHigh[0];
    law.alpha = -fit.coef[1];
    law.alphaLow = -fit.coefHigh[1];
    law.alphaHigh = -fit.coefLow[1];
    for (size_t k = 2; k < fit.coef.size(); ++k) {
        law.beta.push_back(-fit.coef[k]);
        law.betaLow.push_back(-fit.coefHigh[k]);
        law.betaHigh.push_back(-fit.coefLow[k]);
    }
    for (size_t k = 2; k < fit.coef.size(); ++k)
        law.correlation.push_back(fit.coefCovariance[1][k] /
                                  std::sqrt(fit.coefCovariance[1][1] * fit.coefCovariance[k][k]));
    // Wald: the coefficients besides the intercept against 0 (one law axis: (c1/se)²).
    const double var1 = fit.coefCovariance[1][1];
    law.alphaSe = std::sqrt(var1);
    law.dof = int(fit.coef.size()) - 1;
    law.chi2 = law.dof == 1 ? fit.coef[1] * fit.coef[1] / var1 : NAN;
    if (lawAlso.empty() && var1 > 0) {
        const double cov01 = fit.coefCovariance[0][1];
        law.centerX = -cov01 / var1;
        law.centerY = fit.coef[0] + fit.coef[1] * law.centerX;
        law.centerSe = std::sqrt(std::max(fit.coefCovariance[0][0] - cov01 * cov01 / var1, 0.0));
    }
    const double references[] = {0.5, 0.75, 1.0};
    for (size_t r = 0; r < 3 && r < fit.referenceDeviance.size() && var1 > 0; ++r) {
        const double alpha = references[r];
        LawFit::Reference ref;
        ref.alpha = alpha;
        // The intercept given c1 = −α, from the coefficients' joint normal approximation.
        ref.log10C = fit.coef[0] + fit.coefCovariance[0][1] / var1 * (-alpha - fit.coef[1]);
        // The likelihood ratio of the fit with α fixed there: the profile the interval is drawn
        // from, so that "inside" and p agree.
        ref.chi2 = std::max(fit.referenceDeviance[r], 0.0);
        ref.dof = 1;
        ref.p = chiSquareSurvival(ref.chi2, 1);
        ref.inInterval = law.alphaLow <= alpha && alpha <= law.alphaHigh;
        law.references.push_back(ref);
    }
    return law;
}

JointOutcome fitJoint(const SearchSpec &spec, const SearchReport &report,
                      const std::vector<size_t> &candidates, const std::string &lawX,
                      const std::vector<std::string> &lawAlso)
{
    JointOutcome outcome;
    if (!spec.logScale) {
        outcome.law.model = "joint";
        outcome.law.note = "the joint model needs a log-scaled search";
        return outcome;
    }
    std::vector<std::string> axes = {lawX};
    axes.insert(axes.end(), lawAlso.begin(), lawAlso.end());
    std::vector<JointConfiguration> data;
    for (size_t i : candidates) {
        const ConfigurationSearch &c = report.configurations[i];
        int successes = 0, trials = 0;
        for (const auto &p : c.points) {
            successes += p.successes;
            trials += p.trials;
        }
        if (successes == 0 || successes == trials) continue;
        JointConfiguration j;
        j.points = c.points;
        if (!lawX.empty()) j.predictors = log10LawAxes(c.config, axes);
        if (std::any_of(j.predictors.begin(), j.predictors.end(),
                        [](double v) { return !std::isfinite(v); }))
            continue;
        outcome.members.push_back(i);
        data.push_back(std::move(j));
    }
    outcome.fit = fitJointLaw(data, spec.target, spec.level, {-0.5, -0.75, -1.0});
    outcome.law = lawOfJoint(outcome.fit, spec, lawX, lawAlso, int(data.size()));
    if (!lawX.empty()) {
        std::vector<const ConfigurationSearch *> fitted;
        for (size_t i : outcome.members) fitted.push_back(&report.configurations[i]);
        setAxisSpans(outcome.law, fitted);
    }
    if (!outcome.fit.ok) outcome.members.clear();
    return outcome;
}

// The law over width and head count (SearchResults.h), where the configurations vary in both and
// the law's own axes leave the decomposition to it.
WidthAndHeads widthAndHeadsOf(const SearchSpec &spec, const SearchReport &report,
                              const std::string &lawX, const std::vector<std::string> &lawAlso,
                              size_t groups)
{
    WidthAndHeads result;
    std::set<double> widths, heads;
    for (const auto &c : report.configurations) {
        if (c.verdicts == 0) continue;
        widths.insert(dimensionNumber(c.config, "d_model"));
        heads.insert(dimensionNumber(c.config, "heads"));
    }
    const bool lawOfHeadDim =
        lawX == "head_dim" &&
        (lawAlso.empty() || (lawAlso.size() == 1 && lawAlso.front() == "heads"));
    if (!lawOfHeadDim)
        result.note = "the law's own axes are not head_dim (and heads)";
    else if (groups > 1)
        result.note = "the configurations fall into groups with laws of their own";
    else if (widths.size() < 2 || heads.size() < 2)
        result.note = "the configurations vary in " +
                      std::string(widths.size() < 2 ? "d_model" : "heads") + " by one value";
    if (!result.note.empty()) return result;
    std::vector<size_t> all(report.configurations.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    result.law = spec.model == SearchSpec::Model::Joint
                     ? fitJoint(spec, report, all, "d_model", {"heads"}).law
                     : fitLaw(report.configurations, spec, "d_model", {"heads"});
    result.ok = result.law.ok && !result.law.beta.empty();
    if (!result.ok) result.note = result.law.note;
    return result;
}

} // namespace

SearchReport searchReport(const Session &session, const std::string &lawX,
                          const std::vector<std::string> &lawAlso, bool check)
{
    if (!session.search) throw std::logic_error("searchReport: the session has no search");
    const SearchSpec &spec = *session.search;
    SearchReport report;
    report.axis = spec.axis;
    report.logScale = spec.logScale;
    for (const auto &probe : spec.probes) report.rounds = std::max(report.rounds, probe.round + 1);

    std::map<std::map<std::string, std::string>, size_t> index;
    for (auto &labels : sweepConfigurations(session)) {
        index.emplace(labels, report.configurations.size());
        ConfigurationSearch c;
        c.configuration = labels;
        report.configurations.push_back(std::move(c));
    }
    std::vector<std::map<double, BinomialPoint>> byValue(report.configurations.size());
    std::vector<bool> haveConfig(report.configurations.size(), false);
    for (const auto &run : session.runs) {
        auto it = index.find(configurationOf(run, spec));
        if (it == index.end()) continue;
        ConfigurationSearch &c = report.configurations[it->second];
        if (!haveConfig[it->second]) {
            c.config = run.config;
            haveConfig[it->second] = true;
        }
        ++c.runs;
        ++report.runs;
        // A run searched along head_dim has it set: the layers' head dimension is the one searched.
        const double value = dimensionNumber(run.config, spec.axis);
        SeedSearch *seed = nullptr;
        if (spec.paired()) {
            const int index = int(run.config.initSeed - session.base.initSeed);
            auto at = std::find_if(c.seeds.begin(), c.seeds.end(),
                                   [&](const SeedSearch &s) { return s.seed == index; });
            if (at == c.seeds.end()) {
                c.seeds.push_back({});
                c.seeds.back().seed = index;
                at = c.seeds.end() - 1;
            }
            seed = &*at;
            seed->probed.push_back(toSearchUnits(spec, value));
        }
        const bool pending = !isFinished(run.result.status) || failedOnACheckpoint(run.result);
        if (pending) {
            ++c.pending;
            ++report.pending;
            continue;
        }
        const std::optional<bool> verdict = runLearned(session, run.result);
        if (!verdict) continue;
        ++c.verdicts;
        if (seed) seed->verdicts.push_back({toSearchUnits(spec, value), *verdict});
        BinomialPoint &p = byValue[it->second][value];
        p.x = toSearchUnits(spec, value);
        ++p.trials;
        p.successes += *verdict ? 1 : 0;
    }
    std::set<std::map<std::string, std::string>> probed;
    for (const auto &probe : spec.probes) probed.insert(probe.configuration);
    report.finished = !report.configurations.empty();
    for (size_t i = 0; i < report.configurations.size(); ++i) {
        ConfigurationSearch &c = report.configurations[i];
        for (const auto &[value, point] : byValue[i]) c.points.push_back(point);
        setAsideTheOtherBoundary(spec, c);
        if (spec.paired()) {
            std::sort(c.seeds.begin(), c.seeds.end(),
                      [](const SeedSearch &a, const SeedSearch &b) { return a.seed < b.seed; });
            assessPaired(spec, c, probed.count(c.configuration) > 0);
        } else {
            assess(spec, c, probed.count(c.configuration) > 0);
        }
        noteSetAside(spec, c);
        report.finished = report.finished && c.stopped();
    }
    const std::string x = lawX.empty() ? spec.lawX : lawX;
    const std::vector<std::string> &asked = lawX.empty() ? spec.lawAlso : lawAlso;
    // The law's further axes that these configurations can tell apart from x and each other (one
    // width: heads follows from head_dim); every fit below is of those alone.
    std::vector<std::string> leftOut;
    const std::vector<std::string> also =
        separableAxes(report.configurations, spec, x, asked, &leftOut);
    // The separate model's law, over every configuration and per group.
    report.law = fitLaw(report.configurations, spec, x, also);
    report.law.leftOut = leftOut;
    std::map<std::map<std::string, std::string>, std::vector<size_t>> byGroup;
    std::vector<std::map<std::string, std::string>> order;
    for (size_t i = 0; i < report.configurations.size(); ++i) {
        const auto group = lawGroupOf(report.configurations[i].configuration, x, asked);
        if (!byGroup.count(group)) order.push_back(group);
        byGroup[group].push_back(i);
    }
    auto separateOf = [&](const std::vector<size_t> &members) {
        std::vector<ConfigurationSearch> group;
        for (size_t i : members) group.push_back(report.configurations[i]);
        return fitLaw(group, spec, x, also);
    };
    if (order.size() > 1)
        for (const auto &group : order)
            report.groups.push_back({group, separateOf(byGroup[group])});

    // The joint model: over every configuration for the report's law, and per group for the
    // configurations' crossings (one group: the same fit).
    const bool joint = spec.model == SearchSpec::Model::Joint;
    // Linear fits through the crossings, cheap: the bend always, the law in width and heads
    // always for the separate model (the joint model's costs another joint fit: with `check`).
    if (check || !joint)
        report.widthAndHeads = widthAndHeadsOf(spec, report, x, also, order.size());
    if (order.size() > 1)
        report.bend.note = "the configurations fall into groups with laws of their own";
    else
        report.bend = fitBend(report.configurations, spec, x, also);
    report.model = joint ? "joint" : "separate";
    report.seeds = seedPlanName(spec.seedPlan);
    // Paired seeds keep the logistic over every run as their check, per configuration.
    if (!joint && (!check || spec.paired())) return report;
    std::vector<size_t> all(report.configurations.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    const JointOutcome overall = fitJoint(spec, report, all, x, also);
    std::vector<JointOutcome> perGroup;
    if (order.size() > 1)
        for (const auto &group : order)
            perGroup.push_back(fitJoint(spec, report, byGroup[group], x, also));
    for (size_t g = 0; g < std::max<size_t>(1, perGroup.size()); ++g) {
        const JointOutcome &outcome = perGroup.empty() ? overall : perGroup[g];
        for (size_t j = 0; j < outcome.members.size(); ++j) {
            ConfigurationSearch &c = report.configurations[outcome.members[j]];
            const CrossingInterval interval = jointInterval(outcome.fit, j);
            if (!joint) {
                c.alternative = interval;
                continue;
            }
            c.alternative = c.interval;
            c.interval = interval;
            c.fit = outcome.fit.curve(j);
            if (c.state != SearchState::Waiting) {
                stateFromInterval(spec, c);
                c.note += " (joint model)";
                noteSetAside(spec, c);
            }
        }
    }
    if (joint) {
        report.alternative = std::move(report.law);
        report.law = overall.law;
        report.law.leftOut = leftOut;
        for (size_t g = 0; g < report.groups.size(); ++g) report.groups[g].law = perGroup[g].law;
        if (spec.lawWidth > 0) {
            if (perGroup.empty())
                searchOnForTheLaw(spec, report, overall.members, overall.law);
            else // each group's law decides for its own configurations
                for (size_t g = 0; g < perGroup.size(); ++g)
                    searchOnForTheLaw(spec, report, perGroup[g].members, perGroup[g].law);
        }
        // Provisional: some configuration of the fit is still searching (states changed above).
        auto provisional = [&](const JointOutcome &o) {
            return std::any_of(o.members.begin(), o.members.end(),
                               [&](size_t i) { return !report.configurations[i].stopped(); });
        };
        report.law.provisional = report.law.ok && provisional(overall);
        for (size_t g = 0; g < report.groups.size(); ++g)
            report.groups[g].law.provisional = report.groups[g].law.ok && provisional(perGroup[g]);
        report.finished = std::all_of(report.configurations.begin(), report.configurations.end(),
                                      [](const auto &c) { return c.stopped(); }) &&
                          !report.configurations.empty();
    } else {
        report.alternative = overall.law;
        report.alternative.leftOut = leftOut;
    }
    return report;
}

std::map<std::string, std::string> lawGroupOf(const std::map<std::string, std::string> &labels,
                                              const std::string &lawX,
                                              const std::vector<std::string> &lawAlso)
{
    std::map<std::string, std::string> group;
    for (const auto &[axis, value] : labels)
        if (!isShapeDimension(axis) && axis != lawX &&
            std::find(lawAlso.begin(), lawAlso.end(), axis) == lawAlso.end())
            group[axis] = value;
    return group;
}

namespace {

// What a law through the crossings is fitted to: each configuration with a closed interval and
// finite law axes, its log10 crossing, the crossing's σ (from the interval) and log10 of each axis.
struct LawData {
    std::vector<std::vector<double>> predictors;
    std::vector<double> y, sigma;
    std::vector<const ConfigurationSearch *> fitted;
    std::set<double> xs;
    bool provisional = false;
};

LawData lawData(const std::vector<ConfigurationSearch> &configurations, const SearchSpec &spec,
                const std::string &lawX, const std::vector<std::string> &lawAlso)
{
    LawData data;
    const double z = normalQuantile(0.5 + spec.level / 2);
    std::vector<std::string> axes = {lawX};
    axes.insert(axes.end(), lawAlso.begin(), lawAlso.end());
    for (const auto &c : configurations) {
        // Every closed interval: a configuration still searching makes the law provisional.
        if (!c.interval.ok || c.interval.lowOpen || c.interval.highOpen) continue;
        if (c.state == SearchState::OutOfRange || c.state == SearchState::NoCrossing) continue;
        auto log10Of = [&](double x) { return spec.logScale ? x : std::log10(x); };
        const double low = log10Of(c.interval.low), high = log10Of(c.interval.high);
        const double estimate = log10Of(c.interval.estimate);
        if (!std::isfinite(low) || !std::isfinite(high) || !(high > low)) continue;
        const std::vector<double> row = log10LawAxes(c.config, axes);
        if (std::any_of(row.begin(), row.end(), [](double v) { return !std::isfinite(v); }))
            continue;
        data.xs.insert(row.front());
        data.fitted.push_back(&c);
        data.provisional = data.provisional || !c.stopped();
        data.predictors.push_back(row);
        data.y.push_back(estimate);
        data.sigma.push_back((high - low) / (2 * z));
    }
    return data;
}

// For predictions from a law fitted through crossings (`fit`, by weights 1/σ²): the variance
// between configurations beyond their intervals, τ², at the upper end of its Q-profile interval
// (one-sided 84 %, as the joint model takes σ_u's: a handful of configurations cannot pin τ down,
// and a τ̂ of 0 would claim they can): the τ² whose refit, each crossing weighed by 1/(σ² + τ²),
// has χ² at that quantile of χ²(dof). The refit's covariance is the law's uncertainty in the
// prediction. Sets the law's (LawFit's or LawBend's) predictionCovariance and scatter.
template <class Law>
void setPredictionScatter(Law &law, const LinearFit &fit, const LawData &data,
                          const std::vector<std::vector<double>> &predictors)
{
    if (fit.dof <= 0) return;
    auto refit = [&](double tau2) {
        std::vector<double> widened;
        for (double s : data.sigma) widened.push_back(std::sqrt(s * s + tau2));
        return fitLinear(predictors, data.y, widened);
    };
    const double target = chiSquareQuantile(0.16, fit.dof);
    double low = 0, high = 0;
    if (fit.chi2 > target) {
        high = 0.01;
        while (refit(high).chi2 > target && high < 100) high *= 4;
        for (int i = 0; i < 60; ++i) {
            const double mid = (low + high) / 2;
            (refit(mid).chi2 > target ? low : high) = mid;
        }
    }
    const LinearFit random = refit(high);
    if (random.ok) {
        law.predictionCovariance = random.covariance;
        law.scatter = std::sqrt(high);
    }
}

// The prediction of a law (LawFit or LawBend) where its axes have these log10 values: `row` its
// predictors there (1 first, in the order of its covariance).
template <class Law>
CrossingPrediction predictFrom(const Law &law, const std::vector<double> &log10Axes,
                               const std::vector<double> &row)
{
    CrossingPrediction p;
    const size_t k = law.axes().size();
    if (log10Axes.size() != k || law.predictionCovariance.size() != row.size() ||
        !std::isfinite(law.scatter)) {
        p.note = "the law was fitted without what a prediction needs";
        return p;
    }
    double variance = 0;
    for (size_t r = 0; r < row.size(); ++r)
        for (size_t c = 0; c < row.size(); ++c)
            variance += row[r] * law.predictionCovariance[r][c] * row[c];
    const double estimate = law.log10At(log10Axes);
    p.ok = true;
    p.lawSe = std::sqrt(std::max(variance, 0.0));
    p.scatter = law.scatter;
    const double half = normalQuantile(0.5 + law.level / 2) *
                        std::sqrt(std::max(variance, 0.0) + law.scatter * law.scatter);
    p.estimate = estimate;
    p.low = estimate - half;
    p.high = estimate + half;
    const std::vector<std::string> axes = law.axes();
    for (size_t a = 0; a < k && a < law.axisLow.size(); ++a)
        if (log10Axes[a] < std::log10(law.axisLow[a]) - 1e-9 ||
            log10Axes[a] > std::log10(law.axisHigh[a]) + 1e-9)
            p.beyond.push_back(axes[a]);
    return p;
}

// A prediction's checks before its law is asked: a law, and a value of each of its axes.
bool predictable(bool ok, const std::string &note, const std::vector<double> &log10Axes,
                 CrossingPrediction &p)
{
    if (!ok)
        p.note = "no law: " + note;
    else if (std::any_of(log10Axes.begin(), log10Axes.end(),
                         [](double v) { return !std::isfinite(v); }))
        p.note = "the configuration has no value of every law axis";
    return p.note.empty();
}

} // namespace

std::vector<std::string> separableAxes(const std::vector<ConfigurationSearch> &configurations,
                                       const SearchSpec &spec, const std::string &lawX,
                                       const std::vector<std::string> &lawAlso,
                                       std::vector<std::string> *leftOut)
{
    const LawData data = lawData(configurations, spec, lawX, lawAlso);
    const size_t n = data.predictors.size();
    // Gram–Schmidt over the columns of the law's design, a constant first: a column is kept where
    // what the kept ones leave of it is more than a millionth of its own size.
    std::vector<std::vector<double>> basis;
    auto keep = [&](std::vector<double> column) {
        double size = 0;
        for (double v : column) size += v * v;
        for (const auto &b : basis) {
            double dot = 0;
            for (size_t i = 0; i < n; ++i) dot += column[i] * b[i];
            for (size_t i = 0; i < n; ++i) column[i] -= dot * b[i];
        }
        double left = 0;
        for (double v : column) left += v * v;
        if (!(left > 1e-12 * size) || left == 0) return false;
        for (double &v : column) v /= std::sqrt(left);
        basis.push_back(std::move(column));
        return true;
    };
    auto column = [&](size_t k) {
        std::vector<double> values;
        for (const auto &row : data.predictors) values.push_back(row[k]);
        return values;
    };
    // Without two values of x the law says why itself (fitLaw); nothing is left out for it.
    if (!keep(std::vector<double>(n, 1.0)) || !keep(column(0))) return lawAlso;
    std::vector<std::string> kept;
    for (size_t k = 0; k < lawAlso.size(); ++k) {
        if (keep(column(k + 1)))
            kept.push_back(lawAlso[k]);
        else if (leftOut)
            leftOut->push_back(lawAlso[k]);
    }
    return kept;
}

LawFit fitLaw(const std::vector<ConfigurationSearch> &configurations, const SearchSpec &spec,
              const std::string &lawX, const std::vector<std::string> &lawAlso)
{
    LawFit law;
    law.x = lawX;
    law.also = lawAlso;
    law.level = spec.level;
    const double z = normalQuantile(0.5 + spec.level / 2);
    const LawData data = lawData(configurations, spec, lawX, lawAlso);
    const auto &predictors = data.predictors;
    const auto &y = data.y;
    const auto &sigma = data.sigma;
    const auto &xs = data.xs;
    const auto &fitted = data.fitted;
    law.provisional = data.provisional;
    law.configurations = static_cast<int>(y.size());
    setAxisSpans(law, fitted);
    if (xs.size() < 2) {
        law.note = std::to_string(y.size()) + " configurations with a closed interval, " +
                   std::to_string(xs.size()) + " distinct values of " + lawX +
                   ": a law needs at least two";
        return law;
    }
    const LinearFit fit = fitLinear(predictors, y, sigma);
    if (!fit.ok) {
        law.note = "the law cannot be fitted: its axes are not independent over these "
                   "configurations";
        return law;
    }
    law.ok = true;
    law.log10C = fit.coef[0];
    law.log10CLow = fit.coef[0] - z * fit.se[0];
    law.log10CHigh = fit.coef[0] + z * fit.se[0];
    law.alpha = -fit.coef[1];
    law.alphaLow = law.alpha - z * fit.se[1];
    law.alphaHigh = law.alpha + z * fit.se[1];
    for (size_t k = 2; k < fit.coef.size(); ++k) {
        law.beta.push_back(-fit.coef[k]);
        law.betaLow.push_back(-fit.coef[k] - z * fit.se[k]);
        law.betaHigh.push_back(-fit.coef[k] + z * fit.se[k]);
        law.correlation.push_back(fit.covariance[1][k] / (fit.se[1] * fit.se[k]));
    }
    law.chi2 = fit.chi2;
    law.dof = fit.dof;
    law.scale = fit.scale;
    for (size_t i = 0; i < y.size(); ++i) {
        const double off = y[i] - law.log10At(predictors[i]);
        law.residuals.push_back({fitted[i]->configuration, off, off / sigma[i]});
    }
    std::stable_sort(law.residuals.begin(), law.residuals.end(), [](const auto &a, const auto &b) {
        return std::fabs(a.sigmas) > std::fabs(b.sigmas);
    });
    setPredictionScatter(law, fit, data, predictors);
    if (lawAlso.empty()) {
        double w = 0, wx = 0, wy = 0;
        for (size_t i = 0; i < y.size(); ++i) {
            const double wi = 1 / (sigma[i] * sigma[i]);
            w += wi;
            wx += wi * predictors[i][0];
            wy += wi * y[i];
        }
        law.centerX = wx / w;
        law.centerY = fit.coef[0] + fit.coef[1] * law.centerX;
        law.centerSe = std::sqrt(fit.scale / w);
        law.alphaSe = fit.se[1];
    }
    for (double alpha : {0.5, 0.75, 1.0}) {
        LawFit::Reference ref;
        ref.alpha = alpha;
        std::vector<std::vector<double>> rest;
        std::vector<double> shifted;
        for (size_t i = 0; i < y.size(); ++i) {
            shifted.push_back(y[i] + alpha * predictors[i][0]);
            rest.emplace_back(predictors[i].begin() + 1, predictors[i].end());
        }
        const LinearFit refit = fitLinear(rest, shifted, sigma);
        if (!refit.ok) continue;
        ref.log10C = refit.coef[0];
        ref.chi2 = refit.chi2;
        ref.dof = refit.dof;
        ref.p = refit.dof > 0 ? chiSquareSurvival(refit.chi2, refit.dof) : NAN;
        ref.inInterval = law.alphaLow <= alpha && alpha <= law.alphaHigh;
        law.references.push_back(ref);
    }
    return law;
}

LawBend fitBend(const std::vector<ConfigurationSearch> &configurations, const SearchSpec &spec,
                const std::string &lawX, const std::vector<std::string> &lawAlso)
{
    LawBend bend;
    bend.x = lawX;
    bend.also = lawAlso;
    bend.level = spec.level;
    const LawData data = lawData(configurations, spec, lawX, lawAlso);
    const size_t n = data.y.size(), k = 2 + lawAlso.size() + 1; // with the intercept and γ
    if (data.xs.size() < 3 || n <= k) {
        bend.note = std::to_string(data.xs.size()) + " distinct values of " + lawX + " over " +
                    std::to_string(n) +
                    " configurations: a bend needs three values and more configurations than "
                    "the bent law's " +
                    std::to_string(k) + " coefficients";
        return bend;
    }
    const LinearFit straight = fitLinear(data.predictors, data.y, data.sigma);
    double w = 0, wx = 0;
    for (size_t i = 0; i < n; ++i) {
        w += 1 / (data.sigma[i] * data.sigma[i]);
        wx += data.predictors[i][0] / (data.sigma[i] * data.sigma[i]);
    }
    bend.x0 = wx / w;
    std::vector<std::vector<double>> bent = data.predictors;
    for (auto &row : bent) row.push_back((row[0] - bend.x0) * (row[0] - bend.x0));
    const LinearFit fit = fitLinear(bent, data.y, data.sigma);
    if (!straight.ok || !fit.ok) {
        bend.note = "the bent law cannot be fitted: its axes are not independent";
        return bend;
    }
    const double z = normalQuantile(0.5 + spec.level / 2);
    bend.ok = true;
    bend.log10C = fit.coef[0];
    bend.gamma = fit.coef.back();
    bend.gammaLow = bend.gamma - z * fit.se.back();
    bend.gammaHigh = bend.gamma + z * fit.se.back();
    bend.alpha = -fit.coef[1];
    for (size_t c = 2; c + 1 < fit.coef.size(); ++c) bend.beta.push_back(-fit.coef[c]);
    bend.xLow = *data.xs.begin();
    bend.xHigh = *data.xs.rbegin();
    // −d/dlog x of −α' log x + γ (log x − x0)²: α at x0, less 2γ (log x − x0).
    bend.alphaAtLow = bend.alpha - 2 * bend.gamma * (bend.xLow - bend.x0);
    bend.alphaAtHigh = bend.alpha - 2 * bend.gamma * (bend.xHigh - bend.x0);
    bend.chi2 = fit.chi2;
    bend.dof = fit.dof;
    // With the crossings' σ trusted (the bent fit's χ²/dof ≤ 1) Δχ² against χ²₁; with a misfit
    // left, Δχ² over the bent fit's χ²/dof against F(1, dof).
    const double misfit = fit.chi2 / fit.dof;
    bend.statistic = std::max(0.0, straight.chi2 - fit.chi2) / std::max(1.0, misfit);
    bend.p = misfit > 1 ? studentTTwoSided(std::sqrt(bend.statistic), fit.dof)
                        : chiSquareSurvival(bend.statistic, 1);
    bend.chosen = bend.p < 1 - spec.level;
    setPredictionScatter(bend, fit, data, bent);
    setAxisSpans(bend, data.fitted);
    return bend;
}

CrossingPrediction predictCrossing(const LawFit &law, const std::vector<double> &log10Axes)
{
    CrossingPrediction p;
    if (!predictable(law.ok, law.note, log10Axes, p)) return p;
    std::vector<double> row = {1.0};
    row.insert(row.end(), log10Axes.begin(), log10Axes.end());
    return predictFrom(law, log10Axes, row);
}

CrossingPrediction predictCrossing(const LawBend &bend, const std::vector<double> &log10Axes)
{
    CrossingPrediction p;
    if (!predictable(bend.ok, bend.note, log10Axes, p)) return p;
    std::vector<double> row = {1.0};
    row.insert(row.end(), log10Axes.begin(), log10Axes.end());
    row.push_back((log10Axes.front() - bend.x0) * (log10Axes.front() - bend.x0));
    p = predictFrom(bend, log10Axes, row);
    p.law = "bent";
    return p;
}

namespace {
// The law choices, by name: each reader derives from this table.
constexpr std::pair<LawChoice, const char *> kLawChoices[] = {
    {LawChoice::Chosen, "chosen"}, {LawChoice::Power, "power"}, {LawChoice::Bent, "bent"}};
} // namespace

const char *toString(LawChoice choice)
{
    for (const auto &[c, name] : kLawChoices)
        if (c == choice) return name;
    return "chosen";
}

bool lawChoiceFromString(const std::string &text, LawChoice *choice)
{
    for (const auto &[c, name] : kLawChoices)
        if (text == name) {
            *choice = c;
            return true;
        }
    return false;
}

std::vector<std::string> lawChoiceNames()
{
    std::vector<std::string> names;
    for (const auto &[c, name] : kLawChoices) names.emplace_back(name);
    return names;
}

CrossingPrediction predictCrossing(const SearchReport &report, const LawFit &law,
                                   const std::vector<double> &log10Axes, LawChoice choice)
{
    const bool own = &law == &report.law;
    const bool bent = choice == LawChoice::Bent ||
                      (choice == LawChoice::Chosen && own && report.bend.ok && report.bend.chosen);
    if (!bent) return predictCrossing(law, log10Axes);
    if (!own) {
        CrossingPrediction p;
        p.note =
            "no bent law for a group: the bend is fitted where the configurations share one law";
        return p;
    }
    return predictCrossing(report.bend, log10Axes);
}

std::vector<double> log10LawAxes(const RunConfig &config, const std::vector<std::string> &axes)
{
    std::vector<double> values;
    for (const auto &axis : axes) values.push_back(std::log10(dimensionNumber(config, axis)));
    return values;
}

namespace yaml {

namespace {

// `key: {estimate, low, high}`, a quantity with its interval.
void writeInterval(YAML::Emitter &out, const char *key, double estimate, double low, double high)
{
    out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "estimate" << YAML::Value;
    writeNumber(out, estimate);
    out << YAML::Key << "low" << YAML::Value;
    writeNumber(out, low);
    out << YAML::Key << "high" << YAML::Value;
    writeNumber(out, high);
    out << YAML::EndMap;
}

// `key: {axis: number, ...}`, one number per further axis of a law.
void writeAxisNumbers(YAML::Emitter &out, const char *key, const std::vector<std::string> &axes,
                      const std::vector<double> &values)
{
    out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (size_t k = 0; k < values.size() && k < axes.size(); ++k) {
        out << YAML::Key << axes[k] << YAML::Value;
        writeNumber(out, values[k]);
    }
    out << YAML::EndMap;
}

// What a prediction needs (predictCrossing), of a LawFit or a LawBend: the scatter of a
// configuration about the law (decades), the covariance of its coefficients (log10 C, −α, −β...,
// and the bent law's γ), each law axis's span.
template <class Law>
void writePrediction(YAML::Emitter &out, const Law &law)
{
    if (!std::isfinite(law.scatter) || law.predictionCovariance.empty()) return;
    out << YAML::Key << "prediction" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "scatter" << YAML::Value;
    writeNumber(out, law.scatter);
    out << YAML::Key << "covariance" << YAML::Value << YAML::BeginSeq;
    for (const auto &row : law.predictionCovariance) {
        out << YAML::Flow << YAML::BeginSeq;
        for (double v : row) writeNumber(out, v);
        out << YAML::EndSeq;
    }
    out << YAML::EndSeq;
    out << YAML::Key << "span" << YAML::Value << YAML::Flow << YAML::BeginMap;
    const std::vector<std::string> axes = law.axes();
    for (size_t k = 0; k < law.axisLow.size() && k < axes.size(); ++k) {
        out << YAML::Key << axes[k] << YAML::Value << YAML::Flow << YAML::BeginSeq;
        writeNumber(out, law.axisLow[k]);
        writeNumber(out, law.axisHigh[k]);
        out << YAML::EndSeq;
    }
    out << YAML::EndMap << YAML::EndMap;
}

void writeLaw(YAML::Emitter &out, const LawFit &law)
{
    out << YAML::BeginMap;
    out << YAML::Key << "ok" << YAML::Value << law.ok;
    if (!law.ok) {
        out << YAML::Key << "note" << YAML::Value;
        writeText(out, law.note);
        out << YAML::EndMap;
        return;
    }
    out << YAML::Key << "model" << YAML::Value << law.model;
    out << YAML::Key << "x" << YAML::Value << law.x;
    out << YAML::Key << "configurations" << YAML::Value << law.configurations;
    out << YAML::Key << "provisional" << YAML::Value << law.provisional;
    out << YAML::Key << "level" << YAML::Value;
    writeNumber(out, law.level);
    writeInterval(out, "alpha", law.alpha, law.alphaLow, law.alphaHigh);
    writeInterval(out, "c", std::pow(10.0, law.log10C), std::pow(10.0, law.log10CLow),
                  std::pow(10.0, law.log10CHigh));
    out << YAML::Key << "beta" << YAML::Value << YAML::BeginMap;
    for (size_t k = 0; k < law.beta.size() && k < law.also.size(); ++k)
        writeInterval(out, law.also[k].c_str(), law.beta[k], law.betaLow[k], law.betaHigh[k]);
    out << YAML::EndMap;
    if (!law.correlation.empty()) // of α's estimate with each β's
        writeAxisNumbers(out, "correlation", law.also, law.correlation);
    if (!law.leftOut.empty()) { // asked for, not separable over these configurations
        out << YAML::Key << "left_out" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto &axis : law.leftOut) out << axis;
        out << YAML::EndSeq;
    }
    out << YAML::Key << "chi2" << YAML::Value;
    writeNumber(out, law.chi2);
    out << YAML::Key << "dof" << YAML::Value << law.dof;
    out << YAML::Key << "scale" << YAML::Value;
    writeNumber(out, law.scale);
    if (std::isfinite(law.tau)) {
        out << YAML::Key << "tau" << YAML::Value;
        writeNumber(out, law.tau);
    }
    writePrediction(out, law);
    if (!law.residuals.empty()) { // the misfit, the largest first
        out << YAML::Key << "misfit" << YAML::Value << YAML::BeginSeq;
        for (const auto &r : law.residuals) {
            out << YAML::Flow << YAML::BeginMap << YAML::Key << "labels" << YAML::Value;
            writeTextMap(out, r.labels);
            out << YAML::Key << "decades" << YAML::Value;
            writeNumber(out, r.decades);
            out << YAML::Key << "sigmas" << YAML::Value;
            writeNumber(out, r.sigmas);
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    out << YAML::Key << "references" << YAML::Value << YAML::BeginSeq;
    for (const auto &ref : law.references) {
        out << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "alpha" << YAML::Value;
        writeNumber(out, ref.alpha);
        out << YAML::Key << "c" << YAML::Value;
        writeNumber(out, std::pow(10.0, ref.log10C));
        out << YAML::Key << "chi2" << YAML::Value;
        writeNumber(out, ref.chi2);
        out << YAML::Key << "dof" << YAML::Value << ref.dof;
        out << YAML::Key << "p" << YAML::Value;
        writeNumber(out, ref.p);
        out << YAML::Key << "in_interval" << YAML::Value << ref.inInterval;
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::EndMap;
}

} // namespace

void writeSearchReport(YAML::Emitter &out, const SearchReport &report, size_t finishedRuns,
                       const std::function<void(YAML::Emitter &)> &provenance)
{
    auto value = [&](double x) { return report.logScale ? std::pow(10.0, x) : x; };
    out << YAML::BeginMap;
    out << YAML::Key << "method" << YAML::Value << kSearchReportMethod;
    out << YAML::Key << "axis" << YAML::Value << report.axis;
    out << YAML::Key << "scale" << YAML::Value << (report.logScale ? "log" : "linear");
    out << YAML::Key << "rounds" << YAML::Value << report.rounds;
    out << YAML::Key << "runs" << YAML::Value << report.runs;
    out << YAML::Key << "pending" << YAML::Value << report.pending;
    out << YAML::Key << "finished" << YAML::Value << report.finished;
    out << YAML::Key << "finished_runs" << YAML::Value << finishedRuns;
    out << YAML::Key << "configurations" << YAML::Value << YAML::BeginSeq;
    for (const auto &c : report.configurations) {
        out << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "labels" << YAML::Value;
        writeTextMap(out, c.configuration);
        out << YAML::Key << "runs" << YAML::Value << c.runs;
        out << YAML::Key << "verdicts" << YAML::Value << c.verdicts;
        out << YAML::Key << "pending" << YAML::Value << c.pending;
        out << YAML::Key << "set_aside" << YAML::Value << c.setAside;
        out << YAML::Key << "state" << YAML::Value << toString(c.state);
        if (c.interval.ok) {
            out << YAML::Key << "estimate" << YAML::Value;
            writeNumber(out, value(c.interval.estimate));
            out << YAML::Key << "low" << YAML::Value;
            writeNumber(out, value(c.interval.low));
            out << YAML::Key << "high" << YAML::Value;
            writeNumber(out, value(c.interval.high));
            out << YAML::Key << "low_open" << YAML::Value << c.interval.lowOpen;
            out << YAML::Key << "high_open" << YAML::Value << c.interval.highOpen;
            out << YAML::Key << "width" << YAML::Value;
            writeNumber(out, c.interval.width());
        }
        if (c.fit.ok) {
            out << YAML::Key << "slope" << YAML::Value;
            writeNumber(out, c.fit.b);
        }
        if (c.alternative.ok)
            writeInterval(out, "alternative", value(c.alternative.estimate),
                          value(c.alternative.low), value(c.alternative.high));
        if (!c.seeds.empty()) {
            out << YAML::Key << "monotone_seeds" << YAML::Value << c.monotoneSeeds();
            if (std::isfinite(c.seedScatter)) {
                out << YAML::Key << "seed_scatter" << YAML::Value;
                writeNumber(out, c.seedScatter);
            }
            out << YAML::Key << "seeds" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (const auto &seed : c.seeds) {
                out << YAML::Flow << YAML::BeginMap;
                out << YAML::Key << "seed" << YAML::Value << seed.seed;
                out << YAML::Key << "runs" << YAML::Value << int(seed.verdicts.size());
                auto end = [&](const char *key, double x) {
                    out << YAML::Key << key << YAML::Value;
                    if (std::isfinite(x))
                        writeNumber(out, value(x));
                    else
                        out << YAML::Null;
                };
                end("low", seed.bracket.low);
                end("high", seed.bracket.high);
                out << YAML::Key << "wrong" << YAML::Value << seed.bracket.wrong;
                out << YAML::EndMap;
            }
            out << YAML::EndSeq;
        }
        out << YAML::Key << "note" << YAML::Value;
        writeText(out, c.note);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::Key << "model" << YAML::Value << report.model;
    out << YAML::Key << "seeds" << YAML::Value << report.seeds;
    out << YAML::Key << "law" << YAML::Value;
    writeLaw(out, report.law);
    out << YAML::Key << "alternative_law" << YAML::Value;
    writeLaw(out, report.alternative);
    if (!report.groups.empty()) {
        out << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
        for (const auto &g : report.groups) {
            out << YAML::BeginMap << YAML::Key << "labels" << YAML::Value;
            writeTextMap(out, g.labels);
            out << YAML::Key << "law" << YAML::Value;
            writeLaw(out, g.law);
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    const LawBend &bend = report.bend;
    out << YAML::Key << "bend" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "ok" << YAML::Value << bend.ok;
    if (bend.ok) {
        out << YAML::Key << "x" << YAML::Value << bend.x;
        out << YAML::Key << "centre" << YAML::Value;
        writeNumber(out, std::pow(10.0, bend.x0));
        writeInterval(out, "gamma", bend.gamma, bend.gammaLow, bend.gammaHigh);
        out << YAML::Key << "alpha" << YAML::Value;
        writeNumber(out, bend.alpha);
        out << YAML::Key << "alpha_at" << YAML::Value << YAML::BeginSeq;
        for (const auto &[x, alpha] :
             {std::pair{bend.xLow, bend.alphaAtLow}, std::pair{bend.xHigh, bend.alphaAtHigh}}) {
            out << YAML::Flow << YAML::BeginMap << YAML::Key << bend.x << YAML::Value;
            writeNumber(out, std::pow(10.0, x));
            out << YAML::Key << "alpha" << YAML::Value;
            writeNumber(out, alpha);
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
        out << YAML::Key << "chi2" << YAML::Value;
        writeNumber(out, bend.chi2);
        out << YAML::Key << "dof" << YAML::Value << bend.dof;
        out << YAML::Key << "statistic" << YAML::Value;
        writeNumber(out, bend.statistic);
        out << YAML::Key << "p" << YAML::Value;
        writeNumber(out, bend.p);
        out << YAML::Key << "chosen" << YAML::Value << bend.chosen;
        out << YAML::Key << "c" << YAML::Value;
        writeNumber(out, std::pow(10.0, bend.log10C));
        writeAxisNumbers(out, "beta", bend.also, bend.beta);
        out << YAML::Key << "level" << YAML::Value;
        writeNumber(out, bend.level);
        writePrediction(out, bend);
    } else {
        out << YAML::Key << "note" << YAML::Value;
        writeText(out, bend.note);
    }
    out << YAML::EndMap;
    const WidthAndHeads &wh = report.widthAndHeads;
    out << YAML::Key << "width_and_heads" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "ok" << YAML::Value << wh.ok;
    if (wh.ok) {
        writeInterval(out, "a", wh.a(), wh.aLow(), wh.aHigh());
        writeInterval(out, "b", wh.b(), wh.bLow(), wh.bHigh());
        out << YAML::Key << "correlation" << YAML::Value;
        writeNumber(out, wh.correlation());
        out << YAML::Key << "law" << YAML::Value;
        writeLaw(out, wh.law);
    } else {
        out << YAML::Key << "note" << YAML::Value;
        writeText(out, wh.note);
    }
    out << YAML::EndMap;
    if (provenance) provenance(out);
    out << YAML::EndMap;
}

} // namespace yaml

} // namespace headlab
