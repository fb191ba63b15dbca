// Adam.cpp — the ensemble Adam/AdamW update.
#include "core/Adam.h"

#include <cmath>

namespace headlab {

Adam::Adam(std::vector<Parameter> &params, const OptimizerConfig &config, int64_t runs)
    : m_params(params), m_config(config), m_runs(runs)
{
    for (auto &p : m_params) {
        m_exp.push_back(torch::zeros_like(p.value, torch::MemoryFormat::Preserve).detach());
        m_expSq.push_back(torch::zeros_like(p.value, torch::MemoryFormat::Preserve).detach());
        m_factor.emplace_back(); // undefined: factor 1
    }
}

void Adam::setLrFactor(size_t index, const torch::Tensor &factor) { m_factor.at(index) = factor; }

void Adam::zeroGrad()
{
    for (auto &p : m_params) {
        if (p.value.grad().defined()) p.value.mutable_grad().zero_();
    }
}

void Adam::resetRun(int64_t run)
{
    torch::NoGradGuard noGrad;
    for (size_t i = 0; i < m_params.size(); ++i) {
        m_exp[i][run].zero_();
        m_expSq[i][run].zero_();
    }
}

void Adam::step(const torch::Tensor &lr)
{
    torch::NoGradGuard noGrad;
    ++m_step;
    const double b1 = m_config.beta1, b2 = m_config.beta2;
    const double bias1 = 1.0 - std::pow(b1, static_cast<double>(m_step));
    const double bias2Sqrt = std::sqrt(1.0 - std::pow(b2, static_cast<double>(m_step)));
    const bool decoupled = m_config.kind == OptimizerKind::AdamW && m_config.weightDecay != 0.0;
    for (size_t i = 0; i < m_params.size(); ++i) {
        torch::Tensor &p = m_params[i].value;
        const torch::Tensor &g = p.grad();
        if (!g.defined()) continue;
        std::vector<int64_t> bshape(static_cast<size_t>(p.dim()), 1);
        bshape[0] = m_runs;
        torch::Tensor runLr = m_factor[i].defined() ? lr * m_factor[i] : lr;
        runLr = runLr.view(bshape); // (R, 1, ...)
        if (decoupled) p.mul_(1.0 - runLr * m_config.weightDecay);
        m_exp[i].lerp_(g, 1.0 - b1);
        m_expSq[i].mul_(b2).addcmul_(g, g, 1.0 - b2);
        const auto denom = (m_expSq[i].sqrt() / bias2Sqrt).add_(m_config.eps);
        p.sub_(m_exp[i] / denom * (runLr / bias1));
    }
}

} // namespace headlab
