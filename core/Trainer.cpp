// Trainer.cpp — the training loop: phases, schedule, evaluation, divergence, stop and pause.
//
// R runs train as one batched model. Per-run losses stay on the device between log points; every
// logEvery steps they are copied back, so the host synchronises once per log point, not per step.
#include "core/Trainer.h"

#include "core/Adam.h"
#include "core/SweepRunner.h"
#include "core/Task.h"
#include "core/Transformer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <sstream>
#include <thread>

namespace headlab {

double scheduleMultiplier(const ScheduleConfig &schedule, int64_t step, int64_t steps)
{
    if (schedule.kind == ScheduleKind::Constant) return 1.0;
    const int64_t warmup = static_cast<int64_t>(std::llround(schedule.warmupFraction * static_cast<double>(steps)));
    if (step < warmup) return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup));
    const double progress = static_cast<double>(step - warmup) / static_cast<double>(std::max<int64_t>(1, steps - warmup));
    return 0.5 * (1.0 + std::cos(M_PI * progress));
}

double qkLearningRateFactor(const RunConfig &config, size_t layer)
{
    if (!config.qkRule.enabled) return 1.0;
    return std::sqrt(config.qkRule.referenceHeadDim / static_cast<double>(config.model.headDimOfLayer(layer)));
}

std::string ensembleKey(const RunConfig &c)
{
    std::ostringstream k;
    k.precision(17);
    const auto &m = c.model;
    k << toString(c.task.kind) << '|' << c.task.trainPairs << ',' << c.task.testPairs << ',' << c.task.testPairBase << ','
      << c.task.pointDim << ',' << c.task.numPoints << ',' << c.task.textPath << ',' << c.task.contextLength << ','
      << c.task.validationFraction << ',' << c.task.corpusBytes << '|' << m.dModel << ',' << m.headDim << ',' << m.ffnWidth
      << ',' << toString(m.activation) << ',' << toString(m.norm) << ',' << toString(m.placement) << ',' << m.finalNorm
      << ',' << m.causal << ',' << m.bias << ',' << m.zeroInitOutputs << ',' << toString(m.logitScale) << ','
      << m.widthMultiplier << '|';
    for (auto h : m.heads) k << h << ',';
    k << '|';
    for (const auto &p : c.phases) {
        k << p.name << ',' << toString(p.objective) << ',' << p.steps << ',' << p.batchSize << ',' << p.useScannedLr << ','
          << (p.useScannedLr ? 0.0 : p.lr) << ',' << toString(p.optimizer.kind) << ',' << p.optimizer.beta1 << ','
          << p.optimizer.beta2 << ',' << p.optimizer.eps << ',' << p.optimizer.weightDecay << ','
          << toString(p.schedule.kind) << ',' << p.schedule.warmupFraction << ';';
    }
    k << '|' << c.evalEvery << ',' << c.logEvery << ',' << c.evalBatches << ','
      << SweepRunner::resolveDevice(c.device) << ',' << c.tf32;
    return k.str();
}

namespace {

using Clock = std::chrono::steady_clock;

struct Member {
    RunResult result;
    bool alive = true;
    size_t reportedTrain = 0, reportedTest = 0;
    std::map<std::string, size_t> reportedExtra;
};

class Loop {
public:
    Loop(const std::vector<RunConfig> &configs, const TrainerControl &control)
        : m_configs(configs), m_control(control), m_members(configs.size())
    {}

    std::vector<RunResult> run()
    {
        const RunConfig &c0 = m_configs.front();
        const std::string deviceName = SweepRunner::resolveDevice(c0.device);
        torch::Device device(deviceName);
        for (auto &m : m_members) {
            m.result.device = deviceName;
            m.result.status = RunStatus::Running;
        }
        if (m_control.threads > 0) torch::set_num_threads(m_control.threads);
        if (device.is_cuda()) {
            at::globalContext().setAllowTF32CuBLAS(c0.tf32);
            at::globalContext().setAllowTF32CuDNN(c0.tf32);
        }
        const int64_t R = static_cast<int64_t>(m_configs.size());
        std::vector<uint64_t> dataSeeds;
        for (const auto &c : m_configs) dataSeeds.push_back(c.dataSeed);
        m_task = makeTask(c0, dataSeeds, device);
        m_model = std::make_unique<Transformer>(c0.model, m_task->vocabSize(), m_task->maxPositions(), R, device);
        for (int64_t r = 0; r < R; ++r) m_model->initializeRun(r, m_configs[static_cast<size_t>(r)].initSeed);
        const auto floatOpts = torch::TensorOptions().dtype(torch::kFloat32).device(device);
        m_alive = torch::ones({R}, floatOpts);
        m_firstBad = torch::full({R}, -1, torch::TensorOptions().dtype(torch::kInt64).device(device));
        m_total = c0.totalSteps();
        m_start = Clock::now();
        m_lastReport = m_start;

        evaluate(); // step 0
        for (size_t ph = 0; ph < c0.phases.size() && anyAlive(); ++ph) runPhase(ph, device);
        if (m_step % c0.evalEvery != 0 && anyAlive()) evaluate();

        const double wall = std::chrono::duration<double>(Clock::now() - m_start).count();
        std::vector<RunResult> out;
        for (size_t i = 0; i < m_members.size(); ++i) {
            Member &m = m_members[i];
            if (m.result.status == RunStatus::Running) m.result.status = RunStatus::Done;
            m.result.wallSeconds = wall;
            if (m.result.status == RunStatus::Done) // after the clock: sampling is not training time
                m.result.samples = m_task->finalSamples(*m_model, static_cast<int64_t>(i), m_configs[i]);
            finalizeMetrics(m.result);
            report(i, true);
            out.push_back(std::move(m.result));
        }
        return out;
    }

private:
    bool anyAlive() const
    {
        for (const auto &m : m_members)
            if (m.alive) return true;
        return false;
    }

    void runPhase(size_t ph, const torch::Device &device)
    {
        const PhaseConfig &phase = m_configs.front().phases[ph];
        const int64_t R = static_cast<int64_t>(m_configs.size());
        for (auto &m : m_members) m.result.phaseStarts.push_back(m_step);
        auto &params = m_model->parameters();
        Adam adam(params, phase.optimizer, R);
        std::vector<float> baseLr;
        for (const auto &c : m_configs) baseLr.push_back(static_cast<float>(phase.useScannedLr ? c.lr : phase.lr));
        const auto lrBase = torch::tensor(baseLr).to(device);
        for (size_t i = 0; i < params.size(); ++i) {
            if (!params[i].isQueryKey) continue;
            std::vector<float> factor;
            bool any = false;
            for (const auto &c : m_configs) {
                const double f = qkLearningRateFactor(c, static_cast<size_t>(params[i].layer));
                any = any || f != 1.0;
                factor.push_back(static_cast<float>(f));
            }
            if (any) adam.setLrFactor(i, torch::tensor(factor).to(device));
        }
        torch::Tensor trainSum = torch::zeros({R}, lrBase.options());
        int64_t inWindow = 0;
        const int64_t logEvery = m_configs.front().logEvery;
        const int64_t evalEvery = m_configs.front().evalEvery;

        for (int64_t t = 0; t < phase.steps; ++t) {
            waitWhilePaused();
            pollStops();
            if (!anyAlive()) return;

            const auto loss = m_task->trainLoss(*m_model, phase, t); // (R)
            const auto kept = torch::where(m_alive > 0, loss, torch::zeros_like(loss));
            kept.sum().backward();
            adam.step(lrBase * m_alive * scheduleMultiplier(phase.schedule, t, phase.steps));
            adam.zeroGrad();
            ++inWindow;
            ++m_step;
            {
                torch::NoGradGuard noGrad;
                const auto l = loss.detach();
                trainSum.add_(l);
                // Remember the first step whose loss was not finite, without a host sync.
                m_firstBad.masked_fill_(l.isfinite().logical_not().logical_and(m_firstBad < 0), m_step);
            }
            for (auto &m : m_members)
                if (m.alive) m.result.stepsDone = m_step;
            if (m_step % logEvery == 0 || t + 1 == phase.steps) {
                flushTrain(trainSum, inWindow, adam);
                trainSum.zero_();
                inWindow = 0;
            }
            if (m_step % evalEvery == 0) evaluate();
            maybeReport();
        }
    }

    void flushTrain(const torch::Tensor &sum, int64_t count, Adam &adam)
    {
        const auto host = (sum / static_cast<double>(count)).to(torch::kCPU, torch::kFloat64);
        const auto firstBad = m_firstBad.to(torch::kCPU);
        const double *v = host.data_ptr<double>();
        const int64_t *bad = firstBad.data_ptr<int64_t>();
        for (size_t i = 0; i < m_members.size(); ++i) {
            Member &m = m_members[i];
            if (!m.alive) continue;
            if (bad[i] < 0 && std::isfinite(v[i])) {
                m.result.train.push_back({m_step, v[i]});
            } else {
                m.result.status = RunStatus::Diverged;
                m.result.divergedAtStep = bad[i] >= 0 ? bad[i] : m_step;
                m.result.message = "loss became NaN or Inf at step " + std::to_string(m.result.divergedAtStep);
                freeze(i, adam);
            }
        }
    }

    void freeze(size_t i, Adam &adam)
    {
        m_members[i].alive = false;
        torch::NoGradGuard noGrad;
        m_alive[static_cast<int64_t>(i)].fill_(0.0);
        for (auto &p : m_model->parameters()) p.value[static_cast<int64_t>(i)].zero_();
        adam.resetRun(static_cast<int64_t>(i));
    }

    void pollStops()
    {
        const bool all = m_control.stop && m_control.stop->load();
        for (size_t i = 0; i < m_members.size(); ++i) {
            Member &m = m_members[i];
            if (!m.alive) continue;
            if (all || (m_control.memberStopRequested && m_control.memberStopRequested(i))) {
                m.alive = false;
                m.result.status = RunStatus::Stopped;
                m.result.message = "stopped at step " + std::to_string(m_step);
                torch::NoGradGuard noGrad;
                m_alive[static_cast<int64_t>(i)].fill_(0.0);
            }
        }
    }

    void waitWhilePaused()
    {
        if (!m_control.pause || !m_control.pause->load()) return;
        const auto pausedAt = Clock::now();
        for (auto &m : m_members)
            if (m.alive) m.result.status = RunStatus::Paused;
        for (size_t i = 0; i < m_members.size(); ++i) report(i, true);
        while (m_control.pause->load() && !(m_control.stop && m_control.stop->load()))
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        for (auto &m : m_members)
            if (m.alive) m.result.status = RunStatus::Running;
        m_start += Clock::now() - pausedAt; // paused time is not training time
    }

    void evaluate()
    {
        torch::NoGradGuard noGrad;
        const TaskEvaluation e = m_task->evaluate(*m_model);
        const auto loss = e.loss.to(torch::kCPU, torch::kFloat64);
        std::map<std::string, torch::Tensor> extra;
        for (const auto &[name, t] : e.extra) extra[name] = t.to(torch::kCPU, torch::kFloat64);
        for (size_t i = 0; i < m_members.size(); ++i) {
            Member &m = m_members[i];
            if (!m.alive) continue;
            const int64_t r = static_cast<int64_t>(i);
            m.result.test.push_back({m_step, loss[r].item<double>()});
            for (const auto &[name, t] : extra) m.result.extra[name].push_back({m_step, t[r].item<double>()});
        }
    }

    void finalizeMetrics(RunResult &r) const
    {
        if (!r.test.empty()) {
            r.metrics["final_test_loss"] = r.test.back().value;
            double best = r.test.front().value;
            for (const auto &p : r.test) best = std::min(best, p.value);
            r.metrics["min_test_loss"] = best;
        }
        if (!r.train.empty()) r.metrics["final_train_loss"] = r.train.back().value;
        for (const auto &[name, curve] : r.extra)
            if (!curve.empty()) r.metrics["final_" + name] = curve.back().value;
        const double threshold = m_task->learnedThreshold();
        if (threshold > 0 && (r.status == RunStatus::Done || r.status == RunStatus::Diverged)) {
            const bool learned = r.status == RunStatus::Done && !r.test.empty() && r.test.back().value < threshold;
            r.metrics["learned"] = learned ? 1.0 : 0.0;
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - m_start).count();
        if (seconds > 0 && r.stepsDone > 0) r.metrics["steps_per_second"] = static_cast<double>(r.stepsDone) / seconds;
    }

    void maybeReport()
    {
        const auto now = Clock::now();
        if (std::chrono::duration<double>(now - m_lastReport).count() < m_control.reportIntervalSeconds) return;
        m_lastReport = now;
        for (size_t i = 0; i < m_members.size(); ++i) report(i, false);
    }

    void report(size_t i, bool force)
    {
        if (!m_control.onProgress) return;
        Member &m = m_members[i];
        RunProgress p;
        p.status = m.result.status;
        p.step = m.result.stepsDone;
        p.totalSteps = m_total;
        const double seconds = std::chrono::duration<double>(Clock::now() - m_start).count();
        p.stepsPerSecond = seconds > 0 ? static_cast<double>(m_step) / seconds : 0.0;
        p.etaSeconds = p.stepsPerSecond > 0 ? static_cast<double>(m_total - m_step) / p.stepsPerSecond : 0.0;
        p.newTrain.assign(m.result.train.begin() + static_cast<long>(m.reportedTrain), m.result.train.end());
        p.newTest.assign(m.result.test.begin() + static_cast<long>(m.reportedTest), m.result.test.end());
        m.reportedTrain = m.result.train.size();
        m.reportedTest = m.result.test.size();
        for (const auto &[name, curve] : m.result.extra) {
            size_t &done = m.reportedExtra[name];
            if (done < curve.size()) p.newExtra[name].assign(curve.begin() + static_cast<long>(done), curve.end());
            done = curve.size();
        }
        if (force || !p.newTrain.empty() || !p.newTest.empty() || m.alive) m_control.onProgress(i, p);
    }

    const std::vector<RunConfig> &m_configs;
    const TrainerControl &m_control;
    std::vector<Member> m_members;
    std::unique_ptr<Task> m_task;
    std::unique_ptr<Transformer> m_model;
    torch::Tensor m_alive;    // (R) 1 while a run trains, 0 once it diverged or stopped
    torch::Tensor m_firstBad; // (R) first step with a non-finite loss, -1 if none
    int64_t m_step = 0;
    int64_t m_total = 0;
    Clock::time_point m_start, m_lastReport;
};

} // namespace

std::vector<RunResult> trainMembers(const std::vector<RunConfig> &configs, const TrainerControl &control)
{
    if (configs.empty()) return {};
    const std::string key = ensembleKey(configs.front());
    for (const auto &c : configs) {
        if (ensembleKey(c) != key) throw std::invalid_argument("trainMembers: runs with different shapes cannot share an ensemble");
    }
    try {
        return Loop(configs, control).run();
    } catch (const std::exception &e) {
        std::vector<RunResult> failed(configs.size());
        for (auto &r : failed) {
            r.status = RunStatus::Failed;
            r.message = e.what();
            r.device = SweepRunner::resolveDevice(configs.front().device);
        }
        return failed;
    }
}

} // namespace headlab
