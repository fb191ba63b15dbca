// TrainingLoop.h — internal to core/train: the loop that trains one ensemble (trainMembers,
// Trainer.h), its state, and the members each of its files defines:
//   TrainingLoop.cpp         the phase loop: steps, schedules, reads of the losses, divergence,
//                            stop and pause, progress reports
//   TrainingEvaluation.cpp   evaluation, per-head statistics, live attention, final metrics
//   TrainingCheckpoints.cpp  checkpoints (periodic, plateau, stop), slimming, resume
//   TrainingProvenance.cpp   what a run records of how it was trained
#pragma once

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
#include "core/schema/RunConfigFields.h"
#include "core/schema/TaskSpec.h"
#include "core/tasks/Task.h"

#include <torch/torch.h>

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

// CUDA graphs where LibTorch has CUDA (HEADLAB_TORCH_CUDA, cmake/HeadlabTorch.cmake); a CPU
// LibTorch's headers may still carry these files, but not the libraries behind them.
#ifdef HEADLAB_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#define HEADLAB_HAVE_CUDA_GRAPHS 1
#endif

namespace headlab::detail {

using Clock = std::chrono::steady_clock;

struct Member {
    RunResult result;
    bool alive = true;
    size_t reportedTrain = 0, reportedTest = 0;
    std::map<std::string, size_t> reportedExtra;
    int plateauEvents = 0;      // plateau entries and exits seen so far (plateau checkpoints)
    bool finishedEarly = false; // ended by stop_after_learned: its final checkpoint is written
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

// HEADLAB_HEAD_STATS=0 skips the per-head statistics (for bench/: what they cost).
bool headStatsWanted();
bool cudaGraphsWanted();
// "NVIDIA H100 80GB HBM3 (cuda:0)", or the CPU's model name.
std::string deviceDescription(const torch::Device &device);

// The stabilizers' implementation as a provenance value (TrainingProvenance.cpp).
extern const char *const kStabilizersImplementation;

// While alive, floats below 1.2e-38 are flushed to zero (x86's FTZ and DAZ modes) on the calling
// thread, when `on`; its modes are restored after. Threads started from it meanwhile (LibTorch's
// intra-op threads: a CPU worker's run starts them) take its modes and keep them. Elsewhere
// nothing.
class FlushDenormals {
public:
    explicit FlushDenormals(bool on);
    ~FlushDenormals();
    FlushDenormals(const FlushDenormals &) = delete;
    FlushDenormals &operator=(const FlushDenormals &) = delete;
    bool active() const { return m_active; }

private:
    unsigned int m_mode = 0;
    bool m_active = false;
};

class TrainingLoop {
public:
    TrainingLoop(const std::vector<RunConfig> &configs, const TrainerControl &control)
        : m_configs(configs)
        , m_control(control)
        , m_members(configs.size())
    {}

    std::vector<RunResult> run();

private:
    bool anyAlive() const;

    // Per parameter, per run: the phase's learning rate × the QK factor × (1 while the run trains).
    void updateLearningRates(Adam &adam, const PhaseConfig &phase);

    void runPhase(size_t ph);

#ifdef HEADLAB_HAVE_CUDA_GRAPHS
    // A CUDA graph that is destroyed under its device's graphMutex (TrainingLoop.cpp): capturing a
    // graph and destroying one both change the device's default generator's set of graphs, which
    // LibTorch does not guard, and several ensembles' threads capture and destroy graphs on one
    // device.
    struct GraphRelease {
        c10::DeviceIndex device = 0; // where the graph was captured
        void operator()(at::cuda::CUDAGraph *graph) const;
    };
    using Graph = std::unique_ptr<at::cuda::CUDAGraph, GraphRelease>;
    template <typename Step>
    Graph capture(Step &step);
#endif

    // Reads back every queued value (they were queued at least one window ago, so the device is
    // done with them or nearly) and acts on divergence.
    void drainReads(Adam *adam, const PhaseConfig *phase = nullptr);

    void freeze(size_t i, Adam *adam);

    // stop_after_learned: member i's test curve has stayed below the level (5/6 of the task's
    // learned level) at every evaluation of the last stopAfterLearned steps. Decided from the
    // curve alone, so a resumed run decides as it would have.
    bool learnedLongEnough(size_t i) const;
    // The step at which stop_after_learned ends member i if its test loss stays below the
    // learned level, counted from where it went below it (its streak); -1 while it is not below
    // it or the run does not stop early.
    int64_t learnedEnd(size_t i) const;
    // Ends member i, done: its final checkpoint now, its learning rate 0 from the next step.
    void finishLearned(size_t i);

    // Returns true when a run stopped (its learning rate must drop to 0). A run stopped alone
    // writes its checkpoint now (its ensemble trains on); when the whole ensemble stops, each
    // writes its checkpoint at the end of the phase loop, after the last reads.
    bool pollStops();

    // The sweep is paused, or a member that still trains is: the ensemble shares every step.
    bool pauseWanted() const;

    void waitWhilePaused();

    void evaluate();

    bool evaluatedAt(int64_t step) const;

    // Per layer (R, heads, S): every headStatTable() row's value of every head, on the device.
    std::vector<torch::Tensor> headStatistics();

    // The attention maps a listener asked for, of the member it asked about.
    void liveAttention();

    // A checkpoint where the test loss entered or left a plateau (tasks with plateau lines): the
    // evaluation is read back at once, so the checkpoint is of the step the plateau analysis names.
    void checkpointPlateaus();

    // Writes member i's checkpoint at the current step, lists it in its result and drops the
    // oldest non-plateau ones beyond the policy's `keep`. A checkpoint that cannot be written is
    // noted in the run's message; training goes on (the result file is what must not be lost).
    void checkpoint(size_t i, const char *reason);

    // Once every member in `members` has written its checkpoint of this step (one pass, so a kill
    // in the middle leaves them all a common older step to resume from), their older checkpoints
    // keep their weights alone (slimCheckpoint): the newest holds the state to resume from, the
    // plateau ones stay for inspecting. Off with `checkpoints: {resume_state: every}`. A file
    // that cannot be slimmed is left as it is (it costs disk, never a result).
    void slimOlderCheckpoints(const std::vector<size_t> &members);

    // Reads the members' resume checkpoints (all or none, of one step). Each is checked against its
    // run before any is used: config, position, task data and every tensor's shape. When one does
    // not pass, the ensemble falls back to the newest older step at which every member has a
    // checkpoint that does, and the unusable file is renamed aside (NAME.unusable, kept, never
    // read again); with none left, every member starts again at step 0. Either way the runs train
    // and the message says what happened: a bad checkpoint is never a run's final result.
    void loadResumeCheckpoints();

    // "task.file: a -> b" for each entry that differs.
    static std::string describeChange(const std::map<std::string, std::string> &was,
                                      const std::map<std::string, std::string> &now);

    // A checkpoint that cannot be used is kept under another name, so that no listing offers it again.
    static void setAside(const std::string &path);

    void addNote(const std::string &note);

    // The members' results so far, their step and who still trains, from their checkpoints.
    // Returns the phase to go on with.
    size_t applyResume();

    void finalizeMetrics(RunResult &r) const;

    // What, besides the config, decided this ensemble's numbers (RunResult::provenance).
    std::map<std::string, std::string> provenance(const torch::Device &device) const;

    void maybeReport();

    void report(size_t i, bool force);

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
    int64_t m_startedAt = 0; // the step training went on from (applyResume), reported with progress
    int64_t m_lastEvalStep = -1;
    // Per layer, by weight (wq, wk): the last kept gradient norms (R, heads).
    std::vector<std::map<std::string, torch::Tensor>> m_grads;
    // The Alignment rows' inputs, per layer by weight ("wq", ...): the weights before the step
    // that precedes an evaluation, and that step's change (HeadProbe::updates). Empty without
    // such a row.
    std::vector<std::map<std::string, torch::Tensor>> m_before, m_updates;
    // Before the step (`stepTaken` false): copies the attention's weights into m_before; after
    // it: their change since into m_updates.
    void keepUpdate(bool stepTaken);
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
    bool m_graphsUsed = false;            // a phase's step was captured as a CUDA graph
    std::string m_fusedAdam = "off";      // the optimizer's path, for provenance
    std::string m_flushDenormals = "off"; // on the CPU: denormals flushed to zero, for provenance
    int64_t m_step = 0;
    int64_t m_total = 0;
    Clock::time_point m_start, m_lastReport;
};

} // namespace headlab::detail
