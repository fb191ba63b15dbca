// TrainingLoop.cpp — the phase loop: steps, schedules, reads of the losses, divergence, stop and pause, progress.
//
// R runs train as one batched model. Per-run losses stay on the device between log points; every
// logEvery steps they are copied back, so the host synchronises once per log point, not per step.
#include "core/train/TrainingLoop.h"

#include <ATen/record_function.h>

#include <cmath>
#include <mutex>
#if defined(__x86_64__)
#include <pmmintrin.h> // _MM_DENORMALS_ZERO_ON
#include <xmmintrin.h> // _mm_getcsr, _MM_FLUSH_ZERO_ON
#endif

namespace headlab::detail {

// HEADLAB_HEAD_STATS=0 skips the per-head statistics (for bench/: what they cost).
bool headStatsWanted()
{
    return switchOn(Switch::HeadStats, true);
}

bool cudaGraphsWanted()
{
    return switchOn(Switch::CudaGraphs, true);
}

void TrainingLoop::keepUpdate(bool stepTaken)
{
    torch::NoGradGuard noGrad;
    for (size_t l = 0; l < m_before.size(); ++l) {
        const auto weights = m_model->attentionWeights(l);
        for (auto &[of, before] : m_before[l])
            if (stepTaken)
                torch::sub_out(m_updates[l].at(of), weights.at(of), before);
            else
                before.copy_(weights.at(of));
    }
}

FlushDenormals::FlushDenormals(bool on)
{
#if defined(__x86_64__)
    if (!on) return;
    m_mode = _mm_getcsr();
    _mm_setcsr(m_mode | _MM_FLUSH_ZERO_ON | _MM_DENORMALS_ZERO_ON);
    m_active = true;
#else
    (void)on;
#endif
}

FlushDenormals::~FlushDenormals()
{
#if defined(__x86_64__)
    if (m_active) _mm_setcsr(m_mode);
#endif
}

std::vector<RunResult> TrainingLoop::run()
{
    const RunConfig &c0 = m_configs.front();
    const std::string deviceName = resolveDevice(c0.device);
    torch::Device device(deviceName);
    for (auto &m : m_members) {
        m.result.device = deviceName;
        m.result.status = RunStatus::Running;
    }
    if (m_control.threads > 0) torch::set_num_threads(m_control.threads);
    // On the CPU, denormals flushed to zero on this thread while the run trains (and on the
    // intra-op threads LibTorch starts from it, which take its modes): on a plateau the gradients,
    // Adam's moments and some activations decay below 1.2e-38, where each operation takes the
    // processor's slow path (the classroom's one-head run at 7e-3, 4,500 steps on ln 10: 145 s in
    // full against 33 s flushed; docs/PERFORMANCE.md).
    const FlushDenormals flush(device.is_cpu() && switchOn(Switch::FlushDenormals, true));
    m_flushDenormals = device.is_cpu() ? (flush.active() ? "on" : "off") : "n/a (gpu)";
#ifdef HEADLAB_HAVE_CUDA_GRAPHS
    // A stream of our own: CUDA graphs cannot be captured on the legacy default stream.
    std::optional<c10::cuda::CUDAStreamGuard> streamGuard;
    if (device.is_cuda()) streamGuard.emplace(c10::cuda::getStreamFromPool(false, device.index()));
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
    const AttentionPlan plan = attentionPlanOf(m_configs, device);
    m_model = std::make_unique<Transformer>(c0.model, m_task->vocabSize(), m_task->maxPositions(),
                                            R, device, runHeads, c0.stabilizers, &plan);
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
    // The weights the Alignment rows name: a copy before the step, and the step's change.
    for (size_t l = 0; l < m_model->layers() && m_headStats; ++l) {
        const auto weights = m_model->attentionWeights(l);
        std::map<std::string, torch::Tensor> before, updates;
        for (const auto &row : headStatTable())
            if (row.source == HeadStatSource::Alignment && !before.count(row.of)) {
                before[row.of] = torch::zeros_like(weights.at(row.of));
                updates[row.of] = torch::zeros_like(weights.at(row.of));
            }
        if (before.empty()) break;
        m_before.push_back(std::move(before));
        m_updates.push_back(std::move(updates));
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
        if (!m.finishedEarly) m.result.wallSeconds = wall;
        if (m.result.status == RunStatus::Done && !m.finishedEarly) {
            checkpoint(i, "final");
            slimOlderCheckpoints({i}); // a finished run resumes from nothing
        }
        if (m.result.status == RunStatus::Done) // after the clock: sampling is not training time
            m.result.samples =
                m_task->finalSamples(*m_model, static_cast<int64_t>(i), m_configs[i]);
        if (!m_note.empty())
            m.result.message = m.result.message.empty() ? m_note : m.result.message + "; " + m_note;
        m.result.provenance = provenance(device);
        finalizeMetrics(m.result);
        report(i, true);
        out.push_back(std::move(m.result));
    }
    return out;
}

bool TrainingLoop::anyAlive() const
{
    for (const auto &m : m_members)
        if (m.alive) return true;
    return false;
}

void TrainingLoop::updateLearningRates(Adam &adam, const PhaseConfig &phase)
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

void TrainingLoop::runPhase(size_t ph)
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
    m_fusedAdam = adam.fused()     ? "on (one CUDA kernel)"
                  : adam.cpuPass() ? "on (one CPU pass)"
                                   : "off (ATen passes)";
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
        multipliers[k] = scheduleMultiplier(phase.schedule, static_cast<int64_t>(k), phase.steps);
    const auto schedule = torch::tensor(multipliers, torch::kFloat64).to(device);
    const int64_t logEvery = m_configs.front().logEvery;
    const int64_t evalEvery = m_configs.front().evalEvery;

    // One training step, entirely on the device: no host value depends on it. The per-head
    // gradient norms are kept from the step before each evaluation (from every step when the
    // step is a CUDA graph, which cannot branch).
    bool gradNormsEveryStep = false;
    // Whether an evaluation follows the step about to be taken.
    const auto evaluationFollows = [&] {
        return (m_step + 1) % evalEvery == 0 || m_step + 1 == m_total;
    };
    // The step's parts are named for the profiler (headlab-bench profile on the CPU): the batch and
    // the forward pass, the backward pass, the optimizer, the bookkeeping. A scope costs nothing
    // while no profiler listens.
    auto trainStep = [&] {
        torch::Tensor loss;
        {
            RECORD_USER_SCOPE("headlab::forward");
            loss = m_task->trainLoss(*m_model, phase, phaseStep); // (R)
        }
        {
            RECORD_USER_SCOPE("headlab::backward");
            torch::where(m_alive > 0, loss, torch::zeros_like(loss)).sum().backward();
        }
        if (m_headStats && (gradNormsEveryStep || evaluationFollows())) {
            torch::NoGradGuard noGrad;
            for (size_t l = 0; l < m_grads.size(); ++l) {
                bool queryKeyOnly = true;
                for (const auto &[of, kept] : m_grads[l])
                    queryKeyOnly = queryKeyOnly && (of == "wq" || of == "wk");
                const auto norms = m_model->headNorms(l, true, queryKeyOnly);
                for (auto &[of, kept] : m_grads[l]) kept.copy_(norms.at(of));
            }
        }
        {
            RECORD_USER_SCOPE("headlab::optimizer");
            adam.step(schedule.index_select(0, phaseStep.reshape({1})).reshape({}));
            adam.zeroGrad();
        }
        RECORD_USER_SCOPE("headlab::bookkeeping");
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
    Graph graph;
    bool tryGraph = device.is_cuda() && cudaGraphsWanted();
#endif
    for (int64_t t = t0; t < phase.steps; ++t) {
        waitWhilePaused();
        if (pollStops() || m_stopsWhilePaused) updateLearningRates(adam, phase);
        m_stopsWhilePaused = false;
        if (!anyAlive()) break;
        // The step before an evaluation keeps its change of the attention's weights for the
        // update alignment (outside the step, so that a CUDA graph of it has no copies).
        const bool keepsUpdate = !m_before.empty() && evaluationFollows();
        if (keepsUpdate) keepUpdate(false);
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
        if (keepsUpdate) keepUpdate(true);
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
        if (policy.enabled && policy.every > 0 && m_step % policy.every == 0 && m_step < m_total) {
            std::vector<size_t> wrote;
            for (size_t i = 0; i < m_members.size(); ++i)
                // A run ended early keeps pace, so that every member has a checkpoint of one
                // step to resume from.
                if (m_members[i].alive || m_members[i].result.status == RunStatus::Diverged ||
                    m_members[i].finishedEarly) {
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
namespace {

// One per device, held while a graph is captured on it and while one of its graphs is destroyed.
// at::cuda::CUDAGraph registers itself with its device's default CUDA generator when its capture
// begins and unregisters when it is destroyed, in a set without a lock of its own. Four ensembles
// on one H200 once broke that set: "The graph should be registered to the state" from ~CUDAGraph,
// and the process aborted (2026-11-28, the addition grid at 2,000 steps). Each device's generator
// has its own set, so each device has its own lock. With one lock for every device, held while the
// capturing stream drained, the 12 pieces of a 70-run nn sweep over four H200s began on the cards
// 2, 6, 8 and 12 s into the sweep (2026-11-28, docs/data/issue24/multi4-4xh200-76463d8.jsonl, the
// cards' utilization). That lock is the one their threads held longest at the start; whether it
// was the cause is to be measured. Recursive: a failed capture destroys its graph while it holds
// the lock.
std::recursive_mutex &graphMutex(c10::DeviceIndex device)
{
    static std::vector<std::recursive_mutex> mutexes(
        static_cast<size_t>(std::max<c10::DeviceIndex>(1, c10::cuda::device_count())));
    return mutexes.at(static_cast<size_t>(device));
}

} // namespace

void TrainingLoop::GraphRelease::operator()(at::cuda::CUDAGraph *graph) const
{
    std::lock_guard<std::recursive_mutex> lock(graphMutex(device));
    delete graph;
}

template <typename Step>
TrainingLoop::Graph TrainingLoop::capture(Step &step)
{
    const c10::DeviceIndex device = c10::cuda::current_device();
    Graph graph(nullptr, GraphRelease{device});
    try {
        // The warm-up steps finish before the lock is taken: a lock held while the stream drains
        // would keep the device's other ensembles waiting for this one's work.
        c10::cuda::getCurrentCUDAStream().synchronize();
        std::lock_guard<std::recursive_mutex> lock(graphMutex(device));
        graph.reset(new at::cuda::CUDAGraph());
        // Thread-local: another device's training thread may allocate or synchronise while this
        // one captures; in the default global mode that would break either capture.
        graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
        step();
        graph->capture_end();
        return graph;
    } catch (const std::exception &e) {
        {
            std::lock_guard<std::recursive_mutex> lock(graphMutex(device));
            try {
                if (graph) graph->capture_end();
            } catch (...) {}
            graph.reset();
        }
        (void)cudaGetLastError();
        addNote(std::string("CUDA graph capture failed, trained eagerly: ") + e.what());
        return nullptr;
    }
}
#endif

void TrainingLoop::drainReads(Adam *adam, const PhaseConfig *phase)
{
    bool frozeSome = false;
    std::vector<size_t> learned; // members stop_after_learned ends
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
                    m.result.origin.finishedAt = utcTimestamp();
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
                        for (size_t s = 0; s < stats.size(); ++s) {
                            const double value =
                                a[static_cast<int64_t>(i)][h][static_cast<int64_t>(s)];
                            // A role a task's inputs cannot show (duplicate tokens in nearest
                            // neighbour's vectors), or an update's alignment before the first step
                            // (or of a step that changed nothing), is no point rather than NaN.
                            if ((stats[s].source == HeadStatSource::Role ||
                                 stats[s].source == HeadStatSource::Alignment) &&
                                std::isnan(value))
                                continue;
                            m.result.extra[headCurveName(static_cast<int64_t>(l), h, stats[s].name)]
                                .push_back({read.step, value});
                        }
                }
                if (m.alive && learnedLongEnough(i)) learned.push_back(i);
            }
        }
    }
    m_reads.clear();
    for (size_t i : learned) { // after the reads: finishing writes a checkpoint, which drains them
        finishLearned(i);
        frozeSome = true;
    }
    if (frozeSome && adam && phase) updateLearningRates(*adam, *phase);
}

void TrainingLoop::freeze(size_t i, Adam *adam)
{
    m_members[i].alive = false;
    torch::NoGradGuard noGrad;
    m_alive[static_cast<int64_t>(i)].fill_(0.0);
    for (auto &p : m_model->parameters()) p.value[static_cast<int64_t>(i)].zero_();
    if (adam) adam->resetRun(static_cast<int64_t>(i));
}

int64_t TrainingLoop::learnedEnd(size_t i) const
{
    const int64_t after = m_configs[i].stopAfterLearned;
    const double level = metric::kLeftPlateauFraction * m_task->learnedThreshold();
    const auto &test = m_members[i].result.test;
    if (after <= 0 || level <= 0 || test.empty()) return -1;
    size_t first = test.size(); // the first point of the streak below the level that ends the curve
    while (first > 0 && test[first - 1].value < level) --first;
    return first < test.size() ? test[first].step + after : -1;
}

bool TrainingLoop::learnedLongEnough(size_t i) const
{
    const int64_t end = learnedEnd(i);
    return end >= 0 && m_members[i].result.test.back().step >= end;
}

void TrainingLoop::finishLearned(size_t i)
{
    Member &m = m_members[i];
    m.alive = false;
    m.finishedEarly = true;
    m.result.status = RunStatus::Done;
    std::ostringstream message;
    message << "learned: ended at step " << m_step << ", its test loss having stayed below 5/6 of "
            << "the learned level for " << m_configs[i].stopAfterLearned
            << " steps (stop_after_learned)";
    m.result.message = message.str();
    {
        torch::NoGradGuard noGrad;
        m_alive[static_cast<int64_t>(i)].fill_(0.0);
    }
    m.result.wallSeconds = std::chrono::duration<double>(Clock::now() - m_start).count();
    m.result.origin.finishedAt = utcTimestamp(); // before its ensemble's end (SweepRunner)
    checkpoint(i, "final");
    slimOlderCheckpoints({i}); // a finished run resumes from nothing
    report(i, true);
}

bool TrainingLoop::pollStops()
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

bool TrainingLoop::pauseWanted() const
{
    if (m_control.pause && m_control.pause->load()) return true;
    if (!m_control.memberPauseRequested) return false;
    for (size_t i = 0; i < m_members.size(); ++i)
        if (m_members[i].alive && m_control.memberPauseRequested(i)) return true;
    return false;
}

void TrainingLoop::waitWhilePaused()
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

void TrainingLoop::maybeReport()
{
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - m_lastReport).count() < m_control.reportIntervalSeconds)
        return;
    m_lastReport = now;
    for (size_t i = 0; i < m_members.size(); ++i) report(i, false);
}

void TrainingLoop::report(size_t i, bool force)
{
    if (!m_control.onProgress) return;
    Member &m = m_members[i];
    RunProgress p;
    p.status = m.result.status;
    p.step = m.result.stepsDone;
    p.totalSteps = m_total;
    p.startedAt = m_startedAt;
    const double seconds = std::chrono::duration<double>(Clock::now() - m_start).count();
    p.stepsPerSecond = seconds > 0 ? static_cast<double>(m_step) / seconds : 0.0;
    // Where it ends: its last step, or sooner where stop_after_learned will end it (the ETA of a
    // run that left the plateau counts that end, not the protocol's).
    const int64_t learned = learnedEnd(i);
    p.expectedEnd = learned >= 0 ? std::min(m_total, learned) : m_total;
    p.mayEndEarly = m_configs[i].stopAfterLearned > 0 && learned < 0;
    p.etaSeconds =
        p.stepsPerSecond > 0
            ? static_cast<double>(std::max<int64_t>(0, p.expectedEnd - m_step)) / p.stepsPerSecond
            : 0.0;
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
    if (force || !p.newTrain.empty() || !p.newTest.empty() || m.alive) m_control.onProgress(i, p);
}

} // namespace headlab::detail

namespace headlab {

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
        return detail::TrainingLoop(configs, control).run();
    } catch (const c10::Error &e) {
        // LibTorch's what() carries a C++ backtrace; a run's message keeps what a user can act on.
        return failed(e.what_without_backtrace());
    } catch (const std::exception &e) {
        return failed(e.what());
    }
}

} // namespace headlab
