// AxisValue.cpp — see AxisValue.h.
#include "core/schema/AxisValue.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace headlab {

namespace {

// The shortest "%g" text that reads back to `value`: 96, 0.001, 0.0001, 3e-05.
std::string shortestNumber(double value)
{
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    char buffer[64];
    if (value == std::floor(value) && std::abs(value) < 1e15) {
        std::snprintf(buffer, sizeof buffer, "%.0f", value);
        return buffer;
    }
    for (int precision = 1; precision <= 17; ++precision) {
        std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
        if (std::strtod(buffer, nullptr) == value) break;
    }
    return buffer;
}

} // namespace

std::string AxisValue::label() const
{
    switch (kind) {
    case Kind::Number:
        return shortestNumber(number);
    case Kind::Unsigned:
        return std::to_string(unsignedValue);
    case Kind::Text:
        return text;
    case Kind::IntList: {
        std::string result = "[";
        for (size_t i = 0; i < ints.size(); ++i) {
            if (i) result += ',';
            result += std::to_string(ints[i]);
        }
        return result + "]";
    }
    }
    return {};
}

AxisValue AxisValue::ofNumber(double number)
{
    AxisValue v;
    v.number = number;
    return v;
}

AxisValue AxisValue::ofUnsigned(uint64_t value)
{
    AxisValue v;
    v.kind = Kind::Unsigned;
    v.unsignedValue = value;
    return v;
}

AxisValue AxisValue::ofInts(std::vector<int64_t> ints)
{
    AxisValue v;
    v.kind = Kind::IntList;
    v.ints = std::move(ints);
    return v;
}

AxisValue AxisValue::ofText(std::string text)
{
    AxisValue v;
    v.kind = Kind::Text;
    v.text = std::move(text);
    return v;
}

} // namespace headlab
