// Trainer.cpp — the training loop: phases, schedule, evaluation, divergence, stop and pause.
//
// R runs train as one batched model. Per-run losses stay on the device between log points; every
// logEvery steps they are copied back, so the host synchronises once per log point, not per step.
#include "core/train/Trainer.h"

#include "core/config/Files.h"
#include "core/config/Switches.h"

#include "core/train/Checkpoint.h"
#include "core/train/HeadStats.h"

#include "core/metrics/Metrics.h"

#include "core/metrics/EpochMetrics.h"
#include "core/metrics/PlateauDetector.h"
#include "core/model/Adam.h"
#include "core/model/Device.h"
#include "core/model/Transformer.h"
#include "core/tasks/RunConfigFields.h"
#include "core/tasks/Task.h"
#include "core/tasks/TaskSpec.h"

#include <torch/torch.h>

#if __has_include(<ATen/cuda/CUDAGraph.h>)
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#define HEADLAB_HAVE_CUDA_GRAPHS 1
#endif

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace headlab {

namespace {
const char *const kStabilizersImplementation =
    "1: qk_norm LayerNorm eps 1e-6 per head; softcap explicit softmax; sigma_reparam one "
    "power-iteration step per training step (15 at init); z_loss mean log^2 Z over the loss "
    "positions; independent_weight_decay before the update, runs with lr > 0";
} // namespace

double divergenceBound(int64_t vocabSize)
{
    const double chance = vocabSize > 1 ? std::log(static_cast<double>(vocabSize)) : 1.0;
    return 1e4 * chance;
}

std::string divergenceMessage(double loss, double bound, int64_t step)
{
    char text[160];
    if (std::isfinite(loss))
        std::snprintf(text, sizeof text,
                      "loss %.3g at step %lld, above %.3g (10^4 x the chance loss)", loss,
                      static_cast<long long>(step), bound);
    else
        std::snprintf(text, sizeof text, "loss became %s at step %lld",
                      std::isnan(loss) ? "NaN" : "Inf", static_cast<long long>(step));
    return text;
}

double scheduleMultiplier(const ScheduleConfig &schedule, int64_t step, int64_t steps)
{
    if (schedule.kind == ScheduleKind::Constant) return 1.0;
    if (schedule.stepEvery > 1) {
        step /= schedule.stepEvery;
        steps = (steps + schedule.stepEvery - 1) / schedule.stepEvery;
    }
    const int64_t warmup =
        static_cast<int64_t>(std::llround(schedule.warmupFraction * static_cast<double>(steps)));
    if (step < warmup)
        return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup));
    const double progress = static_cast<double>(step - warmup) /
                            static_cast<double>(std::max<int64_t>(1, steps - warmup));
    return 0.5 * (1.0 + std::cos(M_PI * progress));
}

double qkLearningRateFactor(const RunConfig &config, size_t layer)
{
    if (!config.qkRule.enabled) return 1.0;
    return std::sqrt(config.qkRule.referenceHeadDim /
                     static_cast<double>(config.model.headDimOfLayer(layer)));
}

namespace {

using Clock = std::chrono::steady_clock;

struct Member {
    RunResult result;
    bool alive = true;
    size_t reportedTrain = 0, reportedTest = 0;
    std::map<std::string, size_t> reportedExtra;
    int plateauEvents = 0; // plateau entries and exits seen so far (plateau checkpoints)
};

// A device value read back later, so the host never waits for the step it just queued.
struct PendingRead {
    bool isEval = false;
    int64_t step = 0;
    torch::Tensor values;       // (R) mean train loss of the window, or test loss
    torch::Tensor firstBad;     // (R) train reads: first non-finite step, -1 if none
    torch::Tensor firstBadLoss; // (R) the loss at that step
    std::map<std::string, torch::Tensor> extra; // eval reads
    std::vector<torch::Tensor> headStats;       // eval reads: per layer (R, heads, stats)
    std::vector<bool> alive;                    // who was training when it was queued
};

// "NVIDIA H100 80GB HBM3 (cuda:0)", or the CPU's model name.
std::string deviceDescription(const torch::Device &device)
{
    if (device.is_cuda()) {
#ifdef HEADLAB_HAVE_CUDA_GRAPHS
        const auto *properties =
            at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index());
        return std::string(properties->name) + " (" + device.str() + ")";
#else
        return device.str();
#endif
    }
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
        if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
            return "cpu: " + line.substr(line.find(':') + 2);
    return "cpu";
}

// HEADLAB_HEAD_STATS=0 skips the per-head statistics (for bench/: what they cost).
bool headStatsWanted()
{
    return switchOn(Switch::HeadStats, true);
}

bool cudaGraphsWanted()
{
    return switchOn(Switch::CudaGraphs, true);
}

class Loop {
public:
    Loop(const std::vector<RunConfig> &configs, const TrainerControl &control)
        : m_configs(configs)
        , m_control(control)
        , m_members(configs.size())
    {}

    std::vector<RunResult> run()
    {
        const RunConfig &c0 = m_configs.front();
        const std::string deviceName = resolveDevice(c0.device);
        torch::Device device(deviceName);
        for (auto &m : m_members) {
            m.result.device = deviceName;
            m.result.status = RunStatus::Running;
        }
        if (m_control.threads > 0) torch::set_num_threads(m_control.threads);
#ifdef HEADLAB_HAVE_CUDA_GRAPHS
        // A stream of our own: CUDA graphs cannot be captured on the legacy default stream.
        std::optional<c10::cuda::CUDAStreamGuard> streamGuard;
        if (device.is_cuda())
            streamGuard.emplace(c10::cuda::getStreamFromPool(false, device.index()));
#endif
        if (device.is_cuda()) {
            at::globalContext().setAllowTF32CuBLAS(c0.tf32);
            at::globalContext().setAllowTF32CuDNN(c0.tf32);
        }
        const int64_t R = static_cast<int64_t>(m_configs.size());
        std::vector<uint64_t> dataSeeds;
        for (const auto &c : m_configs) dataSeeds.push_back(c.dataSeed);
        m_task = makeTask(c0, dataSeeds, device);
        std::vector<std::vector<int64_t>> runHeads;
        for (const auto &c : m_configs) runHeads.push_back(c.model.heads);
        m_model =
            std::make_unique<Transformer>(c0.model, m_task->vocabSize(), m_task->maxPositions(), R,
                                          device, runHeads, c0.stabilizers);
        for (int64_t r = 0; r < R; ++r)
            m_model->initializeRun(r, m_configs[static_cast<size_t>(r)].initSeed);
        loadResumeCheckpoints();
        const auto floatOpts = torch::TensorOptions().dtype(torch::kFloat32).device(device);
        const auto longOpts = torch::TensorOptions().dtype(torch::kInt64).device(device);
        m_alive = torch::ones({R}, floatOpts);
        m_firstBad = torch::full({R}, -1, longOpts);
        m_firstBadLoss = torch::zeros({R}, floatOpts);
        m_lossBound = divergenceBound(m_task->vocabSize());
        m_globalStep = torch::zeros({}, longOpts);
        // The gradient norms the Gradient rows of headStatTable() name, per layer (R, heads).
        for (size_t l = 0; l < m_model->layers(); ++l) {
            m_grads.emplace_back();
            for (const auto &row : headStatTable())
                if (row.source == HeadStatSource::Gradient)
                    m_grads.back()[row.of] = torch::zeros({R, m_model->maxHeads(l)}, floatOpts);
        }
        m_total = c0.totalSteps();
        m_start = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(m_resumedWall));
        m_lastReport = Clock::now();

        size_t firstPhase = 0;
        if (m_resume.empty())
            evaluate(); // step 0
        else
            firstPhase = applyResume();
        for (size_t ph = firstPhase; ph < c0.phases.size() && anyAlive(); ++ph) runPhase(ph);
        // The last evaluation, unless the last step had one (or a resumed run's checkpoint holds it).
        if (anyAlive() && !evaluatedAt(m_step)) evaluate();
        drainReads(nullptr);

        const double wall = std::chrono::duration<double>(Clock::now() - m_start).count();
        std::vector<RunResult> out;
        for (size_t i = 0; i < m_members.size(); ++i) {
            Member &m = m_members[i];
            if (m.result.status == RunStatus::Running) m.result.status = RunStatus::Done;
            m.result.wallSeconds = wall;
            if (m.result.status == RunStatus::Done) {
                checkpoint(i, "final");
                slimOlderCheckpoints({i}); // a finished run resumes from nothing
            }
            if (m.result.status ==
                RunStatus::Done) // after the clock: sampling is not training time
                m.result.samples =
                    m_task->finalSamples(*m_model, static_cast<int64_t>(i), m_configs[i]);
            if (!m_note.empty())
                m.result.message =
                    m.result.message.empty() ? m_note : m.result.message + "; " + m_note;
            m.result.provenance = provenance(device);
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

    // Per parameter, per run: the phase's learning rate × the QK factor × (1 while the run trains).
    void updateLearningRates(Adam &adam, const PhaseConfig &phase)
    {
        const auto &params = m_model->parameters();
        std::vector<torch::Tensor> perParam;
        perParam.reserve(params.size());
        for (const auto &p : params) {
            std::vector<double> lr;
            for (size_t i = 0; i < m_configs.size(); ++i) {
                const RunConfig &c = m_configs[i];
                double v = m_members[i].alive ? (phase.useScannedLr ? c.lr : phase.lr) : 0.0;
                if (p.isQueryKey) v *= qkLearningRateFactor(c, static_cast<size_t>(p.layer));
                lr.push_back(v);
            }
            perParam.push_back(torch::tensor(lr, torch::kFloat64));
        }
        adam.setLearningRates(perParam);
    }

    void runPhase(size_t ph)
    {
        const PhaseConfig &phase = m_configs.front().phases[ph];
        const int64_t R = static_cast<int64_t>(m_configs.size());
        // A resumed run enters its checkpoint's phase part way: no new phase start, its moments,
        // its step count and its unfinished training-loss window come from the checkpoint.
        const bool resumed =
            !m_resume.empty() && static_cast<int64_t>(ph) == m_resume.front().position.phase;
        if (!resumed)
            for (auto &m : m_members) m.result.phaseStarts.push_back(m_step);
        Adam adam(*m_model, phase.optimizer, m_configs.front().stabilizers.independentWeightDecay);
        m_fusedAdam = adam.fused() ? "on (one CUDA kernel)" : "off (ATen passes)";
        updateLearningRates(adam, phase);
        const auto device = m_model->flatParameters().device();
        int64_t t0 = 0;
        torch::Tensor phaseStep =
            torch::zeros({}, torch::TensorOptions().dtype(torch::kInt64).device(device));
        torch::Tensor trainSum =
            torch::zeros({R}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
        int64_t inWindow = 0;
        if (resumed) {
            t0 = m_resume.front().position.phaseStep;
            phaseStep.fill_(t0);
            inWindow = m_resume.front().position.windowSteps;
            for (size_t i = 0; i < m_resume.size(); ++i) {
                restoreMoments(m_resume[i], adam, *m_model, static_cast<int64_t>(i));
                trainSum[static_cast<int64_t>(i)].fill_(m_resume[i].position.windowSum);
            }
            m_resume.clear();
        }
        m_phase = {&adam, &phase, ph, &phaseStep, &trainSum, &inWindow};
        // The schedule's multiplier at every step of the phase, on the device: a captured step
        // looks its value up from the step tensor. (steps) float64, from scheduleMultiplier.
        std::vector<double> multipliers(static_cast<size_t>(std::max<int64_t>(1, phase.steps)));
        for (size_t k = 0; k < multipliers.size(); ++k)
            multipliers[k] =
                scheduleMultiplier(phase.schedule, static_cast<int64_t>(k), phase.steps);
        const auto schedule = torch::tensor(multipliers, torch::kFloat64).to(device);
        const int64_t logEvery = m_configs.front().logEvery;
        const int64_t evalEvery = m_configs.front().evalEvery;

        // One training step, entirely on the device: no host value depends on it. The per-head
        // gradient norms are kept from the step before each evaluation (from every step when the
        // step is a CUDA graph, which cannot branch).
        bool gradNormsEveryStep = false;
        auto trainStep = [&] {
            const auto loss = m_task->trainLoss(*m_model, phase, phaseStep); // (R)
            torch::where(m_alive > 0, loss, torch::zeros_like(loss)).sum().backward();
            if (m_headStats &&
                (gradNormsEveryStep || (m_step + 1) % evalEvery == 0 || m_step + 1 == m_total)) {
                torch::NoGradGuard noGrad;
                for (size_t l = 0; l < m_grads.size(); ++l) {
                    bool queryKeyOnly = true;
                    for (const auto &[of, kept] : m_grads[l])
                        queryKeyOnly = queryKeyOnly && (of == "wq" || of == "wk");
                    const auto norms = m_model->headNorms(l, true, queryKeyOnly);
                    for (auto &[of, kept] : m_grads[l]) kept.copy_(norms.at(of));
                }
            }
            adam.step(schedule.index_select(0, phaseStep.reshape({1})).reshape({}));
            adam.zeroGrad();
            torch::NoGradGuard noGrad;
            const auto l = loss.detach();
            trainSum.add_(l);
            m_globalStep.add_(1);
            // Remember the first step whose loss was not finite or left the divergence bound.
            const auto bad = l.isfinite().logical_not().logical_or(l > m_lossBound);
            const auto first = bad.logical_and(m_firstBad < 0);
            m_firstBadLoss.copy_(torch::where(first, l, m_firstBadLoss));
            m_firstBad.copy_(torch::where(first, m_globalStep, m_firstBad));
            phaseStep.add_(1);
        };

#ifdef HEADLAB_HAVE_CUDA_GRAPHS
        constexpr int64_t kEagerSteps = 3; // warm-up before capture: lazy cuBLAS state, allocator
        std::unique_ptr<at::cuda::CUDAGraph> graph;
        bool tryGraph = device.is_cuda() && cudaGraphsWanted();
#endif
        for (int64_t t = t0; t < phase.steps; ++t) {
            waitWhilePaused();
            if (pollStops() || m_stopsWhilePaused) updateLearningRates(adam, phase);
            m_stopsWhilePaused = false;
            if (!anyAlive()) break;
#ifdef HEADLAB_HAVE_CUDA_GRAPHS
            if (tryGraph && t - t0 == kEagerSteps) {
                tryGraph = false;
                gradNormsEveryStep = true;
                graph = capture(trainStep);
                m_graphsUsed = m_graphsUsed || graph != nullptr;
            }
            if (graph)
                graph->replay();
            else
                trainStep();
#else
            trainStep();
#endif
            ++inWindow;
            ++m_step;
            for (auto &m : m_members)
                if (m.alive) m.result.stepsDone = m_step;
            if (m_step % logEvery == 0 || t + 1 == phase.steps) {
                drainReads(&adam, &phase);
                PendingRead read;
                read.step = m_step;
                read.values = trainSum / static_cast<double>(inWindow);
                read.firstBad = m_firstBad.clone();
                read.firstBadLoss = m_firstBadLoss.clone();
                for (const auto &m : m_members) read.alive.push_back(m.alive);
                m_reads.push_back(std::move(read));
                trainSum.zero_();
                inWindow = 0;
            }
            if (m_step % evalEvery == 0) evaluate();
            const auto &policy = m_control.checkpoints;
            if (policy.enabled && policy.every > 0 && m_step % policy.every == 0 &&
                m_step < m_total) {
                std::vector<size_t> wrote;
                for (size_t i = 0; i < m_members.size(); ++i)
                    if (m_members[i].alive || m_members[i].result.status == RunStatus::Diverged) {
                        checkpoint(i, "periodic");
                        wrote.push_back(i);
                    }
                slimOlderCheckpoints(wrote);
            }
            maybeReport();
        }
        drainReads(&adam, &phase);
        if (m_stopped.any) { // the whole ensemble was asked to stop: keep where each run got to
            for (size_t i : m_stopped.members) checkpoint(i, "stop");
            m_stopped = {};
        }
        m_phase = {};
    }

#ifdef HEADLAB_HAVE_CUDA_GRAPHS
    template <typename Step>
    std::unique_ptr<at::cuda::CUDAGraph> capture(Step &step)
    {
        auto graph = std::make_unique<at::cuda::CUDAGraph>();
        try {
            c10::cuda::getCurrentCUDAStream().synchronize();
            // Thread-local: another device's training thread may allocate or synchronise while this
            // one captures; in the default global mode that would break either capture.
            graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
            step();
            graph->capture_end();
            return graph;
        } catch (const std::exception &e) {
            try {
                graph->capture_end();
            } catch (...) {}
            (void)cudaGetLastError();
            addNote(std::string("CUDA graph capture failed, trained eagerly: ") + e.what());
            return nullptr;
        }
    }
#endif

    // Reads back every queued value (they were queued at least one window ago, so the device is
    // done with them or nearly) and acts on divergence.
    void drainReads(Adam *adam, const PhaseConfig *phase = nullptr)
    {
        bool frozeSome = false;
        for (auto &read : m_reads) {
            const auto values = read.values.to(torch::kCPU, torch::kFloat64);
            const double *v = values.data_ptr<double>();
            if (!read.isEval) {
                const auto firstBad = read.firstBad.to(torch::kCPU);
                const int64_t *bad = firstBad.data_ptr<int64_t>();
                const auto firstBadLoss = read.firstBadLoss.to(torch::kCPU, torch::kFloat64);
                const double *badLoss = firstBadLoss.data_ptr<double>();
                for (size_t i = 0; i < m_members.size(); ++i) {
                    Member &m = m_members[i];
                    if (!read.alive[i]) continue;
                    if (m.result.status == RunStatus::Diverged) continue;
                    if (bad[i] < 0 && std::isfinite(v[i])) {
                        m.result.train.push_back({read.step, v[i]});
                    } else if (m.alive || m.result.status == RunStatus::Running) {
                        m.result.status = RunStatus::Diverged;
                        m.result.divergedAtStep = bad[i] >= 0 ? bad[i] : read.step;
                        m.result.stepsDone = m.result.divergedAtStep;
                        m.result.message = divergenceMessage(bad[i] >= 0 ? badLoss[i] : v[i],
                                                             m_lossBound, m.result.divergedAtStep);
                        if (m.alive) {
                            freeze(i, adam);
                            frozeSome = true;
                        }
                    }
                }
            } else {
                std::map<std::string, torch::Tensor> extra;
                for (const auto &[name, t] : read.extra)
                    extra[name] = t.to(torch::kCPU, torch::kFloat64);
                std::vector<torch::Tensor> heads;
                for (const auto &t : read.headStats)
                    heads.push_back(t.to(torch::kCPU, torch::kFloat64).contiguous());
                const auto &stats = headStatTable();
                for (size_t i = 0; i < m_members.size(); ++i) {
                    Member &m = m_members[i];
                    if (!read.alive[i] || m.result.status == RunStatus::Diverged) continue;
                    m.result.test.push_back({read.step, v[i]});
                    for (const auto &[name, t] : extra)
                        m.result.extra[name].push_back(
                            {read.step, t[static_cast<int64_t>(i)].item<double>()});
                    for (size_t l = 0; l < heads.size(); ++l) {
                        const auto a = heads[l].accessor<double, 3>();
                        for (int64_t h = 0; h < m_model->headsOf(l, static_cast<int64_t>(i)); ++h)
                            for (size_t s = 0; s < stats.size(); ++s)
                                m.result
                                    .extra[headCurveName(static_cast<int64_t>(l), h, stats[s].name)]
                                    .push_back(
                                        {read.step,
                                         a[static_cast<int64_t>(i)][h][static_cast<int64_t>(s)]});
                    }
                }
            }
        }
        m_reads.clear();
        if (frozeSome && adam && phase) updateLearningRates(*adam, *phase);
    }

    void freeze(size_t i, Adam *adam)
    {
        m_members[i].alive = false;
        torch::NoGradGuard noGrad;
        m_alive[static_cast<int64_t>(i)].fill_(0.0);
        for (auto &p : m_model->parameters()) p.value[static_cast<int64_t>(i)].zero_();
        if (adam) adam->resetRun(static_cast<int64_t>(i));
    }

    // Returns true when a run stopped (its learning rate must drop to 0). A run stopped alone
    // writes its checkpoint now (its ensemble trains on); when the whole ensemble stops, each
    // writes its checkpoint at the end of the phase loop, after the last reads.
    bool pollStops()
    {
        const bool all = m_control.stop && m_control.stop->load();
        bool any = false;
        for (size_t i = 0; i < m_members.size(); ++i) {
            Member &m = m_members[i];
            if (!m.alive) continue;
            if (all || (m_control.memberStopRequested && m_control.memberStopRequested(i))) {
                if (all) {
                    m_stopped.any = true;
                    m_stopped.members.push_back(i);
                } else {
                    checkpoint(i, "stop");
                }
                m.alive = false;
                m.result.status = RunStatus::Stopped;
                m.result.message = "stopped at step " + std::to_string(m_step);
                torch::NoGradGuard noGrad;
                m_alive[static_cast<int64_t>(i)].fill_(0.0);
                any = true;
            }
        }
        return any;
    }

    // The sweep is paused, or a member that still trains is: the ensemble shares every step.
    bool pauseWanted() const
    {
        if (m_control.pause && m_control.pause->load()) return true;
        if (!m_control.memberPauseRequested) return false;
        for (size_t i = 0; i < m_members.size(); ++i)
            if (m_members[i].alive && m_control.memberPauseRequested(i)) return true;
        return false;
    }

    void waitWhilePaused()
    {
        if (!pauseWanted()) return;
        const auto pausedAt = Clock::now();
        for (auto &m : m_members)
            if (m.alive) m.result.status = RunStatus::Paused;
        for (size_t i = 0; i < m_members.size(); ++i) report(i, true);
        while (pauseWanted() && !(m_control.stop && m_control.stop->load())) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (pollStops()) m_stopsWhilePaused = true;
        }
        for (auto &m : m_members)
            if (m.alive) m.result.status = RunStatus::Running;
        m_start += Clock::now() - pausedAt; // paused time is not training time
    }

    void evaluate()
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

    bool evaluatedAt(int64_t step) const
    {
        return m_lastEvalStep == step;
    }

    // Per layer (R, heads, S): every headStatTable() row's value of every head, on the device.
    std::vector<torch::Tensor> headStatistics()
    {
        if (!m_headStats) return {};
        const ProbeInput in = m_task->statsInput(m_model->runs());
        if (!in.input.defined()) return {};
        HeadProbe probe;
        probe.captureStats = true;
        m_model->forward(in.input, false, probe);
        std::vector<torch::Tensor> out;
        for (size_t l = 0; l < m_model->layers(); ++l)
            out.push_back(headStatsOfLayer(
                *m_model, probe, l, [&](const std::string &of) { return m_grads[l].at(of); }));
        return out;
    }

    // The attention maps a listener asked for, of the member it asked about.
    void liveAttention()
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

    // A checkpoint where the test loss entered or left a plateau (tasks with plateau lines): the
    // evaluation is read back at once, so the checkpoint is of the step the plateau analysis names.
    void checkpointPlateaus()
    {
        const auto &policy = m_control.checkpoints;
        if (!policy.enabled || !policy.plateaus || m_control.checkpointDirs.empty() ||
            !taskSpec(m_configs.front().task).plateauMetrics)
            return;
        drainReads(m_phase.adam, m_phase.phase);
        for (size_t i = 0; i < m_members.size(); ++i) {
            Member &m = m_members[i];
            if (!m.alive) continue;
            int events = 0;
            bool left = false;
            for (const auto &p : PlateauDetector().detect(m.result.test)) {
                events += (p.entered >= 0) + (p.left >= 0);
                left = left || p.left == m_step;
            }
            if (events > m.plateauEvents) checkpoint(i, left ? "plateau_exit" : "plateau_entry");
            m.plateauEvents = events;
        }
    }

    // Writes member i's checkpoint at the current step, lists it in its result and drops the
    // oldest non-plateau ones beyond the policy's `keep`. A checkpoint that cannot be written is
    // noted in the run's message; training goes on (the result file is what must not be lost).
    void checkpoint(size_t i, const char *reason)
    {
        const auto &policy = m_control.checkpoints;
        if (!policy.enabled || i >= m_control.checkpointDirs.size() ||
            m_control.checkpointDirs[i].empty())
            return;
        drainReads(m_phase.adam, m_phase.phase); // the curves up to this step
        Member &m = m_members[i];
        auto &list = m.result.checkpoints;
        if (!list.empty() &&
            list.back().step == m_step) { // one file a step: the stronger reason wins
            if (std::string(reason) == "final" || std::string(reason) == "stop")
                list.back().reason = reason;
            return;
        }
        const std::string dir = m_control.checkpointDirs[i];
        const std::string file = checkpointFileName(m_step);
        TrainingPosition pos;
        pos.step = m_step;
        pos.wallSeconds = std::chrono::duration<double>(Clock::now() - m_start).count();
        if (m_phase.adam) {
            pos.phase = static_cast<int64_t>(m_phase.index);
            pos.phaseStep = m_phase.phaseStep->item<int64_t>();
            pos.windowSteps = *m_phase.inWindow;
            pos.windowSum = (*m_phase.trainSum)[static_cast<int64_t>(i)].item<float>();
            pos.adamSteps = m_phase.adam->stepCount().item<double>();
        } else { // after the last phase
            pos.phase = static_cast<int64_t>(m_configs.front().phases.size());
        }
        RunResult partial = m.result;
        if (partial.status == RunStatus::Running || partial.status == RunStatus::Paused)
            partial.status = RunStatus::Running;
        try {
            writeCheckpoint(dir + "/" + file, *m_model, m_phase.adam, static_cast<int64_t>(i),
                            m_configs[i], partial, pos, reason, m_task->provenance());
        } catch (const std::exception &e) {
            const std::string note = std::string("checkpoint at step ") + std::to_string(m_step) +
                                     " not written: " + e.what();
            if (m.result.message.find("checkpoint at step") == std::string::npos)
                m.result.message = m.result.message.empty() ? note : m.result.message + "; " + note;
            return;
        }
        list.push_back({m_step, file, reason});
        // Keep every plateau checkpoint and the newest `keep` others.
        int others = 0;
        for (auto it = list.rbegin(); it != list.rend(); ++it) {
            if (it->reason.rfind("plateau", 0) == 0) continue;
            if (++others > policy.keep) {
                std::error_code error;
                std::filesystem::remove(dir + "/" + it->file, error);
                it->reason.clear(); // erased below
            }
        }
        list.erase(std::remove_if(list.begin(), list.end(),
                                  [](const CheckpointRecord &c) { return c.reason.empty(); }),
                   list.end());
    }

    // Once every member in `members` has written its checkpoint of this step (one pass, so a kill
    // in the middle leaves them all a common older step to resume from), their older checkpoints
    // keep their weights alone (slimCheckpoint): the newest holds the state to resume from, the
    // plateau ones stay for inspecting. Off with `checkpoints: {resume_state: every}`. A file
    // that cannot be slimmed is left as it is (it costs disk, never a result).
    void slimOlderCheckpoints(const std::vector<size_t> &members)
    {
        const auto &policy = m_control.checkpoints;
        if (!policy.enabled || !policy.resumeStateNewestOnly) return;
        for (size_t i : members) { // every one wrote this step's, or none is slimmed (a full disk)
            if (i >= m_control.checkpointDirs.size() || m_control.checkpointDirs[i].empty()) return;
            const auto &list = m_members[i].result.checkpoints;
            if (list.empty() || list.back().step != m_step) return;
        }
        for (size_t i : members) {
            auto &list = m_members[i].result.checkpoints;
            for (size_t k = 0; k + 1 < list.size(); ++k) {
                const std::string path = m_control.checkpointDirs[i] + "/" + list[k].file;
                if (!m_slimmed.insert(path).second) continue;
                try {
                    slimCheckpoint(path, policy.keptWeightsBf16);
                } catch (const std::exception &) {}
            }
        }
    }

    // Reads the members' resume checkpoints (all or none, of one step). Each is checked against its
    // run before any is used: config, position, task data and every tensor's shape. When one does
    // not pass, the ensemble falls back to the newest older step at which every member has a
    // checkpoint that does, and the unusable file is renamed aside (NAME.unusable, kept, never
    // read again); with none left, every member starts again at step 0. Either way the runs train
    // and the message says what happened: a bad checkpoint is never a run's final result.
    void loadResumeCheckpoints()
    {
        const auto &from = m_control.resumeFrom;
        if (from.empty() ||
            std::all_of(from.begin(), from.end(), [](const std::string &p) { return p.empty(); }))
            return;
        if (from.size() != m_configs.size() ||
            std::any_of(from.begin(), from.end(), [](const std::string &p) { return p.empty(); }))
            throw std::invalid_argument(
                "an ensemble resumes all its runs from checkpoints or none");
        // The steps to try, newest first: the asked one, then older ones every member has.
        std::vector<std::map<int64_t, std::string>> byStep(from.size());
        int64_t asked = -1;
        for (size_t i = 0; i < from.size(); ++i) {
            for (const auto &info : listCheckpoints(
                     std::filesystem::path(from[i]).parent_path().string(), nullptr, false))
                if (!info.weightsOnly) byStep[i][info.step] = info.path;
            try {
                const CheckpointInfo info = inspectCheckpoint(from[i], false);
                if (!info.weightsOnly) byStep[i][info.step] = from[i];
                if (i == 0) asked = info.step;
            } catch (const SessionError &) {}
        }
        if (asked < 0)
            asked = std::numeric_limits<int64_t>::max(); // the asked file is gone: any step will do
        std::vector<int64_t> common = stepsEveryMemberHas(byStep);
        std::erase_if(common, [asked](int64_t step) { return step > asked; });
        std::vector<std::string> problems;
        if (common.empty())
            problems.push_back(from.front() +
                               ": no checkpoint of a step every run of its ensemble has is left");
        for (const int64_t step : common) {
            try {
                for (size_t i = 0; i < from.size(); ++i) {
                    LoadedCheckpoint c = loadCheckpoint(byStep[i].at(step), &m_configs[i]);
                    const auto now = m_task->provenance();
                    if (!c.taskData.empty() && c.taskData != now)
                        throw fileError(c.path, "is not a usable checkpoint: the run's data "
                                                "changed since it was written (" +
                                                    describeChange(c.taskData, now) + ")");
                    checkCheckpointFits(c, *m_model, static_cast<int64_t>(i));
                    m_resume.push_back(std::move(c));
                }
            } catch (const SessionError &e) {
                problems.push_back(e.what());
                for (const auto &m : byStep)
                    if (const auto it = m.find(step); it != m.end() && e.file() == it->second)
                        setAside(it->second);
                m_resume.clear();
                continue;
            }
            for (size_t i = 0; i < m_resume.size(); ++i)
                restoreWeights(m_resume[i], *m_model, static_cast<int64_t>(i));
            m_resumedWall = m_resume.front().position.wallSeconds;
            break;
        }
        if (problems.empty()) return;
        std::string note;
        for (const auto &p : problems) note += (note.empty() ? "" : "; ") + p;
        note += m_resume.empty() ? "; every run of its ensemble trained again from step 0"
                                 : "; resumed from step " +
                                       std::to_string(m_resume.front().position.step) + " instead";
        addNote(note);
    }

    // "task.file: a -> b" for each entry that differs.
    static std::string describeChange(const std::map<std::string, std::string> &was,
                                      const std::map<std::string, std::string> &now)
    {
        std::string text;
        for (const auto &[key, value] : was) {
            const auto it = now.find(key);
            const std::string current = it == now.end() ? "(none)" : it->second;
            if (current != value)
                text += (text.empty() ? "" : "; ") + key + " was " + value + ", is now " + current;
        }
        return text.empty() ? "its task data differ" : text;
    }

    // A checkpoint that cannot be used is kept under another name, so that no listing offers it again.
    static void setAside(const std::string &path)
    {
        std::error_code error;
        std::filesystem::rename(path, path + ".unusable", error);
    }

    void addNote(const std::string &note)
    {
        m_note = m_note.empty() ? note : m_note + "; " + note;
    }

    // The members' results so far, their step and who still trains, from their checkpoints.
    // Returns the phase to go on with.
    size_t applyResume()
    {
        const TrainingPosition pos = m_resume.front().position;
        m_step = pos.step;
        m_globalStep.fill_(pos.step);
        for (size_t i = 0; i < m_resume.size(); ++i) {
            Member &m = m_members[i];
            const std::string deviceName = m.result.device;
            m.result = m_resume[i].partial;
            m.result.device = deviceName;
            m.result.checkpoints.clear();
            // The checkpoints before it, from this run's earlier tries, are listed too (oldest first),
            // so that `keep` prunes them like any other; the one it resumed from stays listed.
            const auto dir = std::filesystem::path(m_resume[i].path).parent_path().string();
            const auto earlier = listCheckpoints(dir, nullptr, false);
            for (auto it = earlier.rbegin(); it != earlier.rend(); ++it)
                if (it->step < pos.step)
                    m.result.checkpoints.push_back(
                        {it->step, std::filesystem::path(it->path).filename().string(),
                         it->reason});
            m.result.checkpoints.push_back(
                {pos.step, std::filesystem::path(m_resume[i].path).filename().string(),
                 m_resume[i].reason});
            for (const auto &p : PlateauDetector().detect(m.result.test))
                m.plateauEvents += (p.entered >= 0) + (p.left >= 0);
            if (m.result.status == RunStatus::Diverged) {
                m.alive = false;
                m_alive[static_cast<int64_t>(i)].fill_(0.0);
                m_firstBad[static_cast<int64_t>(i)].fill_(m.result.divergedAtStep);
            } else {
                m.result.status = RunStatus::Running;
                m.result.message.clear();
            }
            m.reportedTrain = m.reportedTest =
                0; // a listener gets the curves so far with the first report
        }
        for (const auto &m : m_members)
            if (!m.result.test.empty())
                m_lastEvalStep = std::max(m_lastEvalStep, m.result.test.back().step);
        if (static_cast<size_t>(pos.phase) >= m_configs.front().phases.size()) m_resume.clear();
        return static_cast<size_t>(pos.phase);
    }

    void finalizeMetrics(RunResult &r) const
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
            const bool learned =
                r.status == RunStatus::Done && !r.test.empty() && r.test.back().value < threshold;
            r.metrics[metric::kLearned] = learned ? 1.0 : 0.0;
            // A run that only learned the digits' marginal sits just under ln 10 and counts as learned
            // by the paper's rule; the plateau analysis says which step it actually reached.
            if (r.status == RunStatus::Done && taskSpec(m_configs.front().task).plateauMetrics)
                for (const auto &[k, v] : PlateauDetector().metrics(r.test)) r.metrics[k] = v;
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - m_start).count();
        if (seconds > 0 && r.stepsDone > 0)
            r.metrics[metric::kStepsPerSecond] = static_cast<double>(r.stepsDone) / seconds;
        const auto &curves = taskSpec(m_configs.front().task).extraCurves;
        if (std::find(curves.begin(), curves.end(), metric::kEpochMean) != curves.end())
            addEpochMetrics(r); // nearest neighbour: epoch_mean, best_epoch_mean
    }

    // What, besides the config, decided this ensemble's numbers (RunResult::provenance).
    std::map<std::string, std::string> provenance(const torch::Device &device) const
    {
        std::map<std::string, std::string> p;
        p["libtorch"] = TORCH_VERSION;
        p["headlab"] = HEADLAB_VERSION;
        p["device"] = deviceDescription(device);
        p["attention"] = m_model ? m_model->attentionPath() : "";
        p["direct_gradients"] = m_model && m_model->directGradients() ? "on" : "off";
        p["fused_qkv"] = m_model && m_model->fusedQkv() ? "on" : "off";
        // Weight gradients summed over row slices where a product's rows allow (HEADLAB_SPLIT_K).
        p["split_k"] = switchOn(Switch::SplitK, device.is_cuda()) ? "on" : "off";
        p["fused_adam"] = m_fusedAdam;
        p["cuda_graphs"] = m_graphsUsed ? "on" : "off";
        p["tf32"] = device.is_cuda() ? (m_configs.front().tf32 ? "on" : "off") : "n/a (cpu)";
        p["threads"] = std::to_string(torch::get_num_threads());
        // How the stabilizers (the config's `stabilizers:`) are computed: one text for every run,
        // changed only when their implementation changes (docs/STABILIZERS.md).
        p["stabilizers"] = kStabilizersImplementation;
        if (m_task)
            for (const auto &[key, value] : m_task->provenance()) p["task." + key] = value;
        for (const auto &s : kEnvSwitches)
            if (const char *v = std::getenv(s.name)) p[std::string("env.") + s.name] = v;
        return p;
    }

    void maybeReport()
    {
        const auto now = Clock::now();
        if (std::chrono::duration<double>(now - m_lastReport).count() <
            m_control.reportIntervalSeconds)
            return;
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
        p.etaSeconds =
            p.stepsPerSecond > 0 ? static_cast<double>(m_total - m_step) / p.stepsPerSecond : 0.0;
        p.newTrain.assign(m.result.train.begin() + static_cast<long>(m.reportedTrain),
                          m.result.train.end());
        p.newTest.assign(m.result.test.begin() + static_cast<long>(m.reportedTest),
                         m.result.test.end());
        m.reportedTrain = m.result.train.size();
        m.reportedTest = m.result.test.size();
        for (const auto &[name, curve] : m.result.extra) {
            size_t &done = m.reportedExtra[name];
            if (done < curve.size())
                p.newExtra[name].assign(curve.begin() + static_cast<long>(done), curve.end());
            done = curve.size();
        }
        if (force || !p.newTrain.empty() || !p.newTest.empty() || m.alive)
            m_control.onProgress(i, p);
    }

    // The phase being trained, for checkpoints written from evaluate() and pollStops().
    struct PhaseState {
        Adam *adam = nullptr;
        const PhaseConfig *phase = nullptr;
        size_t index = 0;
        torch::Tensor *phaseStep = nullptr;
        torch::Tensor *trainSum = nullptr;
        int64_t *inWindow = nullptr;
    } m_phase;
    struct {
        bool any = false;
        std::vector<size_t> members;
    } m_stopped; // members stopped with the whole ensemble, checkpointed after the phase's last reads
    std::vector<LoadedCheckpoint> m_resume; // until the resumed phase has taken them
    double m_resumedWall = 0.0;
    int64_t m_lastEvalStep = -1;
    // Per layer, by weight (wq, wk): the last kept gradient norms (R, heads).
    std::vector<std::map<std::string, torch::Tensor>> m_grads;
    const bool m_headStats = headStatsWanted();
    std::set<std::string> m_slimmed; // checkpoints slimCheckpoint has made weights-only

    const std::vector<RunConfig> &m_configs;
    const TrainerControl &m_control;
    std::vector<Member> m_members;
    std::unique_ptr<Task> m_task;
    std::unique_ptr<Transformer> m_model;
    torch::Tensor m_alive;    // (R) 1 while a run trains, 0 once it diverged or stopped
    torch::Tensor m_firstBad; // (R) first step with a non-finite or out-of-bound loss, -1 if none
    torch::Tensor m_firstBadLoss; // (R) float32: the loss at m_firstBad
    double m_lossBound = 0;       // divergenceBound of the task
    torch::Tensor m_globalStep;   // 0-dim int64: steps taken, on the device
    std::vector<PendingRead> m_reads;
    bool m_stopsWhilePaused = false; // a member stopped while the ensemble was paused
    std::string m_note;
    bool m_graphsUsed = false;       // a phase's step was captured as a CUDA graph
    std::string m_fusedAdam = "off"; // the optimizer's path, for provenance
    int64_t m_step = 0;
    int64_t m_total = 0;
    Clock::time_point m_start, m_lastReport;
};

} // namespace

std::vector<RunResult> trainMembers(const std::vector<RunConfig> &configs,
                                    const TrainerControl &control)
{
    if (configs.empty()) return {};
    const std::string key = ensembleKey(configs.front());
    for (const auto &c : configs) {
        if (ensembleKey(c) != key)
            throw std::invalid_argument(
                "trainMembers: runs with different shapes cannot share an ensemble");
    }
    auto failed = [&](const std::string &message) {
        std::vector<RunResult> out(configs.size());
        for (auto &r : out) {
            r.status = RunStatus::Failed;
            r.message = message;
            r.device = resolveDevice(configs.front().device);
        }
        return out;
    };
    try {
        return Loop(configs, control).run();
    } catch (const c10::Error &e) {
        // LibTorch's what() carries a C++ backtrace; a run's message keeps what a user can act on.
        return failed(e.what_without_backtrace());
    } catch (const std::exception &e) {
        return failed(e.what());
    }
}

} // namespace headlab
