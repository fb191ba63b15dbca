// SweepCheck.h — what starting a session's definition would train, and what stops it: the runs
// its sweep (or a boundary search's next round) expands to, those still to run, the combinations
// skipped with why, and the errors that block it (a run the configuration checks refuse, or what
// the YAML loader would say of the same session written to a file). The form's Start button and
// the lesson strip's presses read it, so that both refuse for the same reasons.
#pragma once

#include "core/session/SessionData.h"

#include <functional>
#include <string>
#include <vector>

namespace headlab {

struct SweepCheck {
    std::vector<std::string> errors; // blocking: "KEY: message", one per distinct message
    std::vector<SkippedRun> skipped; // combinations that cannot run, with why
    int runs = 0;                    // runnable combinations
    int pending = 0;                 // of which still to run (finished results are kept)
    bool startable() const { return errors.empty() && runs > 0; }
    // Why Start would be refused ("" when it would not): the first error, or that no
    // combination can run with the first skip's reason.
    std::string refusal() const;
};

// Expands `definition` (its runs' results kept where their configuration is unchanged) and
// checks it; `labelOf` names a run in the errors (by default its labels, "d_model=48 heads=3").
using RunLabeller = std::function<std::string(const Session &, const SessionRun &)>;
SweepCheck checkSweep(Session definition, const RunLabeller &labelOf = {});

} // namespace headlab
