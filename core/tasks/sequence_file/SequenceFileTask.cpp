// SequenceFileTask.cpp — batches, objectives and per-group evaluation of the sequence-file task.
#include "core/tasks/sequence_file/SequenceFileTask.h"

#include <cmath>
#include <cstdio>

namespace headlab {

std::unique_ptr<Task> makeSequenceFileTask(const RunConfig &config, const std::vector<uint64_t> &, const std::string &device)
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
    char hash[32];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(m_data->contentHash));
    return {{"file", m_data->path + " (fnv1a64 " + hash + ", " + std::to_string(m_data->examples()) + " examples)"}};
}

torch::Tensor SequenceFileTask::trainLoss(const Transformer &model, const PhaseConfig &phase, const torch::Tensor &step)
{
    // Rows (step·B + k) mod N, k < B: the training set in its seeded order, every epoch.
    const int64_t B = phase.batchSize;
    const auto rows = (torch::arange(B, step.options()) + step * B).remainder(m_train.size(0));
    return lossOfBatch(model, phase, m_train.index_select(0, rows));
}

torch::Tensor SequenceFileTask::lossOfBatch(const Transformer &model, const PhaseConfig &phase, const torch::Tensor &batch) const
{
    // batch: (B, T), the answer at T - 1.
    const int64_t T = m_data->sequenceLength();
    const auto input = batch.narrow(1, 0, T - 1);
    if (phase.objective == Objective::Answer) {
        const auto logits = model.forward(input, /*lastOnly=*/true); // (R, B, 1, V)
        return crossEntropyPerRun(logits, batch.narrow(1, T - 1, 1));
    }
    return crossEntropyPerRun(model.forward(input), batch.narrow(1, 1, T - 1)); // (R, B, T-1, V)
}

TaskEvaluation SequenceFileTask::evaluate(const Transformer &model)
{
    const int64_t R = model.runs(), M = m_test.size(0), T = m_data->sequenceLength(), V = vocabSize();
    const auto logits = model.forward(m_test.narrow(1, 0, T - 1), true).reshape({R * M, V});
    const auto target = m_test.select(1, T - 1).repeat({R});
    const auto perSample = at::cross_entropy_loss(logits, target, {}, at::Reduction::None).view({R, M});
    TaskEvaluation out;
    out.loss = perSample.mean(1);
    for (size_t g = 0; g < m_data->groups.size(); ++g) {
        const auto mask = (m_testGroup == int64_t(g)).to(torch::kFloat32); // (M)
        out.extra["test_group_" + std::to_string(g)] = (perSample * mask).sum(1) / mask.sum().clamp_min(1);
    }
    return out;
}

} // namespace headlab
