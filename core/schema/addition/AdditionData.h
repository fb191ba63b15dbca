// AdditionData.h — the three-digit addition data of EXPERIMENTS.md §1, bit for bit.
//
// The 22-token vocabulary, the 19-token sample layout and the mt19937 masked-rejection draw of
// operands (identical to numpy's RandomState(p).randint(0, 999)). Torch-free, so tests and the GUI
// can show samples.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace headlab::addition {

constexpr int64_t kVocabSize = 22;
constexpr int64_t kSampleLength = 19;
constexpr int64_t kPredictPosition = 17; // its output predicts the answer token
constexpr int64_t kAnswerPosition = 18;
constexpr int64_t kDigitsAsked = 3; // i in {0, 1, 2}, counted from the ones digit
constexpr int64_t kMaxOperand = 998;

enum Token : int64_t {
    Pad = 0,
    Unk,
    Bos,
    Eos,
    Input,
    Output,
    A,
    Colon,
    Equals,
    Plus,
    Comma,
    Question,
    Digit0 = 12, // '0'..'9' are 12..21
};

// The vocabulary in id order: "[PAD]" "[UNK]" ... "0" .. "9".
const std::vector<std::string> &vocabulary();

// Operands (a, b) of pair p: std::mt19937(p), each by v = next() & 1023, accepted when v <= 998.
std::pair<int64_t, int64_t> operandsOfPair(uint64_t pair);

using Sample = std::array<int64_t, kSampleLength>;

// The sample asking digit i (0 = ones) of a + b:
// `Input : A = a2 a1 a0 + b2 b1 b0 , A i = ? Output : c`.
Sample sampleOf(int64_t a, int64_t b, int64_t i);

// Sample s of a set whose first pair is pairBase: pair s / 3 + pairBase, digit i = s % 3.
Sample sampleTokens(int64_t sampleIndex, int64_t pairBase);

// Samples [0, count) of the set at pairBase, row-major (count × 19).
std::vector<int64_t> buildSamples(int64_t count, int64_t pairBase);

// "Input : A = 684 + 559 , A 0 = ? Output : 3" style text of a token sequence.
std::string detokenize(const int64_t *tokens, int64_t length);

} // namespace headlab::addition
