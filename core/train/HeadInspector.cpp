// HeadInspector.cpp — attention maps, per-head statistics, ablation and pruning of a checkpoint.
#include "core/train/HeadInspector.h"

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

const char *toString(AblationMode mode)
{
    for (const auto &row : ablationModeTable())
        if (row.mode == mode) return row.name;
    return "?";
}

const char *toString(PruningOrder order)
{
    for (const auto &row : pruningOrderTable())
        if (row.order == order) return row.name;
    return "?";
}

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

} // namespace

AblationMode ablationModeOf(const std::string &name)
{
    return rowNamed(ablationModeTable(), name, "an ablation").mode;
}

PruningOrder pruningOrderOf(const std::string &name)
{
    return rowNamed(pruningOrderTable(), name, "a pruning order").order;
}

int64_t PruningCurve::removableWithin(double relative) const
{
    if (steps.empty()) return 0;
    const double limit = steps.front().testLoss * (1.0 + relative);
    int64_t removed = 0;
    for (const auto &s : steps) {
        if (!(s.testLoss <= limit)) break;
        removed = s.removed;
    }
    return removed;
}

double PruningCurve::fractionWithin(double relative) const
{
    const int64_t n = removableWithin(relative);
    for (const auto &s : steps)
        if (s.removed == n) return s.fraction;
    return 0.0;
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

struct HeadInspector::Impl {
    LoadedCheckpoint checkpoint;
    torch::Device device{torch::kCPU};
    std::unique_ptr<Task> task;                             // for one run
    std::unique_ptr<Transformer> model;                     // the checkpoint's run
    mutable std::map<int64_t, std::unique_ptr<Task>> tasks; // by ensemble size, for the variants

    Task &taskFor(int64_t runs) const
    {
        auto &t = tasks[runs];
        if (!t)
            t = makeTask(
                checkpoint.config,
                std::vector<uint64_t>(static_cast<size_t>(runs), checkpoint.config.dataSeed),
                device);
        return *t;
    }

    std::unique_ptr<Transformer> replicas(int64_t runs) const
    {
        const AttentionPlan plan =
            attentionPlanOf(std::vector<RunConfig>(size_t(runs), checkpoint.config), device);
        auto m = std::make_unique<Transformer>(
            checkpoint.config.model, task->vocabSize(), task->maxPositions(), runs, device,
            std::vector<std::vector<int64_t>>{}, checkpoint.config.stabilizers, &plan);
        for (int64_t r = 0; r < runs; ++r) restoreWeights(checkpoint, *m, r);
        return m;
    }

    std::vector<int64_t> heads() const
    {
        std::vector<int64_t> out;
        for (size_t l = 0; l < model->layers(); ++l) out.push_back(model->headsOf(l, 0));
        return out;
    }

    // Each head's mean output over the statistics batch: per layer (heads, head_dim).
    std::vector<torch::Tensor> meanOutputs() const
    {
        torch::NoGradGuard noGrad;
        HeadProbe probe;
        probe.captureMeanOutputs = true;
        model->forward(task->statsInput(1).input, false, probe);
        std::vector<torch::Tensor> out;
        for (auto &m : probe.meanOutputs) out.push_back(m[0]);
        return out;
    }

    // The phase whose batches the gradient importance and the optimal constants are taken from:
    // the last, the one the checkpoint's model ended in.
    const PhaseConfig &lastPhase() const { return checkpoint.config.phases.back(); }

    // Sets a model's intervention for as long as it lives (and back to none when it throws).
    struct Intervening {
        const Transformer &model;
        Intervening(const Transformer &m, const HeadProbe &probe)
            : model(m)
        {
            m.setIntervention(&probe);
        }
        ~Intervening() { model.setIntervention(nullptr); }
    };

    // Each head's optimal constant (Li & Janson 2024), per layer (heads, head_dim): Adam, from
    // its mean output, on the training loss of the last phase's batches with that head alone
    // replaced; every head of a chunk of 32 in one ensemble, one copy of the model per head.
    std::vector<torch::Tensor> optimalConstants() const
    {
        if (!optimal.empty()) return optimal;
        constexpr int64_t kSteps = 150;
        constexpr double kLr = 1e-2;
        const auto mean = meanOutputs();
        std::vector<std::pair<size_t, int64_t>> which;
        const auto h = heads();
        for (size_t l = 0; l < h.size(); ++l)
            for (int64_t i = 0; i < h[l]; ++i) which.push_back({l, i});
        std::vector<torch::Tensor> out;
        for (const auto &m : mean) out.push_back(m.clone());
        constexpr size_t kChunk = 32;
        for (size_t begin = 0; begin < which.size(); begin += kChunk) {
            const size_t n = std::min(kChunk, which.size() - begin);
            const auto copies = replicas(static_cast<int64_t>(n));
            Task &task = taskFor(static_cast<int64_t>(n));
            HeadProbe gates;
            std::vector<torch::Tensor> leaves;
            for (size_t l = 0; l < h.size(); ++l) {
                auto keep = torch::ones({int64_t(n), h[l]}, torch::kFloat32);
                for (size_t v = 0; v < n; ++v)
                    if (which[begin + v].first == l) keep[int64_t(v)][which[begin + v].second] = 0;
                gates.keep.push_back(keep.to(device));
                auto c = mean[l].unsqueeze(0).expand({int64_t(n), -1, -1}).clone();
                c.set_requires_grad(true);
                leaves.push_back(c);
                gates.replacement.push_back(c);
            }
            torch::optim::Adam adam(leaves, torch::optim::AdamOptions(kLr));
            const Intervening on(*copies, gates);
            for (int64_t step = 0; step < kSteps; ++step) {
                const auto loss =
                    task.trainLoss(
                            *copies, lastPhase(),
                            torch::tensor(
                                step, torch::TensorOptions().dtype(torch::kLong).device(device)))
                        .sum();
                const auto grads = torch::autograd::grad({loss}, leaves);
                for (size_t l = 0; l < leaves.size(); ++l) leaves[l].mutable_grad() = grads[l];
                adam.step();
            }
            torch::NoGradGuard noGrad;
            for (size_t v = 0; v < n; ++v) {
                const auto [l, i] = which[begin + v];
                out[l][i].copy_(leaves[l][int64_t(v)][i]);
            }
        }
        optimal = out;
        return optimal;
    }
    mutable std::vector<torch::Tensor> optimal; // optimalConstants(), once computed

    // What removed heads output in `mode`: per layer (heads, head_dim), or empty for zero.
    std::vector<torch::Tensor> replacementFor(AblationMode mode) const
    {
        switch (mode) {
        case AblationMode::Zero:
            return {};
        case AblationMode::Mean:
            return meanOutputs();
        case AblationMode::OptimalConstant:
            return optimalConstants();
        }
        return {};
    }

    // The gradient importance of each head (Michel et al. 2019) at the gates `kept` (per layer
    // (heads), 1 kept, 0 removed), the removed heads given `replacement`: the mean over
    // `batches` training batches of |dL/dxi_h|, each layer's normalised to unit L2 norm over its
    // kept heads. Removed heads get +inf.
    std::vector<std::vector<double>> importance(const std::vector<torch::Tensor> &kept,
                                                const std::vector<torch::Tensor> &replacement,
                                                int64_t batches) const
    {
        torch::AutoGradMode grad(true);
        HeadProbe gates;
        std::vector<torch::Tensor> leaves;
        for (size_t l = 0; l < kept.size(); ++l) {
            auto g = kept[l].unsqueeze(0).to(device).clone();
            g.set_requires_grad(true);
            leaves.push_back(g);
            gates.keep.push_back(g);
            if (!replacement.empty()) gates.replacement.push_back(replacement[l].unsqueeze(0));
        }
        std::vector<torch::Tensor> sum;
        for (const auto &k : kept) sum.push_back(torch::zeros_like(k, torch::kFloat64));
        {
            const Intervening on(*model, gates);
            for (int64_t b = 0; b < batches; ++b) {
                const auto loss =
                    task->trainLoss(
                            *model, lastPhase(),
                            torch::tensor(
                                b, torch::TensorOptions().dtype(torch::kLong).device(device)))
                        .sum();
                const auto grads = torch::autograd::grad({loss}, leaves);
                for (size_t l = 0; l < sum.size(); ++l)
                    sum[l] += grads[l][0].abs().to(torch::kCPU, torch::kFloat64);
            }
        }
        std::vector<std::vector<double>> out;
        for (size_t l = 0; l < sum.size(); ++l) {
            const auto on = kept[l].to(torch::kFloat64) > 0.5;
            const auto v = sum[l] / double(std::max<int64_t>(1, batches));
            const double norm = (v * on).norm().item<double>();
            std::vector<double> row;
            for (int64_t h = 0; h < v.size(0); ++h)
                row.push_back(on[h].item<bool>() ? v[h].item<double>() / (norm > 0 ? norm : 1.0)
                                                 : std::numeric_limits<double>::infinity());
            out.push_back(std::move(row));
        }
        return out;
    }

    // The test loss and extra curves of each variant: variants[v][l] is the (heads) float keep
    // vector of layer l. Evaluated 32 copies of the model at a time; `after(done)` is called
    // after each chunk, and returning false stops there (the variants evaluated so far are
    // returned).
    std::vector<std::map<std::string, double>>
    evaluate(const std::vector<std::vector<torch::Tensor>> &variants,
             const std::vector<torch::Tensor> &replacement,
             const std::function<bool(size_t done)> &after = {}) const
    {
        torch::NoGradGuard noGrad;
        std::vector<std::map<std::string, double>> out;
        constexpr size_t kChunk = 32;
        for (size_t begin = 0; begin < variants.size(); begin += kChunk) {
            const size_t n = std::min(kChunk, variants.size() - begin);
            const auto m = replicas(static_cast<int64_t>(n));
            HeadProbe intervention;
            for (size_t l = 0; l < model->layers(); ++l) {
                std::vector<torch::Tensor> keep;
                for (size_t v = begin; v < begin + n; ++v) keep.push_back(variants[v][l]);
                intervention.keep.push_back(torch::stack(keep).to(device));
                if (!replacement.empty())
                    intervention.replacement.push_back(
                        replacement[l]
                            .unsqueeze(0)
                            .expand({static_cast<int64_t>(n), -1, -1})
                            .contiguous());
            }
            m->setIntervention(&intervention);
            TaskEvaluation e = taskFor(static_cast<int64_t>(n)).evaluate(*m);
            m->setIntervention(nullptr);
            const auto loss = e.loss.to(torch::kCPU, torch::kFloat64);
            std::map<std::string, torch::Tensor> extra;
            for (auto &[name, t] : e.extra) extra[name] = t.to(torch::kCPU, torch::kFloat64);
            for (size_t v = 0; v < n; ++v) {
                std::map<std::string, double> values{
                    {"test_loss", loss[static_cast<int64_t>(v)].item<double>()}};
                for (auto &[name, t] : extra)
                    values[name] = t[static_cast<int64_t>(v)].item<double>();
                out.push_back(std::move(values));
            }
            if (after && !after(out.size())) break;
        }
        return out;
    }

    std::vector<torch::Tensor> allKept() const
    {
        std::vector<torch::Tensor> keep;
        for (auto h : heads()) keep.push_back(torch::ones({h}, torch::kFloat32));
        return keep;
    }
};

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
    // Every row as the trainer computes it; a checkpoint keeps no gradients, so the Gradient rows
    // are the values the run logged at this step (when it evaluated here).
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
                if (rows[k].source == HeadStatSource::Gradient) {
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
            std::vector<std::vector<torch::Tensor>> variants;
            for (const auto &[l, h] : which) {
                auto keep = kept;
                for (auto &t : keep) t = t.clone();
                keep[size_t(l)][h] = 0.0f;
                variants.push_back(keep);
            }
            size_t best = 0;
            if (o.order == PruningOrder::Greedy) {
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
                       d->evaluate({variants[best]}, replacement).front().at("test_loss"),
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
    std::vector<std::vector<torch::Tensor>> variants;
    {
        auto keep = kept;
        for (auto &t : keep) t = t.clone();
        for (const auto &[l, h] : sequence) {
            keep[size_t(l)][h] = 0.0f;
            variants.push_back(keep);
            for (auto &t : keep) t = t.clone();
        }
    }
    const auto results = d->evaluate(variants, replacement, [&](size_t done) {
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
