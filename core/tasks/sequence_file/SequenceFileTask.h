// SequenceFileTask.h — the sequence-file task on the training device (SequenceFile.h): batches in
// the file's seeded order, the loss at the answer position (or next-token everywhere, for a
// warm-up phase), and the test loss per group. LibTorch.
#pragma once

#include "core/schema/sequence_file/SequenceFile.h"
#include "core/tasks/Task.h"

#include <memory>

namespace headlab {

class SequenceFileTask : public Task {
public:
    SequenceFileTask(const TaskConfig &config, const torch::Device &device);

    int64_t vocabSize() const override { return int64_t(m_data->vocabulary.size()); }
    int64_t maxPositions() const override { return m_data->sequenceLength(); }
    torch::Tensor trainLoss(const Transformer &model, const PhaseConfig &phase,
                            const torch::Tensor &step) override;
    // loss: the test loss at the answer position (R); extra "test_group_<g>": that of group g's examples.
    TaskEvaluation evaluate(const Transformer &model) override;
    ProbeInput probeInput(const std::string &text, int64_t runs) const override;
    ProbeInput statsInput(int64_t runs) const override;
    std::string exampleProbeText() const override;
    // ln K, K distinct answers: a run that learned only which answers occur sits there.
    double learnedThreshold() const override;
    std::map<std::string, std::string> provenance() const override;

private:
    torch::Tensor lossOfBatch(const Transformer &model, const PhaseConfig &phase,
                              const torch::Tensor &batch) const;
    std::shared_ptr<const sequencefile::Data> m_data;
    torch::Tensor m_train;     // (N, T) int64 on the device, in the seeded order
    torch::Tensor m_test;      // (M, T)
    torch::Tensor m_testGroup; // (M) int64
};

} // namespace headlab
