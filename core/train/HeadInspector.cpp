// HeadInspector.cpp — attention maps, per-head statistics, ablation and pruning of a checkpoint.
#include "core/train/HeadInspector.h"

#include "core/train/HeadInspectorImpl.h"
#include "core/train/HeadStats.h"

#include "core/metrics/Metrics.h"
#include "core/model/Device.h"
#include "core/model/Transformer.h"
#include "core/tasks/Task.h"
#include "core/train/Checkpoint.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>

namespace headlab {

namespace {

template <typename Table>
auto rowNamed(const Table &table, const std::string &name, const char *what)
{
    std::string known;
    for (const auto &row : table) {
        if (name == row.name) return row;
        known += (known.empty() ? "" : ", ") + std::string(row.name);
    }
    throw std::invalid_argument("'" + name + "' is not " + what + " (" + known + ")");
}

// The row of `table` whose `field` is `value`; nullptr where none is.
template <typename Table, typename Field, typename Value>
const typename Table::value_type *rowWith(const Table &table, Field field, Value value)
{
    for (const auto &row : table)
        if (row.*field == value) return &row;
    return nullptr;
}

// The name of the row of `table` whose `field` is `value`.
template <typename Table, typename Field, typename Value>
const char *nameIn(const Table &table, Field field, Value value)
{
    const auto *row = rowWith(table, field, value);
    return row ? row->name : "?";
}

} // namespace

const std::vector<AblationModeRow> &ablationModeTable()
{
    static const std::vector<AblationModeRow> rows = {
        {AblationMode::Zero, "zero", "zero the head"},
        {AblationMode::Mean, "mean", "its mean output"},
        {AblationMode::OptimalConstant, "optimal", "its optimal constant"},
    };
    return rows;
}

const std::vector<PruningOrderRow> &pruningOrderTable()
{
    static const std::vector<PruningOrderRow> rows = {
        {PruningOrder::Gradient, "gradient", "gradient importance (Michel)",
         "the head of least |dL/dgate| over training batches, recomputed after each removal"},
        {PruningOrder::SingleShot, "single-shot", "single-shot",
         "by the cost of removing each head alone, ranked once"},
        {PruningOrder::Greedy, "greedy", "greedy (exact)",
         "the head whose removal raises the test loss least, at every step (the oracle)"},
        {PruningOrder::Random, "random", "random", "a seeded shuffle"},
    };
    return rows;
}

const std::vector<PruningMethodRow> &pruningMethodTable()
{
    static const std::vector<PruningMethodRow> rows = {
        {PruningMethod::PostHoc, "post-hoc", "post hoc", "heads removed, nothing trained again",
         false},
        {PruningMethod::FineTune, "fine-tune", "fine-tuned",
         "each pruned model trained on for N steps, its heads held out", false},
        {PruningMethod::Scratch, "scratch", "from scratch (control)",
         "the surviving heads per layer trained from scratch for the run's steps", true},
        {PruningMethod::L0Gates, "l0", "L0 gates (Voita)",
         "gates learnt with the weights, one point per lambda", true},
    };
    return rows;
}

const std::vector<LossBoundRow> &lossBoundTable()
{
    static const std::vector<LossBoundRow> rows = {
        {"1pct", "1 %", 0.01, false},
        {"5pct", "5 %", 0.05, false},
        {"0.05nats", "+0.05 nats", 0.05, true},
    };
    return rows;
}

const char *toString(PruningMethod method)
{
    return nameIn(pruningMethodTable(), &PruningMethodRow::method, method);
}

PruningMethod pruningMethodOf(const std::string &name)
{
    return rowNamed(pruningMethodTable(), name, "a pruning method").method;
}

const char *toString(AblationMode mode)
{
    return nameIn(ablationModeTable(), &AblationModeRow::mode, mode);
}

const char *toString(PruningOrder order)
{
    return nameIn(pruningOrderTable(), &PruningOrderRow::order, order);
}

AblationMode ablationModeOf(const std::string &name)
{
    return rowNamed(ablationModeTable(), name, "an ablation").mode;
}

PruningOrder pruningOrderOf(const std::string &name)
{
    return rowNamed(pruningOrderTable(), name, "a pruning order").order;
}

int64_t PruningCurve::removableWithin(const LossBoundRow &bound, double intact) const
{
    const double limit = bound.limit(intact);
    const auto *row = rowWith(pruningMethodTable(), &PruningMethodRow::method, method);
    const bool separate = row && row->separateModels;
    int64_t removed = 0;
    for (const auto &s : steps) {
        if (s.testLoss <= limit)
            removed = std::max(removed, s.removed);
        else if (!separate)
            break;
    }
    return removed;
}

AttentionMaps attentionMapsOf(const Transformer &model, const ProbeInput &input, int64_t run)
{
    torch::NoGradGuard noGrad;
    HeadProbe probe;
    probe.captureWeights = true;
    const torch::Tensor output = model.forward(input.input, /*lastOnly=*/false, probe);
    AttentionMaps maps;
    maps.description = input.description;
    // (R, B, T, V) logits: the prediction of this run at the focus row, for the first input.
    if (input.focusRow >= 0 && !input.vocabulary.empty() && output.dim() == 4 &&
        output.size(3) == int64_t(input.vocabulary.size()) && input.focusRow < output.size(2)) {
        const auto p = torch::softmax(
            output[run][0][input.focusRow].to(torch::kCPU, torch::kFloat64), /*dim=*/0);
        const int64_t best = p.argmax().item<int64_t>();
        maps.prediction = input.vocabulary[size_t(best)];
        maps.probability = p[best].item<double>();
    }
    maps.labels = input.labels;
    maps.focusRow = input.focusRow;
    for (size_t l = 0; l < probe.weights.size(); ++l) {
        const int64_t heads = model.headsOf(l, run);
        // (R, B, Hmax, Tq, T) → this run, the first input, its own heads
        const auto w = probe.weights[l][run][0]
                           .narrow(0, 0, heads)
                           .to(torch::kCPU, torch::kFloat32)
                           .contiguous();
        maps.queries = w.size(1);
        maps.keys = w.size(2);
        maps.heads.push_back(heads);
        maps.weights.emplace_back(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
    }
    return maps;
}

HeadInspector::HeadInspector(const std::string &checkpointPath, const std::string &device,
                             const RunConfig *expected)
    : d(std::make_unique<Impl>())
{
    d->checkpoint = loadCheckpoint(checkpointPath, expected);
    d->device = torch::Device(resolveDevice(device));
    const RunConfig &c = d->checkpoint.config;
    d->task = makeTask(c, {c.dataSeed}, d->device);
    const AttentionPlan plan = attentionPlanOf({c}, d->device);
    d->model = std::make_unique<Transformer>(c.model, d->task->vocabSize(), d->task->maxPositions(),
                                             1, d->device, std::vector<std::vector<int64_t>>{},
                                             c.stabilizers, &plan);
    restoreWeights(d->checkpoint, *d->model, 0);
}

HeadInspector::~HeadInspector() = default;

const RunConfig &HeadInspector::config() const
{
    return d->checkpoint.config;
}
int64_t HeadInspector::step() const
{
    return d->checkpoint.position.step;
}

double HeadInspector::loggedTestLoss() const
{
    for (const auto &p : d->checkpoint.partial.test)
        if (p.step == step()) return p.value;
    return std::numeric_limits<double>::quiet_NaN();
}

int64_t HeadInspector::totalHeads() const
{
    int64_t n = 0;
    for (auto h : d->heads()) n += h;
    return n;
}

std::string HeadInspector::exampleInput() const
{
    return d->task->exampleProbeText();
}

AttentionMaps HeadInspector::attention(const std::string &input) const
{
    auto maps = attentionMapsOf(*d->model, d->task->probeInput(input, 1), 0);
    maps.step = step();
    return maps;
}

std::vector<HeadStat> HeadInspector::statistics() const
{
    torch::NoGradGuard noGrad;
    HeadProbe probe;
    probeHeadStats(*d->model, *d->task, 1, probe);
    // Every row as the trainer computes it; a checkpoint keeps no gradients nor the last step's
    // change, so the Gradient and Alignment rows are the values the run logged at this step (when
    // it evaluated here).
    const auto &rows = headStatTable();
    std::vector<HeadStat> out;
    for (size_t l = 0; l < d->model->layers(); ++l) {
        const auto values =
            headStatsOfLayer(*d->model, probe, l, {}).to(torch::kCPU, torch::kFloat64);
        for (int64_t h = 0; h < d->model->headsOf(l, 0); ++h) {
            HeadStat s;
            s.layer = static_cast<int64_t>(l);
            s.head = h;
            for (size_t k = 0; k < rows.size(); ++k) {
                if (rows[k].source == HeadStatSource::Gradient ||
                    rows[k].source == HeadStatSource::Alignment) {
                    const auto it =
                        d->checkpoint.partial.extra.find(headCurveName(s.layer, h, rows[k].name));
                    if (it != d->checkpoint.partial.extra.end())
                        for (const auto &p : it->second)
                            if (p.step == step()) s.values[rows[k].name] = p.value;
                    continue;
                }
                const double v = values[0][h][int64_t(k)].item<double>();
                if (std::isfinite(v)) s.values[rows[k].name] = v; // no statistics batch: absent
            }
            out.push_back(std::move(s));
        }
    }
    return out;
}

std::map<std::string, double> HeadInspector::baseline() const
{
    return d->evaluate({d->allKept()}, {}).front();
}

std::vector<HeadAblation> HeadInspector::ablate(AblationMode mode) const
{
    const auto replacement = d->replacementFor(mode);
    std::vector<std::vector<torch::Tensor>> variants = {d->allKept()};
    std::vector<std::pair<int64_t, int64_t>> which;
    const auto heads = d->heads();
    for (size_t l = 0; l < heads.size(); ++l)
        for (int64_t h = 0; h < heads[l]; ++h) {
            auto keep = d->allKept();
            keep[l][h] = 0.0f;
            variants.push_back(keep);
            which.push_back({static_cast<int64_t>(l), h});
        }
    const auto results = d->evaluate(variants, replacement);
    const auto &intact = results.front();
    std::vector<HeadAblation> out;
    for (size_t i = 0; i < which.size(); ++i) {
        HeadAblation a;
        a.layer = which[i].first;
        a.head = which[i].second;
        a.testLoss = results[i + 1].at("test_loss");
        a.delta = a.testLoss - intact.at("test_loss");
        for (const auto &[name, value] : results[i + 1])
            if (name != "test_loss") a.extraDelta[name] = value - intact.at(name);
        out.push_back(std::move(a));
    }
    return out;
}

std::vector<std::vector<double>> HeadInspector::gradientImportance(AblationMode mode,
                                                                   int64_t batches) const
{
    return d->importance(d->allKept(), d->replacementFor(mode), batches);
}

namespace {

// The heads of `heads` (per layer) in `ranked` order, less those that would take a layer below
// `keepPerLayer`: the removal sequence of an order fixed in advance.
std::vector<std::pair<int64_t, int64_t>>
removable(const std::vector<std::pair<int64_t, int64_t>> &ranked, const std::vector<int64_t> &heads,
          int64_t keepPerLayer)
{
    std::vector<int64_t> left = heads;
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const auto &lh : ranked) {
        auto &n = left[size_t(lh.first)];
        if (n <= keepPerLayer) continue;
        --n;
        out.push_back(lh);
    }
    return out;
}

// Fisher–Yates with a 64-bit Mersenne twister, written out: std::shuffle's and the standard
// distributions' algorithms differ between libraries, and a seed must give one order everywhere.
void shuffleSeeded(std::vector<std::pair<int64_t, int64_t>> &v, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

} // namespace

PruningCurve HeadInspector::prune(const PruningOptions &o,
                                  const std::function<bool(int64_t, int64_t)> &progress) const
{
    if (o.keepPerLayer < 0) throw std::invalid_argument("heads kept per layer must be 0 or more");
    PruningCurve curve;
    curve.order = o.order;
    curve.mode = o.mode;
    curve.seed = o.seed;
    const auto replacement = d->replacementFor(o.mode);
    const auto heads = d->heads();
    const double total = static_cast<double>(totalHeads());
    int64_t goes = 0;
    for (auto h : heads) goes += std::max<int64_t>(0, h - o.keepPerLayer);
    auto kept = d->allKept();
    curve.steps = {{0, 0.0, d->evaluate({kept}, replacement).front().at("test_loss"), -1, -1}};
    std::vector<int64_t> left = heads;
    auto record = [&](std::pair<int64_t, int64_t> lh, double loss, double score) {
        kept[size_t(lh.first)][lh.second] = 0.0f;
        --left[size_t(lh.first)];
        const auto n = static_cast<int64_t>(curve.steps.size());
        curve.steps.push_back({n, double(n) / total, loss, lh.first, lh.second, score});
    };
    auto candidates = [&] {
        std::vector<std::pair<int64_t, int64_t>> out;
        for (size_t l = 0; l < heads.size(); ++l)
            if (left[l] > o.keepPerLayer)
                for (int64_t h = 0; h < heads[l]; ++h)
                    if (kept[l][h].item<float>() > 0.5f) out.push_back({int64_t(l), h});
        return out;
    };
    auto more = [&] { return !progress || progress(int64_t(curve.steps.size()) - 1, goes); };

    if (o.order == PruningOrder::Greedy || o.order == PruningOrder::Gradient) {
        // Adaptive: the next head depends on those gone.
        while (int64_t(curve.steps.size()) - 1 < goes) {
            const auto which = candidates();
            size_t best = 0;
            if (o.order == PruningOrder::Greedy) {
                std::vector<std::vector<torch::Tensor>> variants;
                for (const auto &lh : which) variants.push_back(d->masksAfter(kept, {lh}).front());
                const auto results = d->evaluate(variants, replacement);
                for (size_t i = 1; i < results.size(); ++i)
                    if (results[i].at("test_loss") < results[best].at("test_loss")) best = i;
                const double loss = results[best].at("test_loss");
                record(which[best], loss, loss);
            } else {
                const auto importance = d->importance(kept, replacement, o.batches);
                auto of = [&](size_t i) {
                    return importance[size_t(which[i].first)][size_t(which[i].second)];
                };
                for (size_t i = 1; i < which.size(); ++i)
                    if (of(i) < of(best)) best = i;
                record(which[best],
                       d->evaluate(d->masksAfter(kept, {which[best]}), replacement)
                           .front()
                           .at("test_loss"),
                       of(best));
            }
            if (!more()) break;
        }
        return curve;
    }

    // Fixed in advance: the whole sequence, then every prefix evaluated in chunks.
    std::vector<std::pair<int64_t, int64_t>> ranked;
    std::map<std::pair<int64_t, int64_t>, double> score;
    if (o.order == PruningOrder::SingleShot) {
        auto single = ablate(o.mode);
        std::stable_sort(single.begin(), single.end(),
                         [](const auto &a, const auto &b) { return a.testLoss < b.testLoss; });
        for (const auto &a : single) {
            ranked.push_back({a.layer, a.head});
            score[{a.layer, a.head}] = a.testLoss;
        }
    } else {
        for (size_t l = 0; l < heads.size(); ++l)
            for (int64_t h = 0; h < heads[l]; ++h) ranked.push_back({int64_t(l), h});
        shuffleSeeded(ranked, o.seed);
    }
    const auto sequence = removable(ranked, heads, o.keepPerLayer);
    const auto results = d->evaluate(d->masksAfter(kept, sequence), replacement, [&](size_t done) {
        return !progress || progress(int64_t(done), goes);
    });
    for (size_t i = 0; i < results.size(); ++i) {
        const auto it = score.find(sequence[i]);
        record(sequence[i], results[i].at("test_loss"),
               it == score.end() ? std::numeric_limits<double>::quiet_NaN() : it->second);
    }
    return curve;
}

} // namespace headlab
