// TrainingProvenance.cpp — what a run records of how it was trained (device, paths taken, switches).
#include "core/train/TrainingLoop.h"

#include "core/model/CpuParallel.h"

namespace headlab::detail {

const char *const kStabilizersImplementation =
    "1: qk_norm LayerNorm eps 1e-6 per head; softcap explicit softmax; sigma_reparam one "
    "power-iteration step per training step (15 at init); z_loss mean log^2 Z over the loss "
    "positions; independent_weight_decay before the update, runs with lr > 0";

// "NVIDIA H100 80GB HBM3 (cuda:0)", or the CPU's model name.
std::string deviceDescription(const torch::Device &device)
{
    if (device.is_cuda()) {
#ifdef HEADLAB_HAVE_CUDA_GRAPHS
        const auto *properties =
            at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index());
        return std::string(properties->name) + " (" + device.str() + ")";
#else
        return device.str();
#endif
    }
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
        if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
            return "cpu: " + line.substr(line.find(':') + 2);
    return "cpu";
}

std::map<std::string, std::string> TrainingLoop::provenance(const torch::Device &device) const
{
    std::map<std::string, std::string> p;
    p["libtorch"] = TORCH_VERSION;
    p["headlab"] = HEADLAB_VERSION;
    p["device"] = deviceDescription(device);
    p["attention"] = m_model ? m_model->attentionPath() : "";
    p["direct_gradients"] = m_model && m_model->directGradients() ? "on" : "off";
    p["fused_qkv"] = m_model && m_model->fusedQkv() ? "on" : "off";
    // The ReLU feed-forward block's bias, ReLU and their gradients as one kernel each way.
    p["fused_ffn"] = m_model && m_model->fusedFfn() ? "on" : "off";
    // ... and its first product with the bias and ReLU in a CUTLASS epilogue.
    p["ffn_product"] = m_model && m_model->fusedFfnProduct() ? "on" : "off";
    // The unit-scale norm's residual step (add, norm, scale) as one kernel each way.
    p["fused_norm"] = m_model && m_model->fusedNorm() ? "on" : "off";
    // The LayerNorm with each run's scale and shift as one kernel (GPU) or loop (CPU) each way.
    p["fused_layer_norm"] = m_model && m_model->fusedLayerNorm() ? "on" : "off";
    // The token embedding and the learned positions as one CPU loop each way.
    p["fused_embedding"] = m_model && m_model->fusedEmbedding() ? "on" : "off";
    // Attention over micro-heads for short sequences as one kernel each way.
    p["fused_attention"] = m_model && m_model->fusedAttention() ? "on" : "off";
    // Weight gradients summed over row slices where a product's rows allow (HEADLAB_SPLIT_K).
    p["split_k"] = switchOn(Switch::SplitK, device.is_cuda()) ? "on" : "off";
    p["fused_adam"] = m_fusedAdam;
    p["flush_denormals"] = m_flushDenormals;
    p["cuda_graphs"] = m_graphsUsed ? "on" : "off";
    p["tf32"] = device.is_cuda() ? (m_configs.front().tf32 ? "on" : "off") : "n/a (cpu)";
    p["threads"] = std::to_string(torch::get_num_threads());
    // HeadLab's own CPU loops (Adam's pass, the norm, the embedding, the lanes, the points) on them.
    if (device.is_cpu()) p["cpu_loops"] = cpuLoopsThreaded() ? "intra-op threads" : "one thread";
    // How the stabilizers (the config's `stabilizers:`) are computed: one text for every run,
    // changed only when their implementation changes (docs/STABILIZERS.md).
    p["stabilizers"] = kStabilizersImplementation;
    if (m_task) {
        for (const auto &[key, value] : m_task->provenance()) p["task." + key] = value;
        for (const auto &[key, value] : m_task->paths()) p["task." + key] = value;
    }
    for (const auto &s : kEnvSwitches)
        if (const char *v = std::getenv(s.name)) p[std::string("env.") + s.name] = v;
    return p;
}

} // namespace headlab::detail
