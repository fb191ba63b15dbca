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
#include <limits>
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

// What a removed head outputs: nothing, its mean output over the statistics batch, or the
// constant that minimises the training loss in its place (Li & Janson 2024, "optimal ablation":
// found by Adam from the mean, for each head alone with the others intact, and kept when heads go
// together).
enum class AblationMode { Zero, Mean, OptimalConstant };
// The order pruning removes heads in:
// - Greedy: at each step the head whose removal raises the test loss least (exact, the oracle);
// - Gradient: Michel, Levy & Neubig (2019): the head of least importance I_h = E|dL/dxi_h| over
//   training batches, xi_h a gate on its output, each layer's importances normalised to unit L2
//   norm over its kept heads, recomputed after each removal;
// - SingleShot: by the cost of removing each head alone, ranked once;
// - Random: a seeded shuffle (several seeds give the spread of a random order).
enum class PruningOrder { Greedy, Gradient, SingleShot, Random };

// How a pruning curve was made (Michel et al.'s post-hoc claim and the claims with retraining are
// different claims):
// - PostHoc: heads removed from the trained model, nothing trained again;
// - FineTune: each pruned model of an order's curve trained on for N steps, its heads held out;
// - Scratch: the control: the same architecture with the surviving heads per layer (their head
//   dimension kept) trained from scratch for the run's steps;
// - L0Gates: Voita et al. (2019): a Hard Concrete gate on each head's output learnt with the
//   weights from the trained model, for each λ of a sweep; a point per λ.
enum class PruningMethod { PostHoc, FineTune, Scratch, L0Gates };

// One row per ablation mode, pruning order and pruning method: the name the CLI, the CSV, the session and
// Python use, and the words the app shows. Every list of them derives from these tables.
struct AblationModeRow {
    AblationMode mode;
    const char *name;  // "zero", "mean", "optimal"
    const char *label; // "zero the head"
};
struct PruningOrderRow {
    PruningOrder order;
    const char *name;  // "greedy", "gradient", "single-shot", "random"
    const char *label; // "greedy (exact)"
    const char *help;
};
struct PruningMethodRow {
    PruningMethod method;
    const char *name;  // "post-hoc", "fine-tune", "scratch", "l0"
    const char *label; // "fine-tuned"
    const char *help;
    // Each point is its own model (the control at a head count, L0 gates at a λ), not the one
    // model with one head more removed: how many heads can go is the most any point removed
    // within a bound, rather than where the curve first leaves it.
    bool separateModels;
};
// A bound on the test loss's rise over the intact model's: relative (0.01: 1 %) or in nats.
struct LossBoundRow {
    const char *name;  // "1pct": the JSON's removable_<name>, the findings' column
    const char *label; // "1 %"
    double value;
    bool absolute;
    // The highest test loss within the bound of a model whose own loss is `intact`.
    double limit(double intact) const { return absolute ? intact + value : intact * (1.0 + value); }
};
// 1 %, 5 % and +0.05 nats (the bound of the addition findings, for losses near zero).
const std::vector<LossBoundRow> &lossBoundTable();
const std::vector<AblationModeRow> &ablationModeTable();
const std::vector<PruningMethodRow> &pruningMethodTable();
const char *toString(PruningMethod);
PruningMethod pruningMethodOf(const std::string &name);
const std::vector<PruningOrderRow> &pruningOrderTable();
const char *toString(AblationMode);
const char *toString(PruningOrder);
// The mode or order of a name of the tables; throws std::invalid_argument naming the known ones.
AblationMode ablationModeOf(const std::string &name);
PruningOrder pruningOrderOf(const std::string &name);

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
    // What the order ranked the head by when it went: its normalised gradient importance
    // (Gradient), the test loss with it removed alone (SingleShot) or at this step (Greedy);
    // NaN for Random and at step 0.
    double score = std::numeric_limits<double>::quiet_NaN();
};

struct PruningOptions {
    AblationMode mode = AblationMode::Zero;
    PruningOrder order = PruningOrder::Greedy;
    uint64_t seed = 0;        // Random: the shuffle's seed
    int64_t keepPerLayer = 1; // heads every layer keeps (0: every head may go)
    int64_t batches = 8;      // Gradient: the training batches I_h averages over
};

// Pruning's defaults, for the CLI and the app alike.
struct PruningDefaults {
    int randomOrders = 3;        // random orders, one per seed
    int64_t fineTuneSteps = 200; // also the L0 gates' steps
    int64_t scratchPoints = 5;
    std::vector<double> lambdas = {0.003, 0.01, 0.03, 0.1, 0.3, 1.0};
};

// One pruning curve: the test loss against the heads removed, in one order (or, for L0 gates,
// one point per λ, `score` holding it).
struct PruningCurve {
    PruningMethod method = PruningMethod::PostHoc;
    int64_t trainedSteps = 0; // FineTune, L0Gates: the steps trained; Scratch: the run's
    PruningOrder order = PruningOrder::Greedy;
    AblationMode mode = AblationMode::Zero;
    uint64_t seed = 0;
    // FineTune, L0Gates: the learning rate they trained at (NaN for the others, which train as
    // the run did or not at all).
    double learningRate = std::numeric_limits<double>::quiet_NaN();
    std::vector<PruningStep> steps; // steps[0]: nothing removed
    // How many heads can go within `bound` of `intact`, the model's own test loss before any
    // head was removed (for every method: fine-tuning's first point, trained on, is not it):
    // along a curve of one model, the heads removed before its loss first exceeds the bound; for
    // separate models (PruningMethodRow::separateModels), the most any within it.
    int64_t removableWithin(const LossBoundRow &bound, double intact) const;
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
    // Each head's gradient importance (PruningOrder::Gradient) with every head kept: per layer,
    // per head, normalised as the order ranks it.
    std::vector<std::vector<double>> gradientImportance(AblationMode mode,
                                                        int64_t batches = 8) const;
    // Heads removed one at a time in `options.order` until every layer is down to
    // keepPerLayer heads, with the test loss after each. `progress(done, total)` is called as
    // it goes; returning false stops early (the curve so far is returned).
    PruningCurve prune(const PruningOptions &options,
                       const std::function<bool(int64_t done, int64_t total)> &progress = {}) const;

    // --- With retraining (HeadRetraining.cpp) -----------------------------------------------
    // Every model of `curve` (each count of heads removed, none removed too) trained on for
    // `steps` steps of the last phase's batches, at the learning rate its schedule ended at (no
    // less than a tenth of its peak), from the checkpoint's Adam moments where it has them, its removed heads held
    // out as the curve's ablation says; the test loss after. One copy of the model per count, 32
    // at a time.
    PruningCurve fineTune(const PruningCurve &curve, int64_t steps,
                          const std::function<bool(int64_t, int64_t)> &progress = {}) const;
    // The control: for `points` counts of heads removed along `curve` (evenly spaced, both ends
    // included; 0: every count), the same model with the surviving heads per layer, each of the
    // run's head dimension, trained from scratch as the run was (its phases, seeds and steps);
    // the final test loss. Throws std::invalid_argument when the run's layers differ in head
    // dimension (no one architecture keeps them).
    PruningCurve fromScratch(const PruningCurve &curve, int64_t points,
                             const std::function<bool(int64_t, int64_t)> &progress = {}) const;
    // L0 gates (Voita et al. 2019; Louizos et al. 2018's Hard Concrete, β = 2/3, γ = −0.1,
    // ζ = 1.1): for each λ, a gate on every head's output and the model's weights trained
    // together from the checkpoint for `steps` steps (at fineTune's learning rate) on loss +
    // λ · (expected share of heads open); then each gate fixed at its expected value, the heads whose gate is 0 removed.
    // A point per λ (`score`), sorted by heads removed; the first is the intact model.
    PruningCurve l0Gates(const std::vector<double> &lambdas, int64_t steps, uint64_t seed = 0,
                         const std::function<bool(int64_t, int64_t)> &progress = {}) const;

private:
    struct Impl;
    struct Retraining; // HeadRetraining.cpp
    std::unique_ptr<Impl> d;
};

} // namespace headlab
