// FusedAdam.h — one CUDA kernel for the ensemble Adam/AdamW step (core/model/Adam.cpp), instead of about
// ten element-wise passes over the flat buffers. Plain CUDA, no LibTorch: compiled by nvcc when
// the build has a CUDA compiler (HEADLAB_HAVE_CUDA_KERNELS).
#pragma once

#include <cstdint>

namespace headlab::cuda {

struct AdamArgs {
    float *param;
    const float *grad;
    float *exp;             // first moment
    float *expSq;           // second moment
    const float *lr;        // per element
    const double *step;     // device: updates taken, this one included
    const double *schedule; // device: the schedule's multiplier of every learning rate
    int64_t n;
    double beta1, beta2, eps, weightDecay; // weightDecay != 0: AdamW's decoupled decay
};

// Enqueues the update on `stream` (a cudaStream_t), capturable in a CUDA graph. Returns false if
// the launch failed (no kernel image for this GPU, say); nothing was changed then.
bool fusedAdamStep(const AdamArgs &args, void *stream);

} // namespace headlab::cuda
