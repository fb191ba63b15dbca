// LearnedRule.cpp — see LearnedRule.h.
#include "core/metrics/LearnedRule.h"

#include "core/metrics/Metrics.h"

#include <cmath>
#include <iterator>
#include <limits>

namespace headlab {

namespace {

const LearnedRuleRow &rowOf(LearnedRule rule)
{
    for (const auto &row : kLearnedRuleRows)
        if (row.rule == rule) return row;
    return kLearnedRuleRows[0];
}

} // namespace

const char *toString(LearnedRule rule)
{
    return rowOf(rule).name;
}

bool parseLearnedRule(const std::string &text, LearnedRule *out)
{
    for (const auto &row : kLearnedRuleRows) {
        if (text == row.name) {
            *out = row.rule;
            return true;
        }
    }
    return false;
}

std::string learnedRuleNames()
{
    std::string names;
    const size_t n = std::size(kLearnedRuleRows);
    for (size_t i = 0; i < n; ++i)
        names += std::string(i == 0 ? "" : i + 1 == n ? " or " : ", ") + kLearnedRuleRows[i].name;
    return names;
}

const char *describe(LearnedRule rule)
{
    return rowOf(rule).description;
}

std::optional<bool> learned(const RunResult &result, LearnedRule rule)
{
    if (!isFinished(result.status)) return std::nullopt;
    if (const char *metric = rowOf(rule).metric) {
        if (auto it = result.metrics.find(metric); it != result.metrics.end())
            return it->second > 0.5 && result.status == RunStatus::Done;
        // A plateau rule on a task without the ln 10 plateau: the task's own plateau.
        if (auto it = result.metrics.find(metric::kLeftChancePlateau); it != result.metrics.end())
            return it->second > 0.5 && result.status == RunStatus::Done;
    }
    // The paper's rule: the trainer's verdict (final test loss < ln 10) where it is there.
    if (auto paper = result.metrics.find(metric::kLearned); paper != result.metrics.end())
        return paper->second > 0.5;
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
