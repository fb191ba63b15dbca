// EpochMetrics.cpp — epoch means from the logged training windows, and best_epoch_mean.
#include "core/metrics/EpochMetrics.h"

#include "core/metrics/Metrics.h"

#include <algorithm>

namespace headlab {

Curve epochMeans(const Curve &train, int64_t stepsPerEpoch)
{
    Curve out;
    if (train.empty() || stepsPerEpoch <= 0) return out;
    const int64_t epochs = train.back().step / stepsPerEpoch; // complete epochs only
    std::vector<double> sum(static_cast<size_t>(std::max<int64_t>(0, epochs)), 0.0);
    std::vector<int64_t> covered(sum.size(), 0);
    int64_t previous = 0;
    for (const CurvePoint &p : train) {
        // This point is the mean over steps (previous, p.step]; give each epoch its share.
        for (int64_t from = previous; from < p.step;) {
            const int64_t epoch = from / stepsPerEpoch; // 0-based: steps (epoch·E, (epoch+1)·E]
            const int64_t to = std::min(p.step, (epoch + 1) * stepsPerEpoch);
            if (epoch < epochs) {
                sum[static_cast<size_t>(epoch)] += p.value * static_cast<double>(to - from);
                covered[static_cast<size_t>(epoch)] += to - from;
            }
            from = to;
        }
        previous = std::max(previous, p.step);
    }
    for (int64_t e = 0; e < epochs; ++e) {
        const auto i = static_cast<size_t>(e);
        if (covered[i] == stepsPerEpoch)
            out.push_back({(e + 1) * stepsPerEpoch, sum[i] / static_cast<double>(stepsPerEpoch)});
    }
    return out;
}

void addEpochMetrics(RunResult &result)
{
    Curve means = epochMeans(result.train);
    if (means.empty()) return;
    double best = means.front().value;
    for (const auto &p : means) best = std::min(best, p.value);
    result.metrics[metric::kBestEpochMean] = best;
    result.extra[metric::kEpochMean] = std::move(means);
}

} // namespace headlab
