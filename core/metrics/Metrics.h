// Metrics.h — the metric registry: every number and curve a run reports, by one name.
//
// RunResult keeps metrics and extra curves in maps keyed by name; the trainer, the tasks, the
// session files, runs.csv, the CLI and every figure use the constants below rather than bare
// strings, and metricTable() says what each one means (for people: titles, units, help). A new
// metric is one constant and one row. Torch-free.
#pragma once

#include <string>
#include <vector>

namespace headlab {

namespace metric {
// Scalars in RunResult::metrics.
inline constexpr const char *kFinalTestLoss = "final_test_loss";
inline constexpr const char *kMinTestLoss = "min_test_loss";
inline constexpr const char *kFinalTrainLoss = "final_train_loss";
inline constexpr const char *kFinalPrefix = "final_"; // + an extra curve's name: its last value
inline constexpr const char *kLearned = "learned"; // the paper's rule: final test loss < threshold
inline constexpr const char *kLeftLn10Plateau = "left_ln10_plateau";
// Any task with a learned threshold: the final test loss is below 5/6 of it (addition's ln 10,
// nearest neighbour's zero predictor, text's next-byte entropy given the byte before), the ln 10
// rule made general.
inline constexpr const char *kLeftChancePlateau = "left_chance_plateau";
// The fraction of a plateau's loss a run must fall below to have left it (5/6: the ln 10 rule's).
inline constexpr double kLeftPlateauFraction = 5.0 / 6.0;
inline constexpr const char *kPlateauPrefix = "plateau_"; // plateau_<name>_entered / _left
inline constexpr const char *kStepsPerSecond = "steps_per_second";
inline constexpr const char *kBestEpochMean = "best_epoch_mean";
// Curves in RunResult::extra.
inline constexpr const char *kTestDigitPrefix = "test_digit_"; // + the digit, 0 = ones
inline constexpr const char *kTestAccuracy = "test_accuracy";
inline constexpr const char *kEpochMean = "epoch_mean";
// Per-head statistics, logged at every evaluation: "head.<layer>.<head>.<stat>", heads counted
// from 0 in each layer (module j's head h of w parallel modules is j·H + h).
inline constexpr const char *kHeadPrefix = "head.";
} // namespace metric

// The per-head statistics, in the order they are logged. A row says where its value comes from,
// and the trainer, the inspector (core/train/HeadStats.h computes both), the CLI's table and the
// figures' menus loop over the rows: a new statistic is a row here (and, for a new probe capture,
// the capture in the model).
enum class HeadStatSource {
    Probe,    // the attention probe on the task's statistics batch: `of` names the capture
    Weight,   // the Frobenius norm of the head's part of a weight: `of` is wq, wk, wv or wo
    Gradient, // the same of its gradient at the last training step before the evaluation
    Role,     // a role score of its attention on the statistics batch (core/model/HeadRoles.h)
    // How far the last training step's change of the head's part of a weight moves its outputs
    // on the statistics batch beyond a change of the same size independent of the input
    // (HeadProbe::alignment): `of` is wq, wk, wv or wo
    Alignment,
};
struct HeadStatSpec {
    const char *name;  // the <stat> of a head curve: "logit_rms"
    const char *title; // "attention logit RMS"
    const char *meaning;
    HeadStatSource source = HeadStatSource::Probe;
    // logit_rms, logit_max, entropy (Probe); wq, wk, wv, wo (Weight, Gradient, Alignment);
    // previous_token, duplicate_token, induction, positional (Role)
    const char *of = "";
    const char *column = ""; // its short header in a terminal table ("|W_Q|")
    bool onFigures = false;  // offered on the y axis of the figures against m_H and η
};
const std::vector<HeadStatSpec> &headStatTable();
// A row added after the others for as long as this object lives: the trainer, the inspector, the
// figures' menus and `headlab-cli inspect` see it (the recipe tests add a dummy statistic this
// way). Not for use while another thread reads the table.
class ScopedHeadStat {
public:
    explicit ScopedHeadStat(HeadStatSpec row);
    ~ScopedHeadStat();
    ScopedHeadStat(const ScopedHeadStat &) = delete;
    ScopedHeadStat &operator=(const ScopedHeadStat &) = delete;

private:
    std::string m_name;
};
// "head.1.3.logit_rms"
std::string headCurveName(int64_t layer, int64_t head, const std::string &stat);
// Splits a head curve's name; false for any other name.
bool parseHeadCurve(const std::string &name, int64_t *layer, int64_t *head, std::string *stat);

struct MetricSpec {
    std::string name;        // as stored; a family's prefix when `family`
    bool family = false;     // a prefix: test_digit_0, test_digit_1, ...
    bool curve = false;      // an extra curve (RunResult::extra) rather than a scalar
    std::string title;       // "final test loss"
    std::string unit;        // "nats", "steps/s", "" for a count or a 0/1 verdict
    std::string description; // one sentence
    // A higher value is the better one (accuracy, speed, a verdict): best(CURVE) is its highest
    // value, and the K best runs by it the highest (RunValues.h).
    bool higherIsBetter = false;
};

const std::vector<MetricSpec> &metricTable();
// The row of a stored name (a family member finds its family), or nullptr.
const MetricSpec *findMetric(const std::string &name);

} // namespace headlab
