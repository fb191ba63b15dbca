// NearestNeighbourSpec.cpp — the nearest-neighbour task's row in the task table (EXPERIMENTS.md
// §2). Torch-free.
#include "core/schema/TaskSpec.h"

#include "core/metrics/Metrics.h"

namespace headlab {

namespace {

std::string checkNearestNeighbour(const RunConfig &c)
{
    if (c.task.pointDim != c.model.dModel)
        return "model.d_model: the nearest-neighbour task feeds points as tokens, so d_model must "
               "equal "
               "task.point_dim (" +
               std::to_string(c.task.pointDim) + "), got " + std::to_string(c.model.dModel);
    if (c.task.numPoints < 2) return "task.num_points: at least 2 points are needed";
    return {};
}

// The chance plateau: predicting 0 scores 1, where a run whose output collapsed sits.
double zeroPredictorLoss(const TaskConfig &)
{
    return 1.0;
}

} // namespace

const TaskSpec &nearestNeighbourTask()
{
    static const TaskSpec spec = {
        .id = "nearest_neighbour",
        .title = "Nearest-neighbour retrieval (EXPERIMENTS.md §2)",
        .inputHelp = "a seed for the random point set, \"0\"",
        .exampleInput = "0",
        .objectives = {Objective::Regression},
        .options =
            {
                fields::integer("point_dim", &TaskConfig::pointDim, 1, RunLimits::kMaxDModel,
                                "the points' dimension d (= d_model)"),
                fields::integer("num_points", &TaskConfig::numPoints, 2, RunLimits::kMaxPoints,
                                "points per sample N"),
            },
        .vocabSize = [](const TaskConfig &) { return int64_t(0); },
        .sequenceLength = [](const TaskConfig &t) { return t.numPoints; },
        .lossUnit = "MSE × d",
        .learnedMeaning = "the session's learned_rule: by default the test loss left the zero "
                          "predictor's plateau of 1 (fell below 5/6)",
        .chancePlateau = zeroPredictorLoss,
        .plateaus =
            [](const TaskConfig &t) {
                return std::vector<PlateauLine>{{zeroPredictorLoss(t), "predicting 0"}};
            },
        .initialLoss = nullptr,
        .extraCurves = {metric::kTestAccuracy, metric::kEpochMean},
        .producesSamples = false,
        .check = checkNearestNeighbour,
    };
    return spec;
}

} // namespace headlab
