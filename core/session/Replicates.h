// Replicates.h — seeds as replicates: runs that differ only in a replicate axis (the seed, or any
// axis the session names in `replicate_axes:`) are one configuration measured several times, and
// figures, tables and `headlab-cli summary` show their statistics rather than one run at a time.
//
// The statistics are the ones this science needs: the median and the inter-quartile range, the
// mean with its standard deviation and standard error, the min–max range, and for trainability the
// fraction of replicates that learned (by the session's one rule, LearnedRule.h) with its count.
// Torch-free.
#pragma once

#include "core/session/SessionData.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace headlab {

// Summary statistics of the finite values of a sample. Quantiles interpolate linearly between
// order statistics (numpy's default, "linear"); sd is the sample standard deviation (n − 1), 0 for
// one value; se = sd / sqrt(n).
struct SampleStats {
    int count = 0; // finite values
    double mean = 0, sd = 0, se = 0, median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
};
SampleStats sampleStats(std::vector<double> values);

// The band figures draw around a configuration's median: the inter-quartile range, or the whole
// range of fewer than 4 values (whose quartiles say little).
std::pair<double, double> replicateBand(const SampleStats &s);
// What replicateBand is for `count` replicates, as a figure names it: "interquartile range" from 4
// on, "range" below.
const char *replicateBandName(int count);
// The statistics of several curves' values at each step any of them has, by step.
std::vector<std::pair<int64_t, SampleStats>> curveStats(const std::vector<const Curve *> &curves);

// What a figure or the summary puts at a configuration's point, and its spread.
enum class ReplicateStat { Median, Mean };
enum class ReplicateSpread { Iqr, Sd, Se, MinMax };
const char *toString(ReplicateStat);
const char *toString(ReplicateSpread);
bool parseReplicateStat(const std::string &text, ReplicateStat *out);
bool parseReplicateSpread(const std::string &text, ReplicateSpread *out);
double statValue(const SampleStats &s, ReplicateStat stat);
// [low, high] of the spread around the statistic: q1–q3, mean ± sd, mean ± se, min–max.
std::pair<double, double> spreadRange(const SampleStats &s, ReplicateSpread spread);

// The session's replicate axes: `replicate_axes:` if given, else seed, init_seed and data_seed.
std::vector<std::string> replicateAxes(const Session &session);

// What tells the runs of a session apart, defined once for every figure, `summary`, the exports
// and the Python package. The axes: every swept axis, every key of the sweep's `combinations:`,
// and any other axis a run carries a label for (a rerun's seed), in the sweep's order. A run's
// configuration labels: its value on each of them, its own label where it has one, else the value
// its configuration has (the axis row's `resolved`: a `combinations:` entry that sets qk_norm
// alone still has softcap 0 and sigma_reparam off). Two runs are replicates of one configuration
// exactly when these agree on every axis but the replicate axes; a run matches "softcap = 10"
// only when its value is 10.
std::vector<std::string> configurationAxes(const Session &session);
std::vector<std::map<std::string, std::string>> configurationLabels(const Session &session);
// The same for one set of labels and the config they belong to (a search's configuration), on
// `axes` (configurationAxes(session), taken once by a caller that completes several).
std::map<std::string, std::string> configurationLabels(const std::vector<std::string> &axes,
                                                       std::map<std::string, std::string> labels,
                                                       const RunConfig &config);
// Each run's configuration as one text, "axis=value" over configurationAxes() but the replicate
// axes, space-separated in the axes' order ("d_model=24 heads=12 softcap=0"): equal exactly for
// replicates of one configuration. runs.csv's `configuration` column; the Python package's
// `configuration` column is the same text (tests/python checks it against export-csv).
std::vector<std::string> configurationKeys(const Session &session);
// Whether `labels` (configuration labels) hold every value of `fixed`.
bool matchesFixed(const std::map<std::string, std::string> &labels,
                  const std::map<std::string, std::string> &fixed);

// One configuration: the labels of its non-replicate axes, its replicates, and their numbers.
struct ReplicateGroup {
    std::map<std::string, std::string> labels; // the non-replicate axes (those grouped by)
    std::vector<int> runs;                     // run indices, in session order
    SampleStats finalLoss;                     // final test loss of the finished, finite ones
    int learned = 0, verdicts = 0;             // replicates that learned / that have a verdict
    double learnedFraction() const { return verdicts ? double(learned) / verdicts : 0.0; }
    // Replicates disagree on learned / not learned: the cell sits on the trainability boundary.
    bool split() const { return learned > 0 && learned < verdicts; }
};

// Groups the session's runs by the labels of `byAxes` (empty: every swept axis that is not a
// replicate axis), in the order the sweep lists them.
std::vector<ReplicateGroup> groupReplicates(const Session &session,
                                            const std::vector<std::string> &byAxes = {});

// Learning-rate sensitivity (Wortsman et al. 2023, §2.2) of one configuration, from `runs`: its
// runs at several η and their replicates. For each replicate (the runs that share the replicate
// axes' labels), the mean over its η values of min(ℓ(η), ℓ0) − ℓ*, where ℓ(η) is the final test
// loss (a diverged run's counts as ℓ0), ℓ0 the loss at initialisation (the first test-loss point)
// and ℓ* the best final loss over its η values. 0: every η trains as well as the best; large:
// most η fall back to where training started. Replicates with fewer than two finished η, or with
// runs still to train, are left out (the value fills in live). Its authors show it beside the
// loss-against-η curves, never alone.
struct LrSensitivity {
    SampleStats stats; // over the replicates
    int lrValues = 0;  // η values of the replicates counted (the most any has)
};
LrSensitivity lrSensitivity(const Session &session, const std::vector<int> &runs);
// The session's configurations without lr (the non-replicate axes other than lr), in sweep order.
std::vector<ReplicateGroup> groupByConfigurationWithoutLr(const Session &session);

// The summary table as CSV: the grouping axes, count, the statistic, its spread (low, high),
// mean, sd, se, median, q1, q3, min, max, learned, verdicts, p_learned.
std::string replicateSummaryCsv(const Session &session, const std::vector<ReplicateGroup> &groups,
                                const std::vector<std::string> &byAxes, ReplicateStat stat,
                                ReplicateSpread spread);

} // namespace headlab
