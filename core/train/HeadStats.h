// HeadStats.h — the per-head statistics of a layer, each computed as its row of headStatTable()
// (core/metrics/Metrics.h) says: from the attention probe's captures, the weights or their
// gradients. The trainer logs them at every evaluation; the inspector recomputes them at a
// checkpoint. Internal to core/ (LibTorch).
#pragma once

#include "core/model/Transformer.h"
#include "core/tasks/Task.h"

#include <functional>
#include <string>

namespace headlab {

// (R, heads, S): every row's value for every head of layer `layer`, S = headStatTable().size() in
// the table's order. `probe` holds the captures of a forward pass with captureStats and
// captureRoles (empty: NaN for those rows); `gradient(of)` gives a weight's (R, heads) gradient
// norms (an undefined tensor: NaN).
torch::Tensor headStatsOfLayer(const Transformer &model, const HeadProbe &probe, size_t layer,
                               const std::function<torch::Tensor(const std::string &of)> &gradient);

// The probe of the statistics: a forward pass of `model` on the task's statistics batch with the
// captures headStatsOfLayer reads (the update alignment where `probe.updates` holds the last
// step's changes), the role scores on its role batch (Task::roleInput) where it
// has one. False (the probe empty) for a task without a statistics batch.
bool probeHeadStats(const Transformer &model, const Task &task, int64_t runs, HeadProbe &probe);

} // namespace headlab
