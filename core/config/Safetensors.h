// Safetensors.h — the safetensors file format (https://huggingface.co/docs/safetensors): an
// 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape and byte
// range, an optional "__metadata__" map of strings, then the raw little-endian data.
//
// HeadLab's checkpoints are safetensors files, so that `safetensors.torch.load_file` reads them in a
// notebook. This is the byte-level codec, torch-free (the JSON is nlohmann/json); Checkpoint.h
// turns a run's tensors into one. Every malformed input is a SessionError that names the file and
// what is wrong with it: the reader never trusts a length or an offset it has not checked.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace headlab::safetensors {

enum class DType { F32, F64, I64, BF16 }; // BF16: weights-only checkpoints kept in bfloat16
const char *toString(DType);
size_t elementSize(DType);

struct Tensor {
    std::string name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape; // {} for a scalar
    std::string data;           // numel · elementSize bytes, little-endian, row-major
    int64_t numel() const;
};

struct Contents {
    std::map<std::string, std::string> metadata;
    std::vector<Tensor> tensors; // in file order
    const Tensor *find(const std::string &name) const;
};

// The largest header this reader accepts (the Python reader's limit is 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

std::string serialize(const Contents &contents);
// `path` names the file in messages only; `kind` is what it should be ("is not a valid KIND: ...").
Contents parse(const std::string &bytes, const std::string &path,
               const std::string &kind = "checkpoint");
// Reads only the header (dtype, shape, metadata; Tensor::data left empty) and checks that the
// file is as long as the header says: how a listing validates checkpoints without loading them.
Contents readHeader(const std::string &path, const std::string &kind = "checkpoint");
Contents read(const std::string &path, const std::string &kind = "checkpoint");
// The same, refusing a file over `maxBytes` before reading any of it (a side file whose size its
// record bounds: a sparse or hostile file must not be read into memory whole).
Contents read(const std::string &path, const std::string &kind, uint64_t maxBytes);
// Atomic (writeFileAtomic): a crash leaves the previous file or the new one, never half of one.
void write(const std::string &path, const Contents &contents);

} // namespace headlab::safetensors
