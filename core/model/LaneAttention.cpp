// LaneAttention.cpp — see LaneAttention.h.
//
// Lanes: the R·B·H (sequence, head) pairs, 16 to a block. A block's q, k and v are gathered from
// where the projections put them into buffers laid out (position, head width, lane); every loop
// below then runs over one vector of 16 pairs, which share their positions and causal mask, with
// its sums in registers; the outputs are scattered back in place. Gathering block by block is what
// makes the lanes pay at wider heads: copying whole tensors to that layout with ATen first (the
// first version) cost as much as ATen's attention at heads 8 wide. The softmax weights P are kept
// for the backward pass, a block's together.
#include "core/model/LaneAttention.h"

#include "core/model/CpuClones.h"

#include "core/model/CpuParallel.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <vector>

// Each loop compiled for AVX-512, AVX2 with FMA and the baseline (CpuClones.h).
#define HEADLAB_LANES HEADLAB_CPU_CLONES

// The helpers below take and return 64-byte vectors; they are always inlined into the loops, whose
// clones pass nothing in vector registers, so GCC's note on that ABI does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace headlab {

namespace {

// 16 lanes, one AVX-512 register (two AVX2 ones, four SSE ones: the compiler splits it), loaded
// and stored unaligned.
using Vec = float __attribute__((vector_size(64)));
using VecInt = int32_t __attribute__((vector_size(64)));
using VecUnaligned = float __attribute__((vector_size(64), aligned(4)));
constexpr int64_t kLanes = 16;

[[gnu::always_inline]] inline Vec load(const float *p)
{
    return *reinterpret_cast<const VecUnaligned *>(p);
}
[[gnu::always_inline]] inline void store(float *p, Vec v)
{
    *reinterpret_cast<VecUnaligned *>(p) = v;
}
[[gnu::always_inline]] inline Vec splat(float x)
{
    return Vec{} + x;
}

// exp(x) for x ≤ 0 (scores less their row's maximum), lane by lane without a library call: 2^k · e^r
// with k = round(x / ln 2) and |r| ≤ ln 2 / 2, e^r by Cephes's degree-6 polynomial (relative error
// about 2e-7, as expf's).
[[gnu::always_inline]] inline Vec expNonPositive(Vec x)
{
    x = x < -87.0f ? splat(-87.0f) : x;
    const Vec kf = (x * 1.44269504f + 12582912.0f) - 12582912.0f; // round to nearest
    const Vec r = (x - kf * 0.693359375f) + kf * 2.12194440e-4f;
    Vec y = splat(1.9875691500e-4f);
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * r * r + r + 1.0f;
    const VecInt bits = (__builtin_convertvector(kf, VecInt) + 127) << 23;
    return y * std::bit_cast<Vec>(bits);
}

// A block's 16 lanes in its buffers: element (position, c) of every lane at (position · d + c) · 16,
// the weights P (i, j) at (i · T + j) · 16.
struct Shape {
    int64_t Tq, T, d;
    bool causal;
    float scale;
    // Keys query i sees: up to its own position (the last Tq of T), or all.
    int64_t end(int64_t i) const { return causal ? T - Tq + i + 1 : T; }
    static int64_t at(int64_t position, int64_t c, int64_t d)
    {
        return (position * d + c) * kLanes;
    }
    int64_t at(int64_t position, int64_t c) const { return at(position, c, d); }
    int64_t weight(int64_t i, int64_t j) const { return (i * T + j) * kLanes; }
};

HEADLAB_LANES void forwardBlock(const float *q, const float *k, const float *v, float *o, float *p,
                                const Shape &s)
{
    for (int64_t i = 0; i < s.Tq; ++i) {
        const int64_t end = s.end(i);
        Vec mx = splat(-std::numeric_limits<float>::infinity());
        for (int64_t j = 0; j < end; ++j) {
            Vec acc{};
            for (int64_t c = 0; c < s.d; ++c) acc += load(q + s.at(i, c)) * load(k + s.at(j, c));
            acc *= s.scale;
            store(p + s.weight(i, j), acc);
            mx = acc > mx ? acc : mx;
        }
        Vec sum{};
        for (int64_t j = 0; j < end; ++j) {
            const Vec e = expNonPositive(load(p + s.weight(i, j)) - mx);
            store(p + s.weight(i, j), e);
            sum += e;
        }
        const Vec inverse = 1.0f / sum;
        for (int64_t j = 0; j < end; ++j)
            store(p + s.weight(i, j), load(p + s.weight(i, j)) * inverse);
        for (int64_t j = end; j < s.T; ++j) store(p + s.weight(i, j), Vec{});
        for (int64_t c = 0; c < s.d; ++c) {
            Vec acc{};
            for (int64_t j = 0; j < end; ++j)
                acc += load(p + s.weight(i, j)) * load(v + s.at(j, c));
            store(o + s.at(i, c), acc);
        }
    }
}

// dq, dk and dv of a block's lanes from dO and the kept weights; ds: room for Tq × T vectors.
HEADLAB_LANES void backwardBlock(const float *q, const float *k, const float *v, const float *p,
                                 const float *dout, float *dq, float *dk, float *dv, float *ds,
                                 const Shape &s)
{
    // dS = P ⊙ (dP − Σ_j P dP) · scale, dP = dO vᵀ; zero where a key is not seen.
    for (int64_t i = 0; i < s.Tq; ++i) {
        const int64_t end = s.end(i);
        Vec rowDot{};
        for (int64_t j = 0; j < end; ++j) {
            Vec acc{};
            for (int64_t c = 0; c < s.d; ++c) acc += load(dout + s.at(i, c)) * load(v + s.at(j, c));
            store(ds + s.weight(i, j), acc);
            rowDot += load(p + s.weight(i, j)) * acc;
        }
        for (int64_t j = 0; j < end; ++j)
            store(ds + s.weight(i, j),
                  load(p + s.weight(i, j)) * (load(ds + s.weight(i, j)) - rowDot) * s.scale);
        for (int64_t j = end; j < s.T; ++j) store(ds + s.weight(i, j), Vec{});
    }
    for (int64_t i = 0; i < s.Tq; ++i) // dq = dS k
        for (int64_t c = 0; c < s.d; ++c) {
            Vec acc{};
            for (int64_t j = 0; j < s.end(i); ++j)
                acc += load(ds + s.weight(i, j)) * load(k + s.at(j, c));
            store(dq + s.at(i, c), acc);
        }
    for (int64_t j = 0; j < s.T; ++j) // dk = dSᵀ q, dv = Pᵀ dO
        for (int64_t c = 0; c < s.d; ++c) {
            Vec dkAcc{}, dvAcc{};
            for (int64_t i = 0; i < s.Tq; ++i) {
                dkAcc += load(ds + s.weight(i, j)) * load(q + s.at(i, c));
                dvAcc += load(p + s.weight(i, j)) * load(dout + s.at(i, c));
            }
            store(dk + s.at(j, c), dkAcc);
            store(dv + s.at(j, c), dvAcc);
        }
}

// A (R, B, len, H·hd) tensor read or written in place: element (r, b, t, h·hd + c) at
// data[r·sR + b·sB + t·sT + h·hd + c]. Lane n is the pair (sequence r·B + b, head h), n = (r·B + b)·H
// + h; lanes past the last pair are padding (zeros in, nothing out).
struct Rows {
    float *data;
    int64_t sR, sB, sT, B, H, d, len, pairs;

    static Rows of(const torch::Tensor &t, int64_t heads, int64_t headDim)
    {
        return {t.data_ptr<float>(),
                t.stride(0),
                t.stride(1),
                t.stride(2),
                t.size(1),
                heads,
                headDim,
                t.size(2),
                t.size(0) * t.size(1) * heads};
    }
    const float *lane(int64_t n) const
    {
        const int64_t rb = n / H;
        return data + (rb / B) * sR + (rb % B) * sB + (n % H) * d;
    }
    // Copies the block's lanes into buf, (position, c, lane).
    void gather(int64_t n0, float *buf) const
    {
        for (int64_t l = 0; l < kLanes; ++l) {
            const int64_t n = n0 + l;
            if (n >= pairs) {
                for (int64_t e = 0; e < len * d; ++e) buf[e * kLanes + l] = 0.0f;
                continue;
            }
            const float *row = lane(n);
            for (int64_t t = 0; t < len; ++t)
                for (int64_t c = 0; c < d; ++c) buf[Shape::at(t, c, d) + l] = row[t * sT + c];
        }
    }
    // Writes the block's lanes from buf back to their places.
    void scatter(int64_t n0, const float *buf) const
    {
        for (int64_t l = 0; l < kLanes && n0 + l < pairs; ++l) {
            float *row = const_cast<float *>(lane(n0 + l));
            for (int64_t t = 0; t < len; ++t)
                for (int64_t c = 0; c < d; ++c) row[t * sT + c] = buf[Shape::at(t, c, d) + l];
        }
    }
};

// Inputs as the kernel reads them: float32, each row's head widths adjacent.
torch::Tensor rowMajor(const torch::Tensor &t)
{
    return t.stride(3) == 1 ? t : t.contiguous();
}

// block(b, scratch) for every block b of kLanes lanes over the intra-op threads; scratch: floats
// that stay with the thread.
template <typename Block>
void overBlocks(int64_t blocks, size_t scratch, Block &&block)
{
    cpuParallelFor(0, blocks, 1, [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> buffer;
        buffer.resize(scratch);
        for (int64_t b = begin; b < end; ++b) block(b, buffer.data());
    });
}

struct LaneAttentionFunction : torch::autograd::Function<LaneAttentionFunction> {
    static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &qIn,
                                 const torch::Tensor &kIn, const torch::Tensor &vIn, int64_t heads,
                                 int64_t headDim, double scale, bool causal)
    {
        const auto q = rowMajor(qIn), k = rowMajor(kIn), v = rowMajor(vIn);
        const Shape s{q.size(2), k.size(2), headDim, causal, static_cast<float>(scale)};
        auto o = torch::empty(q.sizes(), q.options());
        const Rows qr = Rows::of(q, heads, headDim), kr = Rows::of(k, heads, headDim),
                   vr = Rows::of(v, heads, headDim), orow = Rows::of(o, heads, headDim);
        const int64_t blocks = (qr.pairs + kLanes - 1) / kLanes;
        const int64_t perQuery = s.Tq * s.d * kLanes, perKey = s.T * s.d * kLanes,
                      perWeights = s.Tq * s.T * kLanes;
        auto p = torch::empty({blocks, perWeights}, q.options());
        float *pp = p.data_ptr<float>();
        overBlocks(blocks, static_cast<size_t>(2 * perQuery + 2 * perKey),
                   [&](int64_t b, float *buf) {
                       float *qb = buf, *ob = qb + perQuery, *kb = ob + perQuery, *vb = kb + perKey;
                       qr.gather(b * kLanes, qb);
                       kr.gather(b * kLanes, kb);
                       vr.gather(b * kLanes, vb);
                       forwardBlock(qb, kb, vb, ob, pp + b * perWeights, s);
                       orow.scatter(b * kLanes, ob);
                   });
        ctx->save_for_backward({q, k, v, p});
        ctx->saved_data["heads"] = heads;
        ctx->saved_data["headDim"] = headDim;
        ctx->saved_data["scale"] = scale;
        ctx->saved_data["causal"] = causal;
        return o;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const auto &q = saved[0], &k = saved[1], &v = saved[2], &p = saved[3];
        const int64_t heads = ctx->saved_data["heads"].toInt(),
                      headDim = ctx->saved_data["headDim"].toInt();
        const Shape s{q.size(2), k.size(2), headDim, ctx->saved_data["causal"].toBool(),
                      static_cast<float>(ctx->saved_data["scale"].toDouble())};
        const auto g = rowMajor(grads[0]);
        auto dq = torch::empty(q.sizes(), q.options()), dk = torch::empty(k.sizes(), k.options()),
             dv = torch::empty(v.sizes(), v.options());
        const Rows qr = Rows::of(q, heads, headDim), kr = Rows::of(k, heads, headDim),
                   vr = Rows::of(v, heads, headDim), gr = Rows::of(g, heads, headDim),
                   dqr = Rows::of(dq, heads, headDim), dkr = Rows::of(dk, heads, headDim),
                   dvr = Rows::of(dv, heads, headDim);
        const int64_t perQuery = s.Tq * s.d * kLanes, perKey = s.T * s.d * kLanes,
                      perWeights = s.Tq * s.T * kLanes;
        const float *pp = p.data_ptr<float>();
        overBlocks(p.size(0), static_cast<size_t>(3 * perQuery + 4 * perKey + perWeights),
                   [&](int64_t b, float *buf) {
                       float *qb = buf, *gb = qb + perQuery, *dqb = gb + perQuery,
                             *kb = dqb + perQuery, *vb = kb + perKey, *dkb = vb + perKey,
                             *dvb = dkb + perKey, *ds = dvb + perKey;
                       const int64_t n0 = b * kLanes;
                       qr.gather(n0, qb);
                       kr.gather(n0, kb);
                       vr.gather(n0, vb);
                       gr.gather(n0, gb); // padding lanes: dO = 0, so they give 0
                       backwardBlock(qb, kb, vb, pp + b * perWeights, gb, dqb, dkb, dvb, ds, s);
                       dqr.scatter(n0, dqb);
                       dkr.scatter(n0, dkb);
                       dvr.scatter(n0, dvb);
                   });
        return {dq, dk, dv, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
};

} // namespace

torch::Tensor laneAttention(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                            int64_t heads, int64_t headDim, double scale, bool causal)
{
    TORCH_CHECK(q.device().is_cpu() && q.scalar_type() == torch::kFloat32,
                "laneAttention: float32 on the CPU");
    TORCH_CHECK(k.size(2) <= kLaneAttentionMaxLength && q.size(2) <= k.size(2),
                "laneAttention: at most ", kLaneAttentionMaxLength, " positions");
    return LaneAttentionFunction::apply(q, k, v, heads, headDim, scale, causal);
}

} // namespace headlab
