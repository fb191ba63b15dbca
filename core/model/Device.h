// Device.h — the devices a run can train on: what the machine offers, what "auto" means, and how
// much memory each has. Used by the trainer, the sweep scheduler, the CLI and the app's form.
// The header is torch-free; Device.cpp asks LibTorch and the CUDA runtime.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace headlab {

// "cpu", "cuda:0", ... what the machine offers.
std::vector<std::string> availableDevices();
// "cuda:0" for "auto" on a GPU machine, else "cpu"; "cuda" means "cuda:0".
std::string resolveDevice(const std::string &requested);
// "cuda:0,cuda:1", "all", "auto", "cpu" → the devices to use, resolved.
std::vector<std::string> devicesFor(const std::string &spec);
// Why `spec` cannot be used here ("device 'cuda:3' is not available on this machine (it has cpu,
// cuda:0)"), or "".
std::string checkDeviceSpec(const std::string &spec);

struct DeviceMemory {
    int64_t freeBytes = 0, totalBytes = 0; // 0 when unknown
};
// A CUDA device's free and total memory; the machine's memory for the CPU (all of it free: the
// ensemble sizing keeps to half of it).
DeviceMemory deviceMemory(const std::string &device);

} // namespace headlab
