// RunResult.h — what a run produced: its status, its curves and its final metrics.
//
// Plain value types, no LibTorch and no Qt. The trainer fills these in and sends copies of the
// new points to whoever listens (GUI, CLI); sessions store them in YAML.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace headlab {

enum class RunStatus { Queued, Running, Paused, Done, Diverged, Failed, Stopped };

const char *toString(RunStatus);
bool parseRunStatus(const std::string &text, RunStatus *out);
// Done, Diverged, Failed: a result that a resumed session keeps. Stopped and Queued runs run again.
bool isFinished(RunStatus);

struct CurvePoint {
    int64_t step = 0;
    double value = 0.0;
};

using Curve = std::vector<CurvePoint>;

struct RunResult {
    RunStatus status = RunStatus::Queued;
    Curve train;                            // mean train loss over each logEvery steps
    Curve test;                             // test loss every evalEvery steps
    std::map<std::string, Curve> extra;     // e.g. "test_digit_0".."test_digit_2", "epoch_mean"
    std::map<std::string, double> metrics;  // e.g. final_test_loss, learned, best_epoch_mean
    std::vector<int64_t> phaseStarts;       // global step at which each phase began
    int64_t stepsDone = 0;
    int64_t divergedAtStep = -1;
    double wallSeconds = 0.0;
    std::string device;
    std::string message; // why it failed, or a note
};

// A batch of new values for one run, sent from the training thread about every 100 ms.
struct RunProgress {
    int runIndex = -1;
    RunStatus status = RunStatus::Running;
    int64_t step = 0;
    int64_t totalSteps = 0;
    double stepsPerSecond = 0.0;
    double etaSeconds = 0.0;
    Curve newTrain;
    Curve newTest;
    std::map<std::string, Curve> newExtra;
};

} // namespace headlab
