// Checkpoint.h — a run's checkpoints: one safetensors file per checkpoint, in the run's folder
// S.results/checkpoints/K/ (K: the name of its result file), named step-NNNNNNNNN.safetensors.
//
// A checkpoint holds everything a run needs to go on with the numbers it would have had
// uninterrupted (bit for bit on the CPU): its weights, its Adam moments and step count, its place
// in the protocol (global step, phase, step within the phase, the partial training-loss window;
// every task draws its batches from (seed, phase, step), so that is the data position), and its
// curves so far. Tensor names and metadata keys are documented in docs/CHECKPOINTS.md, with a
// snippet that loads one into PyTorch. The metadata also carries a checksum of the tensor data,
// so a damaged file is found before it is used and the one before it is taken instead.
//
// Torch-free interface; the tensors are handled in Checkpoint.cpp.
#pragma once

#include "core/config/RunConfig.h"
#include "core/config/RunResult.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headlab {

class Transformer;
class Adam;

constexpr const char *kCheckpointFormat = "headlab-checkpoint";
// 2: the checksum is data_crc32 (CRC-32); 1: data_fnv1a64 (FNV-1a), still read.
constexpr int kCheckpointVersion = 2;

// "step-000001000.safetensors"
std::string checkpointFileName(int64_t step);

// Whether `name` is one HeadLab writes into a run's checkpoint folder: a checkpoint
// ("step-NNNNNNNNN.safetensors"), one set aside as unusable (that name + ".unusable"), or the
// temporary file of a write a kill interrupted (".step-NNNNNNNNN.safetensors.tmp-XXXXXX"). Prune
// and the disk budget remove only such files: anything else in the folder is the user's.
bool isCheckpointFileName(const std::string &name);

// What a checkpoint says about itself, without its tensors.
struct CheckpointInfo {
    std::string path;
    int64_t step = 0;
    std::string reason;                    // periodic, plateau_entry, plateau_exit, stop, final
    RunStatus status = RunStatus::Running; // of the run when it was written
    uint64_t bytes = 0;
    // Its weights alone, the optimizer state dropped by slimCheckpoint: for inspecting, never
    // for resuming.
    bool weightsOnly = false;
    // The runs it trained with when it was written, itself included: their checkpoint folders'
    // names (ensembleMembers; metadata `ensemble`, comma-separated). Empty in files written before
    // it was recorded. Runs resume in the ensembles they stopped in.
    std::vector<std::string> ensemble;
};

// The names of the checkpoint folders `dirs` of an ensemble's members, sorted (empty ones skipped):
// what a checkpoint records as its ensemble.
std::vector<std::string> ensembleMembers(const std::vector<std::string> &dirs);

// Reads a checkpoint's header and checks its format, version and length; with `verifyData` also
// the checksum of its tensors. Throws SessionError naming the file and what is wrong.
CheckpointInfo inspectCheckpoint(const std::string &path, bool verifyData = true);

// The checkpoints of a run's folder, newest step first, each verified. A file that is not a valid
// checkpoint is left out and described in `problems`, one sentence each (absent folder: none).
// `verifyData` false checks headers and lengths only, reading a few bytes of each file instead of
// all of it (what a view that lists them many times a second wants; loading verifies anyway).
std::vector<CheckpointInfo> listCheckpoints(const std::string &dir,
                                            std::vector<std::string> *problems = nullptr,
                                            bool verifyData = true);

// Rewrites a checkpoint without its optimizer state (atomically; metadata `kept: weights`,
// `optimizer: none`, its checksum recomputed): what a run's older checkpoints become once a newer
// one holds the state to resume from. One already slim is left alone. Returns the bytes saved.
// With `bf16`, its float32 weights are kept in bfloat16 (rounded to nearest even; readers
// widen them back to float32), metadata `kept_weights: bfloat16`.
uint64_t slimCheckpoint(const std::string &path, bool bf16 = false);

// The steps at which every member of an ensemble has a checkpoint, newest first (each member's
// checkpoints by step): where an ensemble may resume as one.
std::vector<int64_t>
stepsEveryMemberHas(const std::vector<std::map<int64_t, std::string>> &members);

// Bytes in regular files under `dir` (0 when it does not exist).
uint64_t directoryBytes(const std::string &dir);

// Where a run is in its protocol when a checkpoint is written.
struct TrainingPosition {
    int64_t step = 0;        // global steps done
    int64_t phase = 0;       // the phase the next step belongs to
    int64_t phaseStep = 0;   // steps done within that phase
    int64_t windowSteps = 0; // steps in the unfinished training-loss window
    float windowSum = 0.0f;  // their summed loss (float32, as the trainer adds it)
    double adamSteps = 0.0;  // the phase optimizer's step count
    double wallSeconds = 0.0;
};

// Run `run` of `model` as checkpoint contents (see docs/CHECKPOINTS.md), written atomically to
// `path`. `adam` may be null (no moments: such a checkpoint cannot resume training).
// `taskData` names the data the run trained on (Task::provenance: a file task's content hash); a
// checkpoint is refused for resuming when its task data differ from the run's now. `ensemble`
// (ensembleMembers) is recorded as metadata `ensemble`.
void writeCheckpoint(const std::string &path, const Transformer &model, const Adam *adam,
                     int64_t run, const RunConfig &config, const RunResult &partial,
                     const TrainingPosition &position, const std::string &reason,
                     const std::map<std::string, std::string> &taskData = {},
                     const std::vector<std::string> &ensemble = {});

// A checkpoint read back for resuming or inspecting: the run's result so far and where it was.
struct LoadedCheckpoint {
    std::string path;
    TrainingPosition position;
    RunResult partial;
    std::string reason;
    bool hasMoments = false;
    RunConfig config;                            // as the checkpoint records it
    std::map<std::string, std::string> taskData; // as written (empty in checkpoints before it was)
    struct Impl;
    std::shared_ptr<const Impl> tensors; // the tensors (Checkpoint.cpp)
};

// Reads and verifies a checkpoint: checksum, its config (with `expected`, compared before anything
// is built from it), and its position and result against the run's protocol (a done run has every
// step, a divergence lies before the checkpoint's step, curves end there). Throws SessionError
// naming the file, also for what a library throws while reading it.
LoadedCheckpoint loadCheckpoint(const std::string &path, const RunConfig *expected = nullptr);
// Throws SessionError unless every weight (and moment, if it has them) of run `run` of `model` is in
// the checkpoint with the model's shape and dtype: what restoreWeights and restoreMoments need.
void checkCheckpointFits(const LoadedCheckpoint &checkpoint, Transformer &model, int64_t run);
// Copies the checkpoint's weights into run `run` of `model`, and its moments into `adam`.
void restoreWeights(const LoadedCheckpoint &checkpoint, Transformer &model, int64_t run);
void restoreMoments(const LoadedCheckpoint &checkpoint, Adam &adam, const Transformer &model,
                    int64_t run);

} // namespace headlab
