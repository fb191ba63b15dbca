// HeadSchedule.h — per-layer head counts generated around a target total (EXPERIMENTS.md §3).
//
// The blog experiment compares ascending (12, 24, 48, 96), constant (48 ×4) and descending
// (96, 48, 24, 12) schedules at about the same total number of heads. These generators give such
// schedules for any layer count; each layer's count is snapped to the nearest divisor of d_model
// so that every generated schedule can run. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace headlab {

enum class HeadScheme { Ascending, Constant, Descending };

const char *toString(HeadScheme);
bool parseHeadScheme(const std::string &text, HeadScheme *out);

// Ascending: h_l = b · 2^l with b = total / (2^L − 1), so the counts double layer by layer and sum
// to about `totalHeads`; descending is the same reversed; constant: total / L in every layer.
// With dModel > 0 each count is snapped to the nearest divisor of dModel (ties go to the larger),
// else rounded to the nearest integer; every count is at least 1.
// For L = 4, d_model 768: ascending 180 → 12, 24, 48, 96; constant 180 → 48 ×4.
std::vector<int64_t> headSchedule(HeadScheme scheme, double totalHeads, int64_t layers,
                                  int64_t dModel);

// "ascending:180" — the label of a generated schedule, as used by the head_schedule sweep axis.
std::string headScheduleLabel(HeadScheme scheme, double totalHeads);

} // namespace headlab
