// TextCorpus.cpp — byte tokens, UTF-8 checks, the train/validation split and corpus loading.
#include "core/schema/text/TextCorpus.h"

#include "core/schema/text/StoryCorpus.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace headlab {

std::vector<int64_t> encodeBytes(std::string_view text)
{
    std::vector<int64_t> tokens(text.size());
    for (size_t i = 0; i < text.size(); ++i) tokens[i] = static_cast<unsigned char>(text[i]);
    return tokens;
}

std::string decodeBytes(const std::vector<int64_t> &tokens)
{
    std::string text(tokens.size(), '\0');
    for (size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i] < 0 || tokens[i] >= kByteVocabSize)
            throw std::invalid_argument("decodeBytes: token " + std::to_string(tokens[i]) +
                                        " at position " + std::to_string(i) +
                                        " is not a byte (0..255)");
        text[i] = static_cast<char>(static_cast<unsigned char>(tokens[i]));
    }
    return text;
}

namespace {

// Length of the well-formed UTF-8 sequence at text[i], or 0 if it is ill-formed (Unicode 15,
// table 3-7: no overlongs, no surrogates, nothing above U+10FFFF).
size_t utf8SequenceLength(std::string_view text, size_t i)
{
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char b0 = byte(i);
    if (b0 < 0x80) return 1;
    size_t length = 0;
    unsigned char lo = 0x80, hi = 0xBF; // range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF)
        length = 2;
    else if (b0 == 0xE0)
        length = 3, lo = 0xA0;
    else if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF)
        length = 3;
    else if (b0 == 0xED)
        length = 3, hi = 0x9F;
    else if (b0 == 0xF0)
        length = 4, lo = 0x90;
    else if (b0 >= 0xF1 && b0 <= 0xF3)
        length = 4;
    else if (b0 == 0xF4)
        length = 4, hi = 0x8F;
    else
        return 0;
    if (i + length > text.size()) return 0;
    if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
    for (size_t k = 2; k < length; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    return length;
}

std::string hexByte(unsigned char b)
{
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "0x%02X", b);
    return buffer;
}

int64_t lineOf(std::string_view text, int64_t offset)
{
    return 1 + std::count(text.begin(), text.begin() + offset, '\n');
}

std::string fractionText(double f)
{
    std::ostringstream s;
    s << f;
    return s.str();
}

} // namespace

int64_t firstInvalidUtf8(std::string_view text)
{
    size_t i = 0;
    while (i < text.size()) {
        const size_t n = utf8SequenceLength(text, i);
        if (n == 0) return static_cast<int64_t>(i);
        i += n;
    }
    return -1;
}

std::string sanitizeUtf8(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        const size_t n = utf8SequenceLength(text, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD"; // U+FFFD REPLACEMENT CHARACTER
            ++i;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    return out;
}

TextSplit splitText(int64_t bytes, double validationFraction)
{
    TextSplit split;
    split.validationBytes =
        static_cast<int64_t>(std::floor(static_cast<double>(bytes) * validationFraction));
    split.trainBytes = bytes - split.validationBytes;
    return split;
}

int64_t minimumTextBytes(int64_t contextLength, double validationFraction)
{
    const int64_t window = contextLength + 1;
    if (!(validationFraction > 0 && validationFraction < 1)) return -1;
    int64_t n = std::max<int64_t>(
        2 * window,
        static_cast<int64_t>(std::ceil(static_cast<double>(window) / validationFraction)));
    n = std::max<int64_t>(n, static_cast<int64_t>(std::ceil(static_cast<double>(window) /
                                                            (1.0 - validationFraction))));
    // Rounding in splitText may leave one part a byte short of the bound: step up to the first fit.
    while (true) {
        const TextSplit s = splitText(n, validationFraction);
        if (s.trainBytes >= window && s.validationBytes >= window) return n;
        ++n;
    }
}

std::string checkTextBytes(const std::string &bytes, const std::string &name, int64_t contextLength,
                           double validationFraction)
{
    const std::string what = "text file '" + name + "'";
    if (bytes.empty()) return what + " is empty: choose a UTF-8 text file with some text in it";
    if (const auto nul = bytes.find('\0'); nul != std::string::npos)
        return what + " looks binary: it has a NUL byte at offset " + std::to_string(nul) +
               " (line " + std::to_string(lineOf(bytes, static_cast<int64_t>(nul))) +
               "); choose a UTF-8 text file";
    if (const int64_t bad = firstInvalidUtf8(bytes); bad >= 0)
        return what + " is not UTF-8 text: byte " +
               hexByte(static_cast<unsigned char>(bytes[static_cast<size_t>(bad)])) +
               " at offset " + std::to_string(bad) + " (line " +
               std::to_string(lineOf(bytes, bad)) +
               ") is not valid UTF-8; save the file as UTF-8 or choose another";
    if (contextLength < 1)
        return "task.context_length: must be positive, got " + std::to_string(contextLength);
    if (!(validationFraction > 0 && validationFraction < 1))
        return "task.validation_fraction: must be between 0 and 1, got " +
               fractionText(validationFraction);
    const int64_t need = minimumTextBytes(contextLength, validationFraction);
    if (static_cast<int64_t>(bytes.size()) < need)
        return what + " is too short for context length " + std::to_string(contextLength) +
               ": it has " + std::to_string(bytes.size()) +
               " bytes, and with validation fraction " + fractionText(validationFraction) +
               " it needs at least " + std::to_string(need) + " (one window of " +
               std::to_string(contextLength + 1) +
               " bytes for training and one for validation); use a longer text or a shorter "
               "context";
    return {};
}

namespace {

// Reads the whole file, or returns why not in *error.
std::string readFile(const std::string &path, std::string *error)
{
    std::error_code ec;
    if (path.empty()) {
        *error = "task.text_path: no text file given";
        return {};
    }
    if (std::filesystem::is_directory(path, ec)) {
        *error = "text file '" + path + "' cannot be read: it is a directory";
        return {};
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        const int e = errno;
        *error = "text file '" + path + "' cannot be read: " +
                 (std::filesystem::exists(path, ec) ? std::string(std::strerror(e))
                                                    : std::string("no such file"));
        return {};
    }
    std::ostringstream content;
    content << in.rdbuf();
    if (in.bad()) {
        *error = "text file '" + path + "' cannot be read: a read error";
        return {};
    }
    return content.str();
}

} // namespace

std::string checkTextFile(const std::string &path, int64_t contextLength, double validationFraction)
{
    std::string error;
    const std::string bytes = readFile(path, &error);
    if (!error.empty()) return error;
    return checkTextBytes(bytes, path, contextLength, validationFraction);
}

std::string loadTextCorpus(const TaskConfig &task)
{
    if (task.textPath.empty()) {
        if (task.corpusBytes <= 0)
            throw std::invalid_argument("task.corpus_bytes: must be positive, got " +
                                        std::to_string(task.corpusBytes));
        static std::mutex mutex;
        static std::map<int64_t, std::string> cache; // guarded by mutex
        std::string corpus;
        {
            std::lock_guard<std::mutex> lock(mutex);
            auto &cached = cache[task.corpusBytes];
            if (cached.empty()) cached = generateStoryCorpus(kDefaultStorySeed, task.corpusBytes);
            corpus = cached;
        }
        const std::string problem = checkTextBytes(corpus, "<built-in stories>", task.contextLength,
                                                   task.validationFraction);
        if (!problem.empty())
            throw std::invalid_argument(problem + " (task.corpus_bytes is " +
                                        std::to_string(task.corpusBytes) + ")");
        return corpus;
    }
    std::string error;
    std::string bytes = readFile(task.textPath, &error);
    if (error.empty())
        error = checkTextBytes(bytes, task.textPath, task.contextLength, task.validationFraction);
    if (!error.empty()) throw std::invalid_argument(error);
    return bytes;
}

double nextByteEntropy(std::string_view bytes)
{
    if (bytes.size() < 2) return 0.0;
    std::vector<int64_t> pairs(256 * 256, 0);
    std::array<int64_t, 256> first{}; // how often each byte is followed by another
    for (size_t i = 0; i + 1 < bytes.size(); ++i) {
        const auto a = static_cast<unsigned char>(bytes[i]);
        const auto b = static_cast<unsigned char>(bytes[i + 1]);
        ++pairs[size_t(a) * 256 + b];
        ++first[a];
    }
    const double n = static_cast<double>(bytes.size() - 1);
    double entropy = 0.0;
    for (size_t k = 0; k < pairs.size(); ++k)
        if (const int64_t c = pairs[k]; c > 0)
            entropy -= double(c) / n * std::log(double(c) / double(first[k / 256]));
    return entropy;
}

double trainingNextByteEntropy(std::string_view bytes, double validationFraction)
{
    const TextSplit split = splitText(static_cast<int64_t>(bytes.size()), validationFraction);
    return nextByteEntropy(bytes.substr(0, static_cast<size_t>(split.trainBytes)));
}

double trainingNextByteEntropy(const TaskConfig &task)
{
    // The key: what decides the bytes and the split.
    std::string key = task.textPath.empty()
                          ? "<built-in stories> " + std::to_string(task.corpusBytes)
                          : task.textPath;
    if (!task.textPath.empty()) {
        std::error_code error;
        const auto size = std::filesystem::file_size(task.textPath, error);
        const auto time = std::filesystem::last_write_time(task.textPath, error);
        if (!error)
            key +=
                " " + std::to_string(size) + " " + std::to_string(time.time_since_epoch().count());
    }
    char fraction[32];
    std::snprintf(fraction, sizeof fraction, " %.17g", task.validationFraction);
    key += fraction;
    static std::mutex mutex;
    static std::map<std::string, double> cache; // guarded by mutex
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    const double entropy = trainingNextByteEntropy(loadTextCorpus(task), task.validationFraction);
    std::lock_guard<std::mutex> lock(mutex);
    cache[key] = entropy;
    return entropy;
}

} // namespace headlab
