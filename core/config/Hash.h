// Hash.h — 64-bit FNV-1a, the one hash HeadLab names and checks things with: run files (a hash of
// the canonical config), a data file's content (provenance), a checkpoint's tensor data, a text
// phase's data key. Continue a hash over several pieces by passing the previous value as `hash`.
// Torch-free, header-only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace headlab {

inline constexpr uint64_t kFnv1aOffset = 1469598103934665603ull;

inline uint64_t fnv1a(std::string_view bytes, uint64_t hash = kFnv1aOffset)
{
    for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
    return hash;
}

// A hash as HeadLab writes it everywhere (run file names, provenance, checkpoints): 16 hex digits.
inline std::string hex16(uint64_t hash)
{
    char buffer[17];
    std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
    return buffer;
}

} // namespace headlab
