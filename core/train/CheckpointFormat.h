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

// FNV-1a of every tensor's bytes, in file order: the checksum of format version 1
// (data_fnv1a64), still checked in the files that carry it.
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

// CRC-32 (the polynomial of gzip, PNG and Python's zlib.crc32) of every tensor's bytes, in file
// order, as 8 hex digits: the checksum since format version 2 (data_crc32). It runs at GB/s where
// the byte-serial FNV-1a ran at 8.6 MB/s in the Python package. zlib's (CheckpointReader.cpp);
// where zlib's headers are not installed (the GPU machine), LibTorch's header-only CRC-32, which
// gives the same sums.
std::string dataCrc32(const std::vector<safetensors::Tensor> &tensors);

// Gives contents the checksum of this format version (a version 1 file edited in place becomes a
// version 2 one: the checksum is the only difference).
inline void stampChecksum(safetensors::Contents &c)
{
    c.metadata.erase("data_fnv1a64");
    c.metadata["format_version"] = std::to_string(kCheckpointVersion);
    c.metadata["data_crc32"] = dataCrc32(c.tensors);
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
