// UiTestSessions.h — tiny sessions for the GUI tests: the addition task at d_model 8–16, a few
// dozen steps on the CPU, so that a whole sweep takes seconds on 2 cores; and made-up
// nearest-neighbour and head-schedule sessions for the figures of those tasks.
#pragma once

#include "core/metrics/Metrics.h"
#include "core/session/Session.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
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

// heads {1, 2} × seeds {0, 1, 2} at d_model 8, every run done with a final test loss of 0.96,
// 0.003, 0.92 (heads 1) and 2.29, 0.17, 1.71 (heads 2): heads 2's first seed stays on the plateau
// (a split configuration), the rest learned by the default rule (5/6 ln 10).
inline Session seedsSession()
{
    Session s = tinySession();
    AxisValue seed;
    seed.kind = AxisValue::Kind::Unsigned;
    SweepAxis seeds{"seed", {}};
    for (uint64_t v : {0, 1, 2}) {
        seed.unsignedValue = v;
        seeds.values.push_back(seed);
    }
    s.axes = {SweepAxis{"heads", {num(1), num(2)}}, seeds};
    s.runs.clear();
    expandSweep(s);
    const double losses[6] = {0.96, 0.003, 0.92, 2.29, 0.17, 1.71};
    for (size_t i = 0; i < s.runs.size() && i < 6; ++i) {
        auto &r = s.runs[i].result;
        r.status = RunStatus::Done;
        r.test = {{0, 3.0}, {40, losses[i]}};
        r.metrics["final_test_loss"] = losses[i];
        r.metrics["left_ln10_plateau"] = losses[i] < 5.0 / 6.0 * std::log(10.0) ? 1 : 0;
    }
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

// Nearest-neighbour, made up: d_model 16, heads {1, 4, 16} (rank 16, 4, 1) × layers {1, 3} ×
// w {1, 2} × seeds {0, 1}, plus one run with head_dim 2 set directly (rank 2 at one head).
// best_epoch_mean = rankLoss(L, w, rank) + 0.05 for seed 0 and + 0.02 for seed 1, except at rank 4
// where seed 0 is the better one (+ 0.01 against + 0.04). One run (L 3, w 2, rank 1, seed 1) has
// only final_test_loss, 0.5 below the other seed; one (L 3, w 2, rank 16, seed 0) is still
// queued, so its line's rank 16 point comes from seed 1 alone.
inline double rankLoss(int64_t layers, int64_t w, int64_t rank)
{
    return 0.9 / double(rank) * double(layers) / double(w) + 0.01;
}

inline Session nearestNeighbourSession()
{
    Session s = tinySession();
    s.name = "ui-test-nn";
    s.base.task.kind = "nearest_neighbour";
    s.base.model.dModel = 16;
    s.axes = {SweepAxis{"heads", {num(1), num(4), num(16)}}, SweepAxis{"layers", {num(1), num(3)}},
              SweepAxis{"width_multiplier", {num(1), num(2)}}, SweepAxis{"seed", {num(0), num(1)}}};
    s.runs.clear();
    auto add = [&s](int64_t heads, int64_t layers, int64_t w, int seed, int64_t headDim) {
        SessionRun run;
        run.config = s.base;
        run.config.model.heads.assign(size_t(layers), heads);
        run.config.model.widthMultiplier = w;
        run.config.model.headDim = headDim;
        run.config.initSeed = uint64_t(seed);
        run.labels = {{"heads", std::to_string(heads)},
                      {"layers", std::to_string(layers)},
                      {"width_multiplier", std::to_string(w)},
                      {"seed", std::to_string(seed)}};
        if (headDim > 0) run.labels["head_dim"] = std::to_string(headDim);
        const int64_t rank = headDim > 0 ? headDim : 16 / heads;
        const double offset = rank == 4 ? (seed == 0 ? 0.01 : 0.04) : (seed == 0 ? 0.05 : 0.02);
        run.result.status = RunStatus::Done;
        run.result.stepsDone = 40;
        run.result.metrics["best_epoch_mean"] = rankLoss(layers, w, rank) + offset;
        run.result.metrics["final_test_loss"] = rankLoss(layers, w, rank) + offset + 0.001;
        s.runs.push_back(std::move(run));
    };
    for (int64_t heads : {1, 4, 16})
        for (int64_t layers : {1, 3})
            for (int64_t w : {1, 2})
                for (int seed : {0, 1}) add(heads, layers, w, seed, 0);
    add(1, 1, 1, 0, 2);
    for (auto &run : s.runs) {
        const auto &m = run.config.model;
        if (m.layers() == 3 && m.widthMultiplier == 2 && m.heads[0] == 16 &&
            run.config.initSeed == 1) {
            run.result.metrics.erase("best_epoch_mean");
            run.result.metrics["final_test_loss"] = rankLoss(3, 2, 1) + 0.05 - 0.5;
        }
        if (m.layers() == 3 && m.widthMultiplier == 2 && m.heads[0] == 1 &&
            run.config.initSeed == 0) {
            run.result.status = RunStatus::Queued;
            run.result.metrics.clear();
        }
    }
    return s;
}

// Head schedules on text, made up: d_model 16, 3 layers, schedules ascending:7 {1,2,4},
// ascending:14 {2,4,8}, constant:6 {2,2,2}, constant:12 {4,4,4}, descending:7 {4,2,1}, two seeds
// each. final_test_loss = 2 - 0.05·total + 0.1·seed; steps_per_second = 100 - total + seed, each
// run on its own clock (constant:12 seed 1 has no steps_per_second: 178 steps in 2 s = 89/s).
inline Session headScheduleSession()
{
    Session s = tinySession();
    s.name = "ui-test-heads";
    s.base.task.kind = "text";
    s.base.model.dModel = 16;
    s.axes = {SweepAxis{"seed", {num(0), num(1)}}};
    s.runs.clear();
    struct Schedule {
        const char *label;
        std::vector<int64_t> heads;
    };
    const std::vector<Schedule> schedules = {{"ascending:7", {1, 2, 4}},
                                             {"ascending:14", {2, 4, 8}},
                                             {"constant:6", {2, 2, 2}},
                                             {"constant:12", {4, 4, 4}},
                                             {"descending:7", {4, 2, 1}}};
    double clock = 10.0;
    for (const auto &schedule : schedules)
        for (int seed : {0, 1}) {
            SessionRun run;
            run.config = s.base;
            run.config.model.heads = schedule.heads;
            run.config.initSeed = uint64_t(seed);
            run.labels = {{"head_schedule", schedule.label}, {"seed", std::to_string(seed)}};
            const double total = double(run.config.model.totalHeads());
            run.result.status = RunStatus::Done;
            run.result.stepsDone = 178;
            run.result.wallSeconds = clock += 1.0;
            run.result.metrics["final_test_loss"] = 2.0 - 0.05 * total + 0.1 * seed;
            if (std::string(schedule.label) == "constant:12" && seed == 1)
                run.result.wallSeconds = 2.0;
            else
                run.result.metrics["steps_per_second"] = 100.0 - total + seed;
            s.runs.push_back(std::move(run));
        }
    return s;
}

// Figure 2's 25 configurations (d_model 24…384 × heads 1, 2, 3, 6, 12) at η 1.5e-3, 3e-3, 6e-3 and
// 2e-2, every run done: learned (final loss 0.1) where η·√m_H < 0.01, else on the plateau (2.3).
inline Session twentyFiveConfigurations()
{
    Session s = tinySession();
    s.axes = {SweepAxis{"d_model", {num(24), num(48), num(96), num(192), num(384)}},
              SweepAxis{"heads", {num(1), num(2), num(3), num(6), num(12)}},
              SweepAxis{"lr", {num(1.5e-3), num(3e-3), num(6e-3), num(2e-2)}}};
    s.runs.clear();
    expandSweep(s);
    for (auto &run : s.runs) {
        const double mH = double(run.config.model.dModel) / double(run.config.model.heads[0]);
        const bool learned = run.config.lr * std::sqrt(mH) < 0.01;
        auto &r = run.result;
        r.status = RunStatus::Done;
        r.test = {{0, 3.0}, {40, learned ? 0.1 : 2.3}};
        r.metrics["final_test_loss"] = learned ? 0.1 : 2.3;
        r.metrics["left_ln10_plateau"] = learned ? 1 : 0;
    }
    return s;
}

// A finished boundary search along η over d_model 16 with 1, 2 and 4 heads (m_H 16, 8, 4), its
// outcomes made up: a run learned when η < 0.01 · m_H^−½ (a sharp boundary, so α comes out ½).
// Planned and "trained" round by round by the search itself (search/SearchPlanner.h).
// grouped: a second axis, qk_norm off / gain, with a flat boundary (α 0) under gain: a search
// whose configurations fall into two groups, each with its law.
inline Session searchSession(bool grouped = false)
{
    Session s;
    s.name = "ui-search";
    s.base = testing::tinyAdditionRun(16, {1, 1}, 40, 1e-3);
    s.axes = {SweepAxis{"heads", {num(1), num(2), num(4)}}};
    if (grouped) {
        AxisValue off, gain;
        off.kind = gain.kind = AxisValue::Kind::Text;
        off.text = "off";
        gain.text = "gain";
        s.axes.push_back(SweepAxis{"qk_norm", {off, gain}});
    }
    SearchSpec spec;
    spec.low = 1e-4;
    spec.high = 1e-1;
    spec.direction = SearchSpec::Direction::Decreasing;
    s.search = spec;
    while (planSearchRound(s) > 0) {
        for (auto &run : s.runs) {
            if (isFinished(run.result.status)) continue;
            const double headDim = double(run.config.model.headDimOfLayer(0));
            const bool flat = run.config.stabilizers.qkNorm != QkNorm::Off;
            const bool learned = run.config.lr < (flat ? 0.005 : 0.01 / std::sqrt(headDim));
            run.result.status = RunStatus::Done;
            run.result.metrics[metric::kLeftLn10Plateau] = learned ? 1.0 : 0.0;
            run.result.metrics[metric::kFinalTestLoss] = learned ? 0.05 : 2.3026;
            run.result.test = {{0, 3.1}, {40, learned ? 0.05 : 2.3026}};
        }
    }
    return s;
}

} // namespace headlab::uitest
