// AdditionSpec.cpp — the addition task's row in the task table (EXPERIMENTS.md §1). Torch-free.
#include "core/schema/addition/AdditionSpec.h"

#include "core/metrics/Metrics.h"
#include "core/schema/TaskSpec.h"
#include "core/schema/addition/AdditionData.h"

#include <cmath>

namespace headlab {

const TaskSpec &additionTask()
{
    static const TaskSpec spec = {
        .id = "addition",
        .title = "Three-digit addition (EXPERIMENTS.md §1)",
        .inputHelp = "an addition and the answer digit to look at, \"123 + 456, digit 0\" (digit 0 "
                     "is the ones)",
        .exampleInput = "123 + 456, digit 0",
        .objectives = {Objective::NextToken, Objective::Answer},
        .options =
            {
                fields::integer("train_pairs", &TaskConfig::trainPairs, 1,
                                RunLimits::kMaxTrainPairs,
                                "operand pairs in the training set (3 samples each)"),
                fields::integer("test_pairs", &TaskConfig::testPairs, 1, RunLimits::kMaxTestPairs,
                                "operand pairs in the test set"),
                fields::integer("test_pair_base", &TaskConfig::testPairBase, 0,
                                RunLimits::kMaxPairBase, "the first pair index of the test set"),
            },
        .vocabSize = [](const TaskConfig &) { return addition::kVocabSize; },
        .sequenceLength = [](const TaskConfig &) { return addition::kSampleLength; },
        // The test set (evaluated in evaluationChunk passes); both sets as int64 tokens.
        .footprint =
            [](const TaskConfig &t) {
                const int64_t train = 3 * t.trainPairs, test = 3 * t.testPairs;
                return TaskSpec::Footprint{test,
                                           (train + test) * addition::kSampleLength * 8 + test * 8};
            },
        .learnedMeaning =
            "the session's learned_rule: by default the test loss left the ln 10 plateau",
        .plateaus =
            [](const TaskConfig &) {
                const double ln10 = std::log(10.0);
                return std::vector<PlateauLine>{
                    {ln10, "ln 10"}, {2 * ln10 / 3, "⅔ ln 10"}, {ln10 / 3, "⅓ ln 10"}};
            },
        .initialLoss = [](const TaskConfig &) { return std::log(double(addition::kVocabSize)); },
        .extraCurves = {metric::kTestDigitPrefix},
        // The per-digit view (EXPERIMENTS.md §4: which digit was learned when): the test loss of
        // each queried digit, A_0 the ones. The refactor to task rows left it out of this row.
        .groupCurvePrefix = metric::kTestDigitPrefix,
        .groupWord = "digit",
        .groups =
            [](const TaskConfig &) {
                return std::vector<std::string>{"A_0 (ones)", "A_1 (tens)", "A_2 (hundreds)"};
            },
        .producesSamples = false,
        .plateauMetrics = true,
    };
    return spec;
}

RunConfig additionPaperConfig(int64_t dModel, int64_t heads, double lr)
{
    RunConfig c;
    c.task.kind = "addition";
    c.model.dModel = dModel;
    c.model.heads = {heads, heads};
    c.lr = lr;

    PhaseConfig warmup;
    warmup.name = "warmup";
    warmup.objective = Objective::NextToken;
    warmup.steps = 500;
    warmup.batchSize = 32;
    warmup.useScannedLr = false;
    warmup.lr = 5e-4;

    PhaseConfig answer;
    answer.name = "answer";
    answer.objective = Objective::Answer;
    answer.steps = 30000; // 10 epochs of 192,000 samples at batch 64
    answer.batchSize = 64;
    answer.useScannedLr = true;

    c.phases = {warmup, answer};
    c.evalEvery = 100;
    return c;
}

} // namespace headlab
