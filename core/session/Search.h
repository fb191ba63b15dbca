// Search.h — a boundary search (SearchSpec.h) round by round: where each configuration's
// P(learned) crosses the target, with its interval, the next round's points, and the law fitted
// through the crossings (log10 η* = log10 C − α log10 m_H).
//
// The design, and why, is in docs/SEARCH.md. In short, for each configuration:
//  - round 0 trains `initial_points` values evenly spaced over the range (in log10 for a log
//    axis), ends included, each `replicates` times;
//  - after every round a logistic curve of P(learned) against the searched value is fitted by
//    Firth's penalised likelihood and the crossing's profile interval computed (Logistic.h);
//  - the configuration stops when that interval is narrower than `interval_width`, when its runs
//    reach `budget`, or when the crossing lies outside the range (every run at a probed end of the
//    range sits on the side of the target the other end does not reach);
//  - otherwise the next round puts `points_per_round` points evenly inside the interval (at its
//    1/(k+1) … k/(k+1) fractions), snapped to three significant digits: a k+1-section of the
//    bracket while it is wide, points near the crossing where the slope is known.
// A round is planned only when every run of the one before has finished, for all configurations at
// once, so that a round's runs train together as ensembles and a Slurm array can hold a round.
// Planning depends on the session and its results only: the same results give the same rounds.
//
// With `model: joint` the crossings, intervals and states above come from one model of every
// configuration of a law group (JointLaw.h: a shared slope, the law inside the likelihood and each
// configuration's scatter about it), which lets a configuration stop with fewer runs than its own
// logistic needs; the per-configuration fits stay in the report as a check (`alternative`).
//
// With paired seeds (`replicates: paired`) each seed of a configuration bisects its own bracket,
// one run a round, and the crossing and its interval are those of a logistic with a shared slope
// and each seed's own offset (JointLaw.h with the seeds as its groups): the median seed's
// crossing, its interval widened by the seeds' scatter where they differ. The logistic over
// every run is the check (`alternative`); each seed's bracket says whether it is monotone
// (Thresholds.h).
// Torch-free.
#pragma once

#include "core/config/Yaml.h"
#include "core/metrics/JointLaw.h"
#include "core/metrics/Logistic.h"
#include "core/metrics/Thresholds.h"
#include "core/schema/Dimensions.h"
#include "core/session/SearchSpec.h"
#include "core/session/SessionData.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace headlab {

// One seed of a paired search: its verdicts and where they put its threshold.
struct SeedSearch {
    int seed = 0;                      // replicate index: the run's seed is the session's seed + it
    std::vector<SeedVerdict> verdicts; // in the fit (the other boundary's runs left out)
    SeedBracket bracket;
    std::vector<double> probed; // every value it has a run at, search units, set-aside ones too
};

// The state of one configuration's search.
enum class SearchState {
    Searching,   // the next round has points for it
    Waiting,     // runs of its latest round have not finished
    Converged,   // the interval is narrower than interval_width
    BudgetSpent, // its runs reached the budget first
    OutOfRange,  // the crossing lies outside the searched range
    NoCrossing,  // every outcome is the same: nothing to fit
};
const char *toString(SearchState state); // "searching", "converged", ...

struct ConfigurationSearch {
    std::map<std::string, std::string> configuration; // labels of the non-searched axes
    RunConfig config;                  // resolved, at its first run (the law's values come from it)
    std::vector<BinomialPoint> points; // by value, in search units; verdicts only
    int setAside = 0; // runs left out of the fit: beyond the boundary (SearchSpec::direction)
    std::vector<BinomialPoint> setAsidePoints; // those runs, by value (drawn, not fitted)
    int runs = 0;                              // its runs, with or without a result
    int pending = 0;                           // of those, still to train
    int verdicts = 0;                          // with a learned / not learned verdict
    SearchState state = SearchState::Waiting;
    LogisticFit fit;           // in search units, of the model in use
    CrossingInterval interval; // in search units, of the model in use
    // The other model's interval, as a check: the per-configuration logistic's when the joint model
    // is in use, and the joint model's otherwise (not ok where it has no fit).
    CrossingInterval alternative;
    std::string note; // one sentence: why it stopped, or what is missing
    // Paired seeds only: each seed by replicate index, and the fit of their thresholds (its σ
    // sets the first step of a seed whose bracket is open on one side).
    std::vector<SeedSearch> seeds;
    ThresholdFit thresholds;
    // The seeds' scatter about the median seed's crossing (search units: decades on a log axis),
    // estimated by the seed model and the value its interval was computed at (JointLaw.h's τ and
    // τ used); NaN where it was not fitted.
    double seedScatter = NAN, seedScatterUsed = NAN;
    int monotoneSeeds() const;
    bool stopped() const;
};

// The law fitted across the configurations whose interval is closed.
struct LawFit {
    bool ok = false;
    std::string model = "separate"; // "separate": through the crossings; "joint": JointLaw.h
    std::string x;                  // the axis of the exponent (head_dim: m_H)
    std::vector<std::string> also;  // further axes, each with its own exponent
    int configurations = 0;
    bool provisional = false; // some of them are still searching
    double level = 0.95;
    // log10 η* = log10 C − α log10 x − Σ β_k log10 also_k
    double alpha = 0, alphaLow = 0, alphaHigh = 0;
    double log10C = 0, log10CLow = 0, log10CHigh = 0;
    std::vector<double> beta, betaLow, betaHigh;
    double chi2 = 0;
    int dof = 0;
    double scale = 1; // the errors were multiplied by sqrt(scale) for the law's misfit
    // The joint model's scatter of the configurations' log10 crossings about the law (decades),
    // which it estimates instead of scaling; NaN for the separate model. Its dof is the number of
    // the law's slopes, and its χ² the Wald test of the one slope being 0 (NaN with more than one).
    double tau = NAN;
    // For a band around the line (a law of one axis): the weighted centre of the points, where the
    // line's error is smallest and independent of α's, and those two errors.
    double centerX = 0, centerY = 0, centerSe = 0, alphaSe = 0;
    // The line's 95 % band at log10 x (NaN for a law of several axes).
    double bandHalfWidth(double log10x) const;
    // How well a fixed exponent describes the data: the intercept refitted, χ², dof, p.
    struct Reference {
        double alpha = 0, log10C = 0, chi2 = 0, p = 0;
        int dof = 0;
        bool inInterval = false;
    };
    std::vector<Reference> references; // α = ½, ¾, 1
    std::string note;                  // why there is no fit
};

// Configurations that differ in an axis other than the model's shape and the law's own axes (a
// stabilizer, the QK rule, the logit scale, ...) fall into groups, each with its law.
struct LawGroup {
    std::map<std::string, std::string> labels; // the group's values of those axes
    LawFit law;
};

struct SearchReport {
    std::string axis;
    bool logScale = true;
    std::vector<ConfigurationSearch> configurations;
    int rounds = 0; // planned so far
    int runs = 0, pending = 0;
    bool finished = false;            // every configuration has stopped
    std::string model = "separate";   // the spec's model
    std::string seeds = "replicates"; // the spec's seed plan: replicates, fresh or paired
    LawFit law;                       // over every configuration, by the model in use
    LawFit alternative;               // the same by the other model, as a check
    std::vector<LawGroup> groups;     // per group, when there are two or more (else empty)
};

// The group a configuration belongs to: its labels but those of the shape axes (d_model, heads,
// head_dim, head_schedule, layers, width_multiplier) and of the law's axes.
std::map<std::string, std::string> lawGroupOf(const std::map<std::string, std::string> &labels,
                                              const std::string &lawX,
                                              const std::vector<std::string> &lawAlso);

// The axis value in search units (log10 for a log-scaled search) and back.
double toSearchUnits(const SearchSpec &spec, double value);
double fromSearchUnits(const SearchSpec &spec, double x);

// Where the search stands: each configuration's state, crossing and interval, and the law (over
// `lawX` and `lawAlso` when given, else the spec's).
// `check`: also fit the model not in use, for the report's `alternative` (what `summary` prints and
// the session's stored report keep; planning and the figures do without it: for the separate
// model it costs a joint fit with every configuration's profile).
SearchReport searchReport(const Session &session, const std::string &lawX = "",
                          const std::vector<std::string> &lawAlso = {}, bool check = false);

// Plans the next round (round 0 when there is none yet): appends its probes to session.search,
// expands the sweep to their runs (results kept) and returns how many runs they add; 0, with
// the session untouched, when runs are still to train or the search is over. Throws
// std::logic_error for a session without a search.
int planSearchRound(Session &session);

// The session as its search stood after round `round`: the later rounds' probes and their runs
// removed (results kept). For replaying a search: what it knew then.
Session searchUntilRound(const Session &session, int round);

// The law through the crossings of `configurations` against log10 lawX (and each lawAlso).
LawFit fitLaw(const std::vector<ConfigurationSearch> &configurations, const SearchSpec &spec,
              const std::string &lawX, const std::vector<std::string> &lawAlso);

// The report as text for a person (headlab-cli summary), and as CSV (one row per configuration).
std::string searchSummaryText(const SearchReport &report);
std::string searchSummaryCsv(const SearchReport &report);

namespace yaml {
SearchSpec readSearchSpec(const YamlField &field);
void writeSearchSpec(YAML::Emitter &out, const SearchSpec &spec);
// The report as a session's `search_report:` (docs/SESSION_FORMAT.md): what `summary` prints, in
// the searched axis's units, for readers without the C++ (the Python package's Session.search).
// `finishedRuns` is how many of the session's runs had finished when it was written, so that a
// reader can tell a report older than the runs it has (shards write runs, not the index).
void writeSearchReport(YAML::Emitter &out, const SearchReport &report, size_t finishedRuns);
} // namespace yaml

} // namespace headlab
