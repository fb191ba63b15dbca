// Trainer.h — trains an ensemble of runs that share weight shapes, step by step.
//
// Torch-free interface: the SweepRunner and tests call it; the loop itself is in Trainer.cpp.
#pragma once

#include "core/config/RunConfig.h"
#include "core/config/RunResult.h"
#include "core/train/HeadInspector.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace headlab {

struct TrainerControl {
    const std::atomic<bool> *stop = nullptr;  // stop every member
    const std::atomic<bool> *pause = nullptr; // hold before the next step
    // Polled every step: true when member i (index into configs) should stop.
    std::function<bool(size_t member)> memberStopRequested;
    // Polled every step: true while member i is asked to pause (the whole ensemble holds).
    std::function<bool(size_t member)> memberPauseRequested;
    std::function<void(size_t member, const RunProgress &)> onProgress;
    double reportIntervalSeconds = 0.1;
    int threads = 0; // CPU intra-op threads (0: leave as is)
    // Checkpoints (Checkpoint.h): member i keeps them in checkpointDirs[i] when that is given and
    // the policy is enabled, and resumes from resumeFrom[i] when that is given. Members resume all
    // or none, from checkpoints of one step. Each kept checkpoint is listed in the result.
    CheckpointPolicy checkpoints;
    std::vector<std::string> checkpointDirs;
    std::vector<std::string> resumeFrom;
    // Live attention maps: polled at each evaluation; a member >= 0 asks for that member's maps on
    // `input` (Task::probeInput's syntax), delivered through onAttention (a bad input comes back as
    // maps with no layers and the reason in their description).
    struct AttentionWanted {
        int member = -1;
        std::string input;
    };
    std::function<AttentionWanted()> attentionWanted;
    std::function<void(size_t member, const AttentionMaps &)> onAttention;
};

// Trains configs together. All must have the same ensembleKey (RunConfigFields.h). results[i] belongs to configs[i].
// Never throws for a run's own failure: a run that cannot train is returned as Failed. A member
// stopped (or the whole ensemble) writes a checkpoint at the step it stopped, when it keeps them.
std::vector<RunResult> trainMembers(const std::vector<RunConfig> &configs,
                                    const TrainerControl &control);

// A run has diverged when its training loss is NaN, Inf, or above this bound: 10^4 times the
// chance loss, the loss of a model that knows nothing (ln V for a vocabulary of V tokens; 1 for
// the nearest-neighbour regression, where predicting 0 scores 1). A run that learns stays below
// its chance loss; one at 10^4 times it has blown up, even while its loss is still finite
// (Adam at lr 10 reached 7.9e30 and was reported done).
double divergenceBound(int64_t vocabSize);
// "loss 5.2e+04 at step 3, above 3.09e+04 (10^4 x the chance loss)" or "loss became NaN at step 3".
std::string divergenceMessage(double loss, double bound, int64_t step);

// The learning-rate multiplier of `schedule` at step t (0-based) of a phase of `steps` steps:
// constant 1; warmup_cosine t/W for t < W = round(fraction·steps), then 0.5·(1 + cos(π·(t−W)/(steps−W))).
// With stepEvery k > 1 the same formula is taken at epoch t / k of ceil(steps / k) epochs, so the
// multiplier changes once per epoch and the first epoch of a warm-up trains at 0.
double scheduleMultiplier(const ScheduleConfig &schedule, int64_t step, int64_t steps);

// The QK rule's learning-rate factor for W_Q and W_K (and their biases) of `layer`
// (EXPERIMENTS.md §4): sqrt(referenceHeadDim / headDim of the layer) when the rule is on, else 1.
double qkLearningRateFactor(const RunConfig &config, size_t layer);

} // namespace headlab
