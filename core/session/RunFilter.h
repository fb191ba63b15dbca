// RunFilter.h — which runs a user asks to see: "heads=12 lr>=1e-3 status=done learned".
//
// A filter is terms separated by spaces, all of which a run must meet:
//   AXIS=VALUE, AXIS!=VALUE    a configuration axis (Replicates.h: its labels, a run's unset axes
//                              resolved): whole numbers compared exactly as integers (64-bit
//                              seeds), other numbers as numbers (lr=0.001 is lr=1e-3), the rest
//                              as text ("qk_norm=gain"); == is =
//   KEY<X, <=, >, >=           a numeric axis or a metric of the run (final_test_loss<1.5,
//                              plateau_3_left>10000); runs without the value are left out
//   status=S, status!=S        queued, running, paused, done, diverged, failed, stopped
//   learned, !learned          the session's verdict (runs without one are left out of both)
//   tag=T, tag!=T              runs with (without) the tag T (Annotation, by run_id)
// A KEY may also be a statistic of a run's curve, STAT(CURVE) (RunValues.h: min(test_loss),
// mean_last(train_loss), best(test_accuracy)). Terms over the runs together, applied after every
// term above and in the order typed, each to the runs the terms before it left:
//   best:K, worst:K            the K runs with the best (worst) value of final(test_loss), or of
//   best:K:KEY, worst:K:KEY    KEY: lowest first, highest where higher is better (runs without the
//                              value are left out; ties keep the earlier run)
//   !outliers, !outliers:KEY   without the runs whose value is not a number or ±inf, or lies
//                              beyond Tukey's far fence (3 inter-quartile ranges past the
//                              quartile) on the worse side; runs without a value stay
// The app's run table and loss figure, `headlab-cli export-csv --filter` and the Python package's
// runs(filter=...) select by it; the figures follow the runs selected in the table. Torch-free.
#pragma once

#include "core/session/SessionData.h"

#include <map>
#include <string>
#include <vector>

namespace headlab {

struct RunFilter {
    struct Term {
        std::string key;
        // "=", "!=", "<", "<=", ">", ">=", "" for learned / !learned; "best", "worst" (value: K)
        // and "!outliers" over the runs together
        std::string op;
        std::string value;
        bool overRuns() const { return op == "best" || op == "worst" || op == "!outliers"; }
    };
    std::vector<Term> terms;
    std::string error; // why the text is not a filter ("" when it is); then it accepts every run
    // A filter that stands but asks for a value no run has ("no run has heads = '7' (its values:
    // 1, 2, 3)"); "" otherwise.
    std::string note;
    // Every run's configuration labels (configurationLabels(session)), taken once by parse where
    // the filter has terms, for the note and for accepts; empty otherwise.
    std::vector<std::map<std::string, std::string>> labels;

    // Parses `text` against the session's keys: its configuration axes, status, learned and its
    // runs' metrics. An unknown key or a malformed term sets `error`, naming the term.
    static RunFilter parse(const std::string &text, const Session &session);
    bool empty() const { return terms.empty(); }
    // Whether run `index` meets every term; `labels` are its configuration labels
    // (configurationLabels(session)[index], as the filter's own `labels` hold them).
    // (The terms of one run only: best, worst and !outliers need the runs together: select.)
    bool accepts(const Session &session, size_t index,
                 const std::map<std::string, std::string> &labels) const;
    // Which runs meet the filter, every term (accepts, then the terms over the runs together, in
    // order): one entry per run of the session.
    // `among`, when given (one entry per run), limits it to those runs: the K best of them.
    std::vector<bool> select(const Session &session, const std::vector<bool> &among = {}) const;
    // Whether the filter has terms over the runs together (a run's acceptance then moves with
    // the others' curves: select again as they change).
    bool overRuns() const;
};

// The value best:K, worst:K and !outliers rank by where no KEY is given.
inline constexpr const char *kRunFilterRankKey = "final(test_loss)";

// The filter's grammar, for a tooltip or a help text: one line per kind of term.
const char *runFilterHelp();

} // namespace headlab
