// AdditionSpec.h — the addition task's protocol config (EXPERIMENTS.md §1). Torch-free.
#pragma once

#include "core/config/RunConfig.h"

namespace headlab {

// The addition protocol of EXPERIMENTS.md §1 at learning rate η: the 500-step warm-up on the
// language of the samples, then 30,000 answer-only steps at η.
RunConfig additionPaperConfig(int64_t dModel, int64_t heads, double lr);

} // namespace headlab
