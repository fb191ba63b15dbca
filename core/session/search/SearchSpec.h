// SearchSpec.h — a boundary search: the session's `search:` block, read and written.
//
// A search is a kind of sweep whose values of one axis are not listed but chosen, round by round,
// where they tell the most about where P(learned) crosses a target (½): the trainability
// boundary. The sweep's other axes (and combinations) define the configurations, each searched on
// its own; every point is trained `replicates` times with consecutive seeds. The rounds already
// chosen are recorded in the session (`probes:`), so a killed search resumes where it was and a
// sharded round is planned once, from the merged results. The algorithm is in Search.h; the
// format in docs/SESSION_FORMAT.md. Torch-free.
#pragma once

#include "core/config/Yaml.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace headlab {

// One point of one configuration, chosen in round `round`: the runs at `value` with seeds
// base seed + firstReplicate ... + firstReplicate + replicates − 1.
struct SearchProbe {
    int round = 0;
    std::map<std::string, std::string> configuration; // labels of the other axes
    double value = 0;
    int firstReplicate = 0;
    int replicates = 1;
    bool operator==(const SearchProbe &) const = default;
};

// Where round 0 of one configuration goes instead of the whole range: an interval predicted for it
// (written by `headlab-cli predict --into`, from another search's law), in the axis's units.
struct SearchStart {
    std::map<std::string, std::string> configuration; // labels of the other axes
    double low = 0, high = 0;
    bool operator==(const SearchStart &) const = default;
};

struct SearchSpec {
    std::string axis = "lr";  // a numeric axis: lr, d_model, heads, head_dim, layers, ...
    double low = 0, high = 0; // the searched range, in the axis's own units
    bool logScale = true;     // search in log10 of the value (η, widths)
    double target = 0.5;      // the P(learned) whose crossing is sought
    // How P(learned) changes as the value grows, when known: Decreasing for η (too large a step
    // fails). Then points on the far side of the first value that learned belong to another
    // boundary (η too small to learn in the steps given) and are left out of the fit.
    enum class Direction { Auto, Decreasing, Increasing } direction = Direction::Auto;
    int replicates = 1; // runs per point, with consecutive seeds (SeedPlan::Replicates)
    // Which seeds a configuration's runs get (`replicates:` N, fresh or paired):
    //  - Fresh (the default): one run a point, each run of a configuration its own seed, so that
    //    outcomes are independent whether or not seeds differ;
    //  - Replicates: each point N runs, seeds + 0 … N − 1, the same at every point (with N = 1,
    //    every run of a configuration has the first seed: its crossing is that seed's, which is
    //    the population's only where seeds do not differ; docs/SEARCH.md measures it);
    //  - Paired: each seed of a configuration is searched on its own, one run a round at the
    //    middle of its own bracket, so that the same seeds meet every part of the range and each
    //    says whether its outcome is monotone (core/metrics/Thresholds.h). Round 0 is the initial
    //    points with the first seed; `seeds` seeds start in round 1, each with a run at either
    //    end of the interval, and `points_per_round` more join once every seed is pinned.
    enum class SeedPlan { Fresh, Replicates, Paired } seedPlan = SeedPlan::Fresh;
    int seeds = 8; // paired seeds to start with
    bool paired() const { return seedPlan == SeedPlan::Paired; }
    int initialPoints = 5;      // round 0: evenly spaced over the range, ends included
    int pointsPerRound = 3;     // each later round, inside the current interval
    double level = 0.95;        // of the crossing's interval
    double intervalWidth = 0.2; // stop when the interval is this narrow (decades on a log scale)
    int budget = 40;            // most runs of one configuration
    // What decides each configuration's crossing, interval and state, and the law: Separate, one
    // logistic per configuration and the law through their crossings afterwards; Joint, one model
    // for every configuration of a law group at once (core/metrics/JointLaw.h). The other is
    // fitted too, as a check.
    enum class Model { Separate, Joint } model = Model::Separate;
    // The joint model only: while the law's α interval is wider than this, a configuration whose
    // own interval is narrow enough searches on (rounds go on at every configuration with budget
    // left), so that the search stops when the law is as precise as asked (0: off; the width of
    // α's 95 % interval, in α's own units). docs/SEARCH.md says why the rounds stay at every
    // configuration rather than at the ends of the law's axis.
    double lawWidth = 0;
    // The law fitted across configurations: log10 crossing against log10 of `lawX` (and of each
    // `lawAlso`), values read from each configuration's resolved run config.
    std::string lawX = "head_dim";
    std::vector<std::string> lawAlso;
    // Round 0 of these configurations spans their predicted interval (clamped to the range), not
    // the range: a search that starts where a law says the boundary lies.
    std::vector<SearchStart> starts;
    std::vector<SearchProbe> probes; // the rounds so far, written by HeadLab
    bool operator==(const SearchSpec &) const = default;
};

// A seed plan's name, as the report, `summary` and the form say it: fresh, replicates, paired; and
// the plan a name stands for (none for another name). The session file writes Replicates as its
// number of runs per point (`replicates: 3`), the others by name.
const char *seedPlanName(SearchSpec::SeedPlan plan);
std::optional<SearchSpec::SeedPlan> seedPlanNamed(const std::string &name);

// The axis value in search units (log10 for a log-scaled search) and back.
double toSearchUnits(const SearchSpec &spec, double value);
double fromSearchUnits(const SearchSpec &spec, double x);

// A value as the search writes it: three significant digits (whole numbers, from 1, for an
// integer dimension), so that labels and file names stay readable and a point read back is the
// point planned.
double snapSearchValue(const SearchSpec &spec, double value);

namespace yaml {
SearchSpec readSearchSpec(const YamlField &field);
void writeSearchSpec(YAML::Emitter &out, const SearchSpec &spec);
} // namespace yaml

} // namespace headlab
