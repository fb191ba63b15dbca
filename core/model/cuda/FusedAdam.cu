// FusedAdam.cu — the ensemble Adam/AdamW step in one pass: reads the parameter, gradient, both
// moments and the learning rate of each element once and writes three of them back. The formula and
// its order of operations are those of the ATen fallback in core/model/Adam.cpp (torch.optim.Adam's).
#include "core/model/cuda/FusedAdam.h"

#include <cuda_runtime.h>

namespace headlab::cuda {

namespace {

__global__ void adamKernel(AdamArgs a)
{
    const double step = *a.step;
    const float scale = static_cast<float>(*a.schedule);
    const float bias1 = static_cast<float>(1.0 - pow(a.beta1, step));
    const float bias2Sqrt = static_cast<float>(sqrt(1.0 - pow(a.beta2, step)));
    const float b1 = static_cast<float>(a.beta1), b2 = static_cast<float>(a.beta2);
    const float eps = static_cast<float>(a.eps), wd = static_cast<float>(a.weightDecay);
    const float stepScale = scale / bias1;
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
         i += stride) {
        const float g = a.grad[i];
        const float lr = a.lr[i];
        float p = a.param[i];
        if (wd != 0.0f) p -= p * lr * (scale * wd);
        float m = a.exp[i];
        m += (1.0f - b1) * (g - m); // lerp
        const float v = a.expSq[i] * b2 + (1.0f - b2) * (g * g);
        const float denom = sqrtf(v) / bias2Sqrt + eps;
        p -= m / denom * lr * stepScale;
        a.exp[i] = m;
        a.expSq[i] = v;
        a.param[i] = p;
    }
}

} // namespace

bool fusedAdamStep(const AdamArgs &args, void *stream)
{
    if (args.n == 0) return true;
    constexpr int kThreads = 256;
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
        return false;
    const int64_t needed = (args.n + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(needed < 8LL * sms ? needed : 8LL * sms);
    adamKernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(args);
    return cudaPeekAtLastError() == cudaSuccess;
}

} // namespace headlab::cuda
