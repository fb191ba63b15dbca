// CheckpointFormat.h — internal to core/train: what the checkpoint writer (Checkpoint.cpp, with
// LibTorch) and reader (CheckpointReader.cpp, torch-free so that the fuzzer builds it) share.
#pragma once

#include "core/config/Files.h"
#include "core/config/Hash.h"
#include "core/config/Safetensors.h"
#include "core/train/Checkpoint.h"

#include <cstdio>
#include <string>
#include <vector>

namespace headlab {

struct LoadedCheckpoint::Impl {
    safetensors::Contents contents;
};

namespace detail {

// FNV-1a of every tensor's bytes, in file order (the metadata's data_fnv1a64).
inline uint64_t dataHash(const std::vector<safetensors::Tensor> &tensors)
{
    uint64_t hash = kFnv1aOffset;
    for (const auto &t : tensors) hash = fnv1a(t.data, hash);
    return hash;
}

inline std::string hex(uint64_t v)
{
    return hex16(v);
}

inline SessionError bad(const std::string &path, const std::string &what)
{
    return fileError(path, "is not a usable checkpoint: " + what);
}

} // namespace detail

// Reads a checkpoint from contents already parsed (loadCheckpoint reads the file first): what the
// fuzzer drives directly.
LoadedCheckpoint checkpointFromContents(safetensors::Contents contents, const std::string &path,
                                        const RunConfig *expected);

} // namespace headlab
