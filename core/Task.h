// Task.h — what a task gives the trainer: batches turned into per-run losses, and evaluation.
//
// A task owns its data (on the training device) and knows its objectives. The trainer only sees
// (R) tensors of per-run losses. Internal to core/: includes LibTorch.
#pragma once

#include "core/RunConfig.h"
#include "core/Transformer.h"

#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headlab {

struct TaskEvaluation {
    torch::Tensor loss;                          // (R): the test/validation loss
    std::map<std::string, torch::Tensor> extra;  // (R) each, e.g. "test_digit_0"
};

class Task {
public:
    virtual ~Task() = default;
    virtual int64_t vocabSize() const = 0;    // 0: continuous input/output
    virtual int64_t maxPositions() const = 0; // 0: no positional embedding
    // Per-run loss (R) of the training batch at `step` (counted from 0 within the phase).
    virtual torch::Tensor trainLoss(const Transformer &model, const PhaseConfig &phase, int64_t step) = 0;
    // Test loss and extra metrics, per run. Called under no_grad.
    virtual TaskEvaluation evaluate(const Transformer &model) = 0;
    // The loss a run that has learned nothing would have; "learned" means below `learnedThreshold`.
    virtual double learnedThreshold() const { return 0.0; }
};

// dataSeeds: one per run of the ensemble.
std::unique_ptr<Task> makeTask(const RunConfig &config, const std::vector<uint64_t> &dataSeeds,
                               const torch::Device &device);

// Cross-entropy per run: logits (R, B, T, V), targets (B, T) shared or (R, B, T) → (R).
torch::Tensor crossEntropyPerRun(const torch::Tensor &logits, const torch::Tensor &targets);

} // namespace headlab
