// TaskSpec.h — a task's row in the task table: everything HeadLab knows about a task kind.
//
// The YAML reader takes a task's keys from its row, validate() its checks, the scheduler its
// vocabulary and sequence length, the figures its plateau lines and loss scale. Each task's spec
// lives in its own folder under core/schema/, and its LibTorch code (the factory the trainer
// calls, core/tasks/TaskFactories.cpp) in the folder of the same name under core/tasks/; one line
// of TaskList.h names both.
//
// Torch-free, as all of core/schema: the session reader, the app and the fuzzer read specs
// without LibTorch.
#pragma once

#include "core/config/Field.h"
#include "core/config/RunConfig.h"
#include "core/metrics/Metrics.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace headlab {

// A horizontal line on loss figures: a plateau a run can sit on ("ln 10" at 2.3026).
struct PlateauLine {
    double loss = 0.0;
    std::string label;
};

// Sequences per evaluation pass for a task that evaluates a fixed test set: all of them while
// one pass stays within about 256 MiB of activations and logits (every preset and default test
// set, so their numbers are unchanged), fewer for a huge test set or vocabulary.
inline int64_t evaluationChunk(int64_t sequences, int64_t sequenceLength, int64_t vocabSize,
                               int64_t dModel)
{
    constexpr int64_t kBudget = int64_t(256) << 20;
    const int64_t perSequence = 4 * (vocabSize + sequenceLength * 8 * dModel);
    return std::clamp<int64_t>(kBudget / std::max<int64_t>(1, perSequence), 1,
                               std::max<int64_t>(1, sequences));
}

struct TaskSpec {
    std::string id;    // task.kind in YAML: "addition"
    std::string title; // for people: "Three-digit addition (EXPERIMENTS.md §1)"
    // What an input to look inside the heads with is (the Inside-the-heads view's help, inspect's
    // --input), and an example of one where it does not depend on the data (else "": the task
    // instance's exampleProbeText() picks one from its data).
    std::string inputHelp;
    std::string exampleInput;
    std::vector<Objective> objectives; // the phase objectives it trains on
    FieldTable<TaskConfig> options;    // its keys under `task:` (besides kind)
    // Tokens in the vocabulary; 0 for continuous inputs and outputs.
    int64_t (*vocabSize)(const TaskConfig &) = nullptr;
    // Tokens (or points) in one sequence.
    int64_t (*sequenceLength)(const TaskConfig &) = nullptr;
    // What its data and evaluation hold on the device beyond a training batch, for the memory
    // estimate (estimateRunBytes): the sequences its test set has (one evaluation pass takes
    // evaluationChunk of them), and the bytes of the data sets it keeps there. nullptr: nothing
    // beyond a batch (a task that evaluates in chunks of a batch and draws its data as it goes).
    struct Footprint {
        int64_t testSequences = 0;
        int64_t dataBytes = 0;
    };
    Footprint (*footprint)(const TaskConfig &) = nullptr;
    // The unit of its losses, for axis titles: "nats" for a cross-entropy, "MSE × d" for the
    // nearest-neighbour task's mean squared distance.
    const char *lossUnit = "nats";
    // What "learned" means for it, for people (docs, tooltips); nullptr: it gives no verdict (no
    // loss level marks a learned run, as for language modelling), and no run of it is called
    // learned or not learned anywhere.
    const char *learnedMeaning = nullptr;
    // The loss a run sits at while its attention has learned nothing (nearest neighbour: the zero
    // predictor's 1, where a failed run's output collapses; text: the next byte's entropy given
    // the byte before, what the MLP reaches from its own position): its chance plateau, the
    // learned threshold of a task no paper defines one for (Task::learnedThreshold), 5/6 of which
    // is the left_chance_plateau rule's (LearnedRule.h). nullptr: the task defines its own.
    double (*chancePlateau)(const TaskConfig &) = nullptr;
    // Lines drawn on its loss figures, highest first; may be empty.
    std::vector<PlateauLine> (*plateaus)(const TaskConfig &) = nullptr;
    // The loss at initialisation (ln V for a classifier), which loss axes always show; 0: none,
    // axes follow the data.
    double (*initialLoss)(const TaskConfig &) = nullptr;
    // The extra curves its evaluation reports, each a registered metric (core/metrics/Metrics.h);
    // "test_digit_{0,1,2}" style families are named with their prefix.
    std::vector<std::string> extraCurves;
    // Metrics of its own, beyond the registry's (core/metrics/Metrics.h): e.g. a family of
    // per-group curves. findTaskMetric() finds them.
    std::vector<MetricSpec> metrics;
    // Test loss per group of examples (the addition task's queried digit): curves named
    // groupCurvePrefix + g for each group g, drawn by the loss chart's per-group view under the
    // names groups() gives. An empty prefix: no groups.
    std::string groupCurvePrefix;
    std::string groupWord = "group"; // "digit": what one group is called ("Per-digit test loss")
    std::vector<std::string> (*groups)(const TaskConfig &) = nullptr;
    bool producesSamples = false;
    // Runs record where their test loss entered and left the ln 10, ⅔ ln 10 and ⅓ ln 10 plateaus
    // and whether it left the ln 10 one (PlateauDetector; the addition task's staircase).
    bool plateauMetrics = false; // finished runs carry generated text (RunResult::samples)
    // Task-specific checks of a run that involve more than one option's own range (those are the
    // option rows'), "" when it can run: "model.d_model: ... must equal ...".
    std::string (*check)(const RunConfig &) = nullptr;
};

// The task table, in the order forms list them.
const std::vector<const TaskSpec *> &taskTable();
// A row added after the others for as long as this object lives; `spec` must outlive it. The
// session reader and writer, validate(), the form, `headlab-cli schema` and so Python see it.
// Training it also needs its factory: core/tasks/Task.h's ScopedTask registers both (the recipe
// tests add a dummy task this way). Not for use while another thread reads the table.
class ScopedTaskSpec {
public:
    explicit ScopedTaskSpec(const TaskSpec &spec);
    ~ScopedTaskSpec();
    ScopedTaskSpec(const ScopedTaskSpec &) = delete;
    ScopedTaskSpec &operator=(const ScopedTaskSpec &) = delete;

private:
    const TaskSpec *m_spec;
};
// The row of `id`, or nullptr.
const TaskSpec *findTaskSpec(const std::string &id);
// The row of `id`; an unknown id throws std::invalid_argument naming the nearest and all ids.
const TaskSpec &taskSpec(const std::string &id);
inline const TaskSpec &taskSpec(const TaskConfig &task)
{
    return taskSpec(task.kind);
}

// A metric of the registry, or of any task's own rows; nullptr when neither knows it.
const MetricSpec *findTaskMetric(const std::string &name);

// Tokens (or points) in one sequence of the task: 19 for addition, N for nearest neighbour, the
// context length for text.
int64_t sequenceLength(const TaskConfig &task);

} // namespace headlab
