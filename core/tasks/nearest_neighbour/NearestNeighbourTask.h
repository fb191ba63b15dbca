// NearestNeighbourTask.h — the nearest-neighbour retrieval task (EXPERIMENTS.md §2) on the device.
//
// Every sample is N points x_1..x_N drawn from N(0, I_d) and normalised onto the unit sphere; the
// target at position i is the farthest point, the x_j that minimises <x_i, x_j> (the nearest
// neighbour of −x_i). The points are the tokens: no embedding, no unembedding, no positions. The
// loss is the squared Euclidean distance between prediction and target, averaged over samples and
// points (= MSE × d), so predicting 0 scores exactly 1.
//
// Data: a fresh batch every step, for every run its own. The points come from a counter-based
// generator built of tensor ops: run r's batch at step t is a hash (lowbias32 rounds) of its data
// seed, t and each coordinate's index, turned into normals by Box–Muller. So a batch depends on the
// run's data seed and the step only (not on the ensemble around it, nor on what was drawn before),
// it is drawn on the training device, the step may be a device tensor (the trainer can capture
// the whole step in a CUDA graph), and every device draws the same points up to float rounding in
// log/cos. Torch's generators give neither of the last two: their streams differ by device, and a
// per-run reseed each step is a host call that a captured graph would not replay.
//
// Evaluation: one fixed held-out set of kTestSamples samples (eval_batches: its first batches),
// drawn once on the CPU from kTestSeed (independent of the runs' data seeds, so every run and
// device is scored on the same points), copied to the device. Internal to core/: includes LibTorch.
#pragma once

#include "core/schema/TaskSpec.h"
#include "core/tasks/Task.h"

#include <cstdint>
#include <vector>

namespace headlab {

class NearestNeighbourTask : public Task {
public:
    static constexpr int64_t kTestSamples = 1024;
    static constexpr uint64_t kTestSeed = 0x4e4e2d7465737431ULL; // "NN-test1"
    static constexpr int64_t kEvalChunk = 256;                   // test samples per forward pass

    // dataSeeds: one per run of the ensemble, in run order. evalBatches > 0: the held-out set's
    // first evalBatches · kEvalChunk samples only (RunConfig::evalBatches; 0: all of them).
    NearestNeighbourTask(const TaskConfig &config, std::vector<uint64_t> dataSeeds,
                         const torch::Device &device, int64_t evalBatches = 0);

    int64_t vocabSize() const override { return 0; }    // points in, points out
    int64_t maxPositions() const override { return 0; } // permutation-equivariant: no positions
    torch::Tensor trainLoss(const Transformer &model, const PhaseConfig &phase,
                            const torch::Tensor &step) override;
    // loss: the held-out loss (R); extra "test_accuracy": the fraction of positions whose
    // prediction is closer to the target than to any other of the sample's points.
    TaskEvaluation evaluate(const Transformer &model) override;
    // The zero predictor's 1 (TaskSpec::chancePlateau): a run that learned nothing scores it.
    double learnedThreshold() const override;
    ProbeInput probeInput(const std::string &text, int64_t runs) const override;
    ProbeInput statsInput(int64_t runs) const override;
    std::string exampleProbeText() const override
    {
        return taskSpec("nearest_neighbour").exampleInput;
    }
    // "fused_points": "on" once a training batch came from the CUDA kernel or the CPU loop
    // (Kernels.h), else "off".
    std::map<std::string, std::string> paths() const override;

    // The training points of every run at `step`: (R, B, N, d) on the device, unit norm.
    torch::Tensor trainingPoints(int64_t step, int64_t batchSize) const;
    torch::Tensor trainingPoints(const torch::Tensor &step, int64_t batchSize) const;
    const torch::Tensor &testPoints() const { return m_testPoints; } // (M, N, d)

    // Per run, three 32-bit keys derived from its data seed (splitmix64): (R, 3) int64 on the CPU.
    static torch::Tensor seedKeys(const std::vector<uint64_t> &dataSeeds);
    // Points on the unit sphere from the counter-based generator: seedKeys (R, 3), step 0-dim
    // int64 (same device) → (R, shape..., d); the last entry of shape is the dimension d. On a GPU
    // one CUDA kernel makes them (core/model/Kernels.h) unless HEADLAB_FUSED_POINTS=0; `fused`,
    // when given, says whether it did.
    static torch::Tensor unitPoints(const torch::Tensor &seedKeys, const torch::Tensor &step,
                                    std::vector<int64_t> shape, bool *fused = nullptr);
    // points (..., N, d) → (..., N, d): at i, the x_j (j ≠ i) with the smallest <x_i, x_j>.
    static torch::Tensor farthestPointTargets(const torch::Tensor &points);
    // prediction, target (R, B, N, d) → (R): mean over B and N of ||prediction − target||².
    static torch::Tensor squaredDistanceLoss(const torch::Tensor &prediction,
                                             const torch::Tensor &target);

private:
    torch::Tensor lossOfPoints(const Transformer &model, const torch::Tensor &points) const; // (R)

    TaskConfig m_config;
    torch::Device m_device;
    torch::Tensor m_seedKeys;    // (R, 3) int64 on the device
    torch::Tensor m_testPoints;  // (M, N, d)
    torch::Tensor m_testTargets; // (M, N, d)
    mutable bool m_fusedPoints = false;
};

} // namespace headlab
