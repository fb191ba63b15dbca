// Metrics.cpp — the rows of the metric registry.
#include "core/metrics/Metrics.h"

namespace headlab {

const std::vector<MetricSpec> &metricTable()
{
    using namespace metric;
    static const std::vector<MetricSpec> table = {
        {kFinalTestLoss, false, false, "final test loss", "nats", "the test loss at the last evaluation"},
        {kMinTestLoss, false, false, "lowest test loss", "nats", "the lowest test loss over all evaluations"},
        {kFinalTrainLoss, false, false, "final train loss", "nats", "the mean training loss of the last log window"},
        {kLearned, false, false, "learned (paper's rule)", "",
         "1 when the final test loss is below the task's threshold (ln 10 for addition)"},
        {kLeftLn10Plateau, false, false, "left the ln 10 plateau", "",
         "1 when the final test loss is below 5/6 ln 10 (PlateauDetector)"},
        {kPlateauPrefix, true, false, "plateau entry or exit", "step",
         "plateau_<name>_entered / _left: the step at which the test loss entered or left a plateau"},
        {kStepsPerSecond, false, false, "speed", "steps/s", "optimizer steps per second of the ensemble"},
        {kBestEpochMean, false, false, "best epoch-mean train loss", "",
         "the lowest mean training loss over an epoch of 100 steps (the nearest-neighbour paper's metric)"},
        {kTestDigitPrefix, true, true, "test loss of digit i", "nats", "addition: the test loss of answers asking for digit i"},
        {kTestAccuracy, false, true, "test accuracy", "",
         "nearest neighbour: the fraction of positions whose prediction is closest to the target"},
        {kEpochMean, false, true, "epoch-mean train loss", "", "the mean training loss of each epoch of 100 steps"},
        {kFinalPrefix, true, false, "final value of a curve", "", "final_<curve>: the last value of an extra curve"},
    };
    return table;
}

const MetricSpec *findMetric(const std::string &name)
{
    for (const auto &row : metricTable())
        if (!row.family && row.name == name) return &row;
    for (const auto &row : metricTable())
        if (row.family && name.rfind(row.name, 0) == 0) return &row;
    return nullptr;
}

} // namespace headlab
