// fuzz_checkpoint.cpp — libFuzzer target for the checkpoint reader (what `run` resumes from, what
// `inspect` and the app list and open).
//
// Each input is parsed as a safetensors file (its 8-byte length, its JSON header, its data); what
// parses is written again and must parse to the same contents. Its checksum is then set right, so
// that the fuzzer gets past it to the checkpoint's metadata, config and curves, which are read as
// a resume would read them. Anything but a located SessionError (a crash, a sanitizer report, a
// library's exception escaping, a round trip that changes the contents) is a finding. Built and
// run by scripts/fuzz.sh; inputs that once found a defect live in
// tests/fuzz/regressions-checkpoint/.
#include "core/train/CheckpointFormat.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace headlab;
    const std::string bytes(reinterpret_cast<const char *>(data), size);
    safetensors::Contents contents;
    try {
        contents = safetensors::parse(bytes, "fuzz.safetensors");
    } catch (const SessionError &) {
        return 0;
    }
    const std::string written = safetensors::serialize(contents);
    safetensors::Contents again;
    try {
        again = safetensors::parse(written, "written.safetensors");
    } catch (const SessionError &e) {
        std::fprintf(stderr, "what the writer wrote does not parse: %s\n", e.what());
        std::abort();
    }
    if (safetensors::serialize(again) != written) {
        std::fprintf(stderr, "a safetensors round trip changed the contents\n");
        std::abort();
    }
    if (contents.metadata.count("data_crc32"))
        contents.metadata["data_crc32"] = detail::dataCrc32(contents.tensors);
    if (contents.metadata.count("data_fnv1a64"))
        contents.metadata["data_fnv1a64"] = detail::hex(detail::dataHash(contents.tensors));
    try {
        checkpointFromContents(std::move(contents), "fuzz.safetensors", nullptr);
    } catch (const SessionError &) {}
    return 0;
}
