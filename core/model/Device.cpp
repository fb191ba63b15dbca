// Device.cpp — which devices the machine has, and what each one holds.
#include "core/model/Device.h"

#include <torch/torch.h>

#ifdef HEADLAB_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <sstream>

#include <unistd.h>

namespace headlab {

std::vector<std::string> availableDevices()
{
    std::vector<std::string> out{"cpu"};
    if (torch::cuda::is_available()) {
        for (int i = 0; i < static_cast<int>(torch::cuda::device_count()); ++i)
            out.push_back("cuda:" + std::to_string(i));
    }
    return out;
}

std::string resolveDevice(const std::string &requested)
{
    if (requested.empty() || requested == "auto")
        return torch::cuda::is_available() ? "cuda:0" : "cpu";
    if (requested == "cuda") return "cuda:0";
    return requested;
}

// "cuda:0,cuda:1", "all", "auto", "cpu" → the devices to use.
std::vector<std::string> devicesFor(const std::string &spec)
{
    if (spec == "all") {
        auto all = availableDevices();
        if (all.size() > 1) all.erase(all.begin()); // GPUs only when there are any
        return all;
    }
    std::vector<std::string> out;
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (!item.empty()) out.push_back(resolveDevice(item));
    }
    if (out.empty()) out.push_back(resolveDevice("auto"));
    return out;
}

// A CUDA device's free and total memory; the machine's memory for the CPU (all of it free: the
// ensemble sizing keeps to half of it). Nothing for a CUDA device with a LibTorch without CUDA
// (which has none to offer).
DeviceMemory deviceMemory(const std::string &device)
{
    if (device == "cpu") {
        const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
        const int64_t bytes = pages > 0 && size > 0 ? static_cast<int64_t>(pages) * size : 0;
        return {bytes, bytes};
    }
#ifdef HEADLAB_TORCH_CUDA
    try {
        const torch::Device d(device);
        if (!d.is_cuda()) return {};
        c10::cuda::CUDAGuard guard(d.index());
        size_t freeBytes = 0, totalBytes = 0;
        if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) return {};
        return {static_cast<int64_t>(freeBytes), static_cast<int64_t>(totalBytes)};
    } catch (const std::exception &) {
        return {};
    }
#else
    return {};
#endif
}

std::string checkDeviceSpec(const std::string &spec)
{
    const auto available = availableDevices();
    for (const auto &device : devicesFor(spec)) {
        if (std::find(available.begin(), available.end(), device) != available.end()) continue;
        std::string list;
        for (const auto &d : available) list += (list.empty() ? "" : ", ") + d;
        return "device '" + device + "' is not available on this machine (it has " + list + ")";
    }
    return {};
}

} // namespace headlab
