// Task.cpp — the losses every task shares (makeTask is in TaskFactories.cpp).
#include "core/tasks/Task.h"

#include "core/model/Kernels.h"
#include "core/schema/RunConfigFields.h"

namespace headlab {

torch::Tensor crossEntropyPerRun(const torch::Tensor &logits, const torch::Tensor &targets)
{
    const int64_t R = logits.size(0), V = logits.size(-1);
    const auto t = targets.dim() == logits.dim() - 1
                       ? targets
                       : targets.unsqueeze(0).expand({R, targets.size(0), targets.size(1)});
    const auto losses =
        at::cross_entropy_loss(logits.reshape({-1, V}), t.reshape({-1}), {}, at::Reduction::None);
    return losses.view({R, -1}).mean(1);
}

torch::Tensor trainingCrossEntropy(const Transformer &model, const torch::Tensor &logits,
                                   const torch::Tensor &targets)
{
    const auto loss = crossEntropyPerRun(logits, targets);
    const double z = model.stabilizers().zLoss;
    if (!(z > 0)) return loss;
    const int64_t R = logits.size(0);
    return loss + z * torch::logsumexp(logits, -1).pow(2).view({R, -1}).mean(1);
}

AttentionPlan attentionPlanOf(const std::vector<RunConfig> &runs, const torch::Device &device)
{
    if (runs.empty()) return {};
    std::vector<std::vector<int64_t>> runHeads;
    for (const auto &c : runs) runHeads.push_back(c.model.heads);
    return runsAttentionPlan(runs.front(), runHeads, attentionDevice(device));
}

} // namespace headlab
