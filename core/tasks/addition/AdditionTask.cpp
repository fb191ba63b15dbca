// AdditionTask.cpp — batches, objectives and per-digit evaluation of the addition task.
#include "core/tasks/addition/AdditionTask.h"

#include "core/metrics/Metrics.h"

#include "core/tasks/addition/AdditionData.h"

#include <cmath>
#include <mutex>

namespace headlab {

using namespace addition;

namespace {

// The sets are the same for every run: build each once per process, on the CPU.
torch::Tensor samplesTensor(int64_t count, int64_t pairBase)
{
    static std::mutex mutex;
    static std::map<std::pair<int64_t, int64_t>, torch::Tensor> cache;
    std::lock_guard<std::mutex> lock(mutex);
    auto &t = cache[{count, pairBase}];
    if (!t.defined()) {
        auto flat = buildSamples(count, pairBase);
        t = torch::from_blob(flat.data(), {count, kSampleLength}, torch::kInt64).clone();
    }
    return t;
}

} // namespace

std::unique_ptr<Task> makeAdditionTask(const RunConfig &config, const std::vector<uint64_t> &, const std::string &device)
{
    return std::make_unique<AdditionTask>(config.task, torch::Device(device));
}

AdditionTask::AdditionTask(const TaskConfig &config, const torch::Device &device)
{
    m_train = samplesTensor(config.trainPairs * kDigitsAsked, 0).to(device);
    m_test = samplesTensor(config.testPairs * kDigitsAsked, config.testPairBase).to(device);
    m_testDigit = torch::arange(m_test.size(0), torch::TensorOptions().dtype(torch::kInt64)).remainder(kDigitsAsked).to(device);
}

int64_t AdditionTask::vocabSize() const { return kVocabSize; }
int64_t AdditionTask::maxPositions() const { return kSampleLength; }
double AdditionTask::learnedThreshold() const { return std::log(10.0); }

torch::Tensor AdditionTask::trainLoss(const Transformer &model, const PhaseConfig &phase, const torch::Tensor &step)
{
    // Rows (step·B + k) mod N, k < B: the training set in its fixed order, every epoch.
    const int64_t B = phase.batchSize;
    const auto rows = (torch::arange(B, step.options()) + step * B).remainder(m_train.size(0));
    return lossOfBatch(model, phase, m_train.index_select(0, rows));
}

torch::Tensor AdditionTask::lossOfBatch(const Transformer &model, const PhaseConfig &phase, const torch::Tensor &batch) const
{
    // batch: (B, 19)
    const auto input = batch.narrow(1, 0, kAnswerPosition); // positions 0..17
    if (phase.objective == Objective::Answer) {
        const auto logits = model.forward(input, /*lastOnly=*/true); // (R, B, 1, V)
        return crossEntropyPerRun(logits, batch.narrow(1, kAnswerPosition, 1));
    }
    const auto logits = model.forward(input); // (R, B, 18, V)
    return crossEntropyPerRun(logits, batch.narrow(1, 1, kSampleLength - 1));
}

TaskEvaluation AdditionTask::evaluate(const Transformer &model)
{
    const int64_t R = model.runs(), M = m_test.size(0);
    const auto logits = model.forward(m_test.narrow(1, 0, kAnswerPosition), true).reshape({R * M, kVocabSize});
    const auto target = m_test.select(1, kAnswerPosition).repeat({R});
    const auto perSample = at::cross_entropy_loss(logits, target, {}, at::Reduction::None).view({R, M});
    TaskEvaluation out;
    out.loss = perSample.mean(1);
    for (int64_t i = 0; i < kDigitsAsked; ++i) {
        const auto mask = (m_testDigit == i).to(torch::kFloat32); // (M)
        out.extra[metric::kTestDigitPrefix + std::to_string(i)] = (perSample * mask).sum(1) / mask.sum();
    }
    return out;
}

} // namespace headlab
