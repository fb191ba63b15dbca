// Safetensors.cpp — writing and checked reading of safetensors files.
#include "core/config/Safetensors.h"

#include "core/config/Files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <sys/stat.h>

namespace headlab::safetensors {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace {

using json = nlohmann::json;

constexpr uint64_t kMaxFileBytes = 64ull << 30; // a HeadLab model is megabytes; refuse nonsense

// The file a message names, and what kind of file it should be ("checkpoint").
struct File {
    const std::string &path;
    const std::string &kind;
};

SessionError bad(const File &file, const std::string &what)
{
    return fileError(file.path, "is not a valid " + file.kind + ": " + what);
}

bool parseDType(const std::string &text, DType *out)
{
    for (DType d : {DType::F32, DType::F64, DType::I64, DType::BF16})
        if (text == toString(d)) {
            *out = d;
            return true;
        }
    return false;
}

uint64_t headerLength(const std::string &prefix, uint64_t fileBytes, const File &file)
{
    if (fileBytes < 8)
        throw bad(file, "truncated: " + std::to_string(fileBytes) +
                            " bytes, shorter than the 8-byte header length");
    uint64_t n = 0;
    std::memcpy(&n, prefix.data(), 8);
    if (n > kMaxHeaderBytes)
        throw bad(file, "its header claims " + std::to_string(n) + " bytes (more than 100 MB)");
    if (8 + n > fileBytes)
        throw bad(file, "truncated: the header claims " + std::to_string(n) +
                            " bytes, the file has " + std::to_string(fileBytes - 8) +
                            " after the length");
    return n;
}

// The deepest nesting a header may have: the header object, a tensor's entry, its shape list
// (HeadLab's own headers reach 3). Checked on the text before any parser sees it, so that neither
// parsing nor an error message that quotes a part of it recurses without bound.
constexpr int kMaxHeaderDepth = 8;

void checkNesting(const std::string &text, const File &file)
{
    int depth = 0;
    bool inString = false, escaped = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            if (++depth > kMaxHeaderDepth)
                throw bad(file, "its header nests deeper than " + std::to_string(kMaxHeaderDepth) +
                                    " levels (at byte " + std::to_string(8 + i) + ")");
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
}

// A part of the header for a message: at most 80 characters of it.
std::string brief(const json &value)
{
    std::string text = value.dump();
    if (text.size() > 80) text = text.substr(0, 77) + "...";
    return text;
}

// Parses the JSON header; checks every entry and that the byte ranges tile the data exactly.
Contents parseHeader(const std::string &headerText, uint64_t dataBytes, const File &file,
                     std::vector<std::pair<uint64_t, uint64_t>> *ranges)
{
    checkNesting(headerText, file);
    json header;
    try {
        header = json::parse(headerText);
    } catch (const json::exception &e) { // parse errors, and numbers beyond range (1e999)
        throw bad(file, std::string("its header is not JSON HeadLab can read (") + e.what() + ")");
    }
    if (!header.is_object()) throw bad(file, "its header is not a JSON object");
    Contents out;
    for (const auto &[name, entry] : header.items()) {
        if (name == "__metadata__") {
            if (!entry.is_object()) throw bad(file, "__metadata__ is not an object");
            for (const auto &[k, v] : entry.items()) {
                if (!v.is_string()) throw bad(file, "__metadata__." + k + " is not a string");
                out.metadata[k] = v.get<std::string>();
            }
            continue;
        }
        const std::string where =
            "tensor '" + (name.size() > 80 ? name.substr(0, 77) + "..." : name) + "'";
        if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
            !entry.contains("data_offsets"))
            throw bad(file, where + " lacks dtype, shape or data_offsets");
        Tensor t;
        t.name = name;
        if (!entry["dtype"].is_string() || !parseDType(entry["dtype"].get<std::string>(), &t.dtype))
            throw bad(file, where + " has dtype " + brief(entry["dtype"]) +
                                " (HeadLab writes F32, F64 and I64)");
        const auto &shape = entry["shape"];
        if (!shape.is_array()) throw bad(file, where + ": shape is not a list");
        uint64_t numel = 1;
        for (const auto &d : shape) {
            if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 40))
                throw bad(file, where + ": bad shape " + brief(shape));
            const uint64_t size = d.get<uint64_t>();
            if (size != 0 && numel > kMaxFileBytes / size)
                throw bad(file, where + ": shape " + brief(shape) + " is too large");
            numel *= size;
            t.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
        }
        const auto &offsets = entry["data_offsets"];
        if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
            !offsets[1].is_number_unsigned())
            throw bad(file, where + ": data_offsets is not [begin, end]");
        const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
        if (end < begin || end - begin != numel * elementSize(t.dtype))
            throw bad(file, where + ": data_offsets " + brief(offsets) + " do not hold " +
                                std::to_string(numel) + " " + toString(t.dtype) + " values");
        if (end > dataBytes)
            throw bad(file, "truncated: " + where + " ends at byte " + std::to_string(end) +
                                " of the data, which has " + std::to_string(dataBytes));
        ranges->push_back({begin, end});
        out.tensors.push_back(std::move(t));
    }
    // The ranges must tile [0, dataBytes) with no gap or overlap (as the Python reader demands).
    std::vector<std::pair<uint64_t, uint64_t>> sorted = *ranges;
    std::sort(sorted.begin(), sorted.end());
    uint64_t at = 0;
    for (const auto &[b, e] : sorted) {
        if (b != at)
            throw bad(file, "the tensors' byte ranges leave a gap or overlap at byte " +
                                std::to_string(at));
        at = e;
    }
    if (at != dataBytes)
        throw bad(file, std::to_string(dataBytes - at) +
                            " bytes after the last tensor (a damaged or foreign file)");
    // In file order (the JSON object's keys come back sorted by name).
    std::vector<size_t> order(out.tensors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return (*ranges)[a].first < (*ranges)[b].first; });
    Contents inOrder;
    inOrder.metadata = std::move(out.metadata);
    std::vector<std::pair<uint64_t, uint64_t>> sortedRanges;
    for (size_t i : order) {
        inOrder.tensors.push_back(std::move(out.tensors[i]));
        sortedRanges.push_back((*ranges)[i]);
    }
    *ranges = std::move(sortedRanges);
    return inOrder;
}

uint64_t fileSize(const File &file)
{
    const std::string &path = file.path;
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        throw fileError(path, std::string("cannot read: ") + std::strerror(errno));
    if (!S_ISREG(info.st_mode))
        throw fileError(path, "is not a regular file; expected a " + file.kind);
    return static_cast<uint64_t>(info.st_size);
}

} // namespace

const char *toString(DType d)
{
    switch (d) {
    case DType::F32:
        return "F32";
    case DType::F64:
        return "F64";
    case DType::I64:
        return "I64";
    case DType::BF16:
        return "BF16";
    }
    return "?";
}

size_t elementSize(DType d)
{
    return d == DType::BF16 ? 2 : d == DType::F32 ? 4 : 8;
}

int64_t Tensor::numel() const
{
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

const Tensor *Contents::find(const std::string &name) const
{
    for (const auto &t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

std::string serialize(const Contents &contents)
{
    json header = json::object();
    if (!contents.metadata.empty()) header["__metadata__"] = contents.metadata;
    uint64_t offset = 0;
    for (const auto &t : contents.tensors) {
        const uint64_t bytes = static_cast<uint64_t>(t.numel()) * elementSize(t.dtype);
        if (t.data.size() != bytes)
            throw std::logic_error("safetensors: tensor '" + t.name + "' has " +
                                   std::to_string(t.data.size()) + " bytes for " +
                                   std::to_string(bytes));
        header[t.name] = {{"dtype", toString(t.dtype)},
                          {"shape", t.shape},
                          {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' '); // the data starts 8-byte aligned
    std::string out(8, '\0');
    const uint64_t n = text.size();
    std::memcpy(out.data(), &n, 8);
    out.reserve(8 + n + offset);
    out += text;
    for (const auto &t : contents.tensors) out += t.data;
    return out;
}

Contents parse(const std::string &bytes, const std::string &path, const std::string &kind)
{
    const File file{path, kind};
    const uint64_t n = headerLength(bytes, bytes.size(), file);
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    Contents out = parseHeader(bytes.substr(8, n), bytes.size() - 8 - n, file, &ranges);
    for (size_t i = 0; i < out.tensors.size(); ++i)
        out.tensors[i].data =
            bytes.substr(8 + n + ranges[i].first, ranges[i].second - ranges[i].first);
    return out;
}

Contents readHeader(const std::string &path, const std::string &kind)
{
    const File file{path, kind};
    const uint64_t size = fileSize(file);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw fileError(path, std::string("cannot open: ") + std::strerror(errno));
    std::string prefix(std::min<uint64_t>(size, 8), '\0');
    in.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
    const uint64_t n = headerLength(prefix, size, file);
    std::string header(n, '\0');
    in.read(header.data(), static_cast<std::streamsize>(n));
    if (static_cast<uint64_t>(in.gcount()) != n)
        throw bad(file, "truncated while reading its header");
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    return parseHeader(header, size - 8 - n, file, &ranges);
}

Contents read(const std::string &path, const std::string &kind)
{
    return read(path, kind, kMaxFileBytes);
}

Contents read(const std::string &path, const std::string &kind, uint64_t maxBytes)
{
    const std::string what = "a " + kind;
    return parse(readFileLimited(path, std::min(maxBytes, kMaxFileBytes), what.c_str()), path,
                 kind);
}

void write(const std::string &path, const Contents &contents)
{
    writeFileAtomic(path, serialize(contents));
}

} // namespace headlab::safetensors
