// Transformer.h — the one transformer of HeadLab, as an ensemble of R independent runs.
//
// Every weight carries a leading run dimension R, so R runs with the same shapes train as one
// batched model (R = 1 for a single run). Options cover every task: token or continuous input,
// pre- or post-norm, LayerNorm (unbiased variance, eps 1e-9) or unit-normalisation with a learned
// scalar, causal or bidirectional attention, biases, FFN width and activation, head dimension set
// apart from d_model / n_H, the attention-logit scale, and w parallel attention modules averaged.
// Internal to core/: includes LibTorch.
#pragma once

#include "core/attention/AttentionPlan.h"
#include "core/config/RunConfig.h"

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

namespace headlab {

struct Parameter {
    std::string name;        // "layers.0.wq", "embedding", ...
    torch::Tensor value;     // (R, ...)
    bool isQueryKey = false; // W_Q or W_K (and their biases): the QK learning-rate rule applies
    int64_t layer = -1;
};

// Looking inside the heads during a forward pass (the Heads view, `headlab-cli inspect`, the
// per-head statistics a run logs). Heads are indexed 0 .. w·H-1 in each layer (module j's head h is
// j·H + h). Attention goes through an explicit softmax when a probe is given, so every path gives
// the same weights. Runs of an ensemble with fewer heads in a layer than others have NaN in the
// columns beyond their own.
struct HeadProbe {
    // In: per layer, (R, heads) float: 1 keeps a head's output, 0 removes it (values between
    // blend). Undefined or missing layers: all kept.
    std::vector<torch::Tensor> keep;
    // In: per layer, (R, heads, head_dim): what a removed head outputs instead of zero (its mean
    // output, for mean ablation). Undefined: zero.
    std::vector<torch::Tensor> replacement;
    // Out when captureWeights: per layer, the attention weights (R, B, heads, Tq, T).
    bool captureWeights = false;
    std::vector<torch::Tensor> weights;
    // Out when captureStats: per layer, (R, heads) each: the RMS and the largest |value| of the
    // scaled logits q·k·scale over the entries the mask lets through, and the mean entropy of
    // the attention rows (nats).
    bool captureStats = false;
    std::vector<torch::Tensor> logitRms, logitMax, entropy;
    // With captureRoles: in, the role patterns of the input (HeadRoles.h: rolePatterns), each
    // (B, T, T); out, per role (each pattern's name, and "positional"), per layer (R, heads): the
    // heads' role scores.
    bool captureRoles = false;
    std::map<std::string, torch::Tensor> patterns;
    std::map<std::string, std::vector<torch::Tensor>> roles;
    // Out when captureMeanOutputs: per layer, each head's output averaged over the batch and the
    // query positions (R, heads, head_dim): the replacement of mean ablation.
    bool captureMeanOutputs = false;
    std::vector<torch::Tensor> meanOutputs;
    // In: per layer, a change of the attention's weights ("wq", "wk", "wv", "wo", each shaped as
    // Transformer::attentionWeights gives it: the last training step's update). Out, per weight,
    // per layer (R, heads): how far the change moves the head's outputs on this input beyond what
    // a change of the same size independent of the input would, ‖X·ΔW_h‖ / (‖X‖·‖ΔW_h‖/√fan-in)
    // with X the rows the weight reads (the attention's input, normalized under pre-norm, for W_Q,
    // W_K, W_V; the head's output for its rows of W_O): 1 for an independent change, √fan-in for one aligned with every
    // row (Everett et al. 2024's alignment). NaN where the change is zero.
    std::vector<std::map<std::string, torch::Tensor>> updates;
    std::map<std::string, std::vector<torch::Tensor>> alignment;
};

// HeadProbe::alignment for one group of r runs with h heads of width d: x (r, N, d_model) the rows
// W_Q, W_K and W_V read, o (r, N, h·d) the heads' outputs that W_O reads, `updates` the changes
// of those weights ("wq", "wk", "wv": (r, d_model, h·d); "wo": (r, h·d, d_model); any may be
// missing). Per weight given, (r, h).
std::map<std::string, torch::Tensor>
updateAlignment(const torch::Tensor &x, const torch::Tensor &o,
                const std::map<std::string, torch::Tensor> &updates, int64_t h, int64_t d);

class Transformer {
public:
    // vocabSize 0 means continuous input and output of width dModel (no embedding/unembedding).
    // maxPositions 0 means no positional embedding.
    // Weights are allocated on `device`; call initializeRun for every run before training.
    // runHeads: each run's heads per layer, when runs of one width differ in head count (the head
    // dimension then follows as dModel / heads, so every weight keeps its shape); empty: config.heads.
    // stabilizers: qk-layernorm, soft-capping and σReparam change the forward pass; z-loss is the
    // tasks' (trainingCrossEntropy) and independent weight decay the optimizer's.
    // plan: each layer's attention path (core/attention/AttentionPlan.h), planned by the caller
    // for the task's sequence length; null: planned here for maxPositions (0: a short sequence).
    Transformer(const ModelConfig &config, int64_t vocabSize, int64_t maxPositions, int64_t runs,
                const torch::Device &device, const std::vector<std::vector<int64_t>> &runHeads = {},
                const StabilizerConfig &stabilizers = {}, const AttentionPlan *plan = nullptr);

    // Initialises run r's slice from its own CPU generator seeded with `seed`, in a fixed order, so a
    // run starts from the same weights whether it trains alone or in an ensemble, on any device.
    void initializeRun(int64_t run, uint64_t seed);

    // input: tokens (B, T) shared by all runs, tokens (R, B, T), or points (R, B, T, dModel).
    // lastOnly: the last layer computes its queries, MLP and output at the last position only.
    // Returns logits (R, B, T', vocab) or outputs (R, B, T', dModel), T' = 1 when lastOnly.
    torch::Tensor forward(const torch::Tensor &input, bool lastOnly = false) const;
    // The same pass, looking inside the heads (HeadProbe).
    torch::Tensor forward(const torch::Tensor &input, bool lastOnly, HeadProbe &probe) const;

    // Every forward pass from now on removes or replaces heads as `intervention` says (its keep and
    // replacement; nothing is captured), until it is set back to null: how a task's own evaluation
    // measures an ablation. The probe must outlive its use.
    void setIntervention(const HeadProbe *intervention) const { m_intervention = intervention; }
    // Heads (w·H) of run `run` in `layer`, and the most any run has there.
    int64_t headsOf(size_t layer, int64_t run) const;
    int64_t maxHeads(size_t layer) const;
    size_t layers() const { return m_layers.size(); }
    // Per head (R, maxHeads) of `layer`: the Frobenius norm of its slice of W_Q, W_K, W_V (its
    // columns) and W_O (its rows), or of their gradients. Keys "wq", "wk", "wv", "wo"; with
    // `queryKeyOnly` just "wq" and "wk" (what the training step keeps of the gradients).
    std::map<std::string, torch::Tensor> headNorms(size_t layer, bool gradients,
                                                   bool queryKeyOnly = false) const;
    // The attention's weights of `layer` as trained (the parameters, before any reparametrization):
    // "wq", "wk", "wv" (R, d_model, inner) and "wo" (R, inner, d_model), views of the parameters.
    std::map<std::string, torch::Tensor> attentionWeights(size_t layer) const;

    std::vector<Parameter> &parameters() { return m_params; }
    // State that is not trained but is part of the model: σReparam's power-iteration vectors
    // ("layers.0.wq.sigma_u" (R, in), "….sigma_v" (R, out)), updated by every forward pass with
    // gradients on. Checkpoints save and restore them. Empty without σReparam.
    std::vector<Parameter> &buffers() { return m_buffers; }
    const StabilizerConfig &stabilizers() const { return m_stabilizers; }
    // σ(W) of every reparametrized weight as its power iteration estimates it now, (R) each, by
    // weight name ("layers.0.wq"): for tests and the head statistics.
    std::map<std::string, torch::Tensor> spectralNorms() const;
    // Every parameter is a view into one flat buffer (each a contiguous (R, ...) block), and so is
    // its gradient: the optimizer updates all weights of all runs with a handful of kernels.
    const torch::Tensor &flatParameters() const { return m_flat; }
    const torch::Tensor &flatGradients() const { return m_flatGrad; }
    const ModelConfig &config() const { return m_config; }
    int64_t runs() const { return m_runs; }
    int64_t vocabSize() const { return m_vocab; }
    int64_t parameterCount() const; // per run
    // For provenance: each layer's attention path as it ran (AttentionPlan::describe: the plan,
    // and a layer whose kernel refused a layout and fell back), and whether linear layers write
    // their weight gradients directly.
    std::string attentionPath() const { return m_attention.describe(); }
    const AttentionPlan &attentionPlan() const { return m_attention; }
    bool directGradients() const { return m_directGradients; }
    // Q, K and V as one product (HEADLAB_FUSED_QKV; on the GPU by default).
    bool fusedQkv() const { return m_fusedQkv; }
    // Whether a training step took the ReLU feed-forward block's fused kernels (HEADLAB_FUSED_FFN;
    // on the GPU by default).
    bool fusedFfn() const { return m_ffnFused; }
    // Whether a step took its first product with the bias and ReLU inside (fusedBiasReluProduct;
    // HEADLAB_FFN_PRODUCT).
    bool fusedFfnProduct() const { return m_ffnProduct; }
    // Whether a step took the unit-scale norm's residual step as one kernel (HEADLAB_FUSED_NORM).
    bool fusedNorm() const { return m_normFused; }
    // Whether a step took the LayerNorm kernels (AffineLayerNorm).
    bool fusedLayerNorm() const { return m_layerNormFused; }
    // Whether a step took the CPU's embedding loop (TokenEmbedding, HEADLAB_FUSED_EMBEDDING).
    bool fusedEmbedding() const { return m_embeddingFused; }
    // Whether a step took the micro-heads' attention kernels (MicroAttention).
    bool fusedAttention() const { return m_attentionFused; }

private:
    // σReparam of one weight W (R, in, out): Ŵ = γ/σ(W)·W, σ(W) = uᵀWv from one power iteration
    // per training forward pass (undefined gamma: not reparametrized).
    struct Sigma {
        torch::Tensor gamma; // (R, 1), a parameter
        torch::Tensor u, v;  // (R, in), (R, out): buffers
    };
    struct Layer {
        torch::Tensor ln1Gain, ln1Shift, ln2Gain, ln2Shift; // (R, m), or (R, 1) for UnitScale
        torch::Tensor qGain, kGain; // (R, w·H·hd): qk-layernorm's learned gains (qk_norm: gain)
        Sigma wqSigma, wkSigma, wvSigma, woSigma, w1Sigma, w2Sigma;
        torch::Tensor wq, wk, wv;         // (R, m, w·H·hd)
        torch::Tensor bq, bk, bv;         // (R, w·H·hd)
        torch::Tensor wo;                 // (R, w·H·hd, m): per-head projections, summed
        torch::Tensor bo;                 // (R, m)
        torch::Tensor w1, b1, w2, b2;     // (R, m, F), (R, F), (R, F, m), (R, m)
        int64_t heads = 1;                // w·H (of run 0 when runs differ)
        std::vector<int64_t> headsOfRuns; // w·H of each run
        int64_t headDim = 1;
        struct Group {
            int64_t heads;      // w·H of these runs
            torch::Tensor runs; // (R_g) int64: which runs
        };
        std::vector<Group> groups;  // empty when every run has the same heads
        torch::Tensor inverseOrder; // (R): position of run r in the concatenated groups
        // Where the plan says micro-heads (AttentionPlan.h, its M): the least common multiple M of
        // the runs' head counts, each of width inner / M. A run's head of width inner / h is M / h
        // adjacent micro-heads whose scores add up, which `mix` (R, M, M) does along with the logit
        // scale, so runs with different head counts need no split into groups.
        torch::Tensor mix; // undefined when every run has M heads: then a scale does
        double microScale = 1.0;
    };

    torch::Tensor norm(const torch::Tensor &x, const torch::Tensor &gain,
                       const torch::Tensor &shift) const;
    // norm(r + a): the post-norm residual step (one fused kernel for the unit-scale norm on the GPU).
    torch::Tensor addNorm(const torch::Tensor &r, const torch::Tensor &a, const torch::Tensor &gain,
                          const torch::Tensor &shift) const;
    torch::Tensor linear(const torch::Tensor &x, const torch::Tensor &w,
                         const torch::Tensor &b) const;
    // x·[w_1 w_2 w_3] (+ biases; undefined ones are left out, all or none): one product → (R, B, T, Σ out).
    torch::Tensor linearMany(const torch::Tensor &x, const std::vector<torch::Tensor> &ws,
                             const std::vector<torch::Tensor> &bs) const;
    torch::Tensor attention(const Layer &layer, const torch::Tensor &x, bool lastOnly,
                            HeadProbe *probe = nullptr, size_t index = 0) const;
    // Explicit attention of runs that all have `heads` heads, with what `probe` asks for
    // (captures come back per run group in `out`, at (R_g, heads, ...)).
    struct ProbeParts {
        torch::Tensor weights, rms, max, entropy, mean;
        std::map<std::string, torch::Tensor> roles, alignment;
    };
    torch::Tensor attendProbed(const torch::Tensor &q, const torch::Tensor &k,
                               const torch::Tensor &v, int64_t heads, int64_t headDim,
                               bool lastOnly, const torch::Tensor &keep,
                               const torch::Tensor &replacement, const HeadProbe &probe,
                               ProbeParts &out) const;
    torch::Tensor forwardImpl(const torch::Tensor &input, bool lastOnly, HeadProbe *probe) const;
    // The layer's attention output (R, B, Tq, inner) from `attend(q, k, v, heads, headDim, runs)`
    // called once for all runs (runs undefined) when they have the same heads, else once per group
    // of runs with the same heads (runs: their indices), the groups' outputs put back in run order.
    template <typename Attend>
    torch::Tensor byHeadGroups(const Layer &layer, const torch::Tensor &q, const torch::Tensor &k,
                               const torch::Tensor &v, Attend &&attend) const;
    // Head by head, by the layer's path: ATen's scaled_dot_product_attention (Sdpa), the softmax
    // computed here where a soft cap acts on the scores (Explicit), or on the CPU every (sequence,
    // head) a vector lane (Lanes, LaneAttention.h).
    torch::Tensor attend(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                         int64_t heads, int64_t headDim, bool lastOnly, AttentionPath path) const;
    // packed: the one Q/K/V product q, k and v are thirds of, when they are (undefined if not).
    torch::Tensor attendMicro(const Layer &layer, size_t index, const torch::Tensor &q,
                              const torch::Tensor &k, const torch::Tensor &v, bool lastOnly,
                              const torch::Tensor &packed) const;
    double logitScale(int64_t headDim) const;
    // The layer's micro-heads where its plan takes them: M, and the mix or the scale.
    void buildMicroHeads(Layer &L, const LayerAttention &plan,
                         const std::vector<int64_t> &headsOfRuns, int64_t inner);
    void groupRunsByHeads(Layer &L, const std::vector<int64_t> &headsOfRuns, size_t layer,
                          int64_t inner);
    torch::Tensor mlp(const Layer &layer, const torch::Tensor &x) const;
    // W, or γ/σ(W)·W under σReparam (one power-iteration step first when gradients are on).
    torch::Tensor weight(const torch::Tensor &w, const Sigma &sigma) const;
    // qk-layernorm: each head's slice of t (R, B, T, w·H·hd) normalised over its dimensions.
    torch::Tensor headNorm(const Layer &layer, const torch::Tensor &t,
                           const torch::Tensor &gain) const;
    // c·tanh(s/c) with softcap c > 0; s unchanged otherwise.
    torch::Tensor capped(const torch::Tensor &scores) const;
    void addSigma(Sigma &sigma, const std::string &name, const torch::Tensor *weight, int64_t in,
                  int64_t out, bool isQueryKey, int64_t layer);
    // Registers a parameter; `target` receives its view once allocate() has made the flat buffer.
    void add(torch::Tensor *target, const std::string &name, std::vector<int64_t> shape,
             bool isQueryKey = false, int64_t layer = -1);
    void allocate();

    struct Pending {
        torch::Tensor *target;
        std::vector<int64_t> shape;
    };
    std::vector<Pending> m_pending;
    torch::Tensor m_flat, m_flatGrad;

    ModelConfig m_config;
    int64_t m_vocab = 0;
    int64_t m_maxPositions = 0;
    int64_t m_runs = 1;
    torch::Device m_device;
    bool m_directGradients =
        true;                // linear layers write their weight gradients into the flat buffer
    bool m_fusedQkv = false; // Q, K, V as one product (the GPU's default)
    mutable bool m_ffnFused = false;       // a training step took FeedForwardRelu
    mutable bool m_ffnProduct = false;     // ... with its first product from CUTLASS
    mutable bool m_normFused = false;      // a step took ResidualUnitNorm
    mutable bool m_layerNormFused = false; // a step took AffineLayerNorm
    mutable bool m_embeddingFused = false; // a step took TokenEmbedding
    mutable bool m_attentionFused = false; // a step took MicroAttention
    // Each layer's attention path; a layer whose kernel refused a layout records it (fellBack).
    mutable AttentionPlan m_attention;
    double m_unitNormEps = 0; // HEADLAB_UNIT_NORM_EPS: unit-scale norm divides by max(||x||, eps)
    torch::Tensor m_embedding, m_positions, m_finalGain, m_finalShift, m_unembedding;
    std::vector<Layer> m_layers;
    std::vector<Parameter> m_params;
    std::vector<Parameter> m_buffers;
    StabilizerConfig m_stabilizers;
    struct SigmaRef {
        std::string name; // the weight's: "layers.0.wq"
        const torch::Tensor *weight;
        Sigma *sigma;
    };
    std::vector<SigmaRef> m_sigmas;
    mutable const HeadProbe *m_intervention = nullptr;
};

} // namespace headlab
