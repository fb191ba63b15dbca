// AdditionTask.h — the three-digit addition task (EXPERIMENTS.md §1) on the training device.
#pragma once

#include "core/schema/TaskSpec.h"
#include "core/tasks/Task.h"

namespace headlab {

class AdditionTask : public Task {
public:
    AdditionTask(const TaskConfig &config, const torch::Device &device);
    int64_t vocabSize() const override;
    int64_t maxPositions() const override;
    torch::Tensor trainLoss(const Transformer &model, const PhaseConfig &phase,
                            const torch::Tensor &step) override;
    TaskEvaluation evaluate(const Transformer &model) override;
    ProbeInput probeInput(const std::string &text, int64_t runs) const override;
    ProbeInput statsInput(int64_t runs) const override;
    std::string exampleProbeText() const override { return taskSpec("addition").exampleInput; }
    double learnedThreshold() const override; // ln 10
    // The training set in its fixed order: batch t is rows (t·B + k) mod N, k < B. For the
    // independent PyTorch golden (tests/python/golden_trajectory.py).
    const torch::Tensor &trainingSet() const { return m_train; }

private:
    torch::Tensor lossOfBatch(const Transformer &model, const PhaseConfig &phase,
                              const torch::Tensor &batch) const;
    torch::Tensor m_train;     // (N, 19) int64 on the device
    torch::Tensor m_test;      // (M, 19)
    torch::Tensor m_testDigit; // (M) int64: which digit each test sample asks for
};

} // namespace headlab
