// ConfigurationState.h — one configuration of a boundary search, judged from its runs: the
// points of its fit (the other boundary's runs set aside), its crossing and interval by its own
// logistic or, with paired seeds, by a logistic with each seed's offset, and its state (searching,
// converged, budget spent, ...) with a note saying why. Internal to the search: SearchReport.cpp
// judges every configuration with these, then the joint model and the law may restate them.
// Torch-free.
#pragma once

#include "core/session/search/SearchResults.h"
#include "core/session/search/SearchSpec.h"

#include <cmath>
#include <vector>

namespace headlab::search {

// With a known direction, the points beyond the boundary the search is not after are left out of
// the fit (counted in setAside, kept in setAsidePoints).
void setAsideTheOtherBoundary(const SearchSpec &spec, ConfigurationSearch &c);
// The configuration's fit, interval and state from its points; `hasProbes`: it has runs of its own
// rounds (not only the session's sweep).
void assess(const SearchSpec &spec, ConfigurationSearch &c, bool hasProbes);
// The same with paired seeds: each seed's bracket, and the crossing of the seed model.
void assessPaired(const SearchSpec &spec, ConfigurationSearch &c, bool hasProbes);
// The state of a configuration with a fitted interval and every run finished.
void stateFromInterval(const SearchSpec &spec, ConfigurationSearch &c);
// The values a configuration's runs have covered, in search units (its fitted and set-aside
// points); empty (low > high) before any verdict.
struct ProbedSpan {
    double low = INFINITY, high = -INFINITY;
    double width() const { return high - low; }
};
ProbedSpan probedSpan(const ConfigurationSearch &c);
// Where the crossing must lie when every verdict is the same (`learned`: all learned): −1 below
// the runs, +1 above them, 0 either side (the direction is not known).
int sideOfTheCrossing(const SearchSpec &spec, bool learned);
// Whether the runs have reached the range's end on that side (−1 the low end, +1 the high end).
bool reachedTheEnd(const SearchSpec &spec, const ProbedSpan &probed, int side);
// Appends to the note how many runs the fit left out, and why.
void noteSetAside(const SearchSpec &spec, ConfigurationSearch &c);
// law_width: the converged configurations of a law's fit (`members`, indices into the report)
// search on while the law's α interval is wider than asked.
void searchOnForTheLaw(const SearchSpec &spec, SearchReport &report,
                       const std::vector<size_t> &members, const LawFit &law);

} // namespace headlab::search
