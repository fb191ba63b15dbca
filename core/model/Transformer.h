// Transformer.h — the one transformer of HeadLab, as an ensemble of R independent runs.
//
// Every weight carries a leading run dimension R, so R runs with the same shapes train as one
// batched model (R = 1 for a single run). Options cover every task: token or continuous input,
// pre- or post-norm, LayerNorm (unbiased variance, eps 1e-9) or unit-normalisation with a learned
// scalar, causal or bidirectional attention, biases, FFN width and activation, head dimension set
// apart from d_model / n_H, the attention-logit scale, and w parallel attention modules averaged.
// Internal to core/: includes LibTorch.
#pragma once

#include "core/config/RunConfig.h"

#include <torch/torch.h>

#include <string>
#include <vector>

namespace headlab {

struct Parameter {
    std::string name;  // "layers.0.wq", "embedding", ...
    torch::Tensor value; // (R, ...)
    bool isQueryKey = false; // W_Q or W_K (and their biases): the QK learning-rate rule applies
    int64_t layer = -1;
};

class Transformer {
public:
    // vocabSize 0 means continuous input and output of width dModel (no embedding/unembedding).
    // maxPositions 0 means no positional embedding.
    // Weights are allocated on `device`; call initializeRun for every run before training.
    // runHeads: each run's heads per layer, when runs of one width differ in head count (the head
    // dimension then follows as dModel / heads, so every weight keeps its shape); empty: config.heads.
    Transformer(const ModelConfig &config, int64_t vocabSize, int64_t maxPositions, int64_t runs,
                const torch::Device &device, const std::vector<std::vector<int64_t>> &runHeads = {});

    // Initialises run r's slice from its own CPU generator seeded with `seed`, in a fixed order, so a
    // run starts from the same weights whether it trains alone or in an ensemble, on any device.
    void initializeRun(int64_t run, uint64_t seed);

    // input: tokens (B, T) shared by all runs, tokens (R, B, T), or points (R, B, T, dModel).
    // lastOnly: the last layer computes its queries, MLP and output at the last position only.
    // Returns logits (R, B, T', vocab) or outputs (R, B, T', dModel), T' = 1 when lastOnly.
    torch::Tensor forward(const torch::Tensor &input, bool lastOnly = false) const;

    std::vector<Parameter> &parameters() { return m_params; }
    // Every parameter is a view into one flat buffer (each a contiguous (R, ...) block), and so is
    // its gradient: the optimizer updates all weights of all runs with a handful of kernels.
    const torch::Tensor &flatParameters() const { return m_flat; }
    const torch::Tensor &flatGradients() const { return m_flatGrad; }
    const ModelConfig &config() const { return m_config; }
    int64_t runs() const { return m_runs; }
    int64_t vocabSize() const { return m_vocab; }
    int64_t parameterCount() const; // per run
    // For provenance: how attention is computed ("micro-heads" explicit softmax, "sdpa" fused
    // kernels, or per layer "micro-heads, sdpa"), and whether linear layers write their weight
    // gradients directly.
    std::string attentionPath() const;
    bool directGradients() const { return m_directGradients; }

private:
    struct Layer {
        torch::Tensor ln1Gain, ln1Shift, ln2Gain, ln2Shift; // (R, m), or (R, 1) for UnitScale
        torch::Tensor wq, wk, wv;                           // (R, m, w·H·hd)
        torch::Tensor bq, bk, bv;                           // (R, w·H·hd)
        torch::Tensor wo;                                   // (R, w·H·hd, m): per-head projections, summed
        torch::Tensor bo;                                   // (R, m)
        torch::Tensor w1, b1, w2, b2;                       // (R, m, F), (R, F), (R, F, m), (R, m)
        int64_t heads = 1;                                  // w·H (of run 0 when runs differ)
        int64_t headDim = 1;
        struct Group {
            int64_t heads;      // w·H of these runs
            torch::Tensor runs; // (R_g) int64: which runs
        };
        std::vector<Group> groups;  // empty when every run has the same heads
        torch::Tensor inverseOrder; // (R): position of run r in the concatenated groups
        // Short sequences attend explicitly over "micro-heads": the least common multiple M of the
        // runs' head counts, each of width inner / M. A run's head of width inner / h is M / h
        // adjacent micro-heads whose scores add up, which `mix` (R, M, M) does along with the logit
        // scale, so runs with different head counts need no split into groups. 0 (the fused
        // kernels) when M does not divide the features, or on the CPU when every run has M heads.
        int64_t microHeads = 0;
        torch::Tensor mix;         // undefined when every run has M heads: then a scale does
        double microScale = 1.0;
    };

    torch::Tensor norm(const torch::Tensor &x, const torch::Tensor &gain, const torch::Tensor &shift) const;
    torch::Tensor linear(const torch::Tensor &x, const torch::Tensor &w, const torch::Tensor &b) const;
    torch::Tensor attention(const Layer &layer, const torch::Tensor &x, bool lastOnly) const;
    torch::Tensor attend(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v, int64_t heads,
                         int64_t headDim, bool lastOnly) const;
    torch::Tensor attendMicro(const Layer &layer, const torch::Tensor &q, const torch::Tensor &k,
                              const torch::Tensor &v, bool lastOnly) const;
    double logitScale(int64_t headDim) const;
    // headsOfRuns: each run's heads (w·H) in the layer.
    void buildMicroHeads(Layer &L, const std::vector<int64_t> &headsOfRuns, int64_t inner);
    void groupRunsByHeads(Layer &L, const std::vector<int64_t> &headsOfRuns, size_t layer, int64_t inner);
    torch::Tensor mlp(const Layer &layer, const torch::Tensor &x) const;
    // Registers a parameter; `target` receives its view once allocate() has made the flat buffer.
    void add(torch::Tensor *target, const std::string &name, std::vector<int64_t> shape, bool isQueryKey = false,
             int64_t layer = -1);
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
    bool m_directGradients = true; // linear layers write their weight gradients into the flat buffer
    torch::Tensor m_embedding, m_positions, m_finalGain, m_finalShift, m_unembedding;
    std::vector<Layer> m_layers;
    std::vector<Parameter> m_params;
};

} // namespace headlab
