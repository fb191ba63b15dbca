// UiTestSessions.h — tiny sessions for the GUI tests: the addition task at d_model 8–16, a few
// dozen steps on the CPU, so that a whole sweep takes seconds on 2 cores.
#pragma once

#include "core/Session.h"
#include "tests/TinyRuns.h"

#include <cmath>

namespace headlab::uitest {

inline AxisValue num(double v)
{
    AxisValue a;
    a.number = v;
    return a;
}

// d_model {8, 16} × heads {1, 2, 3} × lr {1e-3}: heads 3 divides neither width, so two
// combinations are skipped and four runs remain.
inline Session tinySession(int64_t steps = 40)
{
    Session s;
    s.name = "ui-test";
    s.base = testing::tinyAdditionRun(8, {1, 1}, steps, 1e-3);
    s.base.logEvery = 2;
    s.axes = {SweepAxis{"d_model", {num(8), num(16)}}, SweepAxis{"heads", {num(1), num(2), num(3)}},
              SweepAxis{"lr", {num(1e-3)}}};
    expandSweep(s);
    return s;
}

// The same session with made-up results, for figure tests that need no training: run 0 done and
// learned, run 1 diverged, run 2 failed, run 3 still queued.
inline Session syntheticSession()
{
    Session s = tinySession();
    auto curve = [](double from, double to, int n) {
        Curve c;
        for (int i = 0; i <= n; ++i) c.push_back({int64_t(i * 10), from + (to - from) * i / n});
        return c;
    };
    auto &r0 = s.runs[0].result;
    r0.status = RunStatus::Done;
    r0.train = curve(3.09, 0.2, 20);
    r0.train[7].value = 3.5; // a spike decimation must keep
    r0.test = curve(3.0, 0.3, 4);
    r0.extra["test_digit_0"] = curve(2.3, 0.1, 4);
    r0.extra["test_digit_1"] = curve(2.3, 0.5, 4);
    r0.extra["test_digit_2"] = curve(2.3, 1.5, 4);
    r0.stepsDone = 40;
    r0.metrics["final_test_loss"] = 0.3;
    auto &r1 = s.runs[1].result;
    r1.status = RunStatus::Diverged;
    r1.train = curve(3.09, 2.5, 5);
    r1.train.push_back({60, std::nan("")});
    r1.test = curve(3.0, 2.6, 2);
    r1.divergedAtStep = 60;
    r1.stepsDone = 60;
    auto &r2 = s.runs[2].result;
    r2.status = RunStatus::Failed;
    r2.message = "out of memory";
    return s;
}

} // namespace headlab::uitest
