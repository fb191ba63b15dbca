// SweepRunner.cpp — the training threads: one per device, each draining a queue of ensembles.
#include "core/SweepRunner.h"

#include "core/Trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace headlab {

std::vector<std::string> SweepRunner::availableDevices()
{
    std::vector<std::string> out{"cpu"};
    if (torch::cuda::is_available()) {
        for (size_t i = 0; i < torch::cuda::device_count(); ++i) out.push_back("cuda:" + std::to_string(i));
    }
    return out;
}

std::string SweepRunner::resolveDevice(const std::string &requested)
{
    if (requested.empty() || requested == "auto") return torch::cuda::is_available() ? "cuda:0" : "cpu";
    if (requested == "cuda") return "cuda:0";
    return requested;
}

namespace {

// "cuda:0,cuda:1", "all", "auto", "cpu" → the devices to use.
std::vector<std::string> devicesFor(const std::string &spec)
{
    if (spec == "all") {
        auto all = SweepRunner::availableDevices();
        if (all.size() > 1) all.erase(all.begin()); // GPUs only when there are any
        return all;
    }
    std::vector<std::string> out;
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (!item.empty()) out.push_back(SweepRunner::resolveDevice(item));
    }
    if (out.empty()) out.push_back(SweepRunner::resolveDevice("auto"));
    return out;
}

} // namespace

struct SweepRunner::Impl {
    std::vector<std::thread> workers;
    std::atomic<bool> stopFlag{false};
    std::atomic<bool> pauseFlag{false};
    std::atomic<int> activeWorkers{0};
    std::mutex mutex;         // guards queue and stoppedRuns
    std::mutex callbackMutex; // serialises callbacks from several device threads
    std::deque<std::vector<SweepJob>> queue; // ensembles waiting for a device
    std::set<int> stoppedRuns;
    std::set<int> pausedRuns;
    SweepCallbacks callbacks;
    SweepOptions options;

    void join()
    {
        for (auto &w : workers)
            if (w.joinable()) w.join();
        workers.clear();
    }

    void work(const std::string &device)
    {
        for (;;) {
            std::vector<SweepJob> ensemble;
            {
                std::lock_guard<std::mutex> lock(mutex);
                if (queue.empty() || stopFlag) break;
                ensemble = std::move(queue.front());
                queue.pop_front();
            }
            trainEnsemble(ensemble, device);
        }
        std::vector<SweepJob> leftovers;
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (stopFlag) {
                while (!queue.empty()) {
                    for (auto &j : queue.front()) leftovers.push_back(std::move(j));
                    queue.pop_front();
                }
            }
        }
        {
            std::lock_guard<std::mutex> lock(callbackMutex);
            for (const auto &j : leftovers) {
                RunResult r;
                r.status = RunStatus::Stopped;
                r.message = "stopped before it started";
                if (callbacks.onRunFinished) callbacks.onRunFinished(j.runIndex, r);
            }
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
        // On the CPU, leave a core to the GUI or the shell: LibTorch's default of one thread per
        // core makes its spinning workers fight the GUI thread (and is slower on a busy machine).
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        control.threads = options.threads > 0 ? options.threads : (device == "cpu" ? static_cast<int>(std::max(1u, cores - 1)) : 0);
        control.reportIntervalSeconds = options.reportIntervalSeconds;
        control.memberStopRequested = [&](size_t i) {
            std::lock_guard<std::mutex> lock(mutex);
            return stoppedRuns.count(jobs[i].runIndex) > 0;
        };
        control.memberPauseRequested = [&](size_t i) {
            std::lock_guard<std::mutex> lock(mutex);
            return pausedRuns.count(jobs[i].runIndex) > 0;
        };
        control.onProgress = [&](size_t i, const RunProgress &p) {
            RunProgress q = p;
            q.runIndex = jobs[i].runIndex;
            std::lock_guard<std::mutex> lock(callbackMutex);
            if (callbacks.onProgress) callbacks.onProgress(q);
        };
        std::vector<RunResult> results;
        try {
            results = trainMembers(configs, control);
        } catch (const std::exception &e) {
            results.assign(jobs.size(), RunResult{});
            for (auto &r : results) {
                r.status = RunStatus::Failed;
                r.message = e.what();
            }
        }
        std::lock_guard<std::mutex> lock(callbackMutex);
        for (size_t i = 0; i < jobs.size(); ++i)
            if (callbacks.onRunFinished) callbacks.onRunFinished(jobs[i].runIndex, results[i]);
    }
};

SweepRunner::SweepRunner() : d(std::make_unique<Impl>()) {}

SweepRunner::~SweepRunner()
{
    stop();
    d->join();
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
    const bool cpuOnly = std::all_of(devices.begin(), devices.end(), [](const std::string &s) { return s == "cpu"; });
    const size_t maxEnsemble = options.maxEnsemble > 0 ? static_cast<size_t>(options.maxEnsemble) : (cpuOnly ? 8u : 64u);

    // Group runs with the same weight shapes, keeping the sweep's order within each group.
    std::vector<std::string> order;
    std::map<std::string, std::vector<SweepJob>> groups;
    for (auto &j : jobs) {
        if (!options.device.empty()) j.config.device = devices.front();
        const std::string key = ensembleKey(j.config);
        if (!groups.count(key)) order.push_back(key);
        groups[key].push_back(std::move(j));
    }
    d->queue.clear();
    for (const auto &key : order) {
        auto &g = groups[key];
        for (size_t i = 0; i < g.size(); i += maxEnsemble) {
            d->queue.emplace_back(std::make_move_iterator(g.begin() + static_cast<long>(i)),
                                  std::make_move_iterator(g.begin() + static_cast<long>(std::min(g.size(), i + maxEnsemble))));
        }
    }
    const size_t workers = std::max<size_t>(1, std::min(devices.size(), d->queue.size()));
    d->activeWorkers = static_cast<int>(workers);
    for (size_t w = 0; w < workers; ++w) d->workers.emplace_back([this, dev = devices[w]] { d->work(dev); });
    return true;
}

void SweepRunner::pause() { d->pauseFlag = true; }
void SweepRunner::resume() { d->pauseFlag = false; }
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

void SweepRunner::resumeRun(int runIndex)
{
    std::lock_guard<std::mutex> lock(d->mutex);
    d->pausedRuns.erase(runIndex);
}

bool SweepRunner::isRunPaused(int runIndex) const
{
    std::lock_guard<std::mutex> lock(d->mutex);
    return d->pausedRuns.count(runIndex) > 0;
}

bool SweepRunner::isRunning() const { return d->activeWorkers.load() > 0; }
bool SweepRunner::isPaused() const { return d->pauseFlag.load(); }
void SweepRunner::wait() { d->join(); }

RunResult trainRun(const RunConfig &config, const std::function<void(const RunProgress &)> &onProgress)
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
