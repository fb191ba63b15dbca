// SweepRunner.cpp — the training threads: one or more per device, all draining one queue of ensembles.
#include "core/train/SweepRunner.h"

#include "core/attention/AttentionPlan.h"

#include "core/config/Switches.h"
#include "core/model/Device.h"
#include "core/schema/RunConfigFields.h"
#include "core/schema/TaskSpec.h"
#include "core/train/Trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace headlab {

int defaultCpuThreads(unsigned cores)
{
    return static_cast<int>(
        std::clamp(cores > 1 ? cores - 1 : 1u, 1u, unsigned(kMaxDefaultCpuThreads)));
}

unsigned usableCores()
{
    if (const char *omp = std::getenv("OMP_NUM_THREADS")) {
        char *end = nullptr;
        const long n = std::strtol(omp, &end, 10);
        if (end != omp && *end == '\0' && n > 0) return unsigned(std::min(n, 4096L));
    }
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return unsigned(CPU_COUNT(&set));
#endif
    return std::max(1u, std::thread::hardware_concurrency());
}

CpuPlan cpuPlan(unsigned cores, size_t ensembles, int threadsAsked, int concurrentAsked)
{
    CpuPlan plan;
    const size_t slots = std::clamp<size_t>(cores, 1, kMaxDefaultCpuThreads);
    plan.workers = std::max<size_t>(
        1, std::min(ensembles, concurrentAsked > 0 ? static_cast<size_t>(concurrentAsked) : slots));
    const int budget = defaultCpuThreads(cores);
    plan.threads =
        threadsAsked > 0 ? threadsAsked : std::max(1, budget / static_cast<int>(plan.workers));
    return plan;
}

namespace {

// A CPU worker trains below the GUI's and the shell's priority: with every core busy, they stay
// responsive. Linux keeps a nice value per thread.
void lowerThisThreadsPriority()
{
#ifdef __linux__
    const auto tid = static_cast<id_t>(syscall(SYS_gettid));
    errno = 0;
    const int now = getpriority(PRIO_PROCESS, tid);
    if (errno == 0) (void)setpriority(PRIO_PROCESS, tid, std::min(now + 5, 19));
#endif
}

std::string gibibytes(int64_t bytes)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
    return buffer;
}

// Why a run cannot train on `device` for want of memory, or "": checked before training, so that
// an impossible run fails with a sentence rather than an allocator's backtrace.
std::string memoryProblem(const RunConfig &config, const std::string &device)
{
    const int64_t need = estimateRunBytes(config);
    const int64_t have = deviceMemory(device).totalBytes;
    if (have <= 0 || need <= have) return {};
    return "needs about " + gibibytes(need) +
           " (HeadLab's estimate of weights, optimizer state "
           "and activations), more than the " +
           gibibytes(have) + " of " + device + "; lower batch_size, d_model or the context length";
}

} // namespace

namespace {

// The products' FLOPs of one training step of one sample (estimateStepFlops over the batch size).
double sampleStepFlops(const RunConfig &c)
{
    const TaskSpec &spec = taskSpec(c.task);
    const double T = static_cast<double>(spec.sequenceLength(c.task));
    const double V = static_cast<double>(spec.vocabSize(c.task));
    const double m = static_cast<double>(c.model.dModel), F = static_cast<double>(c.model.ffn());
    double perToken = 0;
    for (size_t l = 0; l < c.model.heads.size(); ++l) {
        const double inner = static_cast<double>(c.model.heads[l] * c.model.widthMultiplier *
                                                 c.model.headDimOfLayer(l));
        perToken += 2 * m * 3 * inner + 2 * inner * m + 2 * 2 * T * inner + 2 * 2 * m * F;
    }
    perToken += 2 * 2 * m * V;
    return 3 * T * perToken;
}

} // namespace

double estimateStepFlops(const RunConfig &c)
{
    return c.phases.empty() ? 0.0
                            : sampleStepFlops(c) * static_cast<double>(c.phases.front().batchSize);
}

// The price follows the plan on the GPU. On four cards (603e103) it, with the mix's products, put
// each card's end at 114–127 s per share of the work, where the former single constant (1,200, and
// no sdpa path) gave 98–166 s (bench/multi4_balance.py --bound 64, the bound that run had).
AttentionPlan pricedAttentionPlan(const std::vector<SweepJob> &runs)
{
    if (runs.empty()) return {};
    std::vector<std::vector<int64_t>> runHeads;
    for (const auto &j : runs) runHeads.push_back(j.config.model.heads);
    return runsAttentionPlan(runs.front().config, runHeads, AttentionDevice{true, false, {}});
}

namespace {

// The price of one step of an ensemble whose products and scores come to `work` FLOP-equivalents:
// a smooth maximum of the work and the per-step floor, what a step costs whatever its FLOPs (some
// 200 kernels launched from the host, which overlap the card's work). Fitted on one H200
// (2026-12-04, bench/price_fit.sh and bench/price_fit.py, docs/data/issue72/price-fit-h200-390f083.json)
// to 42 ensembles timed alone, with the score constants (core/attention/AttentionPlan.cpp): the
// floor is 0.99 ms at the fit's 23.8 TFLOP-equivalents/s, and each ensemble's price is within 10 %
// (root mean square of the logarithm) of its measured step, where the price before the floor and
// the refit was within 46 %: it priced five runs of addition at width 24 at 13 % of one run at 384,
// which measured 74 %.
constexpr double kStepFloorWork = 2.36e10;
constexpr double kFloorSharpness = 3.36;

double stepPrice(double work)
{
    return std::pow(std::pow(kStepFloorWork, kFloorSharpness) + std::pow(work, kFloorSharpness),
                    1.0 / kFloorSharpness);
}

} // namespace

EnsembleStep ensembleStep(const std::vector<SweepJob> &ensemble, const AttentionPlan &plan,
                          size_t phase)
{
    EnsembleStep step;
    for (const auto &j : ensemble) {
        const RunConfig &c = j.config;
        if (phase >= c.phases.size()) continue;
        const double batch = static_cast<double>(c.phases[phase].batchSize);
        const double T = static_cast<double>(taskSpec(c.task).sequenceLength(c.task));
        const int64_t w = std::max<int64_t>(1, c.model.widthMultiplier);
        ScoreCounts scores;
        for (size_t l = 0; l < c.model.heads.size() && l < plan.layers.size(); ++l)
            scores += attentionScoreCounts(plan.layers[l], c.model.heads[l] * w);
        step.products += sampleStepFlops(c) * batch;
        step.scores += scores * (T * T * batch);
    }
    step.work = step.products + attentionScoreWork(step.scores);
    step.price = stepPrice(step.work);
    return step;
}

double ensembleWork(const std::vector<SweepJob> &ensemble)
{
    if (ensemble.empty()) return 0;
    const AttentionPlan plan = pricedAttentionPlan(ensemble);
    // The runs of an ensemble step together, phase by phase (their phases are part of its key).
    size_t phases = 0;
    for (const auto &j : ensemble) phases = std::max(phases, j.config.phases.size());
    double work = 0;
    for (size_t p = 0; p < phases; ++p) {
        int64_t steps = 0;
        for (const auto &j : ensemble)
            if (p < j.config.phases.size()) steps = std::max(steps, j.config.phases[p].steps);
        work += static_cast<double>(steps) * ensembleStep(ensemble, plan, p).price;
    }
    return work;
}

namespace {

// int64 arithmetic that saturates instead of overflowing: a hostile config (d_model 16384, a
// million test pairs) must give a huge estimate, not a negative one.
int64_t addSat(int64_t a, int64_t b)
{
    int64_t out = 0;
    return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<int64_t>::max() : out;
}

int64_t mulSat(std::initializer_list<int64_t> factors)
{
    int64_t out = 1;
    for (const int64_t f : factors)
        if (__builtin_mul_overflow(out, std::max<int64_t>(0, f), &out))
            return std::numeric_limits<int64_t>::max();
    return out;
}

} // namespace

int64_t estimateRunBytes(const RunConfig &c)
{
    const auto &mc = c.model;
    const int64_t m = mc.dModel, F = mc.ffn(), w = std::max<int64_t>(1, mc.widthMultiplier);
    const TaskSpec &task = taskSpec(c.task);
    const int64_t V = task.vocabSize(c.task);
    const int64_t T = sequenceLength(c.task);
    const TaskSpec::Footprint footprint =
        task.footprint ? task.footprint(c.task) : TaskSpec::Footprint{};
    int64_t batch = 1;
    for (const auto &p : c.phases) batch = std::max(batch, p.batchSize);
    int64_t params = addSat(mulSat({2, V, m}), addSat(mulSat({T, m}), mulSat({4, m})));
    int64_t activations = 0, evaluation = 0;
    const int64_t E =
        footprint.testSequences > 0 ? evaluationChunk(footprint.testSequences, T, V, m) : 0;
    for (size_t l = 0; l < mc.heads.size(); ++l) {
        const int64_t inner = mulSat({w, mc.heads[l], std::max<int64_t>(1, mc.headDimOfLayer(l))});
        params = addSat(params, addSat(mulSat({4, m, inner}),
                                       addSat(mulSat({2, m, F}), 3 * inner + F + 6 * m)));
        // Per token: the block's inputs, norms, q/k/v, attention output, the FFN's hidden layer
        // before and after its activation; per query: attention scores and probabilities.
        const int64_t perToken = addSat(mulSat({8, m}), addSat(mulSat({4, inner}), mulSat({2, F})));
        activations =
            addSat(activations, addSat(mulSat({batch, T, perToken}), mulSat({batch, T, T, 2, 12})));
        // An evaluation pass keeps no graph: about one layer's tensors are alive at a time.
        evaluation = std::max(evaluation,
                              addSat(mulSat({E, T, perToken}), mulSat({E, T, T, 2, mc.heads[l]})));
    }
    activations = addSat(activations, mulSat({2, batch, T, std::max<int64_t>(V, m)}));
    evaluation =
        addSat(evaluation, mulSat({2, E, std::max<int64_t>(V, m)})); // logits and their loss
    // float32; autograd keeps about twice what it needs at once.
    return addSat(
        mulSat({4, addSat(mulSat({5, params}), addSat(mulSat({2, activations}), evaluation))}),
        footprint.dataBytes);
}

struct SweepRunner::Impl {
    std::vector<std::thread> workers;
    std::atomic<bool> stopFlag{false};
    std::atomic<bool> pauseFlag{false};
    std::atomic<int> activeWorkers{0};
    std::mutex mutex;         // guards queue and stoppedRuns
    std::mutex callbackMutex; // serialises callbacks from several device threads
    // An ensemble waiting for a device: the one placeOnDevices gave it (an index of `devices`),
    // or -1 for whichever worker is free first.
    struct Pending {
        std::vector<SweepJob> jobs;
        int device = -1;
    };
    std::deque<Pending> queue;        // guarded by mutex
    std::vector<std::string> devices; // the sweep's devices; queue and workers index them
    std::vector<int> running;         // ensembles training on each device, guarded by mutex
    std::set<int> stoppedRuns;
    std::set<int> pausedRuns;
    std::map<int, int64_t> pausedPolls; // run -> times its trainer found it paused
    int attentionRun = -1;              // setAttentionWanted, guarded by mutex
    std::string attentionInput;
    SweepCallbacks callbacks;
    SweepOptions options;
    int cpuThreads = 1; // intra-op threads of an ensemble trained on the CPU (cpuPlan)

    void join()
    {
        for (auto &w : workers)
            if (w.joinable()) w.join();
        workers.clear();
    }

    // A worker of devices[index]: it takes the first ensemble placed on its device (or on none).
    // When none is left, a worker whose device is idle takes the next ensemble placed elsewhere
    // that has not started, and one whose device is busy ends: the device's own ensembles keep it
    // busy, and the one that finishes last goes on with what is left.
    void work(size_t index)
    {
        const std::string &device = devices[index];
        if (device == "cpu") lowerThisThreadsPriority();
        for (;;) {
            std::vector<SweepJob> ensemble;
            {
                std::lock_guard<std::mutex> lock(mutex);
                if (queue.empty() || stopFlag) break;
                auto it = std::find_if(queue.begin(), queue.end(), [&](const Pending &p) {
                    return p.device < 0 || static_cast<size_t>(p.device) == index;
                });
                if (it == queue.end()) {
                    if (running[index] > 0) break;
                    it = queue.begin();
                }
                ensemble = std::move(it->jobs);
                queue.erase(it);
                ++running[index];
            }
            trainEnsemble(ensemble, device);
            std::lock_guard<std::mutex> lock(mutex);
            --running[index];
        }
        // Ensembles still queued when the sweep stops never started: they stay as they were
        // (queued, or stopped with their checkpoints) and need no result file, so that stopping a
        // sweep of 100,000 runs takes no longer than stopping one of ten.
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (stopFlag) queue.clear();
        }
        if (--activeWorkers == 0) {
            std::lock_guard<std::mutex> lock(callbackMutex);
            if (callbacks.onSweepFinished) callbacks.onSweepFinished();
        }
    }

    void trainEnsemble(std::vector<SweepJob> &jobs, const std::string &device)
    {
        std::vector<RunConfig> configs;
        for (auto &j : jobs) {
            j.config.device = device;
            configs.push_back(j.config);
        }
        TrainerControl control;
        control.stop = &stopFlag;
        control.pause = &pauseFlag;
        // On the CPU, LibTorch's default of one thread per core makes its spinning workers fight
        // the GUI thread, and is far too many for these models on a large machine.
        control.threads = device == "cpu" ? cpuThreads : options.threads;
        control.reportIntervalSeconds = options.reportIntervalSeconds;
        control.checkpoints = options.checkpoints;
        for (const auto &j : jobs) {
            control.checkpointDirs.push_back(j.checkpointDir);
            control.resumeFrom.push_back(j.resumeFrom);
        }
        control.attentionWanted = [&] {
            std::lock_guard<std::mutex> lock(mutex);
            TrainerControl::AttentionWanted wanted;
            for (size_t i = 0; i < jobs.size(); ++i)
                if (jobs[i].runIndex == attentionRun)
                    wanted = {static_cast<int>(i), attentionInput};
            return wanted;
        };
        control.onAttention = [&](size_t i, const AttentionMaps &maps) {
            std::lock_guard<std::mutex> lock(callbackMutex);
            if (callbacks.onAttention) callbacks.onAttention(jobs[i].runIndex, maps);
        };
        control.memberStopRequested = [&](size_t i) {
            std::lock_guard<std::mutex> lock(mutex);
            return stoppedRuns.count(jobs[i].runIndex) > 0;
        };
        control.memberPauseRequested = [&](size_t i) {
            std::lock_guard<std::mutex> lock(mutex);
            const bool paused = pausedRuns.count(jobs[i].runIndex) > 0;
            if (paused) ++pausedPolls[jobs[i].runIndex];
            return paused;
        };
        // Each run's origin: this process, now; a resumed run keeps its first start.
        std::vector<RunOrigin> origins(jobs.size(), originNow());
        for (size_t i = 0; i < jobs.size(); ++i)
            if (!jobs[i].resumeFrom.empty() && !jobs[i].startedAt.empty())
                origins[i].startedAt = jobs[i].startedAt;
        control.onProgress = [&](size_t i, const RunProgress &p) {
            RunProgress q = p;
            q.runIndex = jobs[i].runIndex;
            q.origin = origins[i];
            std::lock_guard<std::mutex> lock(callbackMutex);
            if (callbacks.onProgress) callbacks.onProgress(q);
        };
        std::vector<RunResult> results;
        try {
            if (const std::string problem = memoryProblem(configs.front(), device);
                !problem.empty())
                throw std::runtime_error(problem);
            results = trainMembers(configs, control);
        } catch (const c10::Error &e) {
            // LibTorch's what() carries a C++ backtrace of 20 lines; the user needs the first.
            results.assign(jobs.size(), RunResult{});
            for (auto &r : results) {
                r.status = RunStatus::Failed;
                r.message = e.what_without_backtrace();
            }
        } catch (const std::exception &e) {
            results.assign(jobs.size(), RunResult{});
            for (auto &r : results) {
                r.status = RunStatus::Failed;
                r.message = e.what();
            }
        }
        const std::string finishedAt = utcTimestamp();
        for (size_t i = 0; i < jobs.size(); ++i) {
            RunResult &r = results[i];
            const std::string early = r.origin.finishedAt; // a run that ended before the others
            r.origin = origins[i];
            if (isFinished(r.status)) r.origin.finishedAt = early.empty() ? finishedAt : early;
        }
        std::lock_guard<std::mutex> lock(callbackMutex);
        for (size_t i = 0; i < jobs.size(); ++i)
            if (callbacks.onRunFinished) callbacks.onRunFinished(jobs[i].runIndex, results[i]);
    }
};

SweepRunner::SweepRunner()
    : d(std::make_unique<Impl>())
{}

SweepRunner::~SweepRunner()
{
    stop();
    d->join();
}

std::vector<size_t> startOrder(const std::vector<double> &work, bool mayEndEarly, size_t slots)
{
    std::vector<size_t> order(work.size());
    std::iota(order.begin(), order.end(), size_t(0));
    if (slots > 1 && !mayEndEarly)
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return work[a] > work[b]; });
    return order;
}

std::vector<size_t> placeOnDevices(const std::vector<double> &costs, size_t devices)
{
    std::vector<size_t> order(costs.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return costs[a] > costs[b]; });
    std::vector<double> load(std::max<size_t>(1, devices), 0.0);
    std::vector<size_t> device(costs.size(), 0);
    for (const size_t i : order) {
        device[i] = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        load[device[i]] += costs[i];
    }
    // Then an ensemble of the most loaded device moves to another, or trades places with a cheaper
    // one there, while that lowers the larger of the two devices' loads. With few pieces of
    // similar size the greedy pass can leave a card a tenth over its share (the nn slice with five
    // seeds: 27.2 % of the work on one card of four, 25.8 % after this, 25.2 % at best). Each step
    // lowers the sum of the loads' squares, so it ends; the bound on rounds is a guard. With many
    // ensembles the greedy pass is already within the least of them of even, and this search
    // (the square of their number a step) is left out.
    if (costs.size() > 256) return device;
    const double total = std::accumulate(load.begin(), load.end(), 0.0);
    const double tiny = 1e-12 * total;
    for (int round = 0; round < 10'000; ++round) {
        const size_t top =
            static_cast<size_t>(std::max_element(load.begin(), load.end()) - load.begin());
        bool moved = false;
        for (size_t i = 0; i < costs.size() && !moved; ++i) {
            if (device[i] != top) continue;
            for (size_t d = 0; d < load.size() && !moved; ++d) {
                if (d == top) continue;
                if (costs[i] > tiny && load[d] + costs[i] < load[top] - tiny) {
                    device[i] = d;
                    load[top] -= costs[i];
                    load[d] += costs[i];
                    moved = true;
                    break;
                }
                for (size_t j = 0; j < costs.size(); ++j) {
                    const double delta = costs[i] - costs[j];
                    if (device[j] != d || delta <= tiny || load[d] + delta >= load[top] - tiny)
                        continue;
                    std::swap(device[i], device[j]);
                    load[top] -= delta;
                    load[d] += delta;
                    moved = true;
                    break;
                }
            }
        }
        if (!moved) break;
    }
    return device;
}

double makespan(const std::vector<double> &costs, size_t devices)
{
    const std::vector<size_t> device = placeOnDevices(costs, devices);
    std::vector<double> load(std::max<size_t>(1, devices), 0.0);
    for (size_t i = 0; i < costs.size(); ++i) load[device[i]] += costs[i];
    return *std::max_element(load.begin(), load.end());
}

namespace {

using EnsembleQueue = std::deque<std::vector<SweepJob>>;

bool splittable(const std::vector<SweepJob> &e)
{
    return e.size() > 1 && e.front().resumeFrom.empty();
}

// An ensemble cut in two: its runs ordered by head count, cut where the costlier part's work is
// least, or (leastTotal) where the two parts' work together is least; each part keeps the sweep's
// order. Runs of few heads stay together: every run of an ensemble pays for the least common
// multiple of its head counts (microHeads), so that halving the nn-fig1 slice's 1..64 heads at
// w 8 so that 64 and 32 parted made both halves pay for 64.
std::pair<std::vector<SweepJob>, std::vector<SweepJob>> cutByHeads(const std::vector<SweepJob> &e,
                                                                   bool leastTotal)
{
    std::vector<size_t> order(e.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return e[a].config.model.heads < e[b].config.model.heads;
    });
    auto part = [&](size_t begin, size_t end) {
        std::vector<size_t> idx(order.begin() + static_cast<long>(begin),
                                order.begin() + static_cast<long>(end));
        std::sort(idx.begin(), idx.end());
        std::vector<SweepJob> out;
        for (const size_t i : idx) out.push_back(e[i]);
        return out;
    };
    const size_t n = order.size();
    size_t cut = n / 2;
    double best = std::numeric_limits<double>::infinity();
    const auto off = [&](size_t c) { return c > n / 2 ? c - n / 2 : n / 2 - c; };
    for (size_t k = 1; k < n; ++k) {
        const double a = ensembleWork(part(0, k)), b = ensembleWork(part(k, n));
        const double score = leastTotal ? a + b : std::max(a, b);
        if (score < best * (1 - 1e-9) || (score <= best * (1 + 1e-9) && off(k) < off(cut))) {
            best = std::min(best, score);
            cut = k;
        }
    }
    return {part(0, cut), part(cut, n)};
}

// Splits an ensemble in two of about equal work (cutByHeads): the first part stays; the second
// goes to the back of the queue.
void halve(EnsembleQueue &queue, EnsembleQueue::iterator it)
{
    auto [first, second] = cutByHeads(*it, false);
    *it = std::move(first);
    queue.push_back(std::move(second));
}

// Halves the largest ensemble until there are `workers` of them or none can be split.
void fillWorkers(EnsembleQueue &queue, size_t workers)
{
    while (queue.size() < workers) {
        auto largest = queue.end();
        for (auto it = queue.begin(); it != queue.end(); ++it)
            if (splittable(*it) && (largest == queue.end() || it->size() > largest->size()))
                largest = it;
        if (largest == queue.end()) return;
        halve(queue, largest);
    }
}

} // namespace

void spreadOverDevices(EnsembleQueue &queue, size_t devices)
{
    fillWorkers(queue, devices);
    if (devices < 2) return;
    // Then by cost: while an ensemble costs more than half a device's share of the whole, the
    // costliest is halved, and the queue keeps the split that gave the least makespan (the addition
    // grid's 384-wide ensemble is three quarters of its work: whole, it was the wall time on four
    // cards; the nn-fig1 slice's runs of 1..16 heads at w 1 fill the cards beside 64 heads at w 8
    // only once they are cut in two, although each part is less than a card's share).
    auto costs = [](const EnsembleQueue &q) {
        std::vector<double> out;
        for (const auto &e : q) out.push_back(ensembleWork(e));
        return out;
    };
    std::vector<double> cost = costs(queue); // trial's, ensemble by ensemble
    double total = 0;
    for (const double c : cost) total += c;
    const double share = total / static_cast<double>(devices);
    EnsembleQueue trial = queue;
    double best = makespan(cost, devices);
    for (;;) {
        size_t costliest = trial.size();
        double most = share / 2;
        for (size_t i = 0; i < trial.size(); ++i)
            if (splittable(trial[i]) && cost[i] > most) {
                most = cost[i];
                costliest = i;
            }
        if (costliest == trial.size()) break;
        halve(trial, trial.begin() + static_cast<long>(costliest));
        cost = costs(trial);
        const double span = makespan(cost, devices);
        if (span < best * (1.0 - 1e-9)) {
            best = span;
            queue = trial;
        }
    }
}

void separateHeadCounts(std::deque<std::vector<SweepJob>> &queue)
{
    double total = 0;
    for (const auto &e : queue) total += ensembleWork(e);
    EnsembleQueue out;
    while (!queue.empty()) {
        std::vector<SweepJob> e = std::move(queue.front());
        queue.pop_front();
        if (splittable(e)) {
            auto [first, second] = cutByHeads(e, true);
            const double saved = ensembleWork(e) - ensembleWork(first) - ensembleWork(second);
            if (saved >= 0.1 * ensembleWork(e) && saved >= 0.02 * total) {
                queue.push_front(std::move(second));
                queue.push_front(std::move(first));
                continue;
            }
        }
        out.push_back(std::move(e));
    }
    queue = std::move(out);
}

SweepPlan planSweep(std::vector<SweepJob> jobs, const SweepOptions &options,
                    const std::vector<std::string> &devices, int64_t freeBytes)
{
    SweepPlan plan;
    const bool cpuOnly = std::all_of(devices.begin(), devices.end(),
                                     [](const std::string &s) { return s == "cpu"; });
    const size_t concurrent = static_cast<size_t>(options.concurrent > 0 ? options.concurrent : 4);
    const size_t defaultMax = cpuOnly ? 8u : 64u;

    // Group runs with the same weight shapes, keeping the sweep's order within each group. Runs
    // resumed from checkpoints train together only with runs resumed from the same step of the
    // same ensemble.
    std::vector<std::string> order;
    std::map<std::string, std::vector<SweepJob>> groups;
    for (auto &j : jobs) {
        if (!options.device.empty()) j.config.device = devices.front();
        std::string key = ensembleKey(j.config) +
                          "\nresume: " + std::to_string(j.resumeFrom.empty() ? 0 : j.resumeStep) +
                          (j.resumeFrom.empty() ? "" : " " + j.resumeEnsemble);
        // On the CPU, runs of different head counts train apart: measured, one ensemble of mixed
        // head counts is slower there than its runs one after another (the classroom preset's
        // four runs, one thread: 362 s together, about 242 s apart), while the GPU gains from it.
        if (cpuOnly)
            for (int64_t h : j.config.model.heads) key += " " + std::to_string(h);
        // A run that may end early (stop_after_learned) trains alone on the CPU, where its
        // ensemble would go on paying for it: ended, it frees its core for the next run.
        if (cpuOnly && j.config.stopAfterLearned > 0)
            key += "\nalone " + std::to_string(order.size());
        if (!groups.count(key)) order.push_back(key);
        groups[key].push_back(std::move(j));
    }
    EnsembleQueue queue;
    for (const auto &key : order) {
        auto &g = groups[key];
        size_t maxEnsemble =
            options.maxEnsemble > 0 ? static_cast<size_t>(options.maxEnsemble) : defaultMax;
        if (options.maxEnsemble <= 0 && freeBytes > 0) {
            const int64_t budget = freeBytes / 2 / static_cast<int64_t>(concurrent);
            const int64_t fits = budget / std::max<int64_t>(1, estimateRunBytes(g.front().config));
            maxEnsemble =
                std::clamp<size_t>(static_cast<size_t>(std::max<int64_t>(1, fits)), 1, defaultMax);
        }
        // Split evenly: 50 runs with room for 32 train as 25 + 25, not 32 + 18.
        const size_t parts = (g.size() + maxEnsemble - 1) / maxEnsemble;
        for (size_t k = 0, begin = 0; k < parts; ++k) {
            const size_t size = g.size() / parts + (k < g.size() % parts ? 1 : 0);
            queue.emplace_back(
                std::make_move_iterator(g.begin() + static_cast<long>(begin)),
                std::make_move_iterator(g.begin() + static_cast<long>(begin + size)));
            begin += size;
        }
    }
    const bool gpusOnly = std::all_of(devices.begin(), devices.end(),
                                      [](const std::string &s) { return s.rfind("cuda", 0) == 0; });
    if (gpusOnly && switchOn(Switch::HeadGroups, true)) separateHeadCounts(queue);
    if (!cpuOnly) spreadOverDevices(queue, devices.size());
    // On the CPU, fewer ensembles than workers leave cores idle, and a small model's step gains
    // little from a second thread: bench/cpu_placement.py, four seeds of the classroom's 24 × 1 on
    // 2 cores, one ensemble on one thread 114 run-steps/s, on two threads 172, two ensembles of two
    // side by side 231 (docs/PERFORMANCE.md). So ensembles are halved until every worker has one.
    const unsigned cores = usableCores();
    if (cpuOnly && options.maxEnsemble <= 0)
        fillWorkers(queue, cpuPlan(cores, std::numeric_limits<size_t>::max(), options.threads,
                                   options.concurrent)
                               .workers);
    // Worker slots, spread over the devices first: [cuda:0, cuda:1, cuda:0, cuda:1, ...]. A "cpu"
    // among GPUs keeps one slot: its ensembles use every core already. A CPU sweep follows cpuPlan.
    const CpuPlan cpu = cpuPlan(cores, queue.size(), options.threads, options.concurrent);
    plan.cpuThreads =
        cpuOnly ? cpu.threads : (options.threads > 0 ? options.threads : defaultCpuThreads(cores));
    const size_t rounds = cpuOnly ? cpu.workers : concurrent;
    for (size_t round = 0; round < rounds; ++round)
        for (size_t k = 0; k < devices.size(); ++k)
            if (round == 0 || devices[k] != "cpu" || cpuOnly) plan.slots.push_back(k);
    std::vector<double> costs;
    bool mayEndEarly = false;
    for (const auto &e : queue) {
        costs.push_back(ensembleWork(e));
        for (const auto &job : e) mayEndEarly = mayEndEarly || job.config.stopAfterLearned > 0;
    }
    // The queue in its starting order; `work` is each ensemble's ensembleWork in that order.
    for (const size_t i : startOrder(costs, mayEndEarly, plan.slots.size())) {
        plan.work.push_back(costs[i]);
        plan.ensembles.push_back(std::move(queue[i]));
    }
    // On several GPUs each ensemble is placed on a device before any starts (placeOnDevices on
    // ensembleWork). Drawn from one queue instead, every ensemble of a sweep that fits the slots
    // started at once on the device of whichever worker took it: round the devices in cost order,
    // so that the fifth costliest of four cards joined the costliest.
    plan.placed = devices.size() > 1 && gpusOnly && switchOn(Switch::Placement, true);
    if (plan.placed) {
        for (const size_t k : placeOnDevices(plan.work, devices.size()))
            plan.device.push_back(static_cast<int>(k));
    } else {
        plan.device.assign(plan.ensembles.size(), -1);
    }
    return plan;
}

std::vector<size_t> SweepPlan::onDevice(size_t k) const
{
    std::vector<size_t> out;
    for (size_t e = 0; e < ensembles.size(); ++e)
        if (device[e] == static_cast<int>(k) || (device[e] < 0 && k == 0)) out.push_back(e);
    return out;
}

bool SweepRunner::start(std::vector<SweepJob> jobs, SweepOptions options, SweepCallbacks callbacks)
{
    if (isRunning()) return false;
    d->join();
    d->stopFlag = false;
    d->pauseFlag = false;
    d->stoppedRuns.clear();
    d->pausedRuns.clear();
    d->callbacks = std::move(callbacks);
    d->options = options;
    const auto devices = devicesFor(options.device.empty() ? std::string("auto") : options.device);
    // Ensembles are sized to the memory of the smallest device: half its free memory, shared by
    // the ensembles that train on it at once.
    int64_t freeBytes = 0;
    for (const auto &dev : devices) {
        const int64_t f = deviceMemory(dev).freeBytes;
        if (f > 0) freeBytes = freeBytes > 0 ? std::min(freeBytes, f) : f;
    }
    SweepPlan plan = planSweep(std::move(jobs), options, devices, freeBytes);
    d->cpuThreads = plan.cpuThreads;
    d->devices = devices;
    d->running.assign(devices.size(), 0);
    d->queue.clear();
    for (size_t i = 0; i < plan.ensembles.size(); ++i)
        d->queue.push_back({std::move(plan.ensembles[i]), plan.device[i]});
    // Placed, each device's workers wait for their own ensembles, so every slot gets one.
    const size_t workers = std::max<size_t>(
        1, plan.placed ? plan.slots.size() : std::min(plan.slots.size(), d->queue.size()));
    d->activeWorkers = static_cast<int>(workers);
    for (size_t w = 0; w < workers; ++w)
        d->workers.emplace_back([this, index = plan.slots[w]] { d->work(index); });
    return true;
}

void SweepRunner::pause()
{
    d->pauseFlag = true;
}
void SweepRunner::resume()
{
    d->pauseFlag = false;
}
void SweepRunner::stop()
{
    d->stopFlag = true;
    d->pauseFlag = false;
}

void SweepRunner::stopRun(int runIndex)
{
    std::lock_guard<std::mutex> lock(d->mutex);
    d->stoppedRuns.insert(runIndex);
}

void SweepRunner::pauseRun(int runIndex)
{
    std::lock_guard<std::mutex> lock(d->mutex);
    d->pausedRuns.insert(runIndex);
}

void SweepRunner::setAttentionWanted(int runIndex, const std::string &input)
{
    std::lock_guard<std::mutex> lock(d->mutex);
    d->attentionRun = runIndex;
    d->attentionInput = input;
}

void SweepRunner::resumeRun(int runIndex)
{
    std::lock_guard<std::mutex> lock(d->mutex);
    d->pausedRuns.erase(runIndex);
}

int64_t SweepRunner::pausedPolls(int runIndex) const
{
    std::lock_guard<std::mutex> lock(d->mutex);
    const auto it = d->pausedPolls.find(runIndex);
    return it == d->pausedPolls.end() ? 0 : it->second;
}

bool SweepRunner::isRunPaused(int runIndex) const
{
    std::lock_guard<std::mutex> lock(d->mutex);
    return d->pausedRuns.count(runIndex) > 0;
}

bool SweepRunner::isRunning() const
{
    return d->activeWorkers.load() > 0;
}
bool SweepRunner::isPaused() const
{
    return d->pauseFlag.load();
}
void SweepRunner::wait()
{
    d->join();
}

RunResult trainRun(const RunConfig &config,
                   const std::function<void(const RunProgress &)> &onProgress)
{
    TrainerControl control;
    if (onProgress) control.onProgress = [&](size_t, const RunProgress &p) { onProgress(p); };
    return trainMembers({config}, control).front();
}

std::vector<RunResult> trainEnsemble(const std::vector<RunConfig> &configs)
{
    return trainMembers(configs, TrainerControl{});
}

} // namespace headlab
