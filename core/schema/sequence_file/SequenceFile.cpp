// SequenceFile.cpp — reads a file of examples into token sequences (SequenceFile.h).
#include "core/schema/sequence_file/SequenceFile.h"

#include "core/config/Hash.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace headlab::sequencefile {

namespace {

constexpr int64_t kMaxBytes = int64_t(256) << 20;
constexpr uint64_t kSplitSeed = 0x53455146494c4531ULL; // "SEQFILE1"

struct Row {
    std::string prompt, answer, group;
    int64_t line = 0;
};

[[noreturn]] void fail(const std::string &path, int64_t line, const std::string &message)
{
    throw FileError(path + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " +
                    message);
}

// One CSV record starting at `pos` (RFC 4180: quoted fields may hold commas, quotes as "", and
// newlines). Advances `pos` and `line`.
std::vector<std::string> csvRecord(const std::string_view text, size_t &pos, int64_t &line,
                                   const std::string &path)
{
    std::vector<std::string> fields(1);
    bool quoted = false, wasQuoted = false;
    const int64_t start = line;
    while (pos < text.size()) {
        const char c = text[pos++];
        if (quoted) {
            if (c == '"' && pos < text.size() && text[pos] == '"') {
                fields.back() += '"';
                ++pos;
            } else if (c == '"') {
                quoted = false;
            } else {
                if (c == '\n') ++line;
                fields.back() += c;
            }
        } else if (c == '"' && fields.back().empty() && !wasQuoted) {
            quoted = wasQuoted = true;
        } else if (c == ',') {
            fields.emplace_back();
            wasQuoted = false;
        } else if (c == '\n') {
            ++line;
            break;
        } else if (c != '\r') {
            fields.back() += c;
        }
    }
    if (quoted) fail(path, start, "a quoted field is not closed");
    return fields;
}

std::string trimmed(const std::string_view s)
{
    const auto a = s.find_first_not_of(" \t\r");
    if (a == std::string_view::npos) return {};
    return std::string(s.substr(a, s.find_last_not_of(" \t\r") - a + 1));
}

// The rows of a CSV file, one at a time: no row outlives its call of `onRow`, so reading costs
// the text and one row, not a copy of every field.
void readCsv(const std::string_view text, const std::string &path,
             const std::function<void(Row &&)> &onRow)
{
    size_t pos = 0;
    int64_t line = 1;
    const int64_t headerLine = line;
    std::vector<std::string> header = csvRecord(text, pos, line, path);
    int prompt = -1, answer = -1, group = -1;
    for (size_t i = 0; i < header.size(); ++i) {
        const std::string name = trimmed(header[i]);
        if (name == "prompt")
            prompt = int(i);
        else if (name == "answer")
            answer = int(i);
        else if (name == "group")
            group = int(i);
        else
            fail(path, headerLine,
                 "unknown column '" + name + "' (the columns are prompt, answer and group)");
    }
    if (prompt < 0 || answer < 0)
        fail(path, headerLine,
             "the header must name the columns prompt and answer (and optionally group)");
    while (pos < text.size()) {
        const int64_t at = line;
        std::vector<std::string> fields = csvRecord(text, pos, line, path);
        if (fields.size() == 1 && trimmed(fields[0]).empty()) continue; // blank line
        if (fields.size() != header.size())
            fail(path, at,
                 std::to_string(fields.size()) + " fields, but the header has " +
                     std::to_string(header.size()));
        onRow({std::move(fields[size_t(prompt)]), std::move(fields[size_t(answer)]),
               group >= 0 ? std::move(fields[size_t(group)]) : std::string(), at});
    }
}

// The rows of a PROMPT<tab>ANSWER[<tab>GROUP] file, one at a time.
void readText(const std::string_view text, const std::string &path,
              const std::function<void(Row &&)> &onRow)
{
    int64_t line = 0;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string raw(text.substr(start, end - start));
        start = end + 1;
        ++line;
        if (!raw.empty() && raw.back() == '\r') raw.pop_back();
        if (trimmed(raw).empty() || trimmed(raw)[0] == '#') continue;
        std::vector<std::string> fields;
        size_t from = 0;
        for (;;) {
            const size_t tab = raw.find('\t', from);
            fields.push_back(raw.substr(from, tab - from));
            if (tab == std::string::npos) break;
            from = tab + 1;
        }
        if (fields.size() < 2)
            fail(path, line,
                 "no answer: a line is PROMPT<tab>ANSWER, or PROMPT<tab>ANSWER<tab>GROUP");
        if (fields.size() > 3)
            fail(path, line, std::to_string(fields.size()) + " tab-separated fields; at most 3");
        onRow({std::move(fields[0]), std::move(fields[1]),
               fields.size() == 3 ? std::move(fields[2]) : std::string(), line});
    }
}

// An examples file is named for its format (.csv, .tsv or .txt): a session, which may come from
// anyone, cannot make HeadLab read /etc/passwd or ~/.ssh/id_rsa as examples and quote its lines
// in error messages.
bool hasExamplesExtension(const std::string &path)
{
    std::string extension = std::filesystem::path(path).extension().string();
    for (char &c : extension) c = char(std::tolower(static_cast<unsigned char>(c)));
    return extension == ".csv" || extension == ".tsv" || extension == ".txt";
}

std::shared_ptr<const Data> parse(const std::string &path, Tokens mode, double testFraction)
{
    if (!hasExamplesExtension(path))
        fail(path, 0,
             "is not named as an examples file: HeadLab reads examples from .csv, .tsv or .txt "
             "files only (rename it, or copy its examples into such a file)");
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (error || !std::filesystem::exists(status))
        fail(path, 0, "cannot open the examples file: no such file");
    if (!std::filesystem::is_regular_file(status)) fail(path, 0, "is not a regular file");
    const auto size = std::filesystem::file_size(path, error);
    if (!error && static_cast<int64_t>(size) > kMaxBytes)
        fail(path, 0, "larger than 256 MiB (a HeadLab limit)");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, 0, "cannot open the examples file");
    std::string text;
    try { // a file that errors on reading (/proc/self/mem) throws from the stream buffer
        if (!error && size > 0) text.reserve(static_cast<size_t>(size));
        text.assign(std::istreambuf_iterator<char>(in), {});
    } catch (const std::exception &e) {
        fail(path, 0,
             std::string("cannot read the examples file (") + e.what() +
                 "); give a file of examples");
    }
    if (static_cast<int64_t>(text.size()) > kMaxBytes)
        fail(path, 0, "larger than 256 MiB (a HeadLab limit)");
    return parseExamples(text, path, mode, testFraction);
}

// The line (1-based) of the first byte sequence that is not UTF-8, or 0.
int64_t firstNonUtf8Line(const std::string_view text)
{
    int64_t line = 1;
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') ++line;
        const size_t n = c < 0x80           ? 1
                         : (c >> 5) == 0x6  ? 2
                         : (c >> 4) == 0xE  ? 3
                         : (c >> 3) == 0x1E ? 4
                                            : 0;
        if (n == 0 || i + n > text.size()) return line;
        for (size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return line;
        i += n;
    }
    return 0;
}

} // namespace

std::shared_ptr<const Data> parseExamples(const std::string &fileText, const std::string &path,
                                          Tokens mode, double testFraction)
{
    if (fileText.size() >= 2 && ((fileText[0] == '\xFF' && fileText[1] == '\xFE') ||
                                 (fileText[0] == '\xFE' && fileText[1] == '\xFF')))
        fail(path, 0, "is UTF-16 text; save it as UTF-8");
    // A byte-order mark is no part of the first column's name or of the first prompt.
    std::string_view text = fileText;
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    if (const int64_t line = firstNonUtf8Line(text); line > 0)
        fail(path, line,
             "is not UTF-8 text (a byte that UTF-8 does not allow); save the file as UTF-8");

    // Tokens are interned as they are read (provisional ids in order of first appearance), and
    // each example is kept as ids only: memory is a small multiple of the file, not a string per
    // token. The vocabulary is sorted at the end and the ids renumbered.
    auto data = std::make_shared<Data>();
    data->path = path;
    data->contentHash = fnv1a(text);
    std::unordered_map<std::string, int64_t> provisional;
    std::vector<std::string> byProvisional;
    std::set<int64_t> answers;
    std::map<std::string, int64_t> groupIndex;
    bool first = true, grouped = false;
    auto intern = [&](std::string &&token) {
        const auto [it, inserted] =
            provisional.emplace(std::move(token), int64_t(byProvisional.size()));
        if (inserted) byProvisional.push_back(it->first);
        return it->second;
    };
    auto onRow = [&](Row &&row) {
        std::vector<std::string> tokens = splitPrompt(row.prompt, mode);
        if (tokens.empty()) fail(path, row.line, "an empty prompt");
        std::string answer = trimmed(row.answer);
        if (answer.empty()) fail(path, row.line, "no answer");
        if (first) {
            data->promptLength = static_cast<int64_t>(tokens.size());
            grouped = !row.group.empty();
            first = false;
        }
        if (static_cast<int64_t>(tokens.size()) != data->promptLength)
            fail(path, row.line,
                 "the prompt has " + std::to_string(tokens.size()) + " tokens, but the first has " +
                     std::to_string(data->promptLength) +
                     " (every prompt must have as many; tokens: " +
                     (mode == Tokens::Characters ? "characters" : "words") + ")");
        if (grouped == row.group.empty())
            fail(path, row.line,
                 grouped ? "no group, but the first example has one"
                         : "a group, but the first example has none");
        if (grouped && !groupIndex.count(row.group)) {
            groupIndex[row.group] = static_cast<int64_t>(data->groups.size());
            data->groups.push_back(row.group);
        }
        for (auto &token : tokens)
            data->tokens.push_back(static_cast<int32_t>(intern(std::move(token))));
        const int64_t answerId = intern(std::move(answer));
        answers.insert(answerId);
        data->tokens.push_back(static_cast<int32_t>(answerId));
        data->group.push_back(grouped ? groupIndex[row.group] : 0);
        data->line.push_back(row.line);
    };
    const bool csv = std::filesystem::path(path).extension() == ".csv";
    if (csv)
        readCsv(text, path, onRow);
    else
        readText(text, path, onRow);
    if (first) fail(path, 0, "is empty: no examples");
    if (data->examples() < 2)
        fail(path, 0, "needs at least 2 examples (one to train on, one to test)");
    // Ids in sorted order of the tokens (byte-wise, as before).
    std::vector<int64_t> order(byProvisional.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return byProvisional[size_t(a)] < byProvisional[size_t(b)];
    });
    std::vector<int32_t> finalId(order.size());
    data->vocabulary.reserve(order.size());
    for (size_t k = 0; k < order.size(); ++k) {
        finalId[size_t(order[k])] = static_cast<int32_t>(k);
        data->vocabulary.push_back(std::move(byProvisional[size_t(order[k])]));
    }
    for (auto &id : data->tokens) id = finalId[size_t(id)];
    data->distinctAnswers = static_cast<int64_t>(answers.size());
    const size_t examples = data->group.size();

    // A Fisher–Yates shuffle driven by mt19937_64 (whose output the standard fixes), so the split
    // is the same with every standard library.
    std::vector<int64_t> shuffled(examples);
    for (size_t i = 0; i < shuffled.size(); ++i) shuffled[i] = static_cast<int64_t>(i);
    std::mt19937_64 random(kSplitSeed);
    for (size_t i = shuffled.size() - 1; i > 0; --i)
        std::swap(shuffled[i], shuffled[size_t(random() % (i + 1))]);
    const auto testCount = std::clamp<int64_t>(std::llround(testFraction * double(shuffled.size())),
                                               1, int64_t(shuffled.size()) - 1);
    data->testOrder.assign(shuffled.begin(), shuffled.begin() + testCount);
    data->trainOrder.assign(shuffled.begin() + testCount, shuffled.end());
    return data;
}

std::vector<std::string> splitPrompt(const std::string &prompt, Tokens tokens)
{
    std::vector<std::string> out;
    if (tokens == Tokens::Words) {
        std::istringstream in(prompt);
        for (std::string word; in >> word;) out.push_back(word);
        return out;
    }
    // Characters: UTF-8 code points, so that "×" is one token.
    for (size_t i = 0; i < prompt.size();) {
        const unsigned char c = static_cast<unsigned char>(prompt[i]);
        const size_t n = c < 0x80           ? 1
                         : (c >> 5) == 0x6  ? 2
                         : (c >> 4) == 0xe  ? 3
                         : (c >> 3) == 0x1e ? 4
                                            : 1;
        out.push_back(prompt.substr(i, n));
        i += n;
    }
    return out;
}

std::shared_ptr<const Data> load(const std::string &path, Tokens tokens, double testFraction)
{
    static std::mutex mutex;
    static std::map<std::tuple<std::string, int, double, uint64_t, int64_t>,
                    std::shared_ptr<const Data>>
        cache;
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    const auto time = std::filesystem::last_write_time(path, error);
    const auto key = std::make_tuple(path, int(tokens), testFraction, error ? 0 : uint64_t(size),
                                     error ? int64_t(0) : int64_t(time.time_since_epoch().count()));
    std::lock_guard lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    auto data = parse(path, tokens, testFraction);
    cache[key] = data;
    return data;
}

} // namespace headlab::sequencefile
