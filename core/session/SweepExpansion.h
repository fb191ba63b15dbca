// SweepExpansion.h — a sweep's runs from its axes: the product (or the combinations × the axes, or
// a search's probes × replicates), resolved configurations, and why a combination cannot run.
#pragma once

#include "core/session/SessionData.h"

#include <map>
#include <string>
#include <vector>

namespace headlab {

// Why a sweep cannot be expanded: its product has more than RunLimits::kMaxSweepRuns runs.
// Returns "" when it is within the limit. Computed from the axis sizes without expanding.
std::string checkSweepSize(const Session &session);

// The configurations of the sweep, as the labels of their axes, in sweep order: for a search,
// what each is searched for; otherwise one per run (skipped ones included).
std::vector<std::map<std::string, std::string>> sweepConfigurations(const Session &session);

// Rebuilds runs and skipped from base and axes (for a search: each configuration × its probes ×
// their replicates, replicate j with seed = the experiment's seed + j). A run whose resolved config is unchanged keeps
// its result, so editing one axis does not throw away finished work.
void expandSweep(Session &session);

} // namespace headlab
