// SequenceFileTask.cpp — batches, objectives and per-group evaluation of the sequence-file task.
#include "core/tasks/sequence_file/SequenceFileTask.h"
#include "core/config/Hash.h"
#include "core/schema/TaskSpec.h"

#include <cmath>
#include <cstdio>

namespace headlab {

std::unique_ptr<Task> makeSequenceFileTask(const RunConfig &config, const std::vector<uint64_t> &,
                                           const std::string &device)
{
    return std::make_unique<SequenceFileTask>(config.task, torch::Device(device));
}

namespace {

// The examples `order` names, as rows of (count, T) on the CPU.
torch::Tensor rowsOf(const sequencefile::Data &data, const std::vector<int64_t> &order)
{
    const int64_t T = data.sequenceLength();
    auto out = torch::empty({int64_t(order.size()), T}, torch::kInt64);
    auto *p = out.data_ptr<int64_t>();
    for (size_t i = 0; i < order.size(); ++i)
        std::copy_n(data.tokens.begin() + order[i] * T, T, p + int64_t(i) * T);
    return out;
}

} // namespace

SequenceFileTask::SequenceFileTask(const TaskConfig &config, const torch::Device &device)
    : m_data(sequencefile::load(sequencefile::pathOf(config), sequencefile::tokensOf(config),
                                sequencefile::testFractionOf(config)))
{
    m_train = rowsOf(*m_data, m_data->trainOrder).to(device);
    m_test = rowsOf(*m_data, m_data->testOrder).to(device);
    std::vector<int64_t> groups;
    for (int64_t i : m_data->testOrder) groups.push_back(m_data->group[size_t(i)]);
    m_testGroup = torch::tensor(groups, torch::kInt64).to(device);
}

double SequenceFileTask::learnedThreshold() const
{
    return std::log(double(std::max<int64_t>(2, m_data->distinctAnswers)));
}

std::map<std::string, std::string> SequenceFileTask::provenance() const
{
    return {{"file", m_data->path + " (fnv1a64 " + hex16(m_data->contentHash) + ", " +
                         std::to_string(m_data->examples()) + " examples)"}};
}

torch::Tensor SequenceFileTask::trainLoss(const Transformer &model, const PhaseConfig &phase,
                                          const torch::Tensor &step)
{
    // Rows (step·B + k) mod N, k < B: the training set in its seeded order, every epoch.
    const int64_t B = phase.batchSize;
    const auto rows = (torch::arange(B, step.options()) + step * B).remainder(m_train.size(0));
    return lossOfBatch(model, phase, m_train.index_select(0, rows));
}

torch::Tensor SequenceFileTask::lossOfBatch(const Transformer &model, const PhaseConfig &phase,
                                            const torch::Tensor &batch) const
{
    // batch: (B, T), the answer at T - 1.
    const int64_t T = m_data->sequenceLength();
    const auto input = batch.narrow(1, 0, T - 1);
    if (phase.objective == Objective::Answer) {
        const auto logits = model.forward(input, /*lastOnly=*/true); // (R, B, 1, V)
        return trainingCrossEntropy(model, logits, batch.narrow(1, T - 1, 1));
    }
    return trainingCrossEntropy(model, model.forward(input),
                                batch.narrow(1, 1, T - 1)); // (R, B, T-1, V)
}

TaskEvaluation SequenceFileTask::evaluate(const Transformer &model)
{
    const int64_t R = model.runs(), M = m_test.size(0), T = m_data->sequenceLength(),
                  V = vocabSize();
    // In passes of evaluationChunk examples (a 100,000-token vocabulary's logits of a whole test
    // set took 16 GB), (R, M) per example.
    const int64_t chunk = evaluationChunk(M, T, V, model.config().dModel);
    std::vector<torch::Tensor> parts;
    for (int64_t start = 0; start < M; start += chunk) {
        const int64_t n = std::min(chunk, M - start);
        const auto rows = m_test.narrow(0, start, n);
        const auto logits = model.forward(rows.narrow(1, 0, T - 1), true).reshape({R * n, V});
        const auto target = rows.select(1, T - 1).repeat({R});
        parts.push_back(
            at::cross_entropy_loss(logits, target, {}, at::Reduction::None).view({R, n}));
    }
    const auto perSample = parts.size() == 1 ? parts.front() : torch::cat(parts, 1);
    TaskEvaluation out;
    out.loss = perSample.mean(1);
    for (size_t g = 0; g < m_data->groups.size(); ++g) {
        const auto mask = (m_testGroup == int64_t(g)).to(torch::kFloat32); // (M)
        out.extra["test_group_" + std::to_string(g)] =
            (perSample * mask).sum(1) / mask.sum().clamp_min(1);
    }
    return out;
}

ProbeInput SequenceFileTask::probeInput(const std::string &text, int64_t) const
{
    // Whitespace-separated tokens of the file's vocabulary, at most the input length.
    const int64_t T = m_data->sequenceLength() - 1;
    std::vector<int64_t> ids;
    std::vector<std::string> labels;
    size_t at = 0;
    while (at < text.size()) {
        const size_t begin = text.find_first_not_of(" \t", at);
        if (begin == std::string::npos) break;
        const size_t end = std::min(text.find_first_of(" \t", begin), text.size());
        const std::string word = text.substr(begin, end - begin);
        const auto &v = m_data->vocabulary;
        const auto it = std::lower_bound(v.begin(), v.end(), word);
        if (it == v.end() || *it != word)
            throw std::invalid_argument("'" + word + "' is not a token of the file's vocabulary");
        ids.push_back(it - v.begin());
        labels.push_back(word);
        at = end;
    }
    if (ids.empty() || int64_t(ids.size()) > T)
        throw std::invalid_argument("expected 1 to " + std::to_string(T) + " tokens, got " +
                                    std::to_string(ids.size()));
    ProbeInput out;
    out.input = torch::tensor(ids, torch::kInt64).unsqueeze(0).to(m_test.device());
    out.labels = labels;
    out.vocabulary = m_data->vocabulary;
    out.focusRow = int64_t(ids.size()) - 1;
    out.description = std::to_string(ids.size()) + " tokens";
    return out;
}

ProbeInput SequenceFileTask::statsInput(int64_t) const
{
    ProbeInput out;
    const int64_t T = m_data->sequenceLength() - 1, M = std::min<int64_t>(256, m_test.size(0));
    out.input = m_test.narrow(0, 0, M).narrow(1, 0, T);
    for (int64_t k = 0; k < T; ++k)
        out.labels.push_back(m_data->vocabulary[size_t(m_test[0][k].item<int64_t>())]);
    out.focusRow = T - 1;
    out.description = "the test set";
    return out;
}

std::string SequenceFileTask::exampleProbeText() const
{
    std::string text;
    for (const auto &label : statsInput(1).labels) text += (text.empty() ? "" : " ") + label;
    return text;
}

} // namespace headlab
