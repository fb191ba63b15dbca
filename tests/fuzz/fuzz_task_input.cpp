// fuzz_task_input.cpp — libFuzzer target for the parsers of text a user types or hands to a task:
// the addition task's input for looking inside the heads ("123 + 456, digit 0"), prompts split
// into tokens, and the file task's examples file (CSV and plain text).
//
// The first byte picks the parser, the rest is its input. The addition input must parse to
// operands of 0..999 and a digit of 0..2, or be refused; a prompt's tokens must join back to its
// text's non-space characters; an examples file must load or be refused with a located FileError.
// Built and run by scripts/fuzz.sh; regressions live in tests/fuzz/regressions-task-input/.
#include "core/schema/addition/AdditionInput.h"
#include "core/schema/sequence_file/SequenceFile.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void finding(const char *what, const std::string &input)
{
    std::fprintf(stderr, "%s for input of %zu bytes\n", what, input.size());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace headlab;
    if (size == 0) return 0;
    const int which = data[0] % 4;
    const std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);
    switch (which) {
    case 0: {
        int64_t a = -1, b = -1, digit = -1;
        if (parseAdditionInput(text, &a, &b, &digit) &&
            (a < 0 || a > 999 || b < 0 || b > 999 || digit < 0 || digit > 2))
            finding("the addition input parsed to values out of range", text);
        break;
    }
    case 1: {
        std::string joined, expected;
        for (const auto &token : sequencefile::splitPrompt(text, sequencefile::Tokens::Words))
            joined += token;
        for (char c : text)
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f')
                expected += c;
        if (joined != expected) finding("a prompt's words do not join back to its text", text);
        break;
    }
    case 2:
    case 3:
        try {
            sequencefile::parseExamples(text, which == 2 ? "fuzz.csv" : "fuzz.txt",
                                        sequencefile::Tokens::Characters, 0.2);
        } catch (const sequencefile::FileError &) {}
        break;
    }
    return 0;
}
