// Adam.h — Adam and AdamW for an ensemble: one learning rate per run, per-parameter factors.
//
// The update is torch.optim.Adam's (non-fused, non-amsgrad) with the learning rate a (R) tensor,
// so R runs that share weight shapes step together and each gets exactly the update it would get
// alone. Internal to core/.
#pragma once

#include "core/RunConfig.h"
#include "core/Transformer.h"

#include <torch/torch.h>

#include <vector>

namespace headlab {

class Adam {
public:
    Adam(std::vector<Parameter> &params, const OptimizerConfig &config, int64_t runs);

    // Multiplies the learning rate of parameter `index` for each run: factor is (R) on the device.
    void setLrFactor(size_t index, const torch::Tensor &factor);
    // lr: (R) on the device, already scheduled (and 0 for runs that are frozen).
    void step(const torch::Tensor &lr);
    void zeroGrad();
    // Forgets run r's moments (a frozen run after divergence).
    void resetRun(int64_t run);
    int64_t stepCount() const { return m_step; }

private:
    std::vector<Parameter> &m_params;
    OptimizerConfig m_config;
    int64_t m_runs;
    int64_t m_step = 0;
    std::vector<torch::Tensor> m_exp, m_expSq, m_factor;
};

} // namespace headlab
