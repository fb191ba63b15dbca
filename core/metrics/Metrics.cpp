// Metrics.cpp — the rows of the metric registry.
#include "core/metrics/Metrics.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace headlab {

const std::vector<MetricSpec> &metricTable()
{
    using namespace metric;
    static const std::vector<MetricSpec> table = {
        {kFinalTestLoss, false, false, "final test loss", "nats",
         "the test loss at the last evaluation"},
        {kMinTestLoss, false, false, "lowest test loss", "nats",
         "the lowest test loss over all evaluations"},
        {kFinalTrainLoss, false, false, "final train loss", "nats",
         "the mean training loss of the last log window"},
        {kLearned, false, false, "learned (paper's rule)", "",
         "1 when the final test loss is below the task's threshold (ln 10 for addition)", true},
        {kLeftLn10Plateau, false, false, "left the ln 10 plateau", "",
         "1 when the final test loss is below 5/6 ln 10 (PlateauDetector)", true},
        {kLeftChancePlateau, false, false, "left the chance plateau", "",
         "1 when the final test loss is below 5/6 of where a run whose attention learned nothing "
         "sits (ln 10 for addition, 1 for nearest neighbour, the next byte's entropy given the "
         "byte before for text)",
         true},
        {kPlateauPrefix, true, false, "plateau entry or exit", "step",
         "plateau_<name>_entered / _left: the step at which the test loss entered or left a "
         "plateau"},
        {kStepsPerSecond, false, false, "speed", "steps/s",
         "optimizer steps per second of the ensemble", true},
        {kBestEpochMean, false, false, "best epoch-mean train loss", "",
         "the lowest mean training loss over an epoch of 100 steps (the nearest-neighbour paper's "
         "metric)"},
        {kHeadPrefix, true, true, "per-head statistic", "",
         "head.<layer>.<head>.<stat>: a head's attention logit scale, entropy, weight or gradient "
         "norm at each evaluation"},
        {kTestDigitPrefix, true, true, "test loss of digit i", "nats",
         "addition: the test loss of answers asking for digit i"},
        {kTestAccuracy, false, true, "test accuracy", "",
         "nearest neighbour: the fraction of positions whose prediction is closest to the target",
         true},
        {kEpochMean, false, true, "epoch-mean train loss", "",
         "the mean training loss of each epoch of 100 steps"},
        {kFinalPrefix, true, false, "final value of a curve", "",
         "final_<curve>: the last value of an extra curve"},
    };
    return table;
}

const MetricSpec *findMetric(const std::string &name)
{
    for (const auto &row : metricTable())
        if (!row.family && row.name == name) return &row;
    for (const auto &row : metricTable())
        if (row.family && name.rfind(row.name, 0) == 0) return &row;
    return nullptr;
}

namespace {

std::vector<HeadStatSpec> &headStatRows()
{
    using S = HeadStatSource;
    static std::vector<HeadStatSpec> table = {
        {"logit_rms", "attention logit RMS",
         "RMS of the scaled logits q·k/√m_H over the evaluation batch, masked entries left out",
         S::Probe, "logit_rms", "logit_rms", true},
        {"logit_max", "attention logit max", "largest |q·k|/√m_H over the evaluation batch",
         S::Probe, "logit_max", "logit_max", true},
        {"entropy", "attention entropy",
         "mean entropy of the head's attention rows (nats); ln T is uniform, 0 one key", S::Probe,
         "entropy", "entropy", true},
        {"wq_norm", "‖W_Q‖ of the head", "Frobenius norm of the head's columns of W_Q", S::Weight,
         "wq", "|W_Q|", true},
        {"wk_norm", "‖W_K‖ of the head", "Frobenius norm of the head's columns of W_K", S::Weight,
         "wk", "|W_K|", false},
        {"wv_norm", "‖W_V‖ of the head", "Frobenius norm of the head's columns of W_V", S::Weight,
         "wv", "|W_V|", false},
        {"wo_norm", "‖W_O‖ of the head", "Frobenius norm of the head's rows of W_O", S::Weight,
         "wo", "|W_O|", false},
        {"wq_grad", "‖∇W_Q‖ of the head",
         "gradient norm of the head's columns of W_Q at the last training step before the "
         "evaluation",
         S::Gradient, "wq", "|dW_Q|", true},
        {"wk_grad", "‖∇W_K‖ of the head",
         "gradient norm of the head's columns of W_K at the last training step before the "
         "evaluation",
         S::Gradient, "wk", "|dW_K|", false},
        // What the head does: the share of its attention on a role's targets, over the query
        // rows that have one (TransformerLens's head detector, "mul"); 1 for a head built for it.
        {"previous_token", "previous-token score",
         "share of the head's attention on the token just before the query", S::Role,
         "previous_token", "prev", true},
        {"duplicate_token", "duplicate-token score",
         "share of the head's attention on earlier positions holding the query's token, over the "
         "queries whose token came before",
         S::Role, "duplicate_token", "dup", true},
        {"induction", "induction score",
         "share of the head's attention on the position after an earlier copy of the query's "
         "token (what an induction head attends to), over the queries that have one",
         S::Role, "induction", "induct", true},
        {"positional", "positional score",
         "the most mean attention the head puts at one fixed offset before the query (0 itself, "
         "1 the previous token)",
         S::Role, "positional", "pos", true},
        // Where the law's exponent comes from (Everett et al. 2024; docs/FINDINGS.md): how the
        // last step's update of the head's weights lines up with the inputs they read.
        {"wq_align", "update alignment of W_Q",
         "‖X·ΔW_Q‖ of the head's columns, the last training step's change on the attention's "
         "inputs from the statistics batch (normalized under pre-norm), over its size for a "
         "change independent of them "
         "(‖X‖·‖ΔW_Q‖/√d_model): 1 independent, √d_model aligned with every input",
         S::Alignment, "wq", "al_Q", true},
        {"wk_align", "update alignment of W_K",
         "the same as wq_align for the head's columns of W_K", S::Alignment, "wk", "al_K", false},
        {"wv_align", "update alignment of W_V",
         "the same as wq_align for the head's columns of W_V", S::Alignment, "wv", "al_V", false},
        {"wo_align", "update alignment of W_O",
         "‖Z·ΔW_O‖ of the head's rows on its own outputs Z over ‖Z‖·‖ΔW_O‖/√head_dim: 1 "
         "independent, √head_dim aligned",
         S::Alignment, "wo", "al_O", false},
    };
    return table;
}

} // namespace

const std::vector<HeadStatSpec> &headStatTable()
{
    return headStatRows();
}

ScopedHeadStat::ScopedHeadStat(HeadStatSpec row)
    : m_name(row.name)
{
    for (const auto &r : headStatRows())
        if (m_name == r.name)
            throw std::logic_error("ScopedHeadStat: a statistic '" + m_name + "' exists already");
    headStatRows().push_back(row);
}

ScopedHeadStat::~ScopedHeadStat()
{
    auto &rows = headStatRows();
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [&](const HeadStatSpec &row) { return m_name == row.name; }),
               rows.end());
}

std::string headCurveName(int64_t layer, int64_t head, const std::string &stat)
{
    return std::string(metric::kHeadPrefix) + std::to_string(layer) + "." + std::to_string(head) +
           "." + stat;
}

bool parseHeadCurve(const std::string &name, int64_t *layer, int64_t *head, std::string *stat)
{
    const std::string prefix = metric::kHeadPrefix;
    if (name.rfind(prefix, 0) != 0) return false;
    const size_t a = name.find('.', prefix.size()),
                 b = a == std::string::npos ? a : name.find('.', a + 1);
    if (b == std::string::npos) return false;
    // Each index whole ASCII digits that fit in 64 bits ("1x", "+1", " 1" and 20 digits are not
    // one), as the Python package reads them (session.py, head_stats).
    auto index = [&](size_t from, size_t to, int64_t *out) {
        const char *first = name.data() + from, *last = name.data() + to;
        if (first == last || *first < '0' || *first > '9') return false;
        const auto [end, error] = std::from_chars(first, last, *out);
        return error == std::errc() && end == last;
    };
    if (!index(prefix.size(), a, layer) || !index(a + 1, b, head)) return false;
    *stat = name.substr(b + 1);
    return true;
}

} // namespace headlab
