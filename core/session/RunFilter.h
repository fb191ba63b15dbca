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
// The app's run table filters by it; the figures then follow the runs selected there. Torch-free.
#pragma once

#include "core/session/SessionData.h"

#include <map>
#include <string>
#include <vector>

namespace headlab {

struct RunFilter {
    struct Term {
        std::string key;
        std::string op; // "=", "!=", "<", "<=", ">", ">=", or "" for learned / !learned
        std::string value;
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
    bool accepts(const Session &session, size_t index,
                 const std::map<std::string, std::string> &labels) const;
};

} // namespace headlab
