// AdditionData.cpp — vocabulary, operand generator and tokenizer of the addition task.
#include "core/schema/addition/AdditionData.h"

#include <random>

namespace headlab::addition {

const std::vector<std::string> &vocabulary()
{
    static const std::vector<std::string> v = {
        "[PAD]", "[UNK]", "[BOS]", "[EOS]", "Input", "Output", "A", ":", "=", "+", ",",
        "?",     "0",     "1",     "2",     "3",     "4",      "5", "6", "7", "8", "9"};
    return v;
}

namespace {

// numpy's legacy bounded draw for randint(0, 999): mask the 32-bit output to 10 bits, reject > 998.
int64_t maskedDraw(std::mt19937 &rng)
{
    for (;;) {
        const uint32_t v = static_cast<uint32_t>(rng()) & 1023u;
        if (v <= kMaxOperand) return v;
    }
}

} // namespace

std::pair<int64_t, int64_t> operandsOfPair(uint64_t pair)
{
    std::mt19937 rng(static_cast<std::mt19937::result_type>(pair));
    const int64_t a = maskedDraw(rng);
    const int64_t b = maskedDraw(rng);
    return {a, b};
}

Sample sampleOf(int64_t a, int64_t b, int64_t i)
{
    const int64_t c = (a + b) / (i == 0 ? 1 : i == 1 ? 10 : 100) % 10;
    auto digit = [](int64_t d) { return Digit0 + d; };
    return Sample{Input,
                  Colon,
                  A,
                  Equals,
                  digit(a / 100),
                  digit(a / 10 % 10),
                  digit(a % 10),
                  Plus,
                  digit(b / 100),
                  digit(b / 10 % 10),
                  digit(b % 10),
                  Comma,
                  A,
                  digit(i),
                  Equals,
                  Question,
                  Output,
                  Colon,
                  digit(c)};
}

Sample sampleTokens(int64_t sampleIndex, int64_t pairBase)
{
    const int64_t pair = sampleIndex / kDigitsAsked + pairBase;
    const auto [a, b] = operandsOfPair(static_cast<uint64_t>(pair));
    return sampleOf(a, b, sampleIndex % kDigitsAsked);
}

std::vector<int64_t> buildSamples(int64_t count, int64_t pairBase)
{
    std::vector<int64_t> out(static_cast<size_t>(count * kSampleLength));
    for (int64_t s = 0; s < count; ++s) {
        const Sample t = sampleTokens(s, pairBase);
        std::copy(t.begin(), t.end(), out.begin() + s * kSampleLength);
    }
    return out;
}

std::string detokenize(const int64_t *tokens, int64_t length)
{
    const auto &v = vocabulary();
    std::string out;
    for (int64_t k = 0; k < length; ++k) {
        if (k) out += ' ';
        const int64_t t = tokens[k];
        out += (t >= 0 && t < static_cast<int64_t>(v.size())) ? v[t] : "[?]";
    }
    return out;
}

} // namespace headlab::addition
