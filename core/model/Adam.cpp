// Adam.cpp — the flat ensemble Adam/AdamW update.
#include "core/model/Adam.h"

#include "core/config/Switches.h"
#include "core/model/CpuClones.h"

#ifdef HEADLAB_HAVE_CUDA_KERNELS
#include "core/model/cuda/FusedAdam.h"

#include <c10/cuda/CUDAStream.h>
#endif

#include "core/model/CpuParallel.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace headlab {

Adam::Adam(Transformer &model, const OptimizerConfig &config, double independentDecay)
    : m_model(model)
    , m_config(config)
    , m_independentDecay(independentDecay)
{
    const auto &flat = model.flatParameters();
    m_exp = torch::zeros_like(flat);
    m_expSq = torch::zeros_like(flat);
    m_lr = torch::zeros_like(flat);
    m_step = torch::zeros({}, flat.options().dtype(torch::kFloat64));
    // HEADLAB_FUSED_ADAM=0 keeps the ATen passes (for comparisons in bench/ and the tests).
    const bool fused = switchOn(Switch::FusedAdam, true);
    m_cpuPass = fused && flat.device().is_cpu() && flat.scalar_type() == torch::kFloat32;
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    m_fused = flat.is_cuda() && fused;
#endif
}

namespace {

// The CPU's one pass: each element's update as the CUDA kernel (core/model/cuda/FusedAdam.cu)
// computes it, in float with the step's scalars rounded once, over chunks on the intra-op threads.
// ATen's passes read and write the whole flat buffer about a dozen times; this reads the five
// arrays once and writes three. The loop is compiled for AVX-512, AVX2 and the baseline
// (CpuClones.h; a scalar loop lost to ATen's vectorized passes), with the flags that
// core/model/CMakeLists.txt sets for this file: a square root that sets no errno, and no fused
// multiply-add, so that every clone rounds as the baseline does.
struct AdamScalars {
    float scale, bias2Sqrt, b1, b2, eps, wd, stepScale;
};

HEADLAB_CPU_CLONES void adamChunk(float *__restrict param, const float *__restrict grad,
                                  float *__restrict exp, float *__restrict expSq,
                                  const float *__restrict lr, int64_t begin, int64_t end,
                                  const AdamScalars s)
{
    for (int64_t i = begin; i < end; ++i) {
        const float g = grad[i];
        const float rate = lr[i];
        float p = param[i];
        if (s.wd != 0.0f) p -= p * rate * (s.scale * s.wd);
        float m = exp[i];
        m += (1.0f - s.b1) * (g - m); // lerp
        const float v = expSq[i] * s.b2 + (1.0f - s.b2) * (g * g);
        const float denom = __builtin_sqrtf(v) / s.bias2Sqrt + s.eps;
        p -= m / denom * rate * s.stepScale;
        exp[i] = m;
        expSq[i] = v;
        param[i] = p;
    }
}

void adamPass(float *param, const float *grad, float *exp, float *expSq, const float *lr, int64_t n,
              double step, double schedule, double beta1, double beta2, double epsilon,
              double weightDecay)
{
    AdamScalars s{};
    s.scale = static_cast<float>(schedule);
    const float bias1 = static_cast<float>(1.0 - std::pow(beta1, step));
    s.bias2Sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(beta2, step)));
    s.b1 = static_cast<float>(beta1);
    s.b2 = static_cast<float>(beta2);
    s.eps = static_cast<float>(epsilon);
    s.wd = static_cast<float>(weightDecay);
    s.stepScale = s.scale / bias1;
    cpuParallelFor(0, n, 1 << 15, [&](int64_t begin, int64_t end) {
        adamChunk(param, grad, exp, expSq, lr, begin, end, s);
    });
}

} // namespace

void Adam::setLearningRates(const std::vector<torch::Tensor> &perParamRunLr)
{
    torch::NoGradGuard noGrad;
    const auto &params = m_model.parameters();
    std::vector<torch::Tensor> parts;
    parts.reserve(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
        const auto &p = params[i].value; // (R, ...)
        const int64_t R = p.size(0);
        parts.push_back(perParamRunLr[i]
                            .to(m_lr.options())
                            .view({R, 1})
                            .expand({R, p.numel() / R})
                            .reshape({-1}));
    }
    m_lr.copy_(torch::cat(parts));
    if (m_independentDecay > 0) {
        if (!m_decays.defined()) m_decays = torch::zeros_like(m_lr);
        m_decays.copy_(m_lr.gt(0.0));
    }
}

void Adam::zeroGrad()
{
    m_model.flatGradients().zero_();
}

torch::Tensor Adam::sliceOf(const torch::Tensor &flat, const Parameter &p, int64_t run) const
{
    // The moments share the parameters' flat layout: run r of parameter p is the same slice.
    const int64_t offset = p.value.data_ptr<float>() - m_model.flatParameters().data_ptr<float>();
    const int64_t perRun = p.value.numel() / p.value.size(0);
    return flat.narrow(0, offset + run * perRun, perRun).view(p.value.sizes().slice(1));
}

void Adam::resetRun(int64_t run)
{
    torch::NoGradGuard noGrad;
    for (const auto &p : m_model.parameters()) {
        firstMoment(p, run).zero_();
        secondMoment(p, run).zero_();
    }
}

void Adam::step(const torch::Tensor &scale)
{
    torch::NoGradGuard noGrad;
    const double b1 = m_config.beta1, b2 = m_config.beta2;
    auto p = m_model.flatParameters();
    const auto &g = m_model.flatGradients();
    m_step.add_(1.0);
    if (m_independentDecay > 0 && m_decays.defined()) // p ← p · (1 − λ·schedule), η aside
        p.mul_(1.0 - m_decays * (scale * m_independentDecay).to(p.dtype()));
#ifdef HEADLAB_HAVE_CUDA_KERNELS
    if (m_fused) {
        const auto schedule = scale.to(torch::kFloat64).contiguous();
        cuda::AdamArgs a{p.data_ptr<float>(),
                         g.data_ptr<float>(),
                         m_exp.data_ptr<float>(),
                         m_expSq.data_ptr<float>(),
                         m_lr.data_ptr<float>(),
                         m_step.data_ptr<double>(),
                         schedule.data_ptr<double>(),
                         p.numel(),
                         b1,
                         b2,
                         m_config.eps,
                         m_config.kind == OptimizerKind::AdamW ? m_config.weightDecay : 0.0};
        if (cuda::fusedAdamStep(a, c10::cuda::getCurrentCUDAStream(p.device().index()).stream()))
            return;
        m_fused = false; // no kernel image for this GPU: the ATen passes from now on
    }
#endif
    if (m_cpuPass && p.is_contiguous() && g.is_contiguous()) {
        adamPass(p.data_ptr<float>(), g.data_ptr<float>(), m_exp.data_ptr<float>(),
                 m_expSq.data_ptr<float>(), m_lr.data_ptr<float>(), p.numel(),
                 m_step.item<double>(), scale.item<double>(), b1, b2, m_config.eps,
                 m_config.kind == OptimizerKind::AdamW ? m_config.weightDecay : 0.0);
        return;
    }
    const auto bias1 = 1.0 - torch::pow(b1, m_step);
    const auto bias2Sqrt = torch::sqrt(1.0 - torch::pow(b2, m_step));
    if (m_config.kind == OptimizerKind::AdamW && m_config.weightDecay != 0.0) {
        p.sub_(p * m_lr * (scale * m_config.weightDecay)); // decoupled: p ← p · (1 − lr·wd)
    }
    m_exp.lerp_(g, 1.0 - b1);
    m_expSq.mul_(b2).addcmul_(g, g, 1.0 - b2);
    const auto denom = (m_expSq.sqrt() / bias2Sqrt).add_(m_config.eps);
    auto update = m_exp / denom;
    update.mul_(m_lr);
    update.mul_(scale / bias1);
    p.sub_(update);
}

} // namespace headlab
