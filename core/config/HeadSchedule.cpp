// HeadSchedule.cpp — the ascending, constant and descending head-schedule generators.
#include "core/config/HeadSchedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace headlab {

const char *toString(HeadScheme scheme)
{
    switch (scheme) {
    case HeadScheme::Ascending:
        return "ascending";
    case HeadScheme::Constant:
        return "constant";
    case HeadScheme::Descending:
        return "descending";
    }
    return "?";
}

bool parseHeadScheme(const std::string &text, HeadScheme *out)
{
    for (HeadScheme s : {HeadScheme::Ascending, HeadScheme::Constant, HeadScheme::Descending}) {
        if (text == toString(s)) {
            *out = s;
            return true;
        }
    }
    return false;
}

namespace {

// The divisor of dModel nearest to `ideal`; on a tie the larger one. Divisors come in pairs
// (d, dModel / d) with d <= sqrt(dModel), so this takes O(sqrt(dModel)) steps, not O(dModel).
int64_t nearestDivisor(double ideal, int64_t dModel)
{
    int64_t best = 1;
    double bestDistance = std::abs(ideal - 1.0);
    auto consider = [&](int64_t d) {
        const double distance = std::abs(ideal - static_cast<double>(d));
        if (distance < bestDistance || (distance == bestDistance && d > best)) {
            best = d;
            bestDistance = distance;
        }
    };
    for (int64_t d = 1; d <= dModel / d; ++d) {
        if (dModel % d != 0) continue;
        consider(d);
        consider(dModel / d);
    }
    return best;
}

int64_t headCount(double ideal, int64_t dModel)
{
    if (dModel > 0) return nearestDivisor(ideal, dModel);
    return std::max<int64_t>(1, std::llround(ideal));
}

} // namespace

std::vector<int64_t> headSchedule(HeadScheme scheme, double totalHeads, int64_t layers,
                                  int64_t dModel)
{
    std::vector<int64_t> heads;
    if (layers <= 0) return heads;
    if (scheme == HeadScheme::Constant) {
        heads.assign(static_cast<size_t>(layers),
                     headCount(totalHeads / static_cast<double>(layers), dModel));
        return heads;
    }
    const double base = totalHeads / (std::ldexp(1.0, static_cast<int>(layers)) - 1.0);
    for (int64_t l = 0; l < layers; ++l)
        heads.push_back(headCount(base * std::ldexp(1.0, static_cast<int>(l)), dModel));
    if (scheme == HeadScheme::Descending) std::reverse(heads.begin(), heads.end());
    return heads;
}

std::string headScheduleLabel(HeadScheme scheme, double totalHeads)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%s:%.15g", toString(scheme), totalHeads);
    return buffer;
}

} // namespace headlab
