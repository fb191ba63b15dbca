// Files.h — the file primitives every layer writes through: atomic replacement, bounded reads,
// directories, and the names of temporary files. Errors are SessionError located at the file.
//
// Torch-free and Qt-free.
#pragma once

#include "core/config/Yaml.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace headlab {

std::string directoryOf(const std::string &path); // "." for a bare name
std::string baseName(const std::string &path);
// A SessionError that names `path` (no line).
SessionError fileError(const std::string &path, const std::string &message);
void fsyncDirectory(const std::string &dir);
// mkdir -p, with a message that names the directory that could not be made.
void makeDirectories(const std::string &dir);
// What is at `path` itself, a link not followed (lstat). The checks that must never act through a
// link (prune, the checkpoint listing) ask this; some std::filesystem calls that would also tell
// resolve into libtorch's own copies of them, which are not safe to call from here.
enum class PathKind { Missing, Regular, Directory, Link, Other };
PathKind pathKindAt(const std::string &path);
// Temporary files are ".NAME.tmp-XXXXXX" beside NAME.
std::string temporaryPattern(const std::string &target);
bool isTemporaryName(const std::string &name);

// Reads a whole regular file: refuses directories, devices, FIFOs and files over `maxBytes` with a
// message that says so (`what`: "a session file", "a checkpoint"), instead of reading forever or
// running out of memory.
std::string readFileLimited(const std::string &path, uint64_t maxBytes, const char *what);

// Writes `text` to `path` atomically: a temporary file beside it, fsync, rename, fsync of the
// directory. A symbolic link is written through (the link stays, its target is replaced); a
// directory, device, FIFO or socket at `path` is refused. On failure the previous file is
// unchanged and SessionError is thrown with the reason (e.g. "No space left on device").
// `syncDirectory` false leaves the fsync of the directory (which makes the rename durable) to the
// caller, who may write several files first and sync their directory once.
void writeFileAtomic(const std::string &path, const std::string &text, bool syncDirectory = true);

// The same for text too large to hold at once (a CSV export): `produce` hands the text to the
// sink in pieces, each written at once. An exception from `produce` abandons the temporary file
// and leaves the previous file as it was.
using TextSink = std::function<void(std::string_view)>;
void writeFileAtomic(const std::string &path, const std::function<void(const TextSink &)> &produce,
                     bool syncDirectory = true);

// A text field as every CSV HeadLab writes it (runs.csv, curves.csv, the summaries', the search's
// and the figures' CSV). Never a formula: a field a spreadsheet would evaluate, one that starts with
// =, +, -, @, a tab or a carriage return and is not a number ("-0.5", "-inf" are), gets a leading
// apostrophe, as OWASP's advice on CSV injection has it; the apostrophe shows in the cell, and
// the text after it is the stored text. Then quoted (RFC 4180) where it holds a comma, a quote, a
// line break or that apostrophe.
std::string csvField(const std::string &text);

} // namespace headlab
