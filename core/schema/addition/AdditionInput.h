// AdditionInput.h — the addition task's input syntax for looking inside the heads ("123 + 456,
// digit 0"), torch-free so that the task-input fuzzer builds it (scripts/fuzz.sh).
#pragma once

#include <cstdint>
#include <string>

namespace headlab {

// "123 + 456", "123+456 d2", "123 + 456, digit 1" (case-insensitive; spaces anywhere between):
// two operands of one to three digits and the digit of the sum asked, 0-2 (0, the ones, when
// absent). False for anything else. Linear in the text's length, without recursion.
bool parseAdditionInput(const std::string &text, int64_t *a, int64_t *b, int64_t *digit);

} // namespace headlab
