// LayerNormReference.h — the LayerNorm with each run's scale and shift as Transformer::norm computes
// it without HeadLab's own kernels (layer_norm, then addcmul), with its gradients by autograd: the
// reference that test_cpu_kernels holds the CPU loop to and test_cuda the CUDA kernel.
#pragma once

#include <torch/torch.h>

namespace headlab::testing {

struct LayerNormReference {
    torch::Tensor y, dx, gain, shift; // y and the gradients of x, g and b for dy
};

// x (R, rows, d), gain and shift (R, d), dy like x; eps on the biased variance, c the scale's factor.
inline LayerNormReference layerNormReference(const torch::Tensor &x, const torch::Tensor &gain,
                                             const torch::Tensor &shift, const torch::Tensor &dy,
                                             double eps, double c)
{
    const int64_t R = x.size(0), d = x.size(2);
    const auto xr = x.clone().requires_grad_(true);
    const auto gr = gain.clone().requires_grad_(true), br = shift.clone().requires_grad_(true);
    const auto y = torch::addcmul(br.view({R, 1, d}), at::layer_norm(xr, {d}, {}, {}, eps),
                                  gr.view({R, 1, d}) * c);
    y.backward(dy);
    return {y.detach(), xr.grad(), gr.grad(), br.grad()};
}

} // namespace headlab::testing
