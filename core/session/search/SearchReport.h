// SearchReport.h — a boundary search (SearchSpec.h) round by round: where each configuration's
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
//
// The search is four files here: SearchSpec (the session's `search:` block, read and written),
// ConfigurationState (one configuration's state from its runs, seeds paired or not), this report
// (every configuration's state, the joint model and the law, and the session's `search_report:`)
// and SearchPlanner (the next round's probes). `headlab-cli summary` prints a report
// (SearchSummary.h). Torch-free.
#pragma once

#include "core/config/Yaml.h"
#include "core/schema/Dimensions.h"
#include "core/session/SessionData.h"
#include "core/session/search/SearchResults.h"
#include "core/session/search/SearchSpec.h"

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace headlab {

// The group a configuration belongs to: its labels but those of the shape axes (d_model, heads,
// head_dim, head_schedule, layers, width_multiplier) and of the law's axes.
std::map<std::string, std::string> lawGroupOf(const std::map<std::string, std::string> &labels,
                                              const std::string &lawX,
                                              const std::vector<std::string> &lawAlso);

// Where the search stands: each configuration's state, crossing and interval, and the law (over
// `lawX` and `lawAlso` when given, else the spec's).
// `check`: also fit the model not in use, for the report's `alternative` (what `summary` prints and
// the session's stored report keep; planning and the figures do without it: for the separate
// model it costs a joint fit with every configuration's profile).
// The version of the computation behind a report's numbers (the fits, their intervals, the
// law). Raised with any change that moves them: a stored report of a lower one was made by an
// earlier release's computation, and readers say it is stale (the Python package, from
// schema.json). test_search pins one report's numbers, so that a change that moves them fails
// until this and the pin are raised together.
inline constexpr int kSearchReportMethod = 1;

SearchReport searchReport(const Session &session, const std::string &lawX = "",
                          const std::vector<std::string> &lawAlso = {}, bool check = false);

// The law through the crossings of `configurations` against log10 lawX (and each lawAlso).
LawFit fitLaw(const std::vector<ConfigurationSearch> &configurations, const SearchSpec &spec,
              const std::string &lawX, const std::vector<std::string> &lawAlso);

// The axes of `lawAlso` a law through the crossings of `configurations` can fit beside lawX: each
// kept where its log10 is not a constant plus a combination of lawX's and the axes kept before it,
// over the configurations with a closed interval; the others are appended to `leftOut`. Where
// lawX has fewer than two values every one is kept (fitLaw then says why there is no law).
std::vector<std::string> separableAxes(const std::vector<ConfigurationSearch> &configurations,
                                       const SearchSpec &spec, const std::string &lawX,
                                       const std::vector<std::string> &lawAlso,
                                       std::vector<std::string> *leftOut = nullptr);

// log10 of each named dimension's value in a configuration (NaN where it has none): a law's
// predictors, for its axes (LawFit::axes).
std::vector<double> log10LawAxes(const RunConfig &config, const std::vector<std::string> &axes);

// The bend: the law through the crossings with curvature in log10 lawX, tested against the power
// law (SearchResults.h, LawBend).
LawBend fitBend(const std::vector<ConfigurationSearch> &configurations, const SearchSpec &spec,
                const std::string &lawX, const std::vector<std::string> &lawAlso);

// The crossing the law predicts where its axes (x, then also) have these log10 values, with a
// prediction interval at the law's level: the law's uncertainty there and the scatter of a
// configuration about the law, added in quadrature (normal). Says which axes extrapolate.
CrossingPrediction predictCrossing(const LawFit &law, const std::vector<double> &log10Axes);
// The same from the bent law (its covariance includes γ's).
CrossingPrediction predictCrossing(const LawBend &bend, const std::vector<double> &log10Axes);

// Which law a prediction comes from: the one the report's test chooses (the bent law where it
// is chosen, LawBend::chosen, for the report's own law; the power law otherwise), or either.
enum class LawChoice { Chosen, Power, Bent };
const char *toString(LawChoice choice); // "chosen", "power", "bent"
bool lawChoiceFromString(const std::string &text, LawChoice *choice);
std::vector<std::string> lawChoiceNames();
// The prediction from `law` (the report's law or one of its groups'), by `choice`. The bent law
// is the report's own law's only (a report with groups has none): asked of a group, or where
// the report has no bend, `Bent` says why in the note.
CrossingPrediction predictCrossing(const SearchReport &report, const LawFit &law,
                                   const std::vector<double> &log10Axes,
                                   LawChoice choice = LawChoice::Chosen);

namespace yaml {
// The report as a session's `search_report:` (docs/SESSION_FORMAT.md): what `summary` prints, in
// the searched axis's units, for readers without the C++ (the Python package's Session.search).
// `finishedRuns` is how many of the session's runs had finished when it was written, so that a
// reader can tell a report older than the runs it has (shards write runs, not the index).
// `provenance`, when given, writes the report's last keys: which finished runs it was made from
// and the search's definition it was made under (SessionYaml.cpp: `finished_runs_digest:`,
// `definition:`), so that a reader can tell a report the session has since changed under.
void writeSearchReport(YAML::Emitter &out, const SearchReport &report, size_t finishedRuns,
                       const std::function<void(YAML::Emitter &)> &provenance = {});
} // namespace yaml

} // namespace headlab
