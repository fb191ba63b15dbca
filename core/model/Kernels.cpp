// Kernels.cpp — see Kernels.h.
#include "core/model/Kernels.h"

#include "core/config/Switches.h"

#include "core/model/CpuEmbedding.h"
#include "core/model/CpuLayerNorm.h"
#include "core/model/CpuParallel.h"
#include "core/model/cuda/UnitPointsMath.h"

#include <cstdint>

#ifdef HEADLAB_HAVE_CUDA_KERNELS
#include "core/model/cuda/BiasRelu.h"
#ifdef HEADLAB_HAVE_CUTLASS
#include "core/model/cuda/BiasReluProduct.h"
#endif
#include "core/model/cuda/LayerNorm.h"
#include "core/model/cuda/MicroAttention.h"
#include "core/model/cuda/UnitNorm.h"
#include "core/model/cuda/UnitPoints.h"

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace headlab {

namespace {

// Whether one of our kernels may run on `device`: the build has them, the device is a GPU and the
// kernel's switch is not "0".
bool kernelOn(const torch::Device &device, Switch which)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    return device.is_cuda() && switchOn(which, true);
#else
    (void)device, (void)which;
    return false;
#endif
}

#ifdef HEADLAB_HAVE_CUDA_KERNELS
bool float32OnOneGpu(std::initializer_list<const torch::Tensor *> tensors)
{
    const auto device = (*tensors.begin())->device();
    for (const auto *t : tensors)
        if (!t->defined() || !t->is_cuda() || t->device() != device ||
            t->scalar_type() != torch::kFloat32 || !t->is_contiguous())
            return false;
    return true;
}
#endif

// The nearest-neighbour points on the CPU in one loop: the CUDA kernel's arithmetic
// (cuda/UnitPointsMath.h). ATen's path emulates the hash on int64 tensors in about 100 passes,
// half a small classroom step; this is one pass over the points, on the intra-op threads.
torch::Tensor cpuUnitPoints(const torch::Tensor &seedKeys, int64_t step, int64_t points,
                            int64_t dim)
{
    const auto keys = seedKeys.contiguous();
    auto out = torch::empty({keys.size(0), points, dim}, keys.options().dtype(torch::kFloat32));
    const int64_t *k = keys.data_ptr<int64_t>();
    float *o = out.data_ptr<float>();
    cpuParallelFor(0, keys.size(0) * points, 256, [&](int64_t begin, int64_t end) {
        for (int64_t index = begin; index < end; ++index) {
            const int64_t run = index / points;
            headlab::points::unitPoint(
                static_cast<uint32_t>(k[3 * run]), static_cast<uint32_t>(k[3 * run + 1]),
                static_cast<uint32_t>(k[3 * run + 2]), step, index % points, dim, o + index * dim);
        }
    });
    return out;
}

} // namespace

std::optional<torch::Tensor> fusedUnitPoints(const torch::Tensor &seedKeys,
                                             const torch::Tensor &step, int64_t points, int64_t dim)
{
    // What both the CPU loop and the kernel take: (R, 3) int64 keys, a one-element int64 step, and
    // 32-bit counters.
    if (seedKeys.scalar_type() != torch::kInt64 || step.scalar_type() != torch::kInt64 ||
        seedKeys.dim() != 2 || seedKeys.size(1) != 3 || step.numel() != 1 ||
        2 * points * dim >= (int64_t{1} << 32))
        return std::nullopt;
    if (seedKeys.device().is_cpu() && step.device().is_cpu() && switchOn(Switch::FusedPoints, true))
        return cpuUnitPoints(seedKeys, step.item<int64_t>(), points, dim);
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!kernelOn(seedKeys.device(), Switch::FusedPoints) || !step.is_cuda()) return std::nullopt;
    const c10::cuda::CUDAGuard guard(seedKeys.device());
    const auto keys = seedKeys.contiguous();
    auto out = torch::empty({keys.size(0), points, dim}, keys.options().dtype(torch::kFloat32));
    cuda::UnitPointsArgs a{keys.data_ptr<int64_t>(),
                           step.data_ptr<int64_t>(),
                           out.data_ptr<float>(),
                           keys.size(0),
                           points,
                           dim};
    if (cuda::unitPoints(a, c10::cuda::getCurrentCUDAStream(keys.device().index()).stream()))
        return out;
#else
    (void)seedKeys, (void)step, (void)points, (void)dim;
#endif
    return std::nullopt;
}

bool fusedFeedForward(const torch::Device &device)
{
    return kernelOn(device, Switch::FusedFfn);
}

bool fusedBiasRelu(torch::Tensor &h, const torch::Tensor &b)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!float32OnOneGpu({&h, &b}) || h.dim() != 3 || b.dim() != 2 || b.size(0) != h.size(0) ||
        b.size(1) != h.size(2))
        return false;
    const c10::cuda::CUDAGuard guard(h.device());
    const int64_t R = h.size(0), N = h.size(1), F = h.size(2);
    cuda::BiasReluArgs a{h.data_ptr<float>(),     b.data_ptr<float>(), R, N, F,
                         cuda::rowSlices(R, N, F)};
    return cuda::biasRelu(a, c10::cuda::getCurrentCUDAStream(h.device().index()).stream());
#else
    (void)h, (void)b;
    return false;
#endif
}

bool fusedFfnProductFits(const torch::Tensor &x, const torch::Tensor &w1, const torch::Tensor &b1)
{
#if defined(HEADLAB_HAVE_CUDA_KERNELS) && defined(HEADLAB_HAVE_CUTLASS)
    // Measured faster only with a narrow input and a wide hidden layer (BiasReluProduct.h); with
    // TF32 on, cuBLAS's tensor-core product is faster than any FP32 one.
    constexpr int64_t kMaxInner = 64, kMinWidth = 1024;
    return kernelOn(x.device(), Switch::FusedFfn) && switchOn(Switch::FfnProduct, true) &&
           float32OnOneGpu({&x, &w1, &b1}) && !at::globalContext().allowTF32CuBLAS() &&
           x.dim() == 3 && w1.dim() == 3 && b1.dim() == 2 && w1.size(0) == x.size(0) &&
           w1.size(1) == x.size(2) && b1.size(0) == x.size(0) && b1.size(1) == w1.size(2) &&
           x.size(2) <= kMaxInner && w1.size(2) >= kMinWidth;
#else
    (void)x, (void)w1, (void)b1;
    return false;
#endif
}

std::optional<torch::Tensor> fusedBiasReluProduct(const torch::Tensor &x, const torch::Tensor &w1,
                                                  const torch::Tensor &b1)
{
#if defined(HEADLAB_HAVE_CUDA_KERNELS) && defined(HEADLAB_HAVE_CUTLASS)
    if (!fusedFfnProductFits(x, w1, b1)) return std::nullopt;
    const c10::cuda::CUDAGuard guard(x.device());
    auto h = torch::empty({x.size(0), x.size(1), w1.size(2)}, x.options());
    const cuda::BiasReluProductArgs a{x.data_ptr<float>(),
                                      w1.data_ptr<float>(),
                                      b1.data_ptr<float>(),
                                      h.data_ptr<float>(),
                                      x.size(0),
                                      x.size(1),
                                      x.size(2),
                                      w1.size(2)};
    if (cuda::biasReluProduct(a, c10::cuda::getCurrentCUDAStream(x.device().index()).stream()))
        return h;
#else
    (void)x, (void)w1, (void)b1;
#endif
    return std::nullopt;
}

bool fusedReluBackward(torch::Tensor &dh, const torch::Tensor &h, torch::Tensor &gb)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!float32OnOneGpu({&dh, &h, &gb}) || dh.sizes() != h.sizes() || dh.dim() != 3 ||
        gb.dim() != 2 || gb.size(0) != dh.size(0) || gb.size(1) != dh.size(2))
        return false;
    const c10::cuda::CUDAGuard guard(dh.device());
    const int64_t R = dh.size(0), N = dh.size(1), F = dh.size(2);
    const int64_t slices = cuda::rowSlices(R, N, F);
    auto partial = torch::empty({R, slices, F}, dh.options());
    cuda::ReluBackwardArgs a{
        dh.data_ptr<float>(), h.data_ptr<float>(), partial.data_ptr<float>(), R, N, F, slices};
    if (!cuda::reluBackward(a, c10::cuda::getCurrentCUDAStream(dh.device().index()).stream()))
        return false;
    at::sum_out(gb, partial, {1});
    return true;
#else
    (void)dh, (void)h, (void)gb;
    return false;
#endif
}

bool fusedUnitNorm(const torch::Device &device)
{
    return kernelOn(device, Switch::FusedNorm);
}

std::optional<UnitNormParts> fusedResidualUnitNorm(const torch::Tensor &a, const torch::Tensor &r,
                                                   const torch::Tensor &gain, double eps)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!float32OnOneGpu({&a, &r, &gain}) || a.sizes() != r.sizes() || a.dim() != 3 ||
        gain.numel() != a.size(0))
        return std::nullopt;
    const c10::cuda::CUDAGuard guard(a.device());
    const int64_t R = a.size(0), rows = a.size(1), d = a.size(2);
    UnitNormParts out{torch::empty_like(a), torch::empty_like(a),
                      torch::empty({R, rows}, a.options())};
    cuda::UnitNormArgs args{a.data_ptr<float>(),
                            r.data_ptr<float>(),
                            gain.data_ptr<float>(),
                            out.y.data_ptr<float>(),
                            out.s.data_ptr<float>(),
                            out.norm.data_ptr<float>(),
                            R,
                            rows,
                            d,
                            static_cast<float>(eps)};
    if (cuda::unitNorm(args, c10::cuda::getCurrentCUDAStream(a.device().index()).stream()))
        return out;
#else
    (void)a, (void)r, (void)gain, (void)eps;
#endif
    return std::nullopt;
}

std::optional<std::pair<torch::Tensor, torch::Tensor>>
fusedResidualUnitNormBackward(const torch::Tensor &dy, const UnitNormParts &saved,
                              const torch::Tensor &gain, double eps)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!float32OnOneGpu({&dy, &saved.s, &saved.norm, &gain}) || dy.sizes() != saved.s.sizes())
        return std::nullopt;
    const c10::cuda::CUDAGuard guard(dy.device());
    const int64_t R = dy.size(0), rows = dy.size(1), d = dy.size(2);
    auto ds = torch::empty_like(dy);
    auto rowDot = torch::empty({R, rows}, dy.options());
    cuda::UnitNormBackwardArgs args{dy.data_ptr<float>(),
                                    saved.s.data_ptr<float>(),
                                    saved.norm.data_ptr<float>(),
                                    gain.data_ptr<float>(),
                                    ds.data_ptr<float>(),
                                    rowDot.data_ptr<float>(),
                                    R,
                                    rows,
                                    d,
                                    static_cast<float>(eps)};
    if (cuda::unitNormBackward(args, c10::cuda::getCurrentCUDAStream(dy.device().index()).stream()))
        return std::make_pair(ds, rowDot);
#else
    (void)dy, (void)saved, (void)gain, (void)eps;
#endif
    return std::nullopt;
}

#ifdef HEADLAB_HAVE_CUDA_KERNELS
static_assert(kFusedLayerNormMaxWidth == cuda::kLayerNormMaxWidth);
#endif

bool fusedEmbedding(const torch::Device &device)
{
    return device.is_cpu() && switchOn(Switch::FusedEmbedding, true);
}

namespace {

// What the CPU loops read in place: defined, on the CPU, of `type`, contiguous.
bool contiguousOnCpu(const torch::Tensor &t, torch::ScalarType type)
{
    return t.defined() && t.device().is_cpu() && t.scalar_type() == type && t.is_contiguous();
}

cpu::EmbeddingArgs embeddingArgs(const torch::Tensor &tokens, const torch::Tensor &table,
                                 const torch::Tensor &positions)
{
    const bool perRun = tokens.dim() == 3;
    return {tokens.data_ptr<int64_t>(),
            perRun,
            table.data_ptr<float>(),
            positions.defined() ? positions.data_ptr<float>() : nullptr,
            table.size(0),
            tokens.size(perRun ? 1 : 0),
            tokens.size(perRun ? 2 : 1),
            table.size(1),
            positions.defined() ? positions.size(1) : 0,
            table.size(2)};
}

} // namespace

bool fusedEmbeddingFits(const torch::Tensor &tokens, const torch::Tensor &table,
                        const torch::Tensor &positions)
{
    if (!contiguousOnCpu(tokens, torch::kInt64) || !contiguousOnCpu(table, torch::kFloat32) ||
        table.dim() != 3 ||
        (tokens.dim() != 2 && !(tokens.dim() == 3 && tokens.size(0) == table.size(0))))
        return false;
    if (!positions.defined()) return true;
    return contiguousOnCpu(positions, torch::kFloat32) && positions.dim() == 3 &&
           positions.size(0) == table.size(0) && positions.size(2) == table.size(2) &&
           tokens.size(tokens.dim() - 1) <= positions.size(1);
}

torch::Tensor fusedEmbeddingForward(const torch::Tensor &tokens, const torch::Tensor &table,
                                    const torch::Tensor &positions)
{
    const auto a = embeddingArgs(tokens, table, positions);
    auto y = torch::empty({a.runs, a.batch, a.length, a.d}, table.options());
    TORCH_CHECK(cpu::embed(a, y.data_ptr<float>()), "a token is outside the vocabulary of ",
                a.vocab);
    return y;
}

std::pair<torch::Tensor, torch::Tensor> fusedEmbeddingBackward(const torch::Tensor &tokens,
                                                               const torch::Tensor &dy,
                                                               const torch::Tensor &table,
                                                               const torch::Tensor &positions)
{
    const auto a = embeddingArgs(tokens, table, positions);
    auto dTable = torch::empty_like(table);
    auto dPositions = positions.defined() ? torch::empty_like(positions) : torch::Tensor();
    const auto g = dy.contiguous();
    cpu::embedBackward(a, g.data_ptr<float>(), dTable.data_ptr<float>(),
                       positions.defined() ? dPositions.data_ptr<float>() : nullptr);
    return {dTable, dPositions};
}

bool fusedLayerNorm(const torch::Device &device)
{
    return device.is_cpu() ? switchOn(Switch::FusedLayerNorm, true)
                           : kernelOn(device, Switch::FusedLayerNorm);
}

namespace {

// The CPU loop's operands: FP32, contiguous, on the CPU, (R, rows, d) with g (and b) (R, d).
bool cpuLayerNormFits(std::initializer_list<const torch::Tensor *> tensors, const torch::Tensor &x,
                      const torch::Tensor &gain)
{
    for (const auto *t : tensors)
        if (!contiguousOnCpu(*t, torch::kFloat32)) return false;
    return x.dim() == 3 && x.size(1) > 0 && x.size(2) <= kFusedLayerNormMaxWidth &&
           gain.numel() == x.size(0) * x.size(2);
}

} // namespace

std::optional<LayerNormParts> fusedLayerNormForward(const torch::Tensor &x,
                                                    const torch::Tensor &gain,
                                                    const torch::Tensor &shift, double eps,
                                                    double scale)
{
    if (x.device().is_cpu()) {
        if (!cpuLayerNormFits({&x, &gain, &shift}, x, gain) || shift.numel() != gain.numel())
            return std::nullopt;
        const int64_t R = x.size(0), rows = x.size(1), d = x.size(2);
        LayerNormParts out{torch::empty_like(x), torch::empty({R, rows}, x.options()),
                           torch::empty({R, rows}, x.options())};
        cpu::layerNorm({x.data_ptr<float>(), gain.data_ptr<float>(), shift.data_ptr<float>(),
                        out.y.data_ptr<float>(), out.mean.data_ptr<float>(),
                        out.rstd.data_ptr<float>(), R, rows, d, static_cast<float>(eps),
                        static_cast<float>(scale)});
        return out;
    }
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!float32OnOneGpu({&x, &gain, &shift}) || x.dim() != 3 || x.size(1) == 0 ||
        x.size(2) > kFusedLayerNormMaxWidth || gain.numel() != x.size(0) * x.size(2) ||
        shift.numel() != gain.numel())
        return std::nullopt;
    const c10::cuda::CUDAGuard guard(x.device());
    const int64_t R = x.size(0), rows = x.size(1), d = x.size(2);
    LayerNormParts out{torch::empty_like(x), torch::empty({R, rows}, x.options()),
                       torch::empty({R, rows}, x.options())};
    cuda::LayerNormArgs args{x.data_ptr<float>(),
                             gain.data_ptr<float>(),
                             shift.data_ptr<float>(),
                             out.y.data_ptr<float>(),
                             out.mean.data_ptr<float>(),
                             out.rstd.data_ptr<float>(),
                             R,
                             rows,
                             d,
                             static_cast<float>(eps),
                             static_cast<float>(scale)};
    if (cuda::layerNorm(args, c10::cuda::getCurrentCUDAStream(x.device().index()).stream()))
        return out;
#else
    (void)x, (void)gain, (void)shift, (void)eps, (void)scale;
#endif
    return std::nullopt;
}

std::optional<LayerNormGradients> fusedLayerNormBackward(const torch::Tensor &dy,
                                                         const torch::Tensor &x,
                                                         const LayerNormParts &saved,
                                                         const torch::Tensor &gain, double scale)
{
    if (x.device().is_cpu()) {
        if (!cpuLayerNormFits({&dy, &x, &saved.mean, &saved.rstd, &gain}, x, gain) ||
            dy.sizes() != x.sizes())
            return std::nullopt;
        const int64_t R = x.size(0), rows = x.size(1), d = x.size(2);
        LayerNormGradients out{torch::empty_like(x), torch::empty_like(gain),
                               torch::empty_like(gain)};
        cpu::layerNormBackward({dy.data_ptr<float>(), x.data_ptr<float>(),
                                saved.mean.data_ptr<float>(), saved.rstd.data_ptr<float>(),
                                gain.data_ptr<float>(), out.dx.data_ptr<float>(),
                                out.gain.data_ptr<float>(), out.shift.data_ptr<float>(), R, rows, d,
                                static_cast<float>(scale)});
        return out;
    }
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!float32OnOneGpu({&dy, &x, &saved.mean, &saved.rstd, &gain}) || dy.sizes() != x.sizes() ||
        x.dim() != 3 || x.size(1) == 0 || x.size(2) > kFusedLayerNormMaxWidth ||
        gain.numel() != x.size(0) * x.size(2))
        return std::nullopt;
    const c10::cuda::CUDAGuard guard(dy.device());
    const int64_t R = x.size(0), rows = x.size(1), d = x.size(2);
    const int64_t slices = cuda::layerNormSlices(R, rows);
    auto dx = torch::empty_like(x);
    auto partial = torch::empty({R, slices, 2, d}, x.options());
    cuda::LayerNormBackwardArgs args{dy.data_ptr<float>(),
                                     x.data_ptr<float>(),
                                     saved.mean.data_ptr<float>(),
                                     saved.rstd.data_ptr<float>(),
                                     gain.data_ptr<float>(),
                                     dx.data_ptr<float>(),
                                     partial.data_ptr<float>(),
                                     R,
                                     rows,
                                     d,
                                     slices,
                                     static_cast<float>(scale)};
    if (!cuda::layerNormBackward(args,
                                 c10::cuda::getCurrentCUDAStream(dy.device().index()).stream()))
        return std::nullopt;
    const auto sums = partial.sum(1); // (R, 2, d), the slices in order
    return LayerNormGradients{dx, sums.select(1, 0).view_as(gain), sums.select(1, 1).view_as(gain)};
#else
    (void)dy, (void)x, (void)saved, (void)gain, (void)scale;
    return std::nullopt;
#endif
}

bool fusedMicroAttention(const torch::Device &device)
{
    return kernelOn(device, Switch::FusedAttention);
}

#ifdef HEADLAB_HAVE_CUDA_KERNELS
namespace {

// The micro-heads a block of the kernels takes at this shape (cuda::microAttentionPerBlock), 0
// where the shape does not fit one.
int perBlock(int64_t positions, int64_t microHeads, int64_t width)
{
    if (positions < 2 || positions > 1024 || microHeads > (int64_t{1} << 20) ||
        width > (int64_t{1} << 20))
        return 0;
    return cuda::microAttentionPerBlock(static_cast<int>(positions), static_cast<int>(microHeads),
                                        static_cast<int>(width));
}

// (R, B, T, C) FP32 on `device` whose rows (C contiguous floats each) lie evenly spaced: row
// (r·B + b)·T + t at that times stride(2). Size-1 dimensions' strides do not matter.
bool evenRows(const torch::Tensor &t, const torch::Tensor &like)
{
    if (!t.defined() || !t.is_cuda() || t.device() != like.device() ||
        t.scalar_type() != torch::kFloat32 || t.dim() != 4 || t.sizes() != like.sizes())
        return false;
    const int64_t T = t.size(2), row = t.stride(2);
    return t.stride(3) == 1 && row >= t.size(3) && (t.size(1) == 1 || t.stride(1) == T * row) &&
           (t.size(0) == 1 || t.stride(0) == t.size(1) * T * row);
}

std::optional<cuda::MicroAttentionShape> shapeOf(const torch::Tensor &q, int64_t microHeads,
                                                 double scale, bool causal)
{
    const int64_t T = q.size(2), inner = q.size(3);
    if (microHeads < 1 || inner % microHeads != 0) return std::nullopt;
    cuda::MicroAttentionShape s;
    s.perBlock = perBlock(T, microHeads, inner / microHeads);
    if (s.perBlock == 0) return std::nullopt;
    s.groups = q.size(0) * q.size(1);
    s.positions = static_cast<int>(T);
    s.microHeads = static_cast<int>(microHeads);
    s.width = static_cast<int>(inner / microHeads);
    s.scale = static_cast<float>(scale);
    s.causal = causal;
    return s;
}

} // namespace
#endif

bool fusedMicroAttentionFits(int64_t positions, int64_t microHeads, int64_t width)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    return perBlock(positions, microHeads, width) > 0;
#else
    (void)positions, (void)microHeads, (void)width;
    return false;
#endif
}

AttentionDevice attentionDevice(const torch::Device &device)
{
    return {device.is_cuda(), fusedMicroAttention(device), &fusedMicroAttentionFits};
}

std::optional<torch::Tensor> fusedMicroAttentionForward(const torch::Tensor &q,
                                                        const torch::Tensor &k,
                                                        const torch::Tensor &v, int64_t microHeads,
                                                        double scale, bool causal)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!q.defined() || !evenRows(q, q) || !evenRows(k, q) || !evenRows(v, q)) return std::nullopt;
    const auto shape = shapeOf(q, microHeads, scale, causal);
    if (!shape) return std::nullopt;
    const c10::cuda::CUDAGuard guard(q.device());
    auto o = torch::empty(q.sizes(), q.options());
    cuda::MicroAttentionArgs args{
        q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), q.stride(2),
        k.stride(2),         v.stride(2),         o.data_ptr<float>(), *shape};
    if (cuda::microAttention(args, c10::cuda::getCurrentCUDAStream(q.device().index()).stream()))
        return o;
#else
    (void)q, (void)k, (void)v, (void)microHeads, (void)scale, (void)causal;
#endif
    return std::nullopt;
}

bool fusedMicroAttentionBackward(const torch::Tensor &dout, const torch::Tensor &q,
                                 const torch::Tensor &k, const torch::Tensor &v, int64_t microHeads,
                                 double scale, bool causal, torch::Tensor &dq, torch::Tensor &dk,
                                 torch::Tensor &dv)
{
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (!q.defined() || !evenRows(q, q) || !evenRows(k, q) || !evenRows(v, q) || !evenRows(dq, q) ||
        !evenRows(dk, q) || !evenRows(dv, q) || !evenRows(dout, q) || !dout.is_contiguous())
        return false;
    const auto shape = shapeOf(q, microHeads, scale, causal);
    if (!shape) return false;
    const c10::cuda::CUDAGuard guard(q.device());
    cuda::MicroAttentionBackwardArgs args{q.data_ptr<float>(),
                                          k.data_ptr<float>(),
                                          v.data_ptr<float>(),
                                          q.stride(2),
                                          k.stride(2),
                                          v.stride(2),
                                          dout.data_ptr<float>(),
                                          dq.data_ptr<float>(),
                                          dk.data_ptr<float>(),
                                          dv.data_ptr<float>(),
                                          dq.stride(2),
                                          dk.stride(2),
                                          dv.stride(2),
                                          *shape};
    return cuda::microAttentionBackward(
        args, c10::cuda::getCurrentCUDAStream(q.device().index()).stream());
#else
    (void)dout, (void)q, (void)k, (void)v, (void)microHeads, (void)scale, (void)causal, (void)dq,
        (void)dk, (void)dv;
    return false;
#endif
}

} // namespace headlab
