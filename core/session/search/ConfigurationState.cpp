// ConfigurationState.cpp — see ConfigurationState.h; the design is argued in docs/SEARCH.md.
#include "core/session/search/ConfigurationState.h"

#include "core/config/Yaml.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace headlab::search {

using namespace headlab::yaml;

// Defined below, used before.
bool budgetSpent(const SearchSpec &spec, const ConfigurationSearch &c);
bool learnsBelow(const SearchSpec &spec, const ConfigurationSearch &c);
void bracketTheSeeds(const SearchSpec &spec, ConfigurationSearch &c);
std::string seedsNote(const SearchSpec &spec, const ConfigurationSearch &c);

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
        // Every run on one side. A search that began inside the range (its round 0 over a
        // predicted interval, SearchSpec::starts) steps out towards the crossing until the range's
        // end; only runs at that end say the crossing lies outside the range.
        const ProbedSpan probed = probedSpan(c);
        const int side = sideOfTheCrossing(spec, successes != 0);
        const bool lowLeft = side <= 0 && !reachedTheEnd(spec, probed, -1);
        const bool highLeft = side >= 0 && !reachedTheEnd(spec, probed, +1);
        const std::string all =
            std::string("all ") + std::to_string(c.verdicts) + " runs " +
            (successes == 0 ? "stayed stuck" : "learned") + " over " +
            formatNumber(snapSearchValue(spec, fromSearchUnits(spec, probed.low))) + " … " +
            formatNumber(snapSearchValue(spec, fromSearchUnits(spec, probed.high)));
        if (!lowLeft && !highLeft) {
            c.state = SearchState::OutOfRange;
            c.note = all + ": the crossing lies outside the range";
        } else if (budgetSpent(spec, c)) {
            c.state = SearchState::BudgetSpent;
            c.note = all + "; the budget of " + std::to_string(spec.budget) +
                     " runs is spent before the range's end";
        } else {
            c.state = SearchState::Searching;
            c.note = all + ": searching " +
                     (!highLeft  ? "below"
                      : !lowLeft ? "above"
                                 : "either side");
        }
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

ProbedSpan probedSpan(const ConfigurationSearch &c)
{
    ProbedSpan span;
    for (const auto *points : {&c.points, &c.setAsidePoints})
        for (const auto &p : *points) {
            span.low = std::min(span.low, p.x);
            span.high = std::max(span.high, p.x);
        }
    return span;
}

int sideOfTheCrossing(const SearchSpec &spec, bool learned)
{
    if (spec.direction == SearchSpec::Direction::Auto) return 0;
    // Decreasing: learning happens below the crossing, so runs that all learned lie below it.
    const bool decreasing = spec.direction == SearchSpec::Direction::Decreasing;
    return learned == decreasing ? +1 : -1;
}

bool reachedTheEnd(const SearchSpec &spec, const ProbedSpan &probed, int side)
{
    // The range's ends are run at exactly their values (round 0 over the range, or a step out
    // that reaches one), so a tolerance of rounding is enough.
    constexpr double kTolerance = 1e-9;
    return side < 0 ? probed.low <= toSearchUnits(spec, spec.low) + kTolerance
                    : probed.high >= toSearchUnits(spec, spec.high) - kTolerance;
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
                 formatNumber(snapSearchValue(spec, fromSearchUnits(spec, estimate))) +
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
                    : std::string("interval still open ") +
                          (c.interval.lowOpen && c.interval.highOpen ? "on both sides"
                           : c.interval.lowOpen                      ? "below"
                                                                     : "above");
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

} // namespace headlab::search
