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
#include <set>

namespace headlab {

const char *toString(AblationMode mode)
{
    return mode == AblationMode::Mean ? "mean" : "zero";
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

    // The test loss and extra curves of each variant: variants[v][l] is the (heads) float keep
    // vector of layer l. Evaluated 32 copies of the model at a time.
    std::vector<std::map<std::string, double>>
    evaluate(const std::vector<std::vector<torch::Tensor>> &variants,
             const std::vector<torch::Tensor> &replacement) const
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
    const auto replacement =
        mode == AblationMode::Mean ? d->meanOutputs() : std::vector<torch::Tensor>{};
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

std::vector<PruningStep>
HeadInspector::prune(AblationMode mode, const std::function<bool(int64_t, int64_t)> &progress) const
{
    const auto replacement =
        mode == AblationMode::Mean ? d->meanOutputs() : std::vector<torch::Tensor>{};
    const auto heads = d->heads();
    const double total = static_cast<double>(totalHeads());
    auto kept = d->allKept();
    std::vector<PruningStep> out = {
        {0, 0.0, d->evaluate({kept}, replacement).front().at("test_loss"), -1, -1}};
    std::set<std::pair<int64_t, int64_t>> removed;
    while (static_cast<double>(removed.size()) < total) {
        std::vector<std::vector<torch::Tensor>> variants;
        std::vector<std::pair<int64_t, int64_t>> which;
        for (size_t l = 0; l < heads.size(); ++l)
            for (int64_t h = 0; h < heads[l]; ++h) {
                if (removed.count({static_cast<int64_t>(l), h})) continue;
                auto keep = kept;
                for (auto &t : keep) t = t.clone();
                keep[l][h] = 0.0f;
                variants.push_back(keep);
                which.push_back({static_cast<int64_t>(l), h});
            }
        const auto results = d->evaluate(variants, replacement);
        size_t best = 0;
        for (size_t i = 1; i < results.size(); ++i)
            if (results[i].at("test_loss") < results[best].at("test_loss")) best = i;
        removed.insert(which[best]);
        kept[static_cast<size_t>(which[best].first)][which[best].second] = 0.0f;
        out.push_back({static_cast<int64_t>(removed.size()),
                       static_cast<double>(removed.size()) / total, results[best].at("test_loss"),
                       which[best].first, which[best].second});
        if (progress &&
            !progress(static_cast<int64_t>(removed.size()), static_cast<int64_t>(total)))
            break;
    }
    return out;
}

} // namespace headlab
