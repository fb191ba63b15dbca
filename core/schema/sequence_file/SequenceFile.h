// SequenceFile.h — a sequence task a researcher defines in a file, without C++: examples of a
// prompt, its answer and an optional group, read into token sequences. Torch-free.
//
// The file: CSV (`.csv`, a header naming the columns prompt, answer and optionally group; fields
// may be quoted), or text (any other name: one example per line, fields separated by tabs, lines
// starting with # and blank lines skipped). Prompts are split into characters or into
// whitespace-separated words (`tokens:`); the answer is one token, the whole field. The vocabulary
// is every token of the file, sorted. Every prompt must have as many tokens as the first: the
// sequence is the prompt followed by the answer, and training on the answer position reads the
// model's output at the prompt's last token, as the addition task does.
//
// The held-out test set is a fixed share of the examples (`test_fraction`), chosen by a seeded
// shuffle of the example order that is the same on every machine; the training set is the rest,
// in that shuffled order.
#pragma once

#include "core/config/RunConfig.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace headlab::sequencefile {

enum class Tokens { Characters, Words };

// A located problem with the file: "examples.csv:12: ...".
class FileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Data {
    std::string path;
    std::vector<std::string> vocabulary; // token strings, sorted; ids are positions
    int64_t promptLength = 0;            // tokens of every prompt
    int64_t sequenceLength() const { return promptLength + 1; }
    std::vector<std::string> groups; // group names in order of first appearance; empty: none
    int64_t distinctAnswers = 0;     // K
    // Examples as token ids, row-major (N × sequenceLength), in file order, with their groups
    // (index into `groups`, 0 when there are none) and the line each came from.
    std::vector<int32_t>
        tokens; // int32: a vocabulary has fewer than 2^31 tokens, and a char-token file costs 4 bytes a byte
    std::vector<int64_t> group;
    std::vector<int64_t> line;
    uint64_t contentHash = 0; // FNV-1a of the file's bytes, for provenance
    int64_t examples() const { return static_cast<int64_t>(group.size()); }
    // The test examples (the first test share of the seeded order), then the training ones.
    std::vector<int64_t> testOrder, trainOrder;
};

// Reads and checks the file; throws FileError with the file and line. Cached by path, size and
// modification time, so the task table's questions (vocabulary, length) do not reread it.
std::shared_ptr<const Data> load(const std::string &path, Tokens tokens, double testFraction);

// The same checks on a file's text already read: `path` names it in messages, and its extension
// (.csv or not) chooses the format. What the task-input fuzzer drives.
std::shared_ptr<const Data> parseExamples(const std::string &text, const std::string &path,
                                          Tokens tokens, double testFraction);

// The task's options (TaskConfig::options, rows in SequenceFileSpec.cpp), with their defaults.
std::string pathOf(const TaskConfig &task);
Tokens tokensOf(const TaskConfig &task);
double testFractionOf(const TaskConfig &task);

// The prompt's tokens as the task splits them.
std::vector<std::string> splitPrompt(const std::string &prompt, Tokens tokens);

} // namespace headlab::sequencefile
