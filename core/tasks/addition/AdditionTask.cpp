// AdditionTask.cpp — batches, objectives and per-digit evaluation of the addition task.
#include "core/tasks/addition/AdditionTask.h"
#include "core/schema/addition/AdditionInput.h"

#include "core/metrics/Metrics.h"
#include "core/schema/TaskSpec.h"

#include "core/schema/addition/AdditionData.h"

#include <cmath>
#include <mutex>
#include <stdexcept>

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

std::unique_ptr<Task> makeAdditionTask(const RunConfig &config, const std::vector<uint64_t> &,
                                       const std::string &device)
{
    return std::make_unique<AdditionTask>(config.task, torch::Device(device));
}

AdditionTask::AdditionTask(const TaskConfig &config, const torch::Device &device)
{
    m_train = samplesTensor(config.trainPairs * kDigitsAsked, 0).to(device);
    m_test = samplesTensor(config.testPairs * kDigitsAsked, config.testPairBase).to(device);
    m_testDigit = torch::arange(m_test.size(0), torch::TensorOptions().dtype(torch::kInt64))
                      .remainder(kDigitsAsked)
                      .to(device);
}

int64_t AdditionTask::vocabSize() const
{
    return kVocabSize;
}
int64_t AdditionTask::maxPositions() const
{
    return kSampleLength;
}
double AdditionTask::learnedThreshold() const
{
    return std::log(10.0);
}

torch::Tensor AdditionTask::trainLoss(const Transformer &model, const PhaseConfig &phase,
                                      const torch::Tensor &step)
{
    // Rows (step·B + k) mod N, k < B: the training set in its fixed order, every epoch.
    const int64_t B = phase.batchSize;
    const auto rows = (torch::arange(B, step.options()) + step * B).remainder(m_train.size(0));
    return lossOfBatch(model, phase, m_train.index_select(0, rows));
}

torch::Tensor AdditionTask::lossOfBatch(const Transformer &model, const PhaseConfig &phase,
                                        const torch::Tensor &batch) const
{
    // batch: (B, 19)
    const auto input = batch.narrow(1, 0, kAnswerPosition); // positions 0..17
    if (phase.objective == Objective::Answer) {
        const auto logits = model.forward(input, /*lastOnly=*/true); // (R, B, 1, V)
        return trainingCrossEntropy(model, logits, batch.narrow(1, kAnswerPosition, 1));
    }
    const auto logits = model.forward(input); // (R, B, 18, V)
    return trainingCrossEntropy(model, logits, batch.narrow(1, 1, kSampleLength - 1));
}

TaskEvaluation AdditionTask::evaluate(const Transformer &model)
{
    const int64_t R = model.runs(), M = m_test.size(0);
    // In passes of evaluationChunk samples (the whole default test set is one), (R, M) per sample.
    const int64_t chunk = evaluationChunk(M, kSampleLength, kVocabSize, model.config().dModel);
    std::vector<torch::Tensor> parts;
    for (int64_t start = 0; start < M; start += chunk) {
        const int64_t n = std::min(chunk, M - start);
        const auto rows = m_test.narrow(0, start, n);
        const auto logits =
            model.forward(rows.narrow(1, 0, kAnswerPosition), true).reshape({R * n, kVocabSize});
        const auto target = rows.select(1, kAnswerPosition).repeat({R});
        parts.push_back(
            at::cross_entropy_loss(logits, target, {}, at::Reduction::None).view({R, n}));
    }
    const auto perSample = parts.size() == 1 ? parts.front() : torch::cat(parts, 1);
    TaskEvaluation out;
    out.loss = perSample.mean(1);
    for (int64_t i = 0; i < kDigitsAsked; ++i) {
        const auto mask = (m_testDigit == i).to(torch::kFloat32); // (M)
        out.extra[metric::kTestDigitPrefix + std::to_string(i)] =
            (perSample * mask).sum(1) / mask.sum();
    }
    return out;
}

namespace {

std::vector<std::string> labelsOf(const torch::Tensor &tokens) // (T) int64 on the CPU
{
    std::vector<std::string> labels;
    const auto &v = vocabulary();
    for (int64_t k = 0; k < tokens.size(0); ++k)
        labels.push_back(v[static_cast<size_t>(tokens[k].item<int64_t>())]);
    return labels;
}

} // namespace

ProbeInput AdditionTask::probeInput(const std::string &text, int64_t) const
{
    // "123 + 456", "123+456 d2", "123 + 456, digit 1": two operands of at most three digits, and
    // which digit of the sum is asked (0 = ones, the default).
    int64_t a = 0, b = 0, i = 0;
    if (!parseAdditionInput(text, &a, &b, &i)) {
        const std::string shown = text.size() > 60 ? text.substr(0, 57) + "..." : text;
        throw std::invalid_argument("'" + shown +
                                    "': expected two numbers of at most three digits and a digit "
                                    "0-2, e.g. \"123 + 456, digit 0\"");
    }
    const Sample t = sampleOf(a, b, i);
    const auto tokens =
        torch::tensor(std::vector<int64_t>(t.begin(), t.begin() + kAnswerPosition), torch::kInt64);
    ProbeInput out;
    out.input = tokens.unsqueeze(0).to(m_test.device()); // (1, 18), shared by the runs
    out.labels = labelsOf(tokens);
    out.vocabulary = labelsOf(torch::arange(vocabSize(), torch::kInt64));
    out.focusRow = kAnswerPosition - 1; // the last input position predicts the answer
    char description[96];
    std::snprintf(description, sizeof description, "%03lld + %03lld, digit %lld: answer %lld",
                  static_cast<long long>(a), static_cast<long long>(b), static_cast<long long>(i),
                  static_cast<long long>(t[kAnswerPosition] - Digit0));
    out.description = description;
    return out;
}

ProbeInput AdditionTask::statsInput(int64_t) const
{
    // The first 192 test samples (64 pairs, every digit asked), every position: enough for the
    // statistics, a third of the cost of the whole test set at each evaluation.
    ProbeInput out;
    out.input =
        m_test.narrow(0, 0, std::min<int64_t>(192, m_test.size(0))).narrow(1, 0, kAnswerPosition);
    out.labels = labelsOf(m_test[0].narrow(0, 0, kAnswerPosition).to(torch::kCPU));
    out.focusRow = kAnswerPosition - 1;
    out.description = "192 test samples";
    return out;
}

} // namespace headlab
