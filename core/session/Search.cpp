// Search.cpp — see Search.h; the design is argued in docs/SEARCH.md.
#include "core/session/Search.h"

#include "core/config/Files.h"
#include "core/config/Yaml.h"
#include "core/schema/Dimensions.h"
#include "core/session/SweepExpansion.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace headlab {

using namespace headlab::yaml;

namespace {
// The seed plans and their names: one row each.
constexpr std::pair<SearchSpec::SeedPlan, const char *> kSeedPlans[] = {
    {SearchSpec::SeedPlan::Fresh, "fresh"},
    {SearchSpec::SeedPlan::Replicates, "replicates"},
    {SearchSpec::SeedPlan::Paired, "paired"},
};
} // namespace

const char *seedPlanName(SearchSpec::SeedPlan plan)
{
    for (const auto &[p, name] : kSeedPlans)
        if (p == plan) return name;
    return "";
}

std::optional<SearchSpec::SeedPlan> seedPlanNamed(const std::string &name)
{
    for (const auto &[plan, n] : kSeedPlans)
        if (name == n) return plan;
    return std::nullopt;
}

const char *toString(SearchState state)
{
    switch (state) {
    case SearchState::Searching:
        return "searching";
    case SearchState::Waiting:
        return "waiting";
    case SearchState::Converged:
        return "converged";
    case SearchState::BudgetSpent:
        return "budget spent";
    case SearchState::OutOfRange:
        return "out of range";
    case SearchState::NoCrossing:
        return "no crossing";
    }
    return "";
}

int ConfigurationSearch::monotoneSeeds() const
{
    return int(std::count_if(seeds.begin(), seeds.end(), [](const SeedSearch &s) {
        return !s.verdicts.empty() && s.bracket.monotone();
    }));
}

bool ConfigurationSearch::stopped() const
{
    return state != SearchState::Searching && state != SearchState::Waiting;
}

double toSearchUnits(const SearchSpec &spec, double value)
{
    return spec.logScale ? std::log10(value) : value;
}

double fromSearchUnits(const SearchSpec &spec, double x)
{
    return spec.logScale ? std::pow(10.0, x) : x;
}

namespace {

// A value as the search writes it: three significant digits (integers for an integer axis), so
// that labels and file names stay readable and a point read back is the point planned.
double snapValue(const SearchSpec &spec, double value)
{
    if (isIntegerDimension(spec.axis)) return std::max(1.0, std::round(value));
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", value);
    return std::strtod(text, nullptr);
}

std::map<std::string, std::string> configurationOf(const SessionRun &run, const SearchSpec &spec)
{
    std::map<std::string, std::string> labels = run.labels;
    labels.erase(spec.axis);
    labels.erase("seed");
    return labels;
}

void stateFromInterval(const SearchSpec &spec, ConfigurationSearch &c);

// Decides a configuration's state from its runs (points, counts) and the spec.
void assess(const SearchSpec &spec, ConfigurationSearch &c, bool hasProbes)
{
    const double xMin = toSearchUnits(spec, spec.low), xMax = toSearchUnits(spec, spec.high);
    if (!hasProbes) {
        c.state = SearchState::Searching;
        c.note = "not started";
        return;
    }
    if (c.pending > 0) {
        // Where it stands on the finished runs, for the display; the state waits for the round.
        c.fit = fitLogistic(c.points);
        c.interval = crossingInterval(c.points, c.fit, spec.target, spec.level, xMin, xMax);
        c.state = SearchState::Waiting;
        c.note = std::to_string(c.pending) + " runs to train";
        return;
    }
    if (c.runs == 0) {
        c.state = SearchState::NoCrossing;
        c.note = "none of its runs can be built (the skipped runs say why)";
        return;
    }
    int successes = 0;
    for (const auto &p : c.points) successes += p.successes;
    if (c.verdicts == 0) {
        c.state = SearchState::NoCrossing;
        c.note = "no run has a learned/not learned verdict";
        return;
    }
    if (successes == 0 || successes == c.verdicts) {
        c.state = SearchState::OutOfRange;
        c.note = std::string("all ") + std::to_string(c.verdicts) + " runs " +
                 (successes == 0 ? "stayed stuck" : "learned") + " over " + formatNumber(spec.low) +
                 " … " + formatNumber(spec.high) + ": the crossing lies outside the range";
        return;
    }
    c.fit = fitLogistic(c.points);
    c.interval = crossingInterval(c.points, c.fit, spec.target, spec.level, xMin, xMax);
    if (!c.interval.ok) {
        c.state = SearchState::NoCrossing;
        c.note = "the fitted curve is flat: P(learned) does not change along the range";
        return;
    }
    stateFromInterval(spec, c);
}

// Whether another point's runs would take the configuration past its budget.
bool budgetSpent(const SearchSpec &spec, const ConfigurationSearch &c)
{
    return c.runs + spec.replicates > spec.budget;
}

// The state of a configuration with a fitted interval and every run finished: out of range,
// converged, budget spent or still searching.
void stateFromInterval(const SearchSpec &spec, ConfigurationSearch &c)
{
    const double xMin = toSearchUnits(spec, spec.low), xMax = toSearchUnits(spec, spec.high);
    const double estimate = c.interval.estimate;
    if (estimate < xMin || estimate > xMax) {
        c.state = SearchState::OutOfRange;
        c.note = "the crossing is estimated at " +
                 formatNumber(snapValue(spec, fromSearchUnits(spec, estimate))) +
                 ", outside the range";
        return;
    }
    const bool closed = !c.interval.lowOpen && !c.interval.highOpen;
    if (closed && c.interval.width() <= spec.intervalWidth) {
        c.state = SearchState::Converged;
        c.note = "interval narrower than " + formatNumber(spec.intervalWidth);
        return;
    }
    if (budgetSpent(spec, c)) {
        c.state = SearchState::BudgetSpent;
        c.note = "the budget of " + std::to_string(spec.budget) + " runs is spent";
        return;
    }
    c.state = SearchState::Searching;
    c.note = closed ? "interval still wider than " + formatNumber(spec.intervalWidth)
                    : "interval still open on one side";
}

// law_width: while the law's α interval is wider than asked, the configurations of its fit that
// converged by their own interval search on, each until its budget is spent; once it is narrow
// enough they stop as usual, and their note says so. Where the law cannot be fitted at all (one
// value of its axis, a failed fit), more runs would not give it: they stop by their own width.
void searchOnForTheLaw(const SearchSpec &spec, SearchReport &report,
                       const std::vector<size_t> &members, const LawFit &law)
{
    const std::string asked = "law_width " + formatNumber(spec.lawWidth);
    char alphaWidth[32]; // two decimals: a width to read, not a value to copy into a file
    std::snprintf(alphaWidth, sizeof alphaWidth, "%.2f", law.alphaHigh - law.alphaLow);
    const std::string width = std::string("the law's α interval (") + alphaWidth + " wide)";
    for (size_t i : members) {
        ConfigurationSearch &c = report.configurations[i];
        if (c.state != SearchState::Converged) continue;
        if (!law.ok) {
            c.note += "; " + asked + " not applied: no law (" + law.note + ")";
        } else if (law.alphaHigh - law.alphaLow <= spec.lawWidth) {
            c.note += "; " + width + " is narrower than " + asked;
        } else if (budgetSpent(spec, c)) {
            c.state = SearchState::BudgetSpent;
            c.note += "; the budget is spent with " + width + " still wider than " + asked;
        } else {
            c.state = SearchState::Searching;
            c.note += "; searches on: " + width + " is wider than " + asked;
        }
    }
}

// Appends to the note how many runs the fit left out, and why.
void noteSetAside(const SearchSpec &spec, ConfigurationSearch &c)
{
    if (c.setAside == 0) return;
    c.note += "; " + std::to_string(c.setAside) + " runs " +
              (spec.direction == SearchSpec::Direction::Decreasing ? "below" : "above") +
              " the first that learned left out (another boundary)";
}

// With a known direction, the points before the first that learned (for Decreasing: the smallest
// values, too small to learn) belong to another boundary: they leave the fit.
void setAsideTheOtherBoundary(const SearchSpec &spec, ConfigurationSearch &c)
{
    if (spec.direction == SearchSpec::Direction::Auto || c.points.empty()) return;
    const bool decreasing = spec.direction == SearchSpec::Direction::Decreasing;
    auto learnedThere = [&](const BinomialPoint &p) {
        return p.trials > 0 && double(p.successes) / p.trials >= spec.target;
    };
    std::vector<BinomialPoint> kept;
    if (decreasing) {
        auto first = std::find_if(c.points.begin(), c.points.end(), learnedThere);
        if (first == c.points.end()) return;
        for (auto it = c.points.begin(); it != first; ++it) c.setAside += it->trials;
        c.setAsidePoints.assign(c.points.begin(), first);
        kept.assign(first, c.points.end());
    } else {
        auto last = std::find_if(c.points.rbegin(), c.points.rend(), learnedThere);
        if (last == c.points.rend()) return;
        for (auto it = c.points.rbegin(); it != last; ++it) c.setAside += it->trials;
        c.setAsidePoints.assign(last.base(), c.points.end());
        kept.assign(c.points.begin(), last.base());
    }
    c.verdicts -= c.setAside;
    c.points = std::move(kept);
}

std::vector<double> nextPoints(const SearchSpec &spec, const ConfigurationSearch &c)
{
    const double xMin = toSearchUnits(spec, spec.low), xMax = toSearchUnits(spec, spec.high);
    const int affordable = (spec.budget - c.runs) / spec.replicates;
    const int k = std::min(spec.pointsPerRound, affordable);
    const double low = std::clamp(c.interval.low, xMin, xMax);
    const double high = std::clamp(c.interval.high, xMin, xMax);
    std::vector<double> values;
    for (int i = 0; i < k; ++i) {
        const double x = low + (high - low) * (i + 1) / (k + 1);
        const double v = snapValue(spec, fromSearchUnits(spec, x));
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    }
    return values;
}

// Paired seeds: whether a seed learns below its threshold (η), from the direction or, when it
// is not given, from the slope of the logistic over every run.
bool learnsBelow(const SearchSpec &spec, const ConfigurationSearch &c)
{
    if (spec.direction != SearchSpec::Direction::Auto)
        return spec.direction == SearchSpec::Direction::Decreasing;
    const LogisticFit pooled = fitLogistic(c.points);
    return !(pooled.ok && pooled.b > 0);
}

// Paired seeds: each seed's verdicts inside the fit (the points the configuration set aside as
// another boundary left out), its bracket, and the fit of the thresholds over seeds.
void bracketTheSeeds(const SearchSpec &spec, ConfigurationSearch &c)
{
    const bool below = learnsBelow(spec, c);
    double lowest = -INFINITY, highest = INFINITY; // the kept points' span
    if (!c.setAsidePoints.empty()) {
        if (spec.direction == SearchSpec::Direction::Decreasing)
            lowest = c.setAsidePoints.back().x;
        else
            highest = c.setAsidePoints.front().x;
    }
    for (auto &seed : c.seeds) {
        std::vector<SeedVerdict> kept;
        for (const auto &v : seed.verdicts)
            if (v.x > lowest && v.x < highest) kept.push_back(v);
        seed.verdicts = std::move(kept);
        seed.bracket = seedBracket(seed.verdicts, below);
    }
    std::vector<SeedBracket> brackets;
    for (const auto &seed : c.seeds)
        if (!seed.verdicts.empty()) brackets.push_back(seed.bracket);
    c.thresholds = fitThresholds(brackets, spec.level, toSearchUnits(spec, spec.low),
                                 toSearchUnits(spec, spec.high));
}

std::string seedsNote(const SearchSpec &spec, const ConfigurationSearch &c)
{
    int withVerdicts = 0;
    for (const auto &seed : c.seeds) withVerdicts += !seed.verdicts.empty();
    std::string note = std::to_string(c.monotoneSeeds()) + " of " + std::to_string(withVerdicts) +
                       " seeds monotone";
    if (std::isfinite(c.seedScatter)) {
        char tau[64];
        std::snprintf(tau, sizeof tau, "%.2g (interval at %.2g)", c.seedScatter, c.seedScatterUsed);
        note += std::string(", seeds scatter τ ") + tau + (spec.logScale ? " decades" : "");
    }
    return note;
}

// Paired seeds: the configuration's crossing from a logistic with one slope and each seed's own
// offset, u_seed ~ N(0, σ²) (JointLaw.h, the seeds as its groups and no law): the median seed's
// crossing, with an interval that holds the seeds' scatter. The logistic over every run, which
// takes a seed's runs as independent (where seeds differ they are not), is the check
// (`alternative`). On the simulated trainer both hold the truth; the seed model's interval is
// the wider, conservative one (docs/SEARCH.md, "Seeds").
void assessPaired(const SearchSpec &spec, ConfigurationSearch &c, bool hasProbes)
{
    assess(spec, c, hasProbes);
    if (!hasProbes) return;
    bracketTheSeeds(spec, c);
    c.alternative = c.interval;
    std::vector<JointConfiguration> seeds;
    for (const auto &seed : c.seeds) {
        std::map<double, BinomialPoint> byX;
        for (const auto &v : seed.verdicts) {
            BinomialPoint &p = byX[v.x];
            p.x = v.x;
            ++p.trials;
            p.successes += v.learned ? 1 : 0;
        }
        if (byX.empty()) continue;
        seeds.push_back({});
        for (const auto &[x, p] : byX) seeds.back().points.push_back(p);
    }
    const bool fitted = c.state == SearchState::Waiting || c.state == SearchState::Searching ||
                        c.state == SearchState::Converged || c.state == SearchState::BudgetSpent;
    if (fitted && seeds.size() >= 2) {
        const JointFit model = fitJointLaw(seeds, spec.target, spec.level);
        if (model.ok) {
            c.interval.ok = true;
            c.interval.estimate = model.coef[0];
            c.interval.low = model.coefLow[0];
            c.interval.high = model.coefHigh[0];
            c.interval.lowOpen = model.coefLowOpen[0];
            c.interval.highOpen = model.coefHighOpen[0];
            const double logitTarget = std::log(spec.target / (1 - spec.target));
            c.fit = {true, logitTarget - model.slope * model.coef[0], model.slope, 0};
            c.seedScatter = model.tau;
            c.seedScatterUsed = model.tauUsed;
            // The set-aside runs are noted by the caller, after this.
            if (c.state != SearchState::Waiting) stateFromInterval(spec, c);
        }
    }
    if (c.runs > 0) c.note += "; " + seedsNote(spec, c);
}

// Paired seeds: the next round's runs, as (value, seed). Each seed not yet pinned (its bracket
// wider than half the interval width) gets one run: the middle of its bracket, or, while one
// side is open, a step beyond its last value that doubles with each run on the same side. A new
// seed gets two runs, at the ends of the configuration's interval. Once every seed is pinned,
// `points_per_round` new seeds join. Never more runs than the budget leaves.
std::vector<std::pair<double, int>> nextPairedRuns(const SearchSpec &spec,
                                                   const ConfigurationSearch &c)
{
    const double xMin = toSearchUnits(spec, spec.low), xMax = toSearchUnits(spec, spec.high);
    const double span = xMax - xMin;
    const double pinned = spec.intervalWidth / 2;
    const double step0 =
        std::max(pinned, std::min(span / 4, c.thresholds.ok ? 2 * c.thresholds.sigma : span / 4));
    const double start =
        std::clamp(c.interval.ok ? c.interval.estimate : (xMin + xMax) / 2, xMin, xMax);
    auto snapped = [&](double x) { return snapValue(spec, fromSearchUnits(spec, x)); };
    auto probedAlready = [&](const SeedSearch &seed, double value) {
        return std::any_of(seed.probed.begin(), seed.probed.end(), [&](double x) {
            return snapValue(spec, fromSearchUnits(spec, x)) == value;
        });
    };
    // The seed's next value, NaN when it is pinned (or can go no further).
    auto nextOf = [&](const SeedSearch &seed) -> double {
        const SeedBracket &b = seed.bracket;
        double x;
        if (seed.verdicts.empty()) {
            x = start; // its runs were all set aside (the other boundary): try again inside
        } else if (b.closed()) {
            if (b.high - b.low <= pinned) return NAN;
            x = (b.low + b.high) / 2;
        } else {
            // Open on one side: every kept verdict lies on the other. Step out, doubling.
            const int n = int(seed.verdicts.size());
            const double step = step0 * std::pow(2.0, std::min(n - 1, 20));
            x = std::isfinite(b.low) ? std::min(xMax, b.low + step) : std::max(xMin, b.high - step);
        }
        double value = snapped(x);
        if (probedAlready(seed, value)) {
            // Snapped onto a value it has: the range's end on an open side, else pinned.
            if (b.closed() || seed.verdicts.empty()) return NAN;
            value = std::isfinite(b.low) ? spec.high : spec.low;
            if (probedAlready(seed, value)) return NAN;
        }
        return value;
    };
    // A new seed starts with a run at each end of the configuration's interval (or one step
    // either side of the estimate while there is none): where it should learn and where it
    // should not, so that a seed that does the opposite shows it is not monotone.
    double lowEnd = start - step0, highEnd = start + step0;
    if (c.interval.ok && !c.interval.lowOpen && !c.interval.highOpen &&
        c.interval.width() >= 2 * pinned) {
        lowEnd = c.interval.low;
        highEnd = c.interval.high;
    }
    const double firstRuns[2] = {snapped(std::clamp(lowEnd, xMin, xMax)),
                                 snapped(std::clamp(highEnd, xMin, xMax))};
    std::vector<std::pair<double, int>> runs;
    auto begin = [&](int seed) {
        runs.push_back({firstRuns[0], seed});
        if (firstRuns[1] != firstRuns[0]) runs.push_back({firstRuns[1], seed});
    };
    int next = 0;
    for (const auto &seed : c.seeds) {
        next = std::max(next, seed.seed + 1);
        if (seed.probed.empty()) continue;
        if (const double value = nextOf(seed); !std::isnan(value))
            runs.push_back({value, seed.seed});
    }
    // Seeds not begun yet, up to `seeds`, start now; once every seed is pinned, more join.
    for (; next < spec.seeds; ++next) begin(next);
    if (runs.empty())
        for (int i = 0; i < spec.pointsPerRound; ++i) begin(next + i);
    const int affordable = std::max(0, spec.budget - c.runs);
    if (int(runs.size()) > affordable) runs.resize(size_t(affordable));
    return runs;
}

std::vector<double> initialPoints(const SearchSpec &spec)
{
    const double xMin = toSearchUnits(spec, spec.low), xMax = toSearchUnits(spec, spec.high);
    std::vector<double> values;
    for (int i = 0; i < spec.initialPoints; ++i) {
        const double x = xMin + (xMax - xMin) * i / (spec.initialPoints - 1);
        double v = fromSearchUnits(spec, x);
        // The range's ends exactly as given; the points between snapped.
        if (i == 0)
            v = spec.low;
        else if (i == spec.initialPoints - 1)
            v = spec.high;
        else
            v = snapValue(spec, v);
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    }
    return values;
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
        if (!lawX.empty()) {
            j.predictors.push_back(std::log10(dimensionNumber(c.config, lawX)));
            for (const auto &axis : lawAlso)
                j.predictors.push_back(std::log10(dimensionNumber(c.config, axis)));
        }
        if (std::any_of(j.predictors.begin(), j.predictors.end(),
                        [](double v) { return !std::isfinite(v); }))
            continue;
        outcome.members.push_back(i);
        data.push_back(std::move(j));
    }
    outcome.fit = fitJointLaw(data, spec.target, spec.level, {-0.5, -0.75, -1.0});
    outcome.law = lawOfJoint(outcome.fit, spec, lawX, lawAlso, int(data.size()));
    if (!outcome.fit.ok) outcome.members.clear();
    return outcome;
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
    const std::vector<std::string> &also = lawX.empty() ? spec.lawAlso : lawAlso;
    // The separate model's law, over every configuration and per group.
    report.law = fitLaw(report.configurations, spec, x, also);
    std::map<std::map<std::string, std::string>, std::vector<size_t>> byGroup;
    std::vector<std::map<std::string, std::string>> order;
    for (size_t i = 0; i < report.configurations.size(); ++i) {
        const auto group = lawGroupOf(report.configurations[i].configuration, x, also);
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
    }
    return report;
}

Session searchUntilRound(const Session &session, int round)
{
    if (!session.search) throw std::logic_error("searchUntilRound: the session has no search");
    Session earlier = session;
    auto &probes = earlier.search->probes;
    probes.erase(std::remove_if(probes.begin(), probes.end(),
                                [&](const SearchProbe &p) { return p.round > round; }),
                 probes.end());
    expandSweep(earlier);
    return earlier;
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

int planSearchRound(Session &session)
{
    if (!session.search) throw std::logic_error("planSearchRound: the session has no search");
    const SearchReport report = searchReport(session);
    if (report.pending > 0) return 0;
    SearchSpec &spec = *session.search;
    const int round = report.rounds;
    int added = 0;
    for (const auto &c : report.configurations) {
        if (c.state != SearchState::Searching) continue;
        const bool started =
            std::any_of(spec.probes.begin(), spec.probes.end(),
                        [&](const auto &p) { return p.configuration == c.configuration; });
        if (spec.paired() && started) {
            for (const auto &[value, seed] : nextPairedRuns(spec, c)) {
                SearchProbe probe;
                probe.round = round;
                probe.configuration = c.configuration;
                probe.value = value;
                probe.firstReplicate = seed;
                probe.replicates = 1;
                spec.probes.push_back(probe);
                ++added;
            }
            continue;
        }
        for (double value : started ? nextPoints(spec, c) : initialPoints(spec)) {
            SearchProbe probe;
            probe.round = round;
            probe.configuration = c.configuration;
            probe.value = value;
            probe.replicates = spec.replicates;
            // Fresh seeds: past every seed the configuration has; else past those at this value.
            const bool fresh = spec.seedPlan == SearchSpec::SeedPlan::Fresh;
            for (const auto &p : spec.probes)
                if (p.configuration == c.configuration && (fresh || p.value == value))
                    probe.firstReplicate =
                        std::max(probe.firstReplicate, p.firstReplicate + p.replicates);
            spec.probes.push_back(probe);
            added += probe.replicates;
        }
    }
    if (added > 0) expandSweep(session);
    return added;
}

double LawFit::bandHalfWidth(double log10x) const
{
    if (!ok || !also.empty()) return NAN;
    const double z = normalQuantile(0.5 + level / 2), d = log10x - centerX;
    return z * std::sqrt(centerSe * centerSe + alphaSe * alphaSe * d * d);
}

LawFit fitLaw(const std::vector<ConfigurationSearch> &configurations, const SearchSpec &spec,
              const std::string &lawX, const std::vector<std::string> &lawAlso)
{
    LawFit law;
    law.x = lawX;
    law.also = lawAlso;
    law.level = spec.level;
    const double z = normalQuantile(0.5 + spec.level / 2);
    std::vector<std::vector<double>> predictors;
    std::vector<double> y, sigma;
    std::set<double> xs;
    for (const auto &c : configurations) {
        // Every closed interval: a configuration still searching makes the law provisional.
        if (!c.interval.ok || c.interval.lowOpen || c.interval.highOpen) continue;
        if (c.state == SearchState::OutOfRange || c.state == SearchState::NoCrossing) continue;
        auto log10Of = [&](double x) { return spec.logScale ? x : std::log10(x); };
        const double low = log10Of(c.interval.low), high = log10Of(c.interval.high);
        const double estimate = log10Of(c.interval.estimate);
        if (!std::isfinite(low) || !std::isfinite(high) || !(high > low)) continue;
        std::vector<double> row;
        for (const auto &axis : std::vector<std::string>{lawX})
            row.push_back(axis.empty() ? NAN : std::log10(dimensionNumber(c.config, axis)));
        for (const auto &axis : lawAlso) row.push_back(std::log10(dimensionNumber(c.config, axis)));
        if (std::any_of(row.begin(), row.end(), [](double v) { return !std::isfinite(v); }))
            continue;
        xs.insert(row.front());
        law.provisional = law.provisional || !c.stopped();
        predictors.push_back(row);
        y.push_back(estimate);
        sigma.push_back((high - low) / (2 * z));
    }
    law.configurations = static_cast<int>(y.size());
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
    }
    law.chi2 = fit.chi2;
    law.dof = fit.dof;
    law.scale = fit.scale;
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

namespace {

std::string csvLine(const std::vector<std::string> &fields)
{
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csvField(fields[i]);
    return line + "\n";
}

std::string labelsLine(const std::map<std::string, std::string> &labels)
{
    std::string text;
    for (const auto &[key, value] : labels) text += (text.empty() ? "" : " ") + key + "=" + value;
    return text.empty() ? "(the experiment)" : text;
}

std::string number3(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", value);
    return text;
}

} // namespace

std::string searchSummaryText(const SearchReport &report)
{
    const bool log = report.logScale;
    std::string out;
    const std::string star = report.axis == "lr" ? "η*" : report.axis + "*";
    char line[512];
    std::snprintf(line, sizeof line,
                  "boundary search along %s: %d rounds, %d runs (%d still to train); %s\n",
                  report.axis.c_str(), report.rounds, report.runs, report.pending,
                  report.finished ? "finished" : "not finished");
    out += line;
    size_t width = 13;
    for (const auto &c : report.configurations)
        width = std::max(width, labelsLine(c.configuration).size());
    std::snprintf(line, sizeof line, "%-*s %5s  %-12s %-10s %-23s %s\n", int(width),
                  "configuration", "runs", "state", star.c_str(), "interval",
                  log ? "width (decades)" : "width");
    out += line;
    for (const auto &c : report.configurations) {
        std::string estimate = "-", interval = "-", span = "-";
        if (c.interval.ok) {
            auto value = [&](double x) { return number3(log ? std::pow(10.0, x) : x); };
            estimate = value(c.interval.estimate);
            interval = std::string(c.interval.lowOpen ? "(" : "[") + value(c.interval.low) + ", " +
                       value(c.interval.high) + (c.interval.highOpen ? ")" : "]");
            span = number3(c.interval.width());
        }
        std::snprintf(line, sizeof line, "%-*s %5d  %-12s %-10s %-23s %s  (%s)\n", int(width),
                      labelsLine(c.configuration).c_str(), c.runs, toString(c.state),
                      estimate.c_str(), interval.c_str(), span.c_str(), c.note.c_str());
        out += line;
    }
    if (report.seeds == "paired") {
        // Seeds with few runs are monotone almost by construction (a bisection stays inside its
        // bracket), so those with five or more are counted apart.
        int seeds = 0, monotone = 0, covered = 0, checked = 0, tested = 0, testedMonotone = 0;
        for (const auto &c : report.configurations) {
            for (const auto &seed : c.seeds) {
                seeds += !seed.verdicts.empty();
                if (seed.verdicts.size() >= 5) {
                    ++tested;
                    testedMonotone += seed.bracket.monotone();
                }
            }
            monotone += c.monotoneSeeds();
            if (c.interval.ok && c.alternative.ok && c.stopped()) {
                ++checked;
                covered += c.interval.low <= c.alternative.estimate &&
                           c.alternative.estimate <= c.interval.high;
            }
        }
        std::snprintf(line, sizeof line,
                      "paired seeds: %d of %d seeds monotone along %s (a seed that learned on both "
                      "sides of a value where it failed is not); %s and its interval from one "
                      "slope with each seed's own offset; the logistic over every run, as a check, "
                      "puts %s inside that interval for %d of %d stopped configurations\n",
                      monotone, seeds, report.axis.c_str(), star.c_str(), star.c_str(), covered,
                      checked);
        out += line;
        std::snprintf(line, sizeof line, "  of the %d seeds with 5 or more runs, %d are monotone\n",
                      tested, testedMonotone);
        out += line;
    }
    const LawFit &law = report.law;
    if (!law.ok) {
        out += "law: " + law.note + "\n";
        return out;
    }
    std::string terms = "α log10 " + law.x;
    for (size_t k = 0; k < law.also.size(); ++k)
        terms += " − β" + std::to_string(k + 1) + " log10 " + law.also[k];
    std::snprintf(line, sizeof line, "law: log10 %s = log10 C − %s, over %d configurations%s\n",
                  star.c_str(), terms.c_str(), law.configurations,
                  law.provisional ? " (provisional: some are still searching)" : "");
    out += line;
    const int percent = int(std::lround(law.level * 100));
    std::snprintf(line, sizeof line, "  α = %.3f [%.3f, %.3f] (%d %%)   C = %s [%s, %s]\n",
                  law.alpha, law.alphaLow, law.alphaHigh, percent,
                  number3(std::pow(10.0, law.log10C)).c_str(),
                  number3(std::pow(10.0, law.log10CLow)).c_str(),
                  number3(std::pow(10.0, law.log10CHigh)).c_str());
    out += line;
    for (size_t k = 0; k < law.beta.size(); ++k) {
        std::snprintf(line, sizeof line, "  β%zu (%s) = %.3f [%.3f, %.3f]\n", k + 1,
                      law.also[k].c_str(), law.beta[k], law.betaLow[k], law.betaHigh[k]);
        out += line;
    }
    if (law.model == "joint") {
        std::snprintf(line, sizeof line,
                      "  joint model: one slope shared by every configuration, the law inside the "
                      "likelihood; scatter about the law τ = %.3f %s\n",
                      law.tau, log ? "decades" : "units");
    } else {
        std::snprintf(line, sizeof line, "  χ² = %.2f on %d dof%s\n", law.chi2, law.dof,
                      law.scale > 1 ? " (the intervals are widened by sqrt(χ²/dof) for the misfit)"
                                    : "");
    }
    out += line;
    for (const auto &ref : law.references) {
        std::snprintf(line, sizeof line,
                      law.model == "joint"
                          ? "  α = %-4s: likelihood ratio χ² = %.2f on %d dof, p = %s; "
                            "%s the interval\n"
                          : "  α = %-4s: χ² = %.2f on %d dof, p = %s; %s the "
                            "interval\n",
                      ref.alpha == 0.5    ? "1/2"
                      : ref.alpha == 0.75 ? "3/4"
                                          : "1",
                      ref.chi2, ref.dof, std::isfinite(ref.p) ? number3(ref.p).c_str() : "-",
                      ref.inInterval ? "inside" : "outside");
        out += line;
    }
    if (const LawFit &other = report.alternative; other.ok) {
        std::snprintf(line, sizeof line,
                      "check, the %s model: α = %.3f [%.3f, %.3f], C = %s, over %d "
                      "configurations%s\n",
                      other.model == "joint" ? "joint" : "separate", other.alpha, other.alphaLow,
                      other.alphaHigh, number3(std::pow(10.0, other.log10C)).c_str(),
                      other.configurations,
                      other.model == "joint" ? (", τ = " + number3(other.tau)).c_str() : "");
        out += line;
    }
    if (!report.groups.empty())
        out += "law per group (configurations that differ in more than the model's shape):\n";
    for (const auto &g : report.groups) {
        std::string name;
        for (const auto &[axis, value] : g.labels)
            name += (name.empty() ? "" : " ") + axis + "=" + value;
        if (!g.law.ok) {
            out += "  " + name + ": " + g.law.note + "\n";
            continue;
        }
        std::snprintf(line, sizeof line,
                      "  %s: α = %.3f [%.3f, %.3f], C = %s, over %d configurations%s\n",
                      name.c_str(), g.law.alpha, g.law.alphaLow, g.law.alphaHigh,
                      number3(std::pow(10.0, g.law.log10C)).c_str(), g.law.configurations,
                      g.law.provisional ? " (provisional)" : "");
        out += line;
    }
    return out;
}

std::string searchSummaryCsv(const SearchReport &report)
{
    std::set<std::string> keys;
    for (const auto &c : report.configurations)
        for (const auto &[key, value] : c.configuration) keys.insert(key);
    std::vector<std::string> header(keys.begin(), keys.end());
    for (const char *column : {"runs", "verdicts", "state", "estimate", "low", "high", "low_open",
                               "high_open", "width", "slope"})
        header.push_back(column);
    const bool paired = report.seeds == "paired";
    if (paired)
        for (const char *column : {"seeds", "monotone_seeds", "seed_scatter"})
            header.push_back(column);
    std::string out = csvLine(header);
    for (const auto &c : report.configurations) {
        std::vector<std::string> row;
        for (const auto &key : keys) {
            auto it = c.configuration.find(key);
            row.push_back(it == c.configuration.end() ? "" : it->second);
        }
        row.push_back(std::to_string(c.runs));
        row.push_back(std::to_string(c.verdicts));
        row.push_back(toString(c.state));
        auto value = [&](double x) {
            return formatNumber(report.logScale ? std::pow(10.0, x) : x);
        };
        const bool ok = c.interval.ok;
        row.push_back(ok ? value(c.interval.estimate) : "");
        row.push_back(ok ? value(c.interval.low) : "");
        row.push_back(ok ? value(c.interval.high) : "");
        row.push_back(ok ? (c.interval.lowOpen ? "1" : "0") : "");
        row.push_back(ok ? (c.interval.highOpen ? "1" : "0") : "");
        row.push_back(ok ? formatNumber(c.interval.width()) : "");
        row.push_back(c.fit.ok ? formatNumber(c.fit.b) : "");
        if (paired) {
            row.push_back(std::to_string(c.seeds.size()));
            row.push_back(std::to_string(c.monotoneSeeds()));
            row.push_back(std::isfinite(c.seedScatter) ? formatNumber(c.seedScatter) : "");
        }
        out += csvLine(row);
    }
    return out;
}

namespace yaml {

SearchSpec readSearchSpec(const YamlField &field)
{
    checkKeys(field, {"axis", "range", "scale", "target", "direction", "replicates", "seeds",
                      "initial_points", "points_per_round", "level", "interval_width", "budget",
                      "model", "law_width", "law", "probes"});
    SearchSpec spec;
    if (auto f = child(field, "axis"); f.present()) {
        spec.axis = readString(f);
        const auto &axes = searchableDimensions();
        if (std::find(axes.begin(), axes.end(), spec.axis) == axes.end()) {
            const std::string near = nearestKey(spec.axis, axes);
            fail(f, "'" + spec.axis + "' cannot be searched" +
                        (near.empty() ? "" : "; did you mean '" + near + "'?") +
                        " (a search runs along " + joinedNames(axes) + ")");
        }
    }
    if (auto f = child(field, "scale"); f.present()) {
        const std::string scale = readString(f);
        if (scale != "log" && scale != "linear")
            fail(f, "expected log or linear, got '" + scale + "'");
        spec.logScale = scale == "log";
    }
    const YamlField range = child(field, "range");
    if (!range.present()) fail(range, "missing: the searched range as [low, high]");
    const auto ends = items(range);
    if (ends.size() != 2) fail(range, "expected [low, high], two numbers");
    spec.low = readNumber(ends[0]);
    spec.high = readNumber(ends[1]);
    if (!std::isfinite(spec.low) || !std::isfinite(spec.high) || !(spec.low < spec.high))
        fail(range, "expected low < high, both finite");
    if (spec.logScale && !(spec.low > 0)) fail(ends[0], "a log-scaled range must start above 0");
    if (isIntegerDimension(spec.axis) && spec.low < 1)
        fail(ends[0], "an integer axis starts at 1 or more");
    if (auto f = child(field, "target"); f.present())
        spec.target = readNumberInRange(f, 0, false, 1, false);
    if (auto f = child(field, "direction"); f.present()) {
        const std::string direction = readString(f);
        if (direction == "auto")
            spec.direction = SearchSpec::Direction::Auto;
        else if (direction == "decreasing")
            spec.direction = SearchSpec::Direction::Decreasing;
        else if (direction == "increasing")
            spec.direction = SearchSpec::Direction::Increasing;
        else
            fail(f, "expected auto, decreasing (P(learned) falls as the value grows: η) or "
                    "increasing, got '" +
                        direction + "'");
    }
    if (auto f = child(field, "replicates"); f.present()) {
        // A plan by name, but Replicates, which is written as its number of runs per point.
        const std::string text = isScalar(f) ? lower(readString(f)) : "";
        const auto named = seedPlanNamed(text);
        if (named && *named != SearchSpec::SeedPlan::Replicates)
            spec.seedPlan = *named;
        else if (int64_t n = 0; isScalar(f) && !parseInt(text, &n))
            fail(f, "expected a number of runs per point (the same seeds at every point), fresh "
                    "(one run a point, every run its own seed) or paired (each seed searched on "
                    "its own), got '" +
                        readString(f) + "'");
        else {
            spec.seedPlan = SearchSpec::SeedPlan::Replicates;
            spec.replicates = static_cast<int>(readIntInRange(f, 1, 1000));
        }
    }
    if (auto f = child(field, "seeds"); f.present()) {
        if (!spec.paired())
            fail(f, "seeds: is the number of paired seeds; it goes with replicates: paired");
        spec.seeds = static_cast<int>(readIntInRange(f, 2, 1000));
    }
    if (auto f = child(field, "initial_points"); f.present())
        spec.initialPoints = static_cast<int>(readIntInRange(f, 2, 1000));
    if (auto f = child(field, "points_per_round"); f.present())
        spec.pointsPerRound = static_cast<int>(readIntInRange(f, 1, 1000));
    if (auto f = child(field, "level"); f.present())
        spec.level = readNumberInRange(f, 0.5, true, 1, false);
    if (auto f = child(field, "interval_width"); f.present()) spec.intervalWidth = readPositive(f);
    if (auto f = child(field, "budget"); f.present())
        spec.budget = static_cast<int>(readIntInRange(f, 1, RunLimits::kMaxSweepRuns));
    if (spec.budget < spec.initialPoints * spec.replicates)
        fail(child(field, "budget"),
             "the budget of " + std::to_string(spec.budget) +
                 " runs per configuration is smaller than round 0 (initial_points × replicates = " +
                 std::to_string(spec.initialPoints * spec.replicates) + ")");
    if (auto f = child(field, "model"); f.present()) {
        const std::string model = readString(f);
        if (model == "separate")
            spec.model = SearchSpec::Model::Separate;
        else if (model == "joint")
            spec.model = SearchSpec::Model::Joint;
        else
            fail(f, "expected separate (a logistic per configuration) or joint (one model of "
                    "every configuration with the law inside it), got '" +
                        model + "'");
        if (spec.model == SearchSpec::Model::Joint && !spec.logScale)
            fail(f, "the joint model needs a log-scaled search (scale: log)");
        if (spec.model == SearchSpec::Model::Joint && spec.paired())
            fail(f, "paired seeds (replicates: paired) have their own model, one slope with "
                    "each seed's offset, per configuration; the joint model takes replicates: N "
                    "or fresh");
    }
    if (auto f = child(field, "law_width"); f.present()) {
        spec.lawWidth = readPositive(f);
        if (spec.model != SearchSpec::Model::Joint)
            fail(f, "law_width (search on until the law's α interval is this narrow) needs the "
                    "joint model, whose law is fitted with the runs: add model: joint");
    }
    if (auto f = child(field, "law"); f.present() && !f.isNull()) {
        checkKeys(f, {"x", "also"});
        auto readAxis = [](const YamlField &a) {
            const std::string name = readString(a);
            const auto &axes = lawDimensions();
            if (std::find(axes.begin(), axes.end(), name) == axes.end()) {
                const std::string near = nearestKey(name, axes);
                fail(a, "'" + name + "' is not an axis a law can be fitted against" +
                            (near.empty() ? "" : "; did you mean '" + near + "'?"));
            }
            return name;
        };
        if (auto x = child(f, "x"); x.present()) spec.lawX = readAxis(x);
        if (auto also = child(f, "also"); also.present() && !also.isNull())
            for (const auto &a : items(also)) spec.lawAlso.push_back(readAxis(a));
    }
    if (auto f = child(field, "probes"); f.present() && !f.isNull()) {
        // Runs each configuration's probes ask for: never more than the budget (a hand-edited or
        // hostile list would otherwise train any number of runs).
        std::map<std::map<std::string, std::string>, int64_t> runsOf;
        for (const auto &p : items(f)) {
            checkKeys(p, {"round", "at", "value", "first_replicate", "replicates"});
            SearchProbe probe;
            probe.round = static_cast<int>(readIntInRange(child(p, "round"), 0, 1'000'000));
            if (auto at = child(p, "at"); at.present() && !at.isNull())
                for (const auto &[key, value] : entries(at))
                    probe.configuration[key] = readString(value);
            const YamlField value = child(p, "value");
            if (!value.present()) fail(value, "missing: the point's value of " + spec.axis);
            probe.value = readNumber(value);
            if (!std::isfinite(probe.value)) fail(value, "expected a finite number");
            if (auto r = child(p, "first_replicate"); r.present())
                probe.firstReplicate = static_cast<int>(readIntInRange(r, 0, 1'000'000));
            probe.replicates = static_cast<int>(readIntInRange(child(p, "replicates"), 1, 1000));
            if (spec.paired() && probe.replicates != 1)
                fail(child(p, "replicates"),
                     "a paired search's probe is one run of one seed (replicates: 1)");
            if ((runsOf[probe.configuration] += probe.replicates) > spec.budget)
                fail(child(p, "replicates"),
                     "the probes of this configuration ask for " +
                         std::to_string(runsOf[probe.configuration]) +
                         " runs so far, more than the search's budget of " +
                         std::to_string(spec.budget) +
                         " runs per configuration (search.budget); raise the budget or remove "
                         "probes");
            spec.probes.push_back(std::move(probe));
        }
    }
    return spec;
}

namespace {

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
    auto interval = [&](const char *key, double estimate, double low, double high) {
        out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "estimate" << YAML::Value;
        writeNumber(out, estimate);
        out << YAML::Key << "low" << YAML::Value;
        writeNumber(out, low);
        out << YAML::Key << "high" << YAML::Value;
        writeNumber(out, high);
        out << YAML::EndMap;
    };
    out << YAML::Key << "model" << YAML::Value << law.model;
    out << YAML::Key << "x" << YAML::Value << law.x;
    out << YAML::Key << "configurations" << YAML::Value << law.configurations;
    out << YAML::Key << "provisional" << YAML::Value << law.provisional;
    out << YAML::Key << "level" << YAML::Value;
    writeNumber(out, law.level);
    interval("alpha", law.alpha, law.alphaLow, law.alphaHigh);
    interval("c", std::pow(10.0, law.log10C), std::pow(10.0, law.log10CLow),
             std::pow(10.0, law.log10CHigh));
    out << YAML::Key << "beta" << YAML::Value << YAML::BeginMap;
    for (size_t k = 0; k < law.beta.size() && k < law.also.size(); ++k)
        interval(law.also[k].c_str(), law.beta[k], law.betaLow[k], law.betaHigh[k]);
    out << YAML::EndMap;
    out << YAML::Key << "chi2" << YAML::Value;
    writeNumber(out, law.chi2);
    out << YAML::Key << "dof" << YAML::Value << law.dof;
    out << YAML::Key << "scale" << YAML::Value;
    writeNumber(out, law.scale);
    if (std::isfinite(law.tau)) {
        out << YAML::Key << "tau" << YAML::Value;
        writeNumber(out, law.tau);
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

void writeSearchReport(YAML::Emitter &out, const SearchReport &report, size_t finishedRuns)
{
    auto value = [&](double x) { return report.logScale ? std::pow(10.0, x) : x; };
    out << YAML::BeginMap;
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
        if (c.alternative.ok) {
            out << YAML::Key << "alternative" << YAML::Value << YAML::Flow << YAML::BeginMap;
            out << YAML::Key << "estimate" << YAML::Value;
            writeNumber(out, value(c.alternative.estimate));
            out << YAML::Key << "low" << YAML::Value;
            writeNumber(out, value(c.alternative.low));
            out << YAML::Key << "high" << YAML::Value;
            writeNumber(out, value(c.alternative.high));
            out << YAML::EndMap;
        }
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
    out << YAML::EndMap;
}

void writeSearchSpec(YAML::Emitter &out, const SearchSpec &spec)
{
    out << YAML::BeginMap;
    out << YAML::Key << "axis" << YAML::Value << spec.axis;
    out << YAML::Key << "range" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    writeNumber(out, spec.low);
    writeNumber(out, spec.high);
    out << YAML::EndSeq;
    out << YAML::Key << "scale" << YAML::Value << (spec.logScale ? "log" : "linear");
    out << YAML::Key << "target" << YAML::Value;
    writeNumber(out, spec.target);
    out << YAML::Key << "direction" << YAML::Value
        << (spec.direction == SearchSpec::Direction::Decreasing   ? "decreasing"
            : spec.direction == SearchSpec::Direction::Increasing ? "increasing"
                                                                  : "auto");
    if (spec.seedPlan == SearchSpec::SeedPlan::Replicates)
        out << YAML::Key << "replicates" << YAML::Value << spec.replicates;
    else
        out << YAML::Key << "replicates" << YAML::Value << seedPlanName(spec.seedPlan);
    if (spec.paired()) out << YAML::Key << "seeds" << YAML::Value << spec.seeds;
    out << YAML::Key << "initial_points" << YAML::Value << spec.initialPoints;
    out << YAML::Key << "points_per_round" << YAML::Value << spec.pointsPerRound;
    out << YAML::Key << "level" << YAML::Value;
    writeNumber(out, spec.level);
    out << YAML::Key << "interval_width" << YAML::Value;
    writeNumber(out, spec.intervalWidth);
    out << YAML::Key << "budget" << YAML::Value << spec.budget;
    if (spec.model == SearchSpec::Model::Joint)
        out << YAML::Key << "model" << YAML::Value << "joint";
    if (spec.lawWidth > 0) {
        out << YAML::Key << "law_width" << YAML::Value;
        writeNumber(out, spec.lawWidth);
    }
    out << YAML::Key << "law" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "x"
        << YAML::Value << spec.lawX << YAML::Key << "also" << YAML::Value << YAML::BeginSeq;
    for (const auto &a : spec.lawAlso) out << a;
    out << YAML::EndSeq << YAML::EndMap;
    if (!spec.probes.empty()) {
        out << YAML::Key << "probes" << YAML::Value << YAML::BeginSeq;
        for (const auto &p : spec.probes) {
            out << YAML::Flow << YAML::BeginMap;
            out << YAML::Key << "round" << YAML::Value << p.round;
            out << YAML::Key << "at" << YAML::Value << YAML::Flow << YAML::BeginMap;
            for (const auto &[key, value] : p.configuration) {
                out << YAML::Key << key << YAML::Value;
                writeText(out, value);
            }
            out << YAML::EndMap;
            out << YAML::Key << "value" << YAML::Value;
            writeNumber(out, p.value);
            out << YAML::Key << "first_replicate" << YAML::Value << p.firstReplicate;
            out << YAML::Key << "replicates" << YAML::Value << p.replicates;
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    out << YAML::EndMap;
}

} // namespace yaml

} // namespace headlab
