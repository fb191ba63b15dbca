// SweepRunner.h — trains a list of runs on a background thread and reports as it goes.
//
// The owner posts runs and gets value types back through callbacks, which are called on the
// training thread: a GUI must hop to its own thread (queued signal) before touching widgets.
// Runs with the same weight shapes are trained together as one batched ensemble. Stop and pause
// are atomic flags polled at every step. The destructor stops and joins.
#pragma once

#include "core/attention/AttentionPlan.h"
#include "core/config/RunConfig.h"
#include "core/config/RunResult.h"
#include "core/train/HeadInspector.h"

#include <deque>
#include <functional>
#include <memory>
#include <vector>

namespace headlab {

// The CPU threads a run gets when none are asked for: one less than the cores (a core is left to
// the GUI or the shell), at least 1 and at most kMaxDefaultCpuThreads (these models are small: on
// a 64-core server one thread per core made CPU training ~50x slower than 8 threads).
inline constexpr int kMaxDefaultCpuThreads = 8;
int defaultCpuThreads(unsigned cores);

// The cores a CPU sweep plans with: OMP_NUM_THREADS when it is set to a number (the variable users
// and batch systems set to bound a program's CPU threads; scripts/test.sh sets it to 1 for ctest's
// parallel tests), else the CPUs this process may run on (its affinity: taskset, a cgroup's
// cpuset), else what the machine reports.
unsigned usableCores();

// How a CPU sweep of `ensembles` ensembles uses `cores` cores: `workers` ensembles train side by
// side, each with `threads` intra-op threads. One ensemble gets defaultCpuThreads; several train
// one per core (at most kMaxDefaultCpuThreads at once), sharing that thread budget, because these
// small models gain far more from training side by side than from intra-op threads. The workers
// run at a lower scheduling priority, so the GUI and the shell stay responsive with every core
// busy. `threadsAsked` and `concurrentAsked` (> 0) override either.
struct CpuPlan {
    size_t workers = 1;
    int threads = 1;
};
CpuPlan cpuPlan(unsigned cores, size_t ensembles, int threadsAsked, int concurrentAsked);

struct SweepOptions {
    std::string device = "auto"; // overrides each run's device unless empty
    int threads =
        0; // CPU intra-op threads; 0: one less than the cores, at most kMaxDefaultCpuThreads
    int maxEnsemble = 0; // most runs trained together; 0 picks by device and memory
    // Ensembles trained at once on each GPU, each on its own thread and CUDA stream, so that small
    // ensembles that cannot fill the card alone share it; on the CPU, side by side. 0 picks: up to
    // 4 on a GPU, cpuPlan on the CPU.
    int concurrent = 0;
    double reportIntervalSeconds = 0.1;
    CheckpointPolicy checkpoints; // applies to jobs that name a checkpointDir
};

struct SweepCallbacks {
    std::function<void(const RunProgress &)> onProgress;
    // Called once per run with its final result (Done, Diverged, Failed or Stopped).
    std::function<void(int runIndex, const RunResult &)> onRunFinished;
    std::function<void()> onSweepFinished;
    // A run's attention maps at an evaluation, while setAttentionWanted asks for them.
    std::function<void(int runIndex, const AttentionMaps &)> onAttention;
};

struct SweepJob {
    int runIndex = -1; // the caller's index, echoed back in callbacks
    RunConfig config;
    std::string checkpointDir;  // where the run keeps its checkpoints; "" for none
    std::string resumeFrom;     // the checkpoint it goes on from; "" to start at step 0
    int64_t resumeStep = 0;     // that checkpoint's step: runs resume together only from one step
    std::string resumeEnsemble; // names the ensemble it resumes in (attachCheckpoints): runs
                                // resume in the ensembles they stopped in
    std::string startedAt;      // a resumed run's first start (RunOrigin), kept in its new result
};

// The order a sweep's ensembles start in, given each one's work (ensembleWork): longest first
// where several slots train at once, so that the last to finish is a short one; the queue's order
// (the sweep's) where one slot trains, or where a run may end early (stop_after_learned), whose
// work is not known beforehand: a lesson then trains the runs it lists first first (the classroom
// preset's contrast at the large η, side by side on two cores).
std::vector<size_t> startOrder(const std::vector<double> &work, bool mayEndEarly, size_t slots);

// Several GPUs: at least one ensemble per device where there are runs enough. The largest ensemble
// that starts at step 0 is split in two until there is (ten runs of one shape on four cards train
// as 2 + 2 + 3 + 3, not all ten on one card while three wait). Then, while an ensemble's work
// (ensembleWork) is more than half the whole's share of one device, the costliest is split in two,
// and the queue keeps the split whose most loaded device (placeOnDevices) has the least work: five
// 384-wide runs beside four narrow ensembles train as 2 + 2 + 1 on four cards. A split orders the
// runs by head count and cuts where the costlier part's work is least, not at the middle of the
// sweep's order. Resumed ensembles keep their runs: they resume in the company they stopped in.
void spreadOverDevices(std::deque<std::vector<SweepJob>> &queue, size_t devices);
// On the GPU every run of an ensemble computes the least common multiple of the ensemble's head
// counts as micro-heads (up to 512 of them, 128 for several head counts; beyond, each run its own
// heads through the slower scaled_dot_product_attention: the attention plan, AttentionPlan.h):
// seven runs of 1..64
// heads each pay for 64. An ensemble is cut in two, runs of fewer heads apart from runs of more,
// while that saves a tenth of its work (ensembleWork) and a fiftieth of the whole queue's, and
// each part again: runs of one head count stay together. Measured on an H200, the nn-fig1 slice
// (1..64 heads at w 1 and 8) trained 1.24 times as fast on one card; the addition grid (1..12
// heads a width) saves too little and stays as it was.
void separateHeadCounts(std::deque<std::vector<SweepJob>> &queue);
// Which of `devices` each ensemble of these costs trains on: costliest first, each to the device
// with the least work so far; then ensembles of the most loaded device move or trade places while
// that lowers its load. SweepRunner places a sweep's ensembles so on several GPUs (by
// ensembleWork) before any starts; spreadOverDevices judges its splits by the same placement.
std::vector<size_t> placeOnDevices(const std::vector<double> &costs, size_t devices);
// The most work one device gets when ensembles of these costs are placed by placeOnDevices.
double makespan(const std::vector<double> &costs, size_t devices);

// How SweepRunner::start trains a sweep: its ensembles in their starting order, each one's work
// (ensembleWork) and device (an index of `devices`, placed by placeOnDevices where several GPUs are
// and placement is on; -1 where whichever worker is free takes it), the worker slots (device
// indices) and an ensemble's CPU threads.
struct SweepPlan {
    std::vector<std::vector<SweepJob>> ensembles;
    std::vector<double> work;
    std::vector<int> device;
    bool placed = false;
    std::vector<size_t> slots;
    int cpuThreads = 1;
    // The indices of the ensembles that device k trains: those placed on it, and every unplaced
    // one on device 0 (one device, or several drawing from one queue: what a card would carry).
    std::vector<size_t> onDevice(size_t k) const;
};
// The plan SweepRunner::start follows for `jobs` on `devices` (devicesFor's names), ensembles sized
// to `freeBytes` of the smallest device's free memory (0: unknown, the default cap). headlab-bench
// plan prices a 4-GPU plan and times its ensembles on one card.
SweepPlan planSweep(std::vector<SweepJob> jobs, const SweepOptions &options,
                    const std::vector<std::string> &devices, int64_t freeBytes);

class SweepRunner {
public:
    SweepRunner();
    ~SweepRunner();
    SweepRunner(const SweepRunner &) = delete;
    SweepRunner &operator=(const SweepRunner &) = delete;

    // Starts training the jobs on the background thread. Returns false if a sweep is running.
    bool start(std::vector<SweepJob> jobs, SweepOptions options, SweepCallbacks callbacks);
    void pause();
    void resume();
    void stop();                // stops every run; they finish as Stopped
    void stopRun(int runIndex); // stops one run; the others go on
    // Pauses one run. Runs that train together in one ensemble share every step, so the run's
    // ensemble holds (its other runs show as paused too) until no member's pause is left.
    void pauseRun(int runIndex);
    void resumeRun(int runIndex);
    bool isRunPaused(int runIndex) const;
    // How many times the trainer of `runIndex` polled it and found it paused (each poll is a
    // point where a step would otherwise have run): tests count these instead of waiting.
    int64_t pausedPolls(int runIndex) const;
    // Asks for run `runIndex`'s attention maps on `input` at each of its evaluations (delivered
    // through SweepCallbacks::onAttention); -1 asks for none. Costs one small forward pass per
    // evaluation of that run's ensemble.
    void setAttentionWanted(int runIndex, const std::string &input);
    bool isRunning() const;
    bool isPaused() const;
    void wait(); // blocks until the sweep has finished

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

// A rough upper bound of one run's device memory inside an ensemble: weights, gradients, both
// Adam moments and the per-element learning rate, and the activations kept for backward.
int64_t estimateRunBytes(const RunConfig &config);
// Matrix-product FLOPs of one training step of one run, forward and backward (3 × the forward's
// products): Q/K/V and output projections, the attention products over the full T × T (causal
// masks still compute them), the MLP, and the embedding (a one-hot product on the GPU) and
// unembedding. bench/compute_floor.py times the same products on a card.
double estimateStepFlops(const RunConfig &config);
// An ensemble's whole training (each run's steps of every phase) in FLOP-equivalents: its products'
// FLOPs (estimateStepFlops) and the element-wise passes over its attention scores, which grow with
// the head count where the products do not, at the price of the path the ensemble's attention plan
// takes on the GPU (core/attention/AttentionPlan.h, attentionScoreWork; fitted on an H200).
// The scheduler starts the longest first by it, spreadOverDevices and the placement on GPUs balance
// devices on it, and Slurm shards balance on it (placeOnDevices).
double ensembleWork(const std::vector<SweepJob> &ensemble);
// One step of an ensemble in phase `phase` as ensembleWork prices it: its runs' products
// (estimateStepFlops) and their attention scores counted by path (core/attention/AttentionPlan.h),
// the batch included; work, the two in FLOP-equivalents; price, work or the per-step floor a step
// costs whatever its FLOPs (its kernels' launches), whichever is larger, smoothly.
struct EnsembleStep {
    double products = 0;
    ScoreCounts scores;
    double work = 0;
    double price = 0;
};
EnsembleStep ensembleStep(const std::vector<SweepJob> &ensemble, const AttentionPlan &plan,
                          size_t phase);
// The attention plan ensembleWork prices an ensemble by: each layer's path for these runs on the
// GPU (core/attention/AttentionPlan.h).
AttentionPlan pricedAttentionPlan(const std::vector<SweepJob> &ensemble);

// Trains one run synchronously on the calling thread (tests, golden values).
RunResult trainRun(const RunConfig &config,
                   const std::function<void(const RunProgress &)> &onProgress = {});

// Trains runs with identical weight shapes as one ensemble, synchronously. results[i] belongs
// to configs[i]. Throws std::invalid_argument if their shapes differ.
std::vector<RunResult> trainEnsemble(const std::vector<RunConfig> &configs);

} // namespace headlab
