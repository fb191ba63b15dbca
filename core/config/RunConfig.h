// RunConfig.h — the resolved configuration of one training run, as plain value types.
//
// Everything HeadLab needs to reproduce a run is here: the task, the transformer's shape, the
// training phases, the learning rate, the seeds and the device. No LibTorch and no Qt, so the GUI,
// the session loader and the CLI can all use it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace headlab {

// What a phase's loss is computed on.
enum class Objective {
    NextToken,  // cross-entropy of the next token at every position (language warm-up, text LM)
    Answer,     // cross-entropy at the position that predicts the answer token only (addition)
    Regression, // mean squared error times d, every position (nearest-neighbour)
};

enum class OptimizerKind { Adam, AdamW };
enum class ScheduleKind { Constant, WarmupCosine };
enum class NormKind { LayerNorm, UnitScale }; // UnitScale: s · x / ||x||, one learned scalar s
enum class NormPlacement { PreNorm, PostNorm };
enum class Activation { Gelu, Relu };
enum class LogitScale { InvSqrtHeadDim, InvHeadDim, None };
// How weights start. Uniform: HeadLab's own, every weight and bias U(±1/sqrt(fan_in)) (outputs
// zero with zero_init_outputs). PyTorch: the defaults of nn.MultiheadAttention and nn.Linear, as
// the nearest-neighbour paper's reference code has them (EXPERIMENTS.md §2): Xavier-uniform on the
// packed Q/K/V projection, zero Q/K/V and output biases, output projection U(±1/sqrt(H·m_H)) per
// attention module, FFN weights and biases U(±1/sqrt(fan_in)).
enum class InitKind { Uniform, PyTorch };

struct OptimizerConfig {
    OptimizerKind kind = OptimizerKind::Adam;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weightDecay = 0.0;
    bool operator==(const OptimizerConfig &) const = default;
};

struct ScheduleConfig {
    ScheduleKind kind = ScheduleKind::Constant;
    double warmupFraction =
        0.05; // WarmupCosine: linear from 0 over this fraction, then cosine to 0
    // The learning rate changes once every stepEvery steps (an "epoch"), as a scheduler stepped
    // per epoch does: the schedule is evaluated at epoch step / stepEvery of ceil(steps / stepEvery),
    // so with warm-up the first epoch trains at lr 0. 1: every step.
    int64_t stepEvery = 1;
    bool operator==(const ScheduleConfig &) const = default;
};

struct PhaseConfig {
    std::string name = "train";
    Objective objective = Objective::Answer;
    int64_t steps = 1000;
    int64_t batchSize = 64;
    // The phase's learning rate: either fixed here, or the run's scanned η (RunConfig::lr).
    bool useScannedLr = true;
    double lr = 1e-3; // used when useScannedLr is false
    OptimizerConfig optimizer;
    ScheduleConfig schedule;
    bool operator==(const PhaseConfig &) const = default;
};

struct ModelConfig {
    int64_t dModel = 96;
    // Heads per layer; its size is the number of layers. A constant schedule is {n, n, ...}.
    std::vector<int64_t> heads = {1, 1};
    // Head dimension (the rank of each head). 0 derives it per layer as dModel / heads[l].
    int64_t headDim = 0;
    int64_t ffnWidth = 0; // 0 means 4 · dModel
    Activation activation = Activation::Gelu;
    NormKind norm = NormKind::LayerNorm;
    NormPlacement placement = NormPlacement::PreNorm;
    bool finalNorm = true; // LN_final before the unembedding (pre-norm models)
    bool causal = true;
    bool bias = false;
    bool zeroInitOutputs = true; // attention output, MLP output and unembedding start at zero
    LogitScale logitScale = LogitScale::InvSqrtHeadDim;
    int64_t widthMultiplier = 1; // w parallel attention modules per layer, outputs averaged
    InitKind init = InitKind::Uniform;
    bool operator==(const ModelConfig &) const = default;

    int64_t layers() const { return static_cast<int64_t>(heads.size()); }
    int64_t headDimOfLayer(size_t layer) const
    {
        return headDim > 0 ? headDim : (heads[layer] > 0 ? dModel / heads[layer] : 0);
    }
    int64_t ffn() const { return ffnWidth > 0 ? ffnWidth : 4 * dModel; }
    int64_t totalHeads() const
    {
        int64_t n = 0;
        for (auto h : heads) n += h;
        return n;
    }
};

struct TaskConfig {
    // The task: a row of the task table (core/schema/TaskList.h), e.g. "addition".
    std::string kind = "addition";
    // Addition (EXPERIMENTS.md §1).
    int64_t trainPairs = 64000; // 3 samples a pair: 192,000 training samples
    int64_t testPairs = 192;    // 576 test samples
    int64_t testPairBase = 64000;
    // Nearest neighbour (§2).
    int64_t pointDim = 64;  // d
    int64_t numPoints = 16; // N
    // Text (§3): byte-level language modelling.
    std::string textPath; // empty: the built-in seeded children's-story corpus
    int64_t contextLength = 128;
    double validationFraction = 0.1;
    int64_t corpusBytes = 2'000'000; // size of the generated corpus
    // Text: samples drawn from each finished run's model into RunResult::samples (TextTask.h).
    std::string samplePrompt = "Once upon a time"; // empty: start from a newline
    int64_t sampleLength = 200;                    // bytes generated per sample; 0: no samples
    int64_t sampleCount = 1;        // samples per run, seeds sampleSeed, sampleSeed + 1, ...
    double sampleTemperature = 0.8; // 0: always the most likely byte
    uint64_t sampleSeed = 0;
    // Options of tasks that keep them by name rather than as members here (the sequence-file
    // task): key → canonical text, read, checked and written by the task's own field rows.
    std::map<std::string, std::string> options;
    // Where relative file paths among the options are resolved: the directory of the session file
    // the config was read from (empty: the working directory). Not saved, not part of the config's
    // identity: a session folder can move.
    std::string baseDirectory;
    bool operator==(const TaskConfig &) const = default;
};

// `path` as the task should open it: unchanged when absolute or when the task has no base
// directory, else under its base directory.
std::string resolveTaskPath(const TaskConfig &task, const std::string &path);

// η_QK = η · sqrt(referenceHeadDim / m_H) for W_Q and W_K (EXPERIMENTS.md §4).
struct QkRuleConfig {
    bool enabled = false;
    double referenceHeadDim = 8.0;
    bool operator==(const QkRuleConfig &) const = default;
};

// Attention stabilizers from practice (docs/STABILIZERS.md), each off by default: left at their
// defaults they change no number and no run file name.
enum class QkNorm { Off, On, Gain }; // LayerNorm of each head's q and k (Gain: with learned gains)
enum class SigmaReparam { Off, QueryKey, All }; // W ← γ/σ(W)·W on W_Q, W_K, or every product
struct StabilizerConfig {
    QkNorm qkNorm = QkNorm::Off;
    double softcap = 0.0; // > 0: attention scores s (after the logit scale) become c·tanh(s/c)
    double zLoss = 0.0;   // > 0: the training loss adds z_loss · mean log²Z of the output logits
    SigmaReparam sigmaReparam = SigmaReparam::Off;
    // > 0: every step, before the optimizer's update, each weight shrinks by λ times the
    // schedule's multiplier, whatever the learning rate (Wortsman et al. 2023, §3.2.2).
    double independentWeightDecay = 0.0;
    bool operator==(const StabilizerConfig &) const = default;
    bool any() const { return !(*this == StabilizerConfig{}); }
};

struct RunConfig {
    TaskConfig task;
    ModelConfig model;
    std::vector<PhaseConfig> phases;
    double lr = 1e-3; // the scanned learning rate η
    QkRuleConfig qkRule;
    StabilizerConfig stabilizers;
    int64_t evalEvery = 100; // steps between test evaluations
    int64_t logEvery = 10;   // steps averaged into one train-loss point
    int64_t evalBatches = 0; // 0: the whole test set
    // A run ends, done, once its test loss has stayed below 5/6 of the task's learned level at
    // every evaluation for this many steps; 0: every run trains all its steps.
    int64_t stopAfterLearned = 0;
    uint64_t initSeed = 0;
    uint64_t dataSeed = 0;
    std::string device = "auto"; // auto, cpu, cuda, cuda:N
    bool tf32 = false;           // TF32 matmuls on CUDA
    // Every member, baseDirectory among them: stricter than the run's identity (its canonical
    // YAML, which leaves out what is not saved), never looser. NaN is unequal to itself.
    bool operator==(const RunConfig &) const = default;

    int64_t totalSteps() const
    {
        int64_t n = 0;
        for (const auto &p : phases) n += p.steps;
        return n;
    }
    // The global step at which each phase begins (RunResult::phaseStarts once it has trained).
    std::vector<int64_t> phaseStarts() const
    {
        std::vector<int64_t> starts;
        int64_t n = 0;
        for (const auto &p : phases) starts.push_back(n), n += p.steps;
        return starts;
    }
};

// Upper bounds on what one run may ask for. They are far above anything the papers run and far
// below what would exhaust memory or loop for hours before training starts: the YAML reader
// names the key that exceeds one, and validate() checks them for configs built elsewhere (forms).
struct RunLimits {
    static constexpr int64_t kMaxLayers = 256;
    static constexpr int64_t kMaxDModel = 16384; // also head_dim and the nn task's point_dim
    static constexpr int64_t kMaxHeads = 16384;  // per layer
    static constexpr int64_t kMaxFfnWidth = 262144;
    static constexpr int64_t kMaxWidthMultiplier = 1024;
    static constexpr int64_t kMaxBatchSize = 65536;
    static constexpr int64_t kMaxSteps = 1'000'000'000;
    static constexpr int64_t kMaxPhases = 64;
    static constexpr int64_t kMaxContextLength = 65536;
    static constexpr int64_t kMaxPoints = 4096;
    static constexpr int64_t kMaxTrainPairs = 10'000'000;
    static constexpr int64_t kMaxTestPairs = 1'000'000;
    static constexpr int64_t kMaxPairBase = 1'000'000'000;
    static constexpr int64_t kMaxCorpusBytes = int64_t(1) << 31;
    static constexpr int64_t kMaxSampleLength = 1 << 20;
    static constexpr int64_t kMaxSampleCount = 1000;
    // A sweep: runs after expansion, values of one axis (a log-spaced count), combinations.
    static constexpr int64_t kMaxSweepRuns = 100'000;
    static constexpr int64_t kMaxAxisValues = 10'000;
};

// "at most 256 layers (a HeadLab limit), got 666666666": the one wording of a RunLimits refusal;
// `what` ("layers", "heads", "") follows the number.
std::string beyondLimit(int64_t maximum, int64_t got, const std::string &what = {});

// Names used in YAML, the CLI and the GUI for the enums above.
const char *toString(Objective);
const char *toString(OptimizerKind);
const char *toString(ScheduleKind);
const char *toString(NormKind);
const char *toString(NormPlacement);
const char *toString(Activation);
const char *toString(LogitScale);
const char *toString(InitKind);
const char *toString(QkNorm);
const char *toString(SigmaReparam);
// "qk_norm gain, softcap 30": the stabilizers that are on, for provenance and titles; "none".
std::string describe(const StabilizerConfig &);

// The checks of one resolved run that involve more than one field: "" when they pass, else why
// not, naming the field ("model.heads[1]: 5 heads do not divide d_model 96"). Each field's own
// range is its row's (core/schema/RunConfigFields.cpp): validate() (core/schema/TaskSpec.h) reads
// the config back through the rows, then adds these and the task's own checks.
std::string checkCombinations(const RunConfig &config);

} // namespace headlab
