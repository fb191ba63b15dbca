// HeadInspector.h — looking inside the heads of a trained (or training) run: attention maps on an
// input, per-head statistics, and head ablation with a greedy pruning curve.
//
// Torch-free interface for the CLI (`headlab-cli inspect`) and the app's Heads view. The trainer
// also fills AttentionMaps live (TrainerControl::attentionWanted) and logs the per-head statistics
// at every evaluation as curves "head.<layer>.<head>.<stat>" (core/metrics/Metrics.h).
#pragma once

#include "core/config/RunConfig.h"
#include "core/config/RunResult.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headlab {

// The attention weights of every head of every layer of one run on one input.
struct AttentionMaps {
    int64_t step = 0;
    std::string description;         // "123 + 456, digit 0: answer 9"
    std::vector<std::string> labels; // one per key position
    int64_t queries = 0, keys = 0;   // rows and columns of each map
    int64_t focusRow = -1;           // the row that matters most (the answer position), or -1
    std::vector<int64_t> heads;      // per layer
    std::vector<std::vector<float>> weights; // per layer: heads × queries × keys, row-major
    // The model's most probable output token at focusRow and its softmax probability, where the
    // task's output is a token (ProbeInput::vocabulary); probability < 0: no prediction.
    std::string prediction;
    double probability = -1.0;
    float at(size_t layer, int64_t head, int64_t query, int64_t key) const
    {
        return weights[layer][static_cast<size_t>((head * queries + query) * keys + key)];
    }
};

enum class AblationMode { Zero, Mean };
const char *toString(AblationMode);

// One head's statistics: what the run logs at each evaluation, recomputed at a checkpoint.
struct HeadStat {
    int64_t layer = 0, head = 0;
    std::map<std::string, double> values; // by HeadStatSpec name: logit_rms, entropy, wq_norm, ...
};

struct HeadAblation {
    int64_t layer = 0, head = 0;
    double testLoss = 0.0;                    // with the head removed
    double delta = 0.0;                       // testLoss − the intact model's
    std::map<std::string, double> extraDelta; // e.g. test_digit_0: the change of each digit's loss
};

struct PruningStep {
    int64_t removed = 0;   // heads removed so far
    double fraction = 0.0; // of all heads
    double testLoss = 0.0;
    int64_t layer = -1, head = -1; // the head removed at this step (-1 at step 0)
};

class Transformer;
struct ProbeInput;

// Run `run`'s attention maps on `input` (the trainer's live maps; HeadInspector::attention).
// Internal to core/ (needs a model): declared here so that its result type stays torch-free.
AttentionMaps attentionMapsOf(const Transformer &model, const ProbeInput &input, int64_t run);

class HeadInspector {
public:
    // Rebuilds the run of a checkpoint (docs/CHECKPOINTS.md) on `device` ("cpu", "cuda", "auto").
    // Throws SessionError naming the file when it cannot be used.
    // With `expected` (the run's config), a checkpoint written for another configuration is refused
    // before anything is built from its own config (a 12 KB file could ask for d_model 4096 x 16).
    explicit HeadInspector(const std::string &checkpointPath, const std::string &device = "cpu",
                           const RunConfig *expected = nullptr);
    ~HeadInspector();
    HeadInspector(const HeadInspector &) = delete;
    HeadInspector &operator=(const HeadInspector &) = delete;

    const RunConfig &config() const;
    int64_t step() const;
    // The test loss HeadLab logged at the checkpoint's step, or NaN.
    double loggedTestLoss() const;
    int64_t totalHeads() const;

    // An input of the task's syntax to start from ("123 + 456, digit 0", a prompt, a seed).
    std::string exampleInput() const;
    // The task's input syntax (Task::probeInput); throws std::invalid_argument on a bad one.
    AttentionMaps attention(const std::string &input) const;
    // Logit scale and entropy on the task's statistics batch, and weight norms, per head; the
    // gradient norms as the run logged them at this step (when it did).
    std::vector<HeadStat> statistics() const;
    // The intact model's test loss and extra curves (test_digit_i ...).
    std::map<std::string, double> baseline() const;
    // Each head removed in turn (zeroed, or replaced by its mean output over the statistics
    // batch). Batched: many copies of the model, one head off in each, in one forward pass.
    std::vector<HeadAblation> ablate(AblationMode mode) const;
    // Greedy pruning: at each step the head whose removal raises the test loss least goes.
    // `progress(done, total)` is called after each step; returning false stops early (the curve
    // so far is returned).
    std::vector<PruningStep>
    prune(AblationMode mode,
          const std::function<bool(int64_t done, int64_t total)> &progress = {}) const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace headlab
