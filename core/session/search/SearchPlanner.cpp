// SearchPlanner.cpp — see SearchPlanner.h.
#include "core/session/search/SearchPlanner.h"

#include "core/session/SweepExpansion.h"
#include "core/session/search/ConfigurationState.h"
#include "core/session/search/SearchReport.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

namespace headlab {

namespace {

// A configuration whose runs all fell on one side of the crossing, inside the range (its round 0
// spanned a predicted interval): the next points step out beyond its runs towards the crossing,
// as far again as the runs span (at least the interval width asked for), so that the step doubles
// round by round; the last point is the range's end once the step reaches it. With no known
// direction the points go either side.
std::vector<double> pointsBeyond(const SearchSpec &spec, const ConfigurationSearch &c, int k)
{
    const search::ProbedSpan probed = search::probedSpan(c);
    int successes = 0;
    for (const auto &p : c.points) successes += p.successes;
    const int side = search::sideOfTheCrossing(spec, successes != 0);
    const double step = std::max(probed.width(), spec.intervalWidth);
    std::vector<double> values;
    auto add = [&](double v) {
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    };
    for (int towards : {-1, +1}) {
        if ((side != 0 && towards != side) || search::reachedTheEnd(spec, probed, towards))
            continue;
        const int n = side != 0 ? k : (towards < 0 ? (k + 1) / 2 : k / 2);
        const double from = towards < 0 ? probed.low : probed.high;
        const double end =
            towards < 0 ? toSearchUnits(spec, spec.low) : toSearchUnits(spec, spec.high);
        for (int i = 1; i <= n; ++i) {
            const double x = from + towards * step * i / n;
            if (towards * (x - end) >= 0) {
                add(towards < 0 ? spec.low : spec.high);
                break;
            }
            add(snapSearchValue(spec, fromSearchUnits(spec, x)));
        }
    }
    return values;
}

std::vector<double> nextPoints(const SearchSpec &spec, const ConfigurationSearch &c)
{
    const double xMin = toSearchUnits(spec, spec.low), xMax = toSearchUnits(spec, spec.high);
    const int affordable = (spec.budget - c.runs) / spec.replicates;
    const int k = std::min(spec.pointsPerRound, affordable);
    if (!c.interval.ok) return pointsBeyond(spec, c, k);
    // A side the data leave open reaches as far beyond the runs as they span (the range's end,
    // when round 0 spanned the range): not the whole range from a round 0 that began inside it.
    const search::ProbedSpan probed = search::probedSpan(c);
    const double reach = std::max(probed.width(), spec.intervalWidth);
    const double low = std::clamp(c.interval.lowOpen ? std::max(c.interval.low, probed.low - reach)
                                                     : c.interval.low,
                                  xMin, xMax);
    const double high = std::clamp(
        c.interval.highOpen ? std::min(c.interval.high, probed.high + reach) : c.interval.high,
        xMin, xMax);
    std::vector<double> values;
    for (int i = 0; i < k; ++i) {
        const double x = low + (high - low) * (i + 1) / (k + 1);
        const double v = snapSearchValue(spec, fromSearchUnits(spec, x));
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    }
    return values;
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
    auto snapped = [&](double x) { return snapSearchValue(spec, fromSearchUnits(spec, x)); };
    auto probedAlready = [&](const SeedSearch &seed, double value) {
        return std::any_of(seed.probed.begin(), seed.probed.end(), [&](double x) {
            return snapSearchValue(spec, fromSearchUnits(spec, x)) == value;
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

// Round 0 of a configuration: evenly spaced over the range, its ends exactly as given; or over
// the interval predicted for it (SearchSpec::starts), clamped to the range, every point snapped.
std::vector<double> initialPoints(const SearchSpec &spec,
                                  const std::map<std::string, std::string> &configuration)
{
    double low = spec.low, high = spec.high;
    bool predicted = false;
    for (const auto &start : spec.starts)
        if (start.configuration == configuration) {
            low = std::clamp(start.low, spec.low, spec.high);
            high = std::clamp(start.high, spec.low, spec.high);
            predicted = high > low;
        }
    if (!predicted) {
        low = spec.low;
        high = spec.high;
    }
    const double xMin = toSearchUnits(spec, low), xMax = toSearchUnits(spec, high);
    std::vector<double> values;
    for (int i = 0; i < spec.initialPoints; ++i) {
        const double x = xMin + (xMax - xMin) * i / (spec.initialPoints - 1);
        double v = fromSearchUnits(spec, x);
        if (!predicted && i == 0)
            v = spec.low;
        else if (!predicted && i == spec.initialPoints - 1)
            v = spec.high;
        else
            v = snapSearchValue(spec, v);
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    }
    return values;
}

} // namespace

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
        for (double value : started ? nextPoints(spec, c) : initialPoints(spec, c.configuration)) {
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

} // namespace headlab
