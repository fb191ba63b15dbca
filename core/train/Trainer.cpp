// Trainer.cpp — the rules the training loop applies: the divergence bound and its message, the
// learning-rate schedule, and the QK rule's factor (trainMembers is TrainingLoop.cpp's).
#include "core/train/Trainer.h"

#include <cmath>
#include <stdexcept>

namespace headlab {

double divergenceBound(int64_t vocabSize)
{
    const double chance = vocabSize > 1 ? std::log(static_cast<double>(vocabSize)) : 1.0;
    return 1e4 * chance;
}

std::string divergenceMessage(double loss, double bound, int64_t step)
{
    char text[160];
    if (std::isfinite(loss))
        std::snprintf(text, sizeof text,
                      "loss %.3g at step %lld, above %.3g (10^4 x the chance loss)", loss,
                      static_cast<long long>(step), bound);
    else
        std::snprintf(text, sizeof text, "loss became %s at step %lld",
                      std::isnan(loss) ? "NaN" : "Inf", static_cast<long long>(step));
    return text;
}

double scheduleMultiplier(const ScheduleConfig &schedule, int64_t step, int64_t steps)
{
    if (schedule.kind == ScheduleKind::Constant) return 1.0;
    if (schedule.stepEvery > 1) {
        step /= schedule.stepEvery;
        steps = (steps + schedule.stepEvery - 1) / schedule.stepEvery;
    }
    const int64_t warmup =
        static_cast<int64_t>(std::llround(schedule.warmupFraction * static_cast<double>(steps)));
    if (step < warmup)
        return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup));
    const double progress = static_cast<double>(step - warmup) /
                            static_cast<double>(std::max<int64_t>(1, steps - warmup));
    return 0.5 * (1.0 + std::cos(M_PI * progress));
}

double qkLearningRateFactor(const RunConfig &config, size_t layer)
{
    if (!config.qkRule.enabled) return 1.0;
    return std::sqrt(config.qkRule.referenceHeadDim /
                     static_cast<double>(config.model.headDimOfLayer(layer)));
}

} // namespace headlab
