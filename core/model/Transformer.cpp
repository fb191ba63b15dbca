// Transformer.cpp — forward pass and initialisation of the ensemble transformer.
#include "core/model/Transformer.h"

#include "core/model/HeadRoles.h"

#include "core/config/Switches.h"
#include "core/model/Kernels.h"
#include "core/model/LaneAttention.h"

#include <cstdio>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

namespace headlab {

namespace {

constexpr int64_t kFusedQkvMaxWidth = 256; // Q/K/V as one product up to this width each

void weightGradientInto(torch::Tensor &gw, const torch::Tensor &x, const torch::Tensor &dy);

// (R, B, T, n) ↔ (R, B·T, n): the batched products' view of a layer's activations, taken inside
// the autograd functions below, so that autograd records no view of its own for it (two nodes a
// product fewer, each costing its op calls forward and backward).
torch::Tensor flatRows(const torch::Tensor &t)
{
    return t.reshape({t.size(0), t.size(1) * t.size(2), t.size(3)});
}

// y = x·w (+ b), batched over runs, whose backward writes the weight and bias gradients straight
// into their slices of the flat gradient buffer (bmm_out, sum_out) instead of handing them to
// autograd, which would add each into the buffer in a pass of its own. Every weight is used once
// a step, so writing (not adding) is exact, and the buffer is zeroed each step anyway. x and y are
// (R, B, T, in) and (R, B, T, out).
struct BatchedLinear : torch::autograd::Function<BatchedLinear> {
    // b: a (R, out) bias, or an empty list for none (autograd functions take no undefined tensors).
    static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &x,
                                 const torch::Tensor &w, const std::vector<torch::Tensor> &b)
    {
        ctx->save_for_backward({x, w});
        ctx->saved_data["gw"] = w.grad();
        if (!b.empty()) ctx->saved_data["gb"] = b[0].grad();
        const auto flat = flatRows(x);
        return (b.empty() ? torch::bmm(flat, w) : torch::baddbmm(b[0].unsqueeze(1), flat, w))
            .view({x.size(0), x.size(1), x.size(2), w.size(2)});
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const auto x = flatRows(saved[0]);
        const auto &w = saved[1];
        const auto dy = flatRows(grads[0]); // (R, N, out)
        auto gw = ctx->saved_data["gw"].toTensor();
        weightGradientInto(gw, x, dy);
        if (ctx->saved_data.count("gb")) {
            auto gb = ctx->saved_data["gb"].toTensor();
            at::sum_out(gb, dy, {1});
        }
        torch::Tensor dx;
        if (ctx->needs_input_grad(0)) dx = torch::bmm(dy, w.transpose(1, 2)).view(saved[0].sizes());
        return {dx, torch::Tensor(), torch::Tensor()};
    }
};

// The weight gradient x^T·dy of a batched linear map, written into gw (R, in, out). On the GPU,
// when the products are small (a few output tiles per run) and the reduction over the N rows is
// long, as for the Q/K/V projections of a 64-wide model at 4,096 rows, cuBLAS runs them on a
// handful of thread blocks; splitting the rows into S slices multiplies the blocks by S, and one
// sum over the slices (in a fixed order: the same bits every run) finishes it. HEADLAB_SPLIT_K=0
// turns it off.
void weightGradientInto(torch::Tensor &gw, const torch::Tensor &x, const torch::Tensor &dy)
{
    const int64_t R = x.size(0), N = x.size(1), in = x.size(2), out = dy.size(2);
    int64_t S = 1;
    // Read at each call (tests switch it between runs); "1" splits on the CPU too, whose golden
    // trajectories keep the plain product.
    if (switchOn(Switch::SplitK, x.is_cuda())) {
        const int64_t tiles = R * ((in + 63) / 64) * ((out + 63) / 64); // 64×64 output tiles
        while (S < 32 && tiles * S < 512 && N % (2 * S) == 0 && N / (2 * S) >= 256) S *= 2;
    }
    if (S == 1) {
        at::bmm_out(gw, x.transpose(1, 2), dy);
        return;
    }
    const auto part =
        torch::bmm(x.reshape({R * S, N / S, in}).transpose(1, 2), dy.reshape({R * S, N / S, out}));
    at::sum_out(gw, part.view({R, S, in, out}), {1});
}

// y = x·[w_1 w_2 w_3] (+ [b_1 b_2 b_3]): three linear maps of one input as one product (the Q, K
// and V projections), with BatchedLinear's direct gradients: one weight-gradient product for
// all, whose column blocks are copied into each weight's slice of the flat gradient buffer.
// The three weights are arguments of their own: autograd tracks tensor arguments, not the
// elements of a vector, and a layer whose input needs no gradient (the first) has only them.
struct BatchedLinearMany : torch::autograd::Function<BatchedLinearMany> {
    static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &x,
                                 const torch::Tensor &w0, const torch::Tensor &w1,
                                 const torch::Tensor &w2, const std::vector<torch::Tensor> &bs)
    {
        const std::vector<torch::Tensor> ws = {w0, w1, w2};
        const auto w = torch::cat(ws, 2);
        ctx->save_for_backward({x, w});
        std::vector<int64_t> widths;
        for (size_t i = 0; i < ws.size(); ++i) {
            ctx->saved_data["gw" + std::to_string(i)] = ws[i].grad();
            if (!bs.empty()) ctx->saved_data["gb" + std::to_string(i)] = bs[i].grad();
            widths.push_back(ws[i].size(2));
        }
        ctx->saved_data["widths"] = widths;
        // Gradients returned: one per tensor argument, and a vector argument counts at least once.
        ctx->saved_data["inputs"] =
            static_cast<int64_t>(1 + ws.size() + std::max<size_t>(1, bs.size()));
        const auto flat = flatRows(x);
        return (bs.empty() ? torch::bmm(flat, w)
                           : torch::baddbmm(torch::cat(bs, 1).unsqueeze(1), flat, w))
            .view({x.size(0), x.size(1), x.size(2), w.size(2)});
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const auto x = flatRows(saved[0]);
        const auto &w = saved[1];
        const auto dy = flatRows(grads[0].contiguous()); // (R, N, Σ out)
        const auto widths = ctx->saved_data["widths"].toIntVector();
        auto gw = torch::empty({x.size(0), x.size(2), dy.size(2)}, dy.options());
        weightGradientInto(gw, x, dy);
        const bool bias = ctx->saved_data.count("gb0") > 0;
        const auto gb = bias ? dy.sum(1) : torch::Tensor();
        int64_t offset = 0;
        for (size_t i = 0; i < widths.size(); ++i) {
            ctx->saved_data["gw" + std::to_string(i)].toTensor().copy_(
                gw.narrow(2, offset, widths[i]));
            if (bias)
                ctx->saved_data["gb" + std::to_string(i)].toTensor().copy_(
                    gb.narrow(1, offset, widths[i]));
            offset += widths[i];
        }
        torch::autograd::variable_list out(static_cast<size_t>(ctx->saved_data["inputs"].toInt()));
        if (ctx->needs_input_grad(0))
            out[0] = torch::bmm(dy, w.transpose(1, 2)).view(saved[0].sizes());
        return out;
    }
};

// The ReLU feed-forward block relu(x·w1 + b1)·w2 + b2 on the GPU, with the bias and ReLU as one
// kernel on the product x·w1 (or, where `product`, inside that product: fusedBiasReluProduct)
// and, backward, the ReLU's gradient and b1's as one kernel on the product that makes dh
// (Kernels.h: fusedBiasRelu, fusedReluBackward). Weight and bias gradients are written straight
// into the flat gradient buffer, as BatchedLinear writes them.
struct FeedForwardRelu : torch::autograd::Function<FeedForwardRelu> {
    static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &x,
                                 const torch::Tensor &w1, const torch::Tensor &b1,
                                 const torch::Tensor &w2, const torch::Tensor &b2, bool product)
    {
        torch::Tensor h;
        if (product) {
            auto fused = fusedBiasReluProduct(x, w1, b1);
            TORCH_CHECK(fused, "the feed-forward block's CUTLASS product failed to launch");
            h = *fused;
        } else {
            h = torch::bmm(x, w1);
            if (!fusedBiasRelu(h, b1)) h = torch::relu(h + b1.unsqueeze(1));
        }
        ctx->save_for_backward({x, w1, h, w2});
        ctx->saved_data["gw1"] = w1.grad();
        ctx->saved_data["gb1"] = b1.grad();
        ctx->saved_data["gw2"] = w2.grad();
        ctx->saved_data["gb2"] = b2.grad();
        return torch::baddbmm(b2.unsqueeze(1), h, w2);
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const auto &x = saved[0], &w1 = saved[1], &h = saved[2], &w2 = saved[3];
        const auto dy = grads[0].contiguous(); // (R, N, m)
        auto gw1 = ctx->saved_data["gw1"].toTensor(), gb1 = ctx->saved_data["gb1"].toTensor();
        auto gw2 = ctx->saved_data["gw2"].toTensor(), gb2 = ctx->saved_data["gb2"].toTensor();
        weightGradientInto(gw2, h, dy);
        at::sum_out(gb2, dy, {1});
        auto dh = torch::bmm(dy, w2.transpose(1, 2));
        if (!fusedReluBackward(dh, h, gb1)) {
            dh = dh * (h > 0);
            at::sum_out(gb1, dh, {1});
        }
        weightGradientInto(gw1, x, dh);
        torch::Tensor dx;
        if (ctx->needs_input_grad(0)) dx = torch::bmm(dh, w1.transpose(1, 2));
        return {dx,
                torch::Tensor(),
                torch::Tensor(),
                torch::Tensor(),
                torch::Tensor(),
                torch::Tensor()};
    }
};

// The unit-scale norm's post-norm residual step y = g · (a + r) / ‖a + r‖ on the GPU, one kernel
// each way (Kernels.h: fusedResidualUnitNorm); a and r (R, rows, d), g (R, 1).
struct ResidualUnitNorm : torch::autograd::Function<ResidualUnitNorm> {
    static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &a,
                                 const torch::Tensor &r, const torch::Tensor &gain, double eps)
    {
        auto parts = fusedResidualUnitNorm(a, r, gain, eps);
        TORCH_CHECK(parts, "the fused unit-scale norm failed to launch");
        ctx->save_for_backward({parts->s, parts->norm, gain});
        ctx->saved_data["eps"] = eps;
        return parts->y;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const UnitNormParts parts{torch::Tensor(), saved[0], saved[1]};
        const auto &gain = saved[2];
        const auto back = fusedResidualUnitNormBackward(grads[0].contiguous(), parts, gain,
                                                        ctx->saved_data["eps"].toDouble());
        TORCH_CHECK(back, "the fused unit-scale norm's backward failed to launch");
        const auto &[ds, rowDot] = *back;
        return {ds, ds, rowDot.sum(1).view_as(gain), torch::Tensor()};
    }
};

// The LayerNorm with each run's scale and shift, one CUDA kernel or one CPU loop each way
// (Kernels.h: fusedLayerNormForward); x (R, rows, d), g and b (R, d); y = b + (x − μ) · rstd · (c · g).
struct AffineLayerNorm : torch::autograd::Function<AffineLayerNorm> {
    static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &x,
                                 const torch::Tensor &gain, const torch::Tensor &shift, double eps,
                                 double scale)
    {
        auto parts = fusedLayerNormForward(x, gain, shift, eps, scale);
        TORCH_CHECK(parts, "the fused layer norm failed to launch");
        ctx->save_for_backward({x, parts->mean, parts->rstd, gain});
        ctx->saved_data["scale"] = scale;
        return parts->y;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const LayerNormParts parts{torch::Tensor(), saved[1], saved[2]};
        const auto back = fusedLayerNormBackward(grads[0].contiguous(), saved[0], parts, saved[3],
                                                 ctx->saved_data["scale"].toDouble());
        TORCH_CHECK(back, "the fused layer norm's backward failed to launch");
        return {back->dx, back->gain, back->shift, torch::Tensor(), torch::Tensor()};
    }
};

// The token embedding and the learned positions on the CPU, one loop each way (Kernels.h:
// fusedEmbeddingForward): (R, B, T, d) from tokens (B, T) or (R, B, T), the table (R, V, d) and the
// positions (R, maxPositions, d) or undefined.
struct TokenEmbedding : torch::autograd::Function<TokenEmbedding> {
    static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &tokens,
                                 const torch::Tensor &table, const torch::Tensor &positions)
    {
        ctx->save_for_backward({tokens, table, positions});
        return fusedEmbeddingForward(tokens, table, positions);
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        auto [dTable, dPositions] = fusedEmbeddingBackward(saved[0], grads[0], saved[1], saved[2]);
        return {torch::Tensor(), dTable, dPositions};
    }
};

// q, k and v as views of the one Q/K/V product (R, B, T, 3·inner) that holds them side by side.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> thirds(const torch::Tensor &qkv)
{
    const int64_t inner = qkv.size(3) / 3;
    return {qkv.narrow(3, 0, inner), qkv.narrow(3, inner, inner), qkv.narrow(3, 2 * inner, inner)};
}

// The micro-heads' attention kernels' settings, and both passes, for the two autograd functions
// below: the forward keeps the settings in the autograd context, the backward reads them there.
struct MicroAttentionSettings {
    int64_t microHeads = 0;
    double scale = 1.0;
    bool causal = false;

    torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &q,
                          const torch::Tensor &k, const torch::Tensor &v) const
    {
        auto o = fusedMicroAttentionForward(q, k, v, microHeads, scale, causal);
        TORCH_CHECK(o, "the micro-heads' attention kernel failed to launch");
        ctx->saved_data["micro"] = microHeads;
        ctx->saved_data["scale"] = scale;
        ctx->saved_data["causal"] = causal;
        return *o;
    }

    static MicroAttentionSettings of(torch::autograd::AutogradContext *ctx)
    {
        return {ctx->saved_data["micro"].toInt(), ctx->saved_data["scale"].toDouble(),
                ctx->saved_data["causal"].toBool()};
    }

    // Writes dq, dk and dv (each shaped as q).
    void backward(const torch::Tensor &dout, const torch::Tensor &q, const torch::Tensor &k,
                  const torch::Tensor &v, torch::Tensor &dq, torch::Tensor &dk,
                  torch::Tensor &dv) const
    {
        TORCH_CHECK(fusedMicroAttentionBackward(dout.contiguous(), q, k, v, microHeads, scale,
                                                causal, dq, dk, dv),
                    "the micro-heads' attention backward kernel failed to launch");
    }
};

// Attention over micro-heads for short sequences on the GPU, one kernel each way (Kernels.h:
// fusedMicroAttentionForward), reading q, k and v where the projections put them: each (R, B, T,
// M·dm), in the form taken by three products (or by a QK norm).
struct MicroAttention : torch::autograd::Function<MicroAttention> {
    static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &q,
                                 const torch::Tensor &k, const torch::Tensor &v, int64_t microHeads,
                                 double scale, bool causal)
    {
        ctx->save_for_backward({q, k, v});
        return MicroAttentionSettings{microHeads, scale, causal}.forward(ctx, q, k, v);
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const auto &q = saved[0], &k = saved[1], &v = saved[2];
        auto dq = torch::empty(q.sizes(), q.options()), dk = torch::empty(q.sizes(), q.options()),
             dv = torch::empty(q.sizes(), q.options());
        MicroAttentionSettings::of(ctx).backward(grads[0], q, k, v, dq, dk, dv);
        return {dq, dk, dv, torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
};

// The same from the one Q/K/V product (R, B, T, 3·M·dm), whose gradient the kernel writes as one
// tensor: autograd would otherwise build it from three thirds, each padded with zeros to the whole.
struct PackedMicroAttention : torch::autograd::Function<PackedMicroAttention> {
    static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &qkv,
                                 int64_t microHeads, double scale, bool causal)
    {
        ctx->save_for_backward({qkv});
        const auto [q, k, v] = thirds(qkv);
        return MicroAttentionSettings{microHeads, scale, causal}.forward(ctx, q, k, v);
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list grads)
    {
        const auto qkv = ctx->get_saved_variables()[0];
        const auto [q, k, v] = thirds(qkv);
        auto dqkv = torch::empty(qkv.sizes(), qkv.options());
        auto [dq, dk, dv] = thirds(dqkv);
        MicroAttentionSettings::of(ctx).backward(grads[0], q, k, v, dq, dk, dv);
        return {dqkv, torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
};

enum class Init { Zero, One, Normal, Uniform };

struct InitSpec {
    Init kind = Init::Zero;
    double bound = 0.0; // Uniform: U(-bound, bound)
};

} // namespace

void Transformer::add(torch::Tensor *target, const std::string &name, std::vector<int64_t> shape,
                      bool isQueryKey, int64_t layer)
{
    shape.insert(shape.begin(), m_runs);
    m_params.push_back({name, torch::Tensor(), isQueryKey, layer});
    m_pending.push_back({target, std::move(shape)});
}

void Transformer::allocate()
{
    int64_t total = 0;
    for (const auto &p : m_pending) {
        int64_t n = 1;
        for (auto d : p.shape) n *= d;
        total += n;
    }
    const auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(m_device);
    m_flat = torch::zeros({total}, opts);
    m_flatGrad = torch::zeros({total}, opts);
    int64_t offset = 0;
    for (size_t i = 0; i < m_pending.size(); ++i) {
        const auto &p = m_pending[i];
        int64_t n = 1;
        for (auto d : p.shape) n *= d;
        torch::Tensor v = m_flat.narrow(0, offset, n).view(p.shape);
        v.requires_grad_(true);
        // Backward accumulates in place into an existing gradient, so gradients land in m_flatGrad.
        v.mutable_grad() = m_flatGrad.narrow(0, offset, n).view(p.shape);
        m_params[i].value = v;
        *p.target = v;
        offset += n;
    }
    m_pending.clear();
}

Transformer::Transformer(const ModelConfig &config, int64_t vocabSize, int64_t maxPositions,
                         int64_t runs, const torch::Device &device,
                         const std::vector<std::vector<int64_t>> &runHeads,
                         const StabilizerConfig &stabilizers, const AttentionPlan *plan)
    : m_config(config)
    , m_vocab(vocabSize)
    , m_maxPositions(maxPositions)
    , m_runs(runs)
    , m_device(device)
    , m_stabilizers(stabilizers)
{
    // HEADLAB_DIRECT_GRADIENTS=0 leaves the linear layers' gradients to autograd (for bench/).
    m_directGradients = switchOn(Switch::DirectGradients, true);
    // On the GPU the Q, K and V projections are one product (HEADLAB_FUSED_QKV=0: three). The CPU
    // keeps three, so its golden trajectories stay bit for bit.
    m_fusedQkv = switchOn(Switch::FusedQkv, device.is_cuda());
    if (const char *eps = switchText(Switch::UnitNormEps)) m_unitNormEps = std::atof(eps);
    const int64_t m = config.dModel;
    const int64_t F = config.ffn();
    const int64_t normWidth = config.norm == NormKind::LayerNorm ? m : 1;
    m_params.reserve(8 + 16 * config.heads.size());
    TORCH_CHECK(runHeads.empty() || static_cast<int64_t>(runHeads.size()) == runs,
                "one head schedule per run is needed");
    // The order of add() calls is the order of initialisation: never reorder without new goldens.
    if (m_vocab > 0) add(&m_embedding, "embedding", {m_vocab, m});
    if (m_maxPositions > 0) add(&m_positions, "positions", {m_maxPositions, m});
    m_layers.resize(config.heads.size());
    m_attention = plan ? *plan
                       : planAttention(config, runHeads, m_maxPositions, attentionDevice(device),
                                       stabilizers.softcap > 0);
    TORCH_CHECK(m_attention.layers.size() == config.heads.size(), "the attention plan has ",
                m_attention.layers.size(), " layers, the model ", config.heads.size());
    for (size_t l = 0; l < config.heads.size(); ++l) {
        Layer &L = m_layers[l];
        const std::string p = "layers." + std::to_string(l) + ".";
        const int64_t li = static_cast<int64_t>(l);
        L.heads = config.heads[l] * config.widthMultiplier;
        L.headDim = config.headDimOfLayer(l);
        const int64_t inner = L.heads * L.headDim;
        // Each run's heads in this layer (w·H), the same for all unless runHeads says otherwise.
        std::vector<int64_t> headsOfRuns(static_cast<size_t>(runs), L.heads);
        if (!runHeads.empty()) {
            for (size_t r = 0; r < headsOfRuns.size(); ++r)
                headsOfRuns[r] = runHeads[r].at(l) * config.widthMultiplier;
            groupRunsByHeads(L, headsOfRuns, l, inner);
        }
        buildMicroHeads(L, m_attention.layers[l], headsOfRuns, inner);
        L.headsOfRuns = headsOfRuns;
        add(&L.ln1Gain, p + "norm1.gain", {normWidth}, false, li);
        if (config.norm == NormKind::LayerNorm) add(&L.ln1Shift, p + "norm1.shift", {m}, false, li);
        add(&L.wq, p + "wq", {m, inner}, true, li);
        add(&L.wk, p + "wk", {m, inner}, true, li);
        add(&L.wv, p + "wv", {m, inner}, false, li);
        if (config.bias) {
            add(&L.bq, p + "bq", {inner}, true, li);
            add(&L.bk, p + "bk", {inner}, true, li);
            add(&L.bv, p + "bv", {inner}, false, li);
        }
        add(&L.wo, p + "wo", {inner, m}, false, li);
        if (config.bias) add(&L.bo, p + "bo", {m}, false, li);
        add(&L.ln2Gain, p + "norm2.gain", {normWidth}, false, li);
        if (config.norm == NormKind::LayerNorm) add(&L.ln2Shift, p + "norm2.shift", {m}, false, li);
        add(&L.w1, p + "w1", {m, F}, false, li);
        if (config.bias) add(&L.b1, p + "b1", {F}, false, li);
        add(&L.w2, p + "w2", {F, m}, false, li);
        if (config.bias) add(&L.b2, p + "b2", {m}, false, li);
        // Stabilizers' parameters come after the layer's own (they start at one, drawing nothing
        // from the run's generator, so the other weights start as they do without them).
        if (stabilizers.qkNorm == QkNorm::Gain) {
            add(&L.qGain, p + "q_norm.gain", {inner}, false, li);
            add(&L.kGain, p + "k_norm.gain", {inner}, false, li);
        }
        if (stabilizers.sigmaReparam != SigmaReparam::Off) {
            addSigma(L.wqSigma, p + "wq", &L.wq, m, inner, true, li);
            addSigma(L.wkSigma, p + "wk", &L.wk, m, inner, true, li);
        }
        if (stabilizers.sigmaReparam == SigmaReparam::All) {
            addSigma(L.wvSigma, p + "wv", &L.wv, m, inner, false, li);
            addSigma(L.woSigma, p + "wo", &L.wo, inner, m, false, li);
            addSigma(L.w1Sigma, p + "w1", &L.w1, m, F, false, li);
            addSigma(L.w2Sigma, p + "w2", &L.w2, F, m, false, li);
        }
    }
    if (config.finalNorm) {
        add(&m_finalGain, "final_norm.gain", {normWidth});
        if (config.norm == NormKind::LayerNorm) add(&m_finalShift, "final_norm.shift", {m});
    }
    if (m_vocab > 0) add(&m_unembedding, "unembedding", {m, m_vocab});
    allocate();
}

void Transformer::addSigma(Sigma &sigma, const std::string &name, const torch::Tensor *weight,
                           int64_t in, int64_t out, bool isQueryKey, int64_t layer)
{
    add(&sigma.gamma, name + ".gamma", {1}, isQueryKey, layer);
    const auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(m_device);
    sigma.u = torch::zeros({m_runs, in}, opts);
    sigma.v = torch::zeros({m_runs, out}, opts);
    m_buffers.push_back({name + ".sigma_u", sigma.u, false, layer});
    m_buffers.push_back({name + ".sigma_v", sigma.v, false, layer});
    m_sigmas.push_back({name, weight, &sigma}); // the weight's view is set by allocate()
}

namespace {

torch::Tensor unitRows(const torch::Tensor &x) // (R, n): each row over its norm
{
    return x / x.norm(2, 1, true).clamp_min(1e-12);
}

// One power-iteration step for W (R, in, out) from v (R, out): u ← W v / ‖·‖, v ← Wᵀu / ‖·‖.
void powerStep(const torch::Tensor &w, torch::Tensor &u, torch::Tensor &v)
{
    u = unitRows(torch::bmm(w, v.unsqueeze(2)).squeeze(2));
    v = unitRows(torch::bmm(w.transpose(1, 2), u.unsqueeze(2)).squeeze(2));
}

// uᵀ W v per run: (R)
torch::Tensor sigmaOf(const torch::Tensor &w, const torch::Tensor &u, const torch::Tensor &v)
{
    return torch::bmm(torch::bmm(u.unsqueeze(1), w), v.unsqueeze(2)).view({w.size(0)});
}

} // namespace

torch::Tensor Transformer::weight(const torch::Tensor &w, const Sigma &sigma) const
{
    if (!sigma.gamma.defined()) return w;
    if (torch::GradMode::is_enabled()) { // a training forward pass: one power-iteration step
        torch::NoGradGuard noGrad;
        torch::Tensor u, v = sigma.v;
        powerStep(w.detach(), u, v);
        sigma.u.copy_(u);
        sigma.v.copy_(v);
    }
    // The gradient flows through W in σ too (u and v are constants), as in Zhai et al.
    const auto s = sigmaOf(w, sigma.u, sigma.v);
    return w * (sigma.gamma.view({-1}) / s).view({w.size(0), 1, 1});
}

std::map<std::string, torch::Tensor> Transformer::spectralNorms() const
{
    torch::NoGradGuard noGrad;
    std::map<std::string, torch::Tensor> out;
    for (const auto &ref : m_sigmas)
        out[ref.name] = sigmaOf(*ref.weight, ref.sigma->u, ref.sigma->v);
    return out;
}

torch::Tensor Transformer::headNorm(const Layer &L, const torch::Tensor &t,
                                    const torch::Tensor &gain) const
{
    // LayerNorm over each head's hd dimensions (biased variance, eps 1e-6, no shift), then the
    // learned gain of each head's dimensions if any.
    auto normalize = [](const torch::Tensor &x, int64_t h, const torch::Tensor &g) {
        const auto shape = x.sizes().vec();
        const int64_t d = shape[3] / h;
        auto y = at::layer_norm(x.reshape({shape[0], shape[1], shape[2], h, d}), {d}, {}, {}, 1e-6)
                     .reshape(shape);
        if (g.defined()) y = y * g.view({shape[0], 1, 1, shape[3]});
        return y;
    };
    if (L.groups.empty()) return normalize(t, L.heads, gain);
    std::vector<torch::Tensor> parts;
    for (const auto &g : L.groups)
        parts.push_back(normalize(t.index_select(0, g.runs), g.heads,
                                  gain.defined() ? gain.index_select(0, g.runs) : gain));
    return torch::cat(parts).index_select(0, L.inverseOrder);
}

torch::Tensor Transformer::capped(const torch::Tensor &scores) const
{
    const double c = m_stabilizers.softcap;
    return c > 0 ? torch::tanh(scores / c) * c : scores;
}

void Transformer::groupRunsByHeads(Layer &L, const std::vector<int64_t> &headsOfRuns, size_t layer,
                                   int64_t inner)
{
    std::map<int64_t, std::vector<int64_t>> byHeads; // heads (w·H) → runs
    for (int64_t r = 0; r < m_runs; ++r) {
        const int64_t h = headsOfRuns[static_cast<size_t>(r)];
        TORCH_CHECK(inner % h == 0, "layer ", layer, ": ", h, " heads do not split ", inner,
                    " features");
        byHeads[h].push_back(r);
    }
    if (byHeads.size() < 2) {
        L.heads = byHeads.begin()->first;
        L.headDim = inner / L.heads;
        return;
    }
    const auto longOpts = torch::TensorOptions().dtype(torch::kInt64);
    std::vector<int64_t> order;
    for (const auto &[h, runs] : byHeads) {
        L.groups.push_back({h, torch::tensor(runs, longOpts).to(m_device)});
        order.insert(order.end(), runs.begin(), runs.end());
    }
    std::vector<int64_t> inverse(order.size());
    for (size_t i = 0; i < order.size(); ++i)
        inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
    L.inverseOrder = torch::tensor(inverse, longOpts).to(m_device);
}

double Transformer::logitScale(int64_t hd) const
{
    switch (m_config.logitScale) {
    case LogitScale::InvSqrtHeadDim:
        return 1.0 / std::sqrt(static_cast<double>(hd));
    case LogitScale::InvHeadDim:
        return 1.0 / static_cast<double>(hd);
    case LogitScale::None:
        break;
    }
    return 1.0;
}

void Transformer::buildMicroHeads(Layer &L, const LayerAttention &plan,
                                  const std::vector<int64_t> &headsOfRuns, int64_t inner)
{
    if (plan.path != AttentionPath::MicroHeads) return;
    const int64_t M = plan.microHeads;
    TORCH_CHECK(M > 0 && inner % M == 0, "the attention plan's ", M,
                " micro-heads do not divide the layer's width ", inner);
    if (!plan.mixed) {
        L.microScale = logitScale(inner / M);
        return;
    }
    auto mix = torch::zeros({m_runs, M, M}, torch::kFloat32);
    auto acc = mix.accessor<float, 3>();
    for (int64_t r = 0; r < m_runs; ++r) {
        const int64_t h = headsOfRuns[static_cast<size_t>(r)];
        const int64_t span = M / h; // micro-heads per head
        const float scale = static_cast<float>(logitScale(inner / h));
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < M; ++j)
                if (i / span == j / span) acc[r][i][j] = scale;
    }
    L.mix = mix.to(m_device);
}

void Transformer::initializeRun(int64_t run, uint64_t seed)
{
    torch::NoGradGuard noGrad;
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const bool zeroOut = m_config.zeroInitOutputs;
    const bool pytorch = m_config.init == InitKind::PyTorch;
    // One attention module's width H·m_H (of the layer's w·H heads).
    const auto moduleWidth = [&](int64_t layer) {
        const Layer &L = m_layers[static_cast<size_t>(layer)];
        return L.heads * L.headDim / m_config.widthMultiplier;
    };
    const double m = static_cast<double>(m_config.dModel);
    const double F = static_cast<double>(m_config.ffn());
    for (auto &p : m_params) {
        const std::string &n = p.name;
        auto endsWith = [&](const char *suffix) {
            const std::string s(suffix);
            return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
        };
        InitSpec spec;
        if (n == "embedding" || n == "positions")
            spec = {Init::Normal, 1.0};
        else if (endsWith(".gain") || endsWith(".gamma"))
            spec = {Init::One, 0};
        else if (endsWith(".shift"))
            spec = {Init::Zero, 0};
        else if (pytorch && (endsWith(".wq") || endsWith(".wk") || endsWith(".wv"))) {
            // Xavier-uniform on one module's packed (3·H·m_H, m) in-projection.
            const double inner = static_cast<double>(moduleWidth(p.layer));
            spec = {Init::Uniform, std::sqrt(6.0 / (m + 3.0 * inner))};
        } else if (pytorch &&
                   (endsWith(".bq") || endsWith(".bk") || endsWith(".bv") || endsWith(".bo")))
            spec = {Init::Zero, 0};
        else if (endsWith(".wq") || endsWith(".wk") || endsWith(".wv") || endsWith(".w1"))
            spec = {Init::Uniform, 1.0 / std::sqrt(m)};
        else if (endsWith(".bq") || endsWith(".bk") || endsWith(".bv") || endsWith(".b1"))
            spec = {Init::Uniform, 1.0 / std::sqrt(m)};
        else if (endsWith(".wo") || endsWith(".bo")) {
            // HeadLab's own: fan-in of all w·H heads; PyTorch's: of one module's H heads.
            const Layer &L = m_layers[static_cast<size_t>(p.layer)];
            const double fanIn =
                static_cast<double>(pytorch ? moduleWidth(p.layer) : L.heads * L.headDim);
            spec =
                zeroOut ? InitSpec{Init::Zero, 0} : InitSpec{Init::Uniform, 1.0 / std::sqrt(fanIn)};
        } else if (endsWith(".w2") || endsWith(".b2"))
            spec = zeroOut ? InitSpec{Init::Zero, 0} : InitSpec{Init::Uniform, 1.0 / std::sqrt(F)};
        else if (n == "unembedding")
            spec = zeroOut ? InitSpec{Init::Zero, 0} : InitSpec{Init::Uniform, 1.0 / std::sqrt(m)};

        const auto shape = p.value.sizes().slice(1);
        torch::Tensor v = torch::empty(shape, torch::kFloat32);
        switch (spec.kind) {
        case Init::Zero:
            v.zero_();
            break;
        case Init::One:
            v.fill_(1.0);
            break;
        case Init::Normal:
            v.normal_(0.0, spec.bound, gen);
            break;
        case Init::Uniform:
            v.uniform_(-spec.bound, spec.bound, gen);
            break;
        }
        p.value[run].copy_(v);
    }
    // σReparam's power iteration starts from a random v of its own generator (the weights' draws
    // stay as they are without it) and takes 15 steps on the initial weights.
    if (!m_sigmas.empty()) {
        at::Generator vgen = at::make_generator<at::CPUGeneratorImpl>(seed ^ 0x5157a1e5c0ffee00ULL);
        for (auto &ref : m_sigmas) {
            const auto w = (*ref.weight)[run].unsqueeze(0).cpu();
            torch::Tensor u, v = unitRows(torch::randn({1, w.size(2)}, vgen));
            for (int i = 0; i < 15; ++i) powerStep(w, u, v);
            ref.sigma->u[run].copy_(u[0]);
            ref.sigma->v[run].copy_(v[0]);
        }
    }
}

int64_t Transformer::parameterCount() const
{
    int64_t n = 0;
    for (const auto &p : m_params) n += p.value.numel() / m_runs;
    return n;
}

torch::Tensor Transformer::addNorm(const torch::Tensor &r, const torch::Tensor &a,
                                   const torch::Tensor &gain, const torch::Tensor &shift) const
{
    // On the GPU the unit-scale norm of a residual sum is one kernel each way.
    if (m_config.norm == NormKind::UnitScale && fusedUnitNorm(m_device) && r.sizes() == a.sizes()) {
        const auto shape = a.sizes().vec();
        const int64_t R = shape[0], d = shape.back();
        m_normFused = true;
        return ResidualUnitNorm::apply(a.reshape({R, -1, d}).contiguous(),
                                       r.reshape({R, -1, d}).contiguous(), gain, m_unitNormEps)
            .view(shape);
    }
    return norm(r + a, gain, shift);
}

torch::Tensor Transformer::norm(const torch::Tensor &x, const torch::Tensor &gain,
                                const torch::Tensor &shift) const
{
    // x: (R, B, T, m); gain: (R, m) or (R, 1)
    const int64_t R = x.size(0);
    if (m_config.norm == NormKind::UnitScale) {
        // s · x / ||x||
        // No epsilon, as in the paper's reference code: a zero vector gives NaN (a diverged run).
        // HEADLAB_UNIT_NORM_EPS=e divides by max(||x||, e) instead (HeadLab before issue 14 had
        // 1e-12), for the fidelity comparison in bench/gpu_tasks.sh.
        if (m_unitNormEps > 0)
            return gain.view({R, 1, 1, 1}) * x / x.norm(2, -1, true).clamp_min(m_unitNormEps);
        return gain.view({R, 1, 1, 1}) * x / x.norm(2, -1, true);
    }
    // (x − mean) / sqrt(unbiased var + 1e-9) · g + b, through the fused layer_norm kernel: with n
    // features, unbiased var = n/(n−1) · biased var, so the same value is
    // sqrt((n−1)/n) · layer_norm(x, eps = 1e-9 · (n−1)/n), exactly.
    const int64_t m = x.size(-1);
    const double n = static_cast<double>(m);
    // The whole of it (the norm, the scale and the shift) is one kernel each way on the GPU, one
    // loop each way on the CPU.
    if (headlab::fusedLayerNorm(m_device) && shift.defined() && m <= kFusedLayerNormMaxWidth &&
        x.numel() > 0 && x.scalar_type() == torch::kFloat32) {
        m_layerNormFused = true;
        const auto shape = x.sizes().vec();
        return AffineLayerNorm::apply(x.reshape({R, -1, m}).contiguous(),
                                      gain.reshape({R, m}).contiguous(),
                                      shift.reshape({R, m}).contiguous(), 1e-9 * (n - 1.0) / n,
                                      std::sqrt((n - 1.0) / n))
            .view(shape);
    }
    const auto normalized = at::layer_norm(x, {m}, {}, {}, 1e-9 * (n - 1.0) / n);
    const auto scale = gain.view({R, 1, 1, m}) * std::sqrt((n - 1.0) / n);
    return torch::addcmul(shift.view({R, 1, 1, m}), normalized, scale);
}

torch::Tensor Transformer::linear(const torch::Tensor &x, const torch::Tensor &w,
                                  const torch::Tensor &b) const
{
    // x: (R, B, T, in), w: (R, in, out), b: (R, out) or undefined → (R, B, T, out)
    const int64_t R = x.size(0), B = x.size(1), T = x.size(2);
    // A reparametrized weight (σReparam) is not the parameter: autograd takes its gradient back.
    if (torch::GradMode::is_enabled() && m_directGradients && w.is_leaf())
        return BatchedLinear::apply(
            x, w, b.defined() ? std::vector<torch::Tensor>{b} : std::vector<torch::Tensor>{});
    const auto flat = flatRows(x);
    const auto y = b.defined() ? torch::baddbmm(b.unsqueeze(1), flat, w) : torch::bmm(flat, w);
    return y.view({R, B, T, w.size(2)});
}

torch::Tensor Transformer::linearMany(const torch::Tensor &x, const std::vector<torch::Tensor> &ws,
                                      const std::vector<torch::Tensor> &bs) const
{
    const int64_t R = x.size(0), B = x.size(1), T = x.size(2);
    std::vector<torch::Tensor> biases;
    for (const auto &b : bs)
        if (b.defined()) biases.push_back(b);
    const bool leaves =
        std::all_of(ws.begin(), ws.end(), [](const torch::Tensor &w) { return w.is_leaf(); });
    if (torch::GradMode::is_enabled() && m_directGradients && leaves)
        return BatchedLinearMany::apply(x, ws.at(0), ws.at(1), ws.at(2), biases);
    const auto flat = flatRows(x);
    torch::Tensor y;
    if (biases.empty())
        y = torch::bmm(flat, torch::cat(ws, 2));
    else
        y = torch::baddbmm(torch::cat(biases, 1).unsqueeze(1), flat, torch::cat(ws, 2));
    return y.view({R, B, T, y.size(2)});
}

torch::Tensor Transformer::attend(const torch::Tensor &q, const torch::Tensor &k,
                                  const torch::Tensor &v, int64_t H, int64_t hd, bool lastOnly,
                                  AttentionPath path) const
{
    // q: (R, B, Tq, H·hd), k and v: (R, B, T, H·hd) → (R, B, Tq, H·hd)
    const int64_t R = q.size(0), B = q.size(1), Tq = q.size(2), T = k.size(2);
    auto split = [&](const torch::Tensor &t, int64_t len) { // (R,B,len,H·hd) -> (R·B, H, len, hd)
        return t.reshape({R * B, len, H, hd}).transpose(1, 2);
    };
    // With lastOnly the single query sits at the last position and may see every key: no mask.
    const bool causal = m_config.causal && !lastOnly;
    if (path == AttentionPath::Lanes && q.is_cpu() && q.scalar_type() == torch::kFloat32 &&
        T <= kLaneAttentionMaxLength)
        return laneAttention(q, k, v, H, hd, logitScale(hd), causal);
    torch::Tensor o;
    if (path == AttentionPath::Explicit) { // the fused kernels cannot cap the scores
        auto s =
            capped(torch::matmul(split(q, Tq), split(k, T).transpose(-1, -2)) * logitScale(hd));
        if (causal)
            s = s.masked_fill(torch::ones({Tq, T}, q.options().dtype(torch::kBool)).triu(1),
                              -std::numeric_limits<float>::infinity());
        o = torch::matmul(torch::softmax(s, -1), split(v, T));
    } else {
        o = at::scaled_dot_product_attention(split(q, Tq), split(k, T), split(v, T), {}, 0.0,
                                             causal, logitScale(hd));
    }
    return o.transpose(1, 2).reshape({R, B, Tq, H * hd}); // (R·B, H, Tq, hd) → (R, B, Tq, H·hd)
}

torch::Tensor Transformer::attendMicro(const Layer &L, size_t index, const torch::Tensor &q,
                                       const torch::Tensor &k, const torch::Tensor &v,
                                       bool lastOnly, const torch::Tensor &packed) const
{
    // q: (R, B, Tq, inner), k and v: (R, B, T, inner) → (R, B, Tq, inner), over M micro-heads.
    const int64_t R = q.size(0), B = q.size(1), Tq = q.size(2), T = k.size(2), inner = q.size(3);
    LayerAttention &plan = m_attention.layers[index];
    const int64_t M = plan.microHeads, dm = inner / M;
    // Where the plan takes the kernel (every run with the same heads, no soft cap, the kernel on
    // and fitting), a full pass is one kernel each way that reads q, k and v where the projections
    // put them (MicroAttention); a last-position pass (evaluation) takes the products below. A
    // layout the kernel refuses falls back to them too, and the plan records it.
    if (plan.kernel && plan.fellBack.empty() && Tq == T) {
        const bool causal = m_config.causal && !lastOnly;
        try {
            auto o = packed.defined() ? PackedMicroAttention::apply(packed, M, L.microScale, causal)
                                      : MicroAttention::apply(q, k, v, M, L.microScale, causal);
            m_attentionFused = true;
            return o;
        } catch (const c10::Error &e) {
            plan.fellBack = e.msg();
            std::fprintf(stderr,
                         "headlab: layer %zu: the micro-heads kernel refused (%s); the "
                         "explicit products take it\n",
                         index, plan.fellBack.c_str());
        }
    }
    auto heads = [&](const torch::Tensor &t, int64_t len) { // → (R, B, M, len, dm)
        return t.view({R, B, len, M, dm}).transpose(2, 3);
    };
    auto s = torch::matmul(heads(q, Tq), heads(k, T).transpose(-1, -2)); // (R, B, M, Tq, T)
    // Each micro-head's score becomes its head's score (the sum over the head's micro-heads), scaled.
    if (L.mix.defined())
        s = torch::matmul(L.mix.unsqueeze(1), s.view({R, B, M, Tq * T})).view({R, B, M, Tq, T});
    else
        s = s * L.microScale;
    s = capped(s); // each micro-head holds its head's whole score, so capping it caps the head's
    if (m_config.causal && !lastOnly) {
        const auto future = torch::ones({Tq, T}, q.options().dtype(torch::kBool)).triu(1);
        s = s.masked_fill(future, -std::numeric_limits<float>::infinity());
    }
    const auto o = torch::matmul(torch::softmax(s, -1), heads(v, T)); // (R, B, M, Tq, dm)
    return o.transpose(2, 3).reshape({R, B, Tq, inner});
}

namespace {

// Pads dimension `dim` (the heads) from its size to maxHeads with NaN.
torch::Tensor padHeads(const torch::Tensor &t, int64_t maxHeads, int64_t dim = 1)
{
    if (!t.defined() || t.size(dim) == maxHeads) return t;
    auto shape = t.sizes().vec();
    shape[static_cast<size_t>(dim)] = maxHeads - t.size(dim);
    return torch::cat({t, torch::full(shape, std::numeric_limits<float>::quiet_NaN(), t.options())},
                      dim);
}

} // namespace

int64_t Transformer::headsOf(size_t layer, int64_t run) const
{
    return m_layers.at(layer).headsOfRuns.at(static_cast<size_t>(run));
}

int64_t Transformer::maxHeads(size_t layer) const
{
    const auto &h = m_layers.at(layer).headsOfRuns;
    return *std::max_element(h.begin(), h.end());
}

std::map<std::string, torch::Tensor> Transformer::headNorms(size_t layer, bool gradients,
                                                            bool queryKeyOnly) const
{
    const Layer &L = m_layers.at(layer);
    const int64_t inner = L.heads * L.headDim, m = m_config.dModel, Hmax = maxHeads(layer);
    auto of = [&](const torch::Tensor &w) { return gradients ? w.grad() : w.detach(); };
    auto norms = [&](const torch::Tensor &runs, int64_t h) {
        const int64_t d = inner / h;
        auto pick = [&](const torch::Tensor &t) {
            return runs.defined() ? t.index_select(0, runs) : t;
        };
        std::map<std::string, torch::Tensor> out;
        for (const auto &[name, w] :
             {std::pair{"wq", &L.wq}, std::pair{"wk", &L.wk}, std::pair{"wv", &L.wv}}) {
            if (queryKeyOnly && w == &L.wv) break;
            const auto t = pick(of(*w));
            out[name] = padHeads(t.reshape({t.size(0), m, h, d}).pow(2).sum({1, 3}).sqrt(), Hmax);
        }
        if (queryKeyOnly) return out;
        const auto wo = pick(of(L.wo));
        out["wo"] = padHeads(wo.reshape({wo.size(0), h, d, m}).pow(2).sum({2, 3}).sqrt(), Hmax);
        return out;
    };
    if (L.groups.empty()) return norms(torch::Tensor(), L.heads);
    std::map<std::string, std::vector<torch::Tensor>> parts;
    for (const auto &g : L.groups)
        for (auto &[name, t] : norms(g.runs, g.heads)) parts[name].push_back(t);
    std::map<std::string, torch::Tensor> out;
    for (auto &[name, list] : parts) out[name] = torch::cat(list).index_select(0, L.inverseOrder);
    return out;
}

std::map<std::string, torch::Tensor> Transformer::attentionWeights(size_t layer) const
{
    const Layer &L = m_layers.at(layer);
    return {
        {"wq", L.wq.detach()}, {"wk", L.wk.detach()}, {"wv", L.wv.detach()}, {"wo", L.wo.detach()}};
}

// HeadProbe::alignment of one group of runs with h heads of width d: x (r, N, m) the layer's
// normalized input, o (r, N, h·d) the heads' outputs, `updates` the group's changes.
std::map<std::string, torch::Tensor>
updateAlignment(const torch::Tensor &x, const torch::Tensor &o,
                const std::map<std::string, torch::Tensor> &updates, int64_t h, int64_t d)
{
    const int64_t r = x.size(0), N = x.size(1), m = x.size(2);
    std::map<std::string, torch::Tensor> out;
    const auto xNorm = x.pow(2).sum({1, 2}).sqrt().unsqueeze(1); // (r, 1)
    for (const char *name : {"wq", "wk", "wv"}) {
        const auto found = updates.find(name);
        if (found == updates.end() || !found->second.defined()) continue;
        const auto dw = found->second.to(x.dtype()); // (r, m, h·d)
        const auto moved = torch::bmm(x, dw).reshape({r, N, h, d}).pow(2).sum({1, 3}).sqrt();
        const auto size = dw.reshape({r, m, h, d}).pow(2).sum({1, 3}).sqrt();
        out[name] = moved / (xNorm * size / std::sqrt(double(m)));
    }
    if (const auto found = updates.find("wo"); found != updates.end() && found->second.defined()) {
        const auto dw = found->second.to(o.dtype()).reshape({r, h, d, m});
        const auto z = o.reshape({r, N, h, d});
        const auto moved = torch::einsum("rnhd,rhdm->rnhm", {z, dw}).pow(2).sum({1, 3}).sqrt();
        const auto zNorm = z.pow(2).sum({1, 3}).sqrt();
        const auto size = dw.pow(2).sum({2, 3}).sqrt();
        out["wo"] = moved / (zNorm * size / std::sqrt(double(d)));
    }
    return out;
}

torch::Tensor Transformer::attendProbed(const torch::Tensor &q, const torch::Tensor &k,
                                        const torch::Tensor &v, int64_t h, int64_t hd,
                                        bool lastOnly, const torch::Tensor &keep,
                                        const torch::Tensor &replacement, const HeadProbe &probe,
                                        ProbeParts &out) const
{
    // q: (R, B, Tq, h·hd), k and v: (R, B, T, h·hd) → (R, B, Tq, h·hd), with an explicit softmax.
    const int64_t R = q.size(0), B = q.size(1), Tq = q.size(2), T = k.size(2);
    auto split = [&](const torch::Tensor &t, int64_t len) {
        return t.reshape({R, B, len, h, hd}).permute({0, 1, 3, 2, 4});
    };
    auto scores = capped(torch::matmul(split(q, Tq), split(k, T).transpose(-1, -2)) *
                         logitScale(hd)); // (R, B, h, Tq, T)
    const bool causal = m_config.causal && !lastOnly;
    torch::Tensor allowed; // (Tq, T) bool, when causal
    if (causal) {
        allowed = torch::ones({Tq, T}, q.options().dtype(torch::kBool)).tril();
        scores = scores.masked_fill(allowed.logical_not(), -std::numeric_limits<float>::infinity());
    }
    const auto weights = torch::softmax(scores, -1);
    auto o = torch::matmul(weights, split(v, T));            // (R, B, h, Tq, hd)
    if (probe.captureMeanOutputs) out.mean = o.mean({1, 3}); // (R, h, hd), before any ablation
    if (keep.defined()) {
        const auto kept = keep.to(o.dtype()).view({R, 1, h, 1, 1});
        const auto instead = replacement.defined() ? replacement.view({R, 1, h, 1, hd})
                                                   : torch::zeros({}, o.options());
        o = o * kept + (1.0 - kept) * instead;
    }
    if (probe.captureWeights) out.weights = weights;
    if (probe.captureStats) {
        const auto finite =
            causal ? torch::where(allowed, scores, torch::zeros({}, scores.options())) : scores;
        const double entries =
            static_cast<double>(B) * (causal ? static_cast<double>(allowed.sum().item<int64_t>())
                                             : static_cast<double>(Tq * T));
        out.rms = (finite.pow(2).sum({1, 3, 4}) / entries).sqrt();                      // (R, h)
        out.max = finite.abs().amax({1, 3, 4});                                         // (R, h)
        out.entropy = -(weights * weights.clamp_min(1e-30).log()).sum(-1).mean({1, 3}); // (R, h)
    }
    if (probe.captureRoles) {
        // What the heads do (HeadRoles.h): the share of attention on each role's targets, and
        // the most at one offset.
        if (Tq == T)
            for (const auto &[name, pattern] : probe.patterns)
                out.roles[name] = patternScore(weights, pattern);
        out.roles["positional"] = positionalScore(weights);
    }
    return o.permute({0, 1, 3, 2, 4}).reshape({R, B, Tq, h * hd});
}

template <typename Attend>
torch::Tensor Transformer::byHeadGroups(const Layer &L, const torch::Tensor &q,
                                        const torch::Tensor &k, const torch::Tensor &v,
                                        Attend &&attend) const
{
    if (L.groups.empty()) return attend(q, k, v, L.heads, L.headDim, torch::Tensor());
    // Runs with different head counts at the same width share every weight shape; only the
    // split into heads differs. Attend group by group, then put the runs back in order.
    std::vector<torch::Tensor> parts;
    for (const auto &g : L.groups) {
        const int64_t h = g.heads, d = (L.heads * L.headDim) / h;
        parts.push_back(attend(q.index_select(0, g.runs), k.index_select(0, g.runs),
                               v.index_select(0, g.runs), h, d, g.runs));
    }
    return torch::cat(parts).index_select(0, L.inverseOrder);
}

torch::Tensor Transformer::attention(const Layer &L, const torch::Tensor &x, bool lastOnly,
                                     HeadProbe *probe, size_t index) const
{
    // x: (R, B, T, m). Heads: H' = w · H, each of width hd.
    const int64_t T = x.size(2);
    torch::Tensor q, k, v; // (R, B, Tq, inner), (R, B, T, inner), (R, B, T, inner)
    torch::Tensor qkv;     // (R, B, T, 3·inner) where the three are one product
    // The fused product costs where the three are wide (measured on an H100 with split-K on: −3 % a
    // step at 512, −20 % at 4,096, nearest neighbour at w 8 and 64), so wider layers keep three.
    // Up to 256 it measured −2.5 % alone for nearest neighbour at 64 wide (within the spread), and
    // with split-K +10 % for addition at m 96 and +4 % for text at d 256, not apart
    // (docs/PERFORMANCE.md).
    const auto wq = weight(L.wq, L.wqSigma), wk = weight(L.wk, L.wkSigma),
               wv = weight(L.wv, L.wvSigma);
    if (!lastOnly && m_fusedQkv && L.wq.size(2) <= kFusedQkvMaxWidth) {
        qkv = linearMany(x, {wq, wk, wv}, {L.bq, L.bk, L.bv});
        std::tie(q, k, v) = thirds(qkv);
    } else {
        q = linear(lastOnly ? x.slice(2, T - 1, T) : x, wq, L.bq);
        k = linear(x, wk, L.bk);
        v = linear(x, wv, L.bv);
    }
    if (m_stabilizers.qkNorm != QkNorm::Off) {
        q = headNorm(L, q, L.qGain);
        k = headNorm(L, k, L.kGain);
        qkv = torch::Tensor(); // q and k are no longer its thirds
    }
    torch::Tensor o;
    if (probe) {
        // The explicit softmax, with what the probe asks for, group by group.
        const auto layerOf = [&](const std::vector<torch::Tensor> &list) {
            return index < list.size() ? list[index] : torch::Tensor();
        };
        const auto keep = layerOf(probe->keep), replacement = layerOf(probe->replacement);
        const bool alignment =
            index < probe->updates.size() && !probe->updates[index].empty() && !lastOnly;
        std::vector<ProbeParts> parts;
        o = byHeadGroups(L, q, k, v,
                         [&](const torch::Tensor &qg, const torch::Tensor &kg,
                             const torch::Tensor &vg, int64_t h, int64_t d,
                             const torch::Tensor &runs) {
                             auto ofRuns = [&](const torch::Tensor &t) { // this group's runs
                                 return runs.defined() ? t.index_select(0, runs) : t;
                             };
                             auto pick = [&](const torch::Tensor &t) { // and their own heads
                                 return t.defined() ? ofRuns(t).narrow(1, 0, h) : t;
                             };
                             parts.emplace_back();
                             auto og = attendProbed(qg, kg, vg, h, d, lastOnly, pick(keep),
                                                    pick(replacement), *probe, parts.back());
                             if (alignment) {
                                 // How the last step's change of each weight moves these heads on this input.
                                 std::map<std::string, torch::Tensor> updates;
                                 for (const auto &[name, t] : probe->updates[index])
                                     updates[name] = ofRuns(t);
                                 const auto rows = ofRuns(x);
                                 const int64_t r = rows.size(0), N = rows.size(1) * rows.size(2);
                                 parts.back().alignment =
                                     updateAlignment(rows.reshape({r, N, rows.size(3)}),
                                                     og.reshape({r, N, og.size(3)}), updates, h, d);
                             }
                             return og;
                         });
        const int64_t Hmax = *std::max_element(L.headsOfRuns.begin(), L.headsOfRuns.end());
        // Each group's capture (`of` picks it from a group's parts), padded to the most heads,
        // the runs put back in order, as this layer's entry of `into`.
        auto gather = [&](const auto &of, std::vector<torch::Tensor> &into, int64_t headDim = 1) {
            if (into.size() <= index) into.resize(index + 1);
            std::vector<torch::Tensor> list;
            for (auto &p : parts) list.push_back(padHeads(of(p), Hmax, headDim));
            into[index] =
                list.size() == 1 ? list.front() : torch::cat(list).index_select(0, L.inverseOrder);
        };
        auto field = [](torch::Tensor ProbeParts::*f) {
            return [f](const ProbeParts &p) { return p.*f; };
        };
        if (probe->captureWeights)
            gather(field(&ProbeParts::weights), probe->weights, 2); // (R, B, heads, Tq, T)
        if (probe->captureStats) {
            gather(field(&ProbeParts::rms), probe->logitRms);
            gather(field(&ProbeParts::max), probe->logitMax);
            gather(field(&ProbeParts::entropy), probe->entropy);
        }
        if (probe->captureRoles)
            for (const auto &role : parts.front().roles)
                gather([&](const ProbeParts &p) { return p.roles.at(role.first); },
                       probe->roles[role.first]);
        if (probe->captureMeanOutputs) gather(field(&ProbeParts::mean), probe->meanOutputs);
        if (alignment)
            for (const auto &weight : parts.front().alignment)
                gather([&](const ProbeParts &p) { return p.alignment.at(weight.first); },
                       probe->alignment[weight.first]);
    } else if (m_attention.layers[index].path == AttentionPath::MicroHeads) {
        // Over micro-heads (the plan's choice for short sequences: every addition and retrieval
        // task): a few batched products, or the kernel, and one path for all head counts.
        o = attendMicro(L, index, q, k, v, lastOnly, qkv);
    } else {
        const AttentionPath path = m_attention.layers[index].path;
        o = byHeadGroups(L, q, k, v,
                         [&](const torch::Tensor &qg, const torch::Tensor &kg,
                             const torch::Tensor &vg, int64_t h, int64_t d, const torch::Tensor &) {
                             return attend(qg, kg, vg, h, d, lastOnly, path);
                         });
    }
    const auto wo = weight(L.wo, L.woSigma);
    if (m_config.widthMultiplier == 1) return linear(o, wo, L.bo); // the heads' projections, summed
    // w modules, each with its own output projection and bias, averaged: the mean of their
    // projections, plus their biases' mean. Those biases get the same gradient and start equal, so
    // they stay equal, and Adam moves each as it moves one bias added after the average: bo is it.
    auto out = linear(o, wo, torch::Tensor()) / static_cast<double>(m_config.widthMultiplier);
    if (L.bo.defined()) out = out + L.bo.view({out.size(0), 1, 1, out.size(3)});
    return out;
}

torch::Tensor Transformer::mlp(const Layer &L, const torch::Tensor &x) const
{
    // On the GPU a ReLU block's bias, ReLU and their gradients are one kernel each way.
    if (m_config.activation == Activation::Relu && L.b1.defined() && L.b2.defined() &&
        torch::GradMode::is_enabled() && m_directGradients && L.w1.is_leaf() && L.w2.is_leaf() &&
        !L.w1Sigma.gamma.defined() && !L.w2Sigma.gamma.defined() && fusedFeedForward(m_device)) {
        const int64_t R = x.size(0), B = x.size(1), T = x.size(2);
        const auto rows = x.reshape({R, B * T, x.size(3)}).contiguous();
        const bool product = fusedFfnProductFits(rows, L.w1, L.b1);
        m_ffnFused = true;
        m_ffnProduct = m_ffnProduct || product;
        return FeedForwardRelu::apply(rows, L.w1, L.b1, L.w2, L.b2, product)
            .view({R, B, T, L.w2.size(2)});
    }
    auto h = linear(x, weight(L.w1, L.w1Sigma), L.b1);
    h = m_config.activation == Activation::Gelu ? torch::gelu(h) : torch::relu(h);
    return linear(h, weight(L.w2, L.w2Sigma), L.b2);
}

torch::Tensor Transformer::forward(const torch::Tensor &input, bool lastOnly) const
{
    return forwardImpl(input, lastOnly, nullptr);
}

torch::Tensor Transformer::forward(const torch::Tensor &input, bool lastOnly,
                                   HeadProbe &probe) const
{
    probe.weights.clear();
    probe.logitRms.clear();
    probe.logitMax.clear();
    probe.entropy.clear();
    probe.roles.clear();
    probe.meanOutputs.clear();
    probe.alignment.clear();
    return forwardImpl(input, lastOnly, &probe);
}

torch::Tensor Transformer::forwardImpl(const torch::Tensor &input, bool lastOnly,
                                       HeadProbe *probe) const
{
    HeadProbe intervention;
    if (!probe && m_intervention) {
        intervention.keep = m_intervention->keep;
        intervention.replacement = m_intervention->replacement;
        probe = &intervention;
    }
    const int64_t R = m_runs;
    const int64_t m = m_config.dModel;
    torch::Tensor x;
    bool positionsAdded = false;
    if (m_vocab > 0) {
        // tokens (B, T) shared, or (R, B, T) per run
        const bool shared = input.dim() == 2;
        const int64_t B = input.size(shared ? 0 : 1), T = input.size(shared ? 1 : 2);
        // The CPU's loop reads the tokens in place (addition narrows its batch, so a copy there).
        const bool cpuLoop = headlab::fusedEmbedding(m_device);
        const auto tokens = cpuLoop ? input.contiguous() : input;
        const auto positions = m_maxPositions > 0 ? m_positions : torch::Tensor();
        if (m_device.is_cuda()) {
            // On the GPU the lookup is a product with one-hot rows: the backward pass of an index
            // lookup adds each token's gradient into its embedding row with atomics, in an order that
            // changes from run to run, so the same seed would not give the same numbers. The
            // product's backward is a deterministic matrix product; it costs 2·V·m FLOPs a token.
            const auto oneHot =
                torch::one_hot(input.reshape({shared ? 1 : R, B * T}), m_vocab).to(torch::kFloat32);
            x = torch::matmul(oneHot, m_embedding).view({R, B, T, m});
        } else if (cpuLoop && fusedEmbeddingFits(tokens, m_embedding, positions)) {
            // On the CPU the lookup and the positions are one loop each way.
            m_embeddingFused = true;
            x = TokenEmbedding::apply(tokens, m_embedding, positions);
            positionsAdded = positions.defined();
        } else if (shared) {
            x = m_embedding.index_select(1, input.reshape({-1})).view({R, B, T, m});
        } else {
            const auto idx = input.reshape({R, B * T, 1}).expand({R, B * T, m});
            x = m_embedding.gather(1, idx).view({R, B, T, m});
        }
    } else {
        x = input; // (R, B, T, m)
    }
    const int64_t T = x.size(2);
    TORCH_CHECK(m_maxPositions == 0 || T <= m_maxPositions, "sequence of ", T,
                " tokens is longer than ", m_maxPositions, " positions");
    if (m_maxPositions > 0 && !positionsAdded) x = x + m_positions.slice(1, 0, T).unsqueeze(1);

    const bool pre = m_config.placement == NormPlacement::PreNorm;
    for (size_t l = 0; l < m_layers.size(); ++l) {
        const Layer &L = m_layers[l];
        const bool last = lastOnly && l + 1 == m_layers.size();
        const auto residual = [&](const torch::Tensor &t) {
            return last ? t.slice(2, t.size(2) - 1) : t;
        };
        if (pre) {
            const auto a = attention(L, norm(x, L.ln1Gain, L.ln1Shift), last, probe, l);
            x = residual(x) + a;
            x = x + mlp(L, norm(x, L.ln2Gain, L.ln2Shift));
        } else {
            x = addNorm(residual(x), attention(L, x, last, probe, l), L.ln1Gain, L.ln1Shift);
            x = addNorm(x, mlp(L, x), L.ln2Gain, L.ln2Shift);
        }
    }
    if (m_config.finalNorm) x = norm(x, m_finalGain, m_finalShift);
    if (m_vocab > 0) x = linear(x, m_unembedding, torch::Tensor());
    return x;
}

} // namespace headlab
