// EpochMetrics.h — epoch means of the training loss and the nearest-neighbour paper's metric.
//
// Amsel et al. (EXPERIMENTS.md §2) report the lowest epoch-mean training loss, an epoch being 100
// steps of fresh data. The trainer logs the mean loss of every logEvery steps; the epoch means are
// rebuilt from those windows, weighting each by the steps it covers (exact when logEvery divides
// 100; a window that straddles an epoch boundary is split in proportion to its steps). Torch-free.
#pragma once

#include "core/config/RunConfig.h"
#include "core/config/RunResult.h"

#include <cstdint>

namespace headlab {

inline constexpr int64_t kStepsPerEpoch = 100;

// train: points (step s, mean loss over the steps since the previous point, or since 0 for the
// first). Returns one point per complete epoch k ≥ 1: (k · stepsPerEpoch, mean over its steps).
Curve epochMeans(const Curve &train, int64_t stepsPerEpoch = kStepsPerEpoch);

// Adds the "epoch_mean" extra curve and the metric "best_epoch_mean" (its minimum) when at least
// one epoch is complete. The trainer calls it for tasks whose spec lists the epoch_mean curve.
void addEpochMetrics(RunResult &result);

} // namespace headlab
