// LearnedRule.cpp — see LearnedRule.h.
#include "core/metrics/LearnedRule.h"

#include "core/metrics/Metrics.h"

#include <cmath>
#include <limits>

namespace headlab {

const char *toString(LearnedRule rule)
{
    return rule == LearnedRule::LeftLn10Plateau ? "left_ln10_plateau" : "final_below_ln10";
}

bool parseLearnedRule(const std::string &text, LearnedRule *out)
{
    for (LearnedRule rule : kLearnedRules) {
        if (text == toString(rule)) {
            *out = rule;
            return true;
        }
    }
    return false;
}

const char *describe(LearnedRule rule)
{
    return rule == LearnedRule::LeftLn10Plateau
               ? "left the ln 10 plateau (test loss below 5/6 ln 10)"
               : "final test loss below ln 10 (the paper's rule)";
}

std::optional<bool> learned(const RunResult &result, LearnedRule rule)
{
    if (!isFinished(result.status)) return std::nullopt;
    const auto paper =
        result.metrics.find(metric::kLearned); // final test loss < ln 10, set by the trainer
    if (rule == LearnedRule::LeftLn10Plateau) {
        if (auto left = result.metrics.find(metric::kLeftLn10Plateau); left != result.metrics.end())
            return left->second > 0.5 && result.status == RunStatus::Done;
    }
    if (paper != result.metrics.end()) return paper->second > 0.5;
    // A session saved before either metric: the paper's rule from the final test loss.
    double loss = std::numeric_limits<double>::quiet_NaN();
    if (auto it = result.metrics.find(metric::kFinalTestLoss); it != result.metrics.end())
        loss = it->second;
    else if (!result.test.empty())
        loss = result.test.back().value;
    if (!std::isfinite(loss)) return std::nullopt;
    return result.status == RunStatus::Done && loss < std::log(10.0);
}

} // namespace headlab
