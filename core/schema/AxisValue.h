// AxisValue.h — one value of a dimension as a session gives it (a number, a 64-bit seed, a
// per-layer head list, text), and a sweep axis: a dimension's name with its values. The values a
// dimension's row reads, writes and applies (Dimensions.h). Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace headlab {

// One value of a sweep axis: a number, an exact unsigned integer (a seed: all 64 bits, which a
// double cannot hold), a list of integers (a per-layer head schedule) or text.
struct AxisValue {
    enum class Kind { Number, Unsigned, IntList, Text };
    Kind kind = Kind::Number;
    double number = 0.0;
    uint64_t unsignedValue = 0; // Kind::Unsigned
    std::vector<int64_t> ints;
    std::string text;
    std::string label() const; // "96", "[12,24,48,96]", "ascending"
    bool operator==(const AxisValue &) const = default;
    static AxisValue ofNumber(double number);
    static AxisValue ofUnsigned(uint64_t value);
    static AxisValue ofInts(std::vector<int64_t> ints);
    static AxisValue ofText(std::string text);
};

struct SweepAxis {
    std::string name; // d_model, heads, head_dim, lr, seed, layers, width_multiplier, qk_rule, ...
    std::vector<AxisValue> values;
    // The axis as its row's own form when it was given as one ("{logspace: {from: 3e-05, to:
    // 0.003, count: 10}}", a head_schedule's {scheme, total}), as flow YAML; "" for a list. A save
    // writes the form back while it still expands to `values` (axisFormHolds), else the list.
    std::string form;
};

} // namespace headlab
