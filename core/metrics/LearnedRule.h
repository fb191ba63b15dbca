// LearnedRule.h — the one definition of "a run learned", used by runs.csv, the CLI, the run table
// and every figure.
//
// A session states which rule it follows (`learned_rule:`):
//  - left_ln10_plateau (the default): the run's test loss left the ln 10 plateau, i.e. fell below
//    5/6 · ln 10 (PlateauDetector). A run that only learned that the answer is a digit ends a hair
//    under ln 10 (2.3025) and did not learn the task; docs/FINDINGS.md shows such runs on the GPU.
//  - final_below_ln10: the addition paper's literal rule, final test loss < ln 10.
//  - left_chance_plateau: the same 5/6 rule for every task, below 5/6 of the loss a run sits at
//    while its attention has learned nothing (Task::learnedThreshold): ln 10 for addition (where
//    it is left_ln10_plateau), the zero predictor's 1 for nearest neighbour, the next byte's
//    entropy given the byte before for text, ln K for a sequence file.
// A session saved before the plateau metric existed has no left_ln10_plateau: the plateau rule
// then falls back to the paper's rule, which is all such a session can say. A task without the
// ln 10 plateau is judged by left_ln10_plateau as by left_chance_plateau, its own plateau.
// Torch-free.
#pragma once

#include "core/config/RunResult.h"
#include "core/metrics/Metrics.h"

#include <optional>
#include <string>

namespace headlab {

enum class LearnedRule { LeftLn10Plateau, FinalBelowLn10, LeftChancePlateau };

// A rule's row: its name in a session, one line for a person, and the metric it reads (a finished
// run learned when it is done and that metric is above ½), or nullptr for the paper's rule. A run
// without the rule's metric is judged by left_chance_plateau where it has that metric (a task
// without the ln 10 plateau), else (a session saved before either) by the paper's rule: the
// trainer's `learned` metric (final test loss < ln 10) where it is there, else that loss, for a
// run that is done. `headlab-cli schema` writes the rows, and the Python package judges by them.
struct LearnedRuleRow {
    LearnedRule rule;
    const char *name;
    const char *description;
    const char *metric;
};
// Every rule, in the order documents list them.
constexpr LearnedRuleRow kLearnedRuleRows[] = {
    {LearnedRule::LeftLn10Plateau, "left_ln10_plateau",
     "left the ln 10 plateau (test loss below 5/6 ln 10)", metric::kLeftLn10Plateau},
    {LearnedRule::FinalBelowLn10, "final_below_ln10",
     "final test loss below ln 10 (the paper's rule)", nullptr},
    {LearnedRule::LeftChancePlateau, "left_chance_plateau",
     "left the chance plateau (test loss below 5/6 of where a run without attention sits)",
     metric::kLeftChancePlateau},
};

const char *toString(LearnedRule rule); // "left_ln10_plateau", "final_below_ln10"
bool parseLearnedRule(const std::string &text, LearnedRule *out);
// Every rule's name, for a message: "left_ln10_plateau, final_below_ln10 or left_chance_plateau".
std::string learnedRuleNames();
// One line for a person: "left the ln 10 plateau (test loss < 5/6 ln 10)".
const char *describe(LearnedRule rule);

// Whether the run learned by `rule`; empty when it has no verdict (still queued or running, or a
// task without a learned threshold: no "learned" metric was ever computed for it).
std::optional<bool> learned(const RunResult &result, LearnedRule rule);

} // namespace headlab
