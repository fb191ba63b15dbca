// ConfigurationState.h — one configuration of a boundary search, judged from its runs: the
// points of its fit (the other boundary's runs set aside), its crossing and interval by its own
// logistic or, with paired seeds, by a logistic with each seed's offset, and its state (searching,
// converged, budget spent, ...) with a note saying why. Internal to the search: SearchReport.cpp
// judges every configuration with these, then the joint model and the law may restate them.
// Torch-free.
#pragma once

#include "core/session/search/SearchResults.h"
#include "core/session/search/SearchSpec.h"

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
// Appends to the note how many runs the fit left out, and why.
void noteSetAside(const SearchSpec &spec, ConfigurationSearch &c);
// law_width: the converged configurations of a law's fit (`members`, indices into the report)
// search on while the law's α interval is wider than asked.
void searchOnForTheLaw(const SearchSpec &spec, SearchReport &report,
                       const std::vector<size_t> &members, const LawFit &law);

} // namespace headlab::search
