// SearchResults.cpp — see SearchResults.h.
#include "core/session/search/SearchResults.h"

#include <algorithm>
#include <cmath>

namespace headlab {

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

double LawFit::bandHalfWidth(double log10x) const
{
    if (!ok || !also.empty()) return NAN;
    const double z = normalQuantile(0.5 + level / 2), d = log10x - centerX;
    return z * std::sqrt(centerSe * centerSe + alphaSe * alphaSe * d * d);
}

} // namespace headlab
