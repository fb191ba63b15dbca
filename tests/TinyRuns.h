// TinyRuns.h — the small addition run the test suites train on the CPU in well under a second:
// 512 training pairs, 32 test pairs, one answer-only phase at batch 16.
#pragma once

#include "core/config/RunConfig.h"
#include "core/schema/RunConfigFields.h"

namespace headlab::testing {

inline RunConfig tinyAdditionRun(int64_t dModel, std::vector<int64_t> heads, int64_t steps,
                                 double lr)
{
    RunConfig c;
    c.task.kind = "addition";
    c.task.trainPairs = 512;
    c.task.testPairs = 32;
    c.model.dModel = dModel;
    c.model.heads = std::move(heads);
    PhaseConfig p;
    p.name = "answer";
    p.objective = Objective::Answer;
    p.steps = steps;
    p.batchSize = 16;
    p.useScannedLr = true;
    c.phases = {p};
    c.lr = lr;
    c.evalEvery = 10;
    c.device = "cpu";
    return c;
}

} // namespace headlab::testing
