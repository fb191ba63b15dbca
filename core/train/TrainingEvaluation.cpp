// TrainingEvaluation.cpp — evaluation, per-head statistics, live attention maps and the final metrics.
#include "core/train/TrainingLoop.h"

#include <limits>

namespace headlab::detail {

void TrainingLoop::evaluate()
{
    {
        torch::NoGradGuard noGrad;
        TaskEvaluation e = m_task->evaluate(*m_model);
        PendingRead read;
        read.isEval = true;
        read.step = m_step;
        read.values = e.loss;
        read.extra = std::move(e.extra);
        read.headStats = headStatistics();
        liveAttention();
        for (const auto &m : m_members) read.alive.push_back(m.alive);
        m_reads.push_back(std::move(read));
    }
    m_lastEvalStep = m_step;
    checkpointPlateaus();
}

bool TrainingLoop::evaluatedAt(int64_t step) const
{
    return m_lastEvalStep == step;
}

std::vector<torch::Tensor> TrainingLoop::headStatistics()
{
    if (!m_headStats) return {};
    HeadProbe probe;
    // The last step's change of the weights (none before the first step: the rows are NaN then).
    if (m_step > 0) probe.updates = m_updates;
    if (!probeHeadStats(*m_model, *m_task, m_model->runs(), probe)) return {};
    std::vector<torch::Tensor> out;
    for (size_t l = 0; l < m_model->layers(); ++l)
        out.push_back(headStatsOfLayer(*m_model, probe, l,
                                       [&](const std::string &of) { return m_grads[l].at(of); }));
    return out;
}

void TrainingLoop::liveAttention()
{
    if (!m_control.attentionWanted || !m_control.onAttention) return;
    const auto wanted = m_control.attentionWanted();
    if (wanted.member < 0 || static_cast<size_t>(wanted.member) >= m_members.size()) return;
    AttentionMaps maps;
    try {
        maps = attentionMapsOf(*m_model, m_task->probeInput(wanted.input, m_model->runs()),
                               wanted.member);
    } catch (const std::exception &e) {
        maps.description = e.what();
    }
    maps.step = m_step;
    m_control.onAttention(static_cast<size_t>(wanted.member), maps);
}

void TrainingLoop::finalizeMetrics(RunResult &r) const
{
    if (!r.test.empty()) {
        r.metrics[metric::kFinalTestLoss] = r.test.back().value;
        double best = r.test.front().value;
        for (const auto &p : r.test) best = std::min(best, p.value);
        r.metrics[metric::kMinTestLoss] = best;
    }
    if (!r.train.empty()) r.metrics[metric::kFinalTrainLoss] = r.train.back().value;
    for (const auto &[name, curve] : r.extra)
        if (!curve.empty() && name.rfind(metric::kHeadPrefix, 0) != 0)
            r.metrics[metric::kFinalPrefix + name] = curve.back().value;
    const double threshold = m_task->learnedThreshold();
    if (threshold > 0 && (r.status == RunStatus::Done || r.status == RunStatus::Diverged)) {
        // The final test loss of a run that is done (a diverged one learned nothing).
        const double final = r.status == RunStatus::Done && !r.test.empty()
                                 ? r.test.back().value
                                 : std::numeric_limits<double>::quiet_NaN();
        r.metrics[metric::kLearned] = final < threshold ? 1.0 : 0.0;
        r.metrics[metric::kLeftChancePlateau] =
            final < metric::kLeftPlateauFraction * threshold ? 1.0 : 0.0;
        // A run that only learned the digits' marginal sits just under ln 10 and counts as learned
        // by the paper's rule; the plateau analysis says which step it actually reached.
        if (r.status == RunStatus::Done && taskSpec(m_configs.front().task).plateauMetrics)
            for (const auto &[k, v] : PlateauDetector().metrics(r.test)) r.metrics[k] = v;
    }
    // The run's own time: one that stop_after_learned ended stopped its clock then.
    const double seconds = r.wallSeconds > 0
                               ? r.wallSeconds
                               : std::chrono::duration<double>(Clock::now() - m_start).count();
    if (seconds > 0 && r.stepsDone > 0)
        r.metrics[metric::kStepsPerSecond] = static_cast<double>(r.stepsDone) / seconds;
    const auto &curves = taskSpec(m_configs.front().task).extraCurves;
    if (std::find(curves.begin(), curves.end(), metric::kEpochMean) != curves.end())
        addEpochMetrics(r); // nearest neighbour: epoch_mean, best_epoch_mean
}

} // namespace headlab::detail
