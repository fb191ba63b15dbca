// AdditionInput.cpp — the addition task's input syntax, scanned by hand.
#include "core/schema/addition/AdditionInput.h"

#include <cctype>

namespace headlab {

// One character at a time: std::regex recursed per character and overflowed the stack on long
// inputs.
bool parseAdditionInput(const std::string &text, int64_t *a, int64_t *b, int64_t *digit)
{
    size_t at = 0;
    auto spaces = [&] {
        while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    };
    auto number = [&](int64_t *out) { // 1 to 3 digits
        size_t n = 0;
        *out = 0;
        while (at < text.size() && n < 4 && std::isdigit(static_cast<unsigned char>(text[at]))) {
            *out = *out * 10 + (text[at++] - '0');
            ++n;
        }
        return n >= 1 && n <= 3;
    };
    auto word = [&](const char *w) { // case-insensitive
        size_t k = 0;
        while (w[k] && at + k < text.size() &&
               std::tolower(static_cast<unsigned char>(text[at + k])) == w[k])
            ++k;
        if (w[k]) return false;
        at += k;
        return true;
    };
    spaces();
    if (!number(a)) return false;
    spaces();
    if (at >= text.size() || text[at++] != '+') return false;
    spaces();
    if (!number(b)) return false;
    spaces();
    *digit = 0;
    if (at < text.size()) { // [","] ["digit" | "d"] 0-2
        if (text[at] == ',') {
            ++at;
            spaces();
        }
        if (!word("digit")) word("d");
        spaces();
        if (at >= text.size() || text[at] < '0' || text[at] > '2') return false;
        *digit = text[at++] - '0';
        spaces();
    }
    return at == text.size();
}

} // namespace headlab
