// Adam.h — Adam and AdamW over a whole ensemble at once: one flat buffer, one lr per element.
//
// The update is torch.optim.Adam's (non-amsgrad), applied to the model's flat parameter buffer
// with a per-element learning rate built from each run's learning rate and each parameter's factor
// (the QK rule). The step counter and bias corrections live on the device, so a whole training step
// can be captured in a CUDA graph and replayed. Internal to core/.
#pragma once

#include "core/config/RunConfig.h"
#include "core/model/Transformer.h"

#include <torch/torch.h>

#include <vector>

namespace headlab {

class Adam {
public:
    // independentDecay λ > 0: every step each weight of a training run (learning rate > 0) first
    // shrinks by λ × the schedule's multiplier, whatever its learning rate (the stabilizers'
    // independent_weight_decay), then takes the optimizer's update.
    Adam(Transformer &model, const OptimizerConfig &config, double independentDecay = 0.0);

    // perParamRunLr[i]: (R) on the device, the learning rate of parameter i for each run; 0 freezes
    // a run. Copied in place, so a captured step sees the new values.
    void setLearningRates(const std::vector<torch::Tensor> &perParamRunLr);
    // scale: a 0-dim tensor on the device multiplying every learning rate (the schedule).
    void step(const torch::Tensor &scale);
    void zeroGrad();
    // Forgets run r's moments (a run frozen after divergence).
    void resetRun(int64_t run);
    // Run r's first and second moments of parameter p (views into the flat moments, shaped like
    // the parameter without its run dimension), and the step counter: what a checkpoint saves.
    torch::Tensor firstMoment(const Parameter &p, int64_t run) const
    {
        return sliceOf(m_exp, p, run);
    }
    torch::Tensor secondMoment(const Parameter &p, int64_t run) const
    {
        return sliceOf(m_expSq, p, run);
    }
    torch::Tensor &stepCount() { return m_step; } // 0-dim float64
    // For provenance: the one-kernel CUDA step, the CPU's one pass, or the ATen passes.
    bool fused() const { return m_fused; }
    bool cpuPass() const { return m_cpuPass; }

private:
    torch::Tensor sliceOf(const torch::Tensor &flat, const Parameter &p, int64_t run) const;
    Transformer &m_model;
    OptimizerConfig m_config;
    torch::Tensor m_exp, m_expSq; // (P) first and second moments
    torch::Tensor m_lr;           // (P) learning rate of each element
    double m_independentDecay = 0.0;
    torch::Tensor m_decays; // (P) 1 where the element trains (m_lr > 0), with independentDecay
    torch::Tensor m_step;   // 0-dim float64: updates taken
    bool m_fused = false;   // the one-kernel CUDA step (core/model/cuda/FusedAdam.cu)
    bool m_cpuPass = false; // on the CPU, one pass over the flat buffers (Adam.cpp's adamPass)
};

} // namespace headlab
