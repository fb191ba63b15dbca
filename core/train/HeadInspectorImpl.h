// HeadInspectorImpl.h — what a HeadInspector holds (the checkpoint's model and task, copies of it
// for batched variants) and the passes its methods share: evaluation of head masks, gradient
// importance, the replacement of removed heads. Internal to core/train (LibTorch): shared by
// HeadInspector.cpp (looking, ablation, pruning orders) and HeadRetraining.cpp (pruning with
// retraining and its control).
#pragma once

#include "core/train/HeadInspector.h"

#include "core/model/Transformer.h"
#include "core/tasks/Task.h"
#include "core/train/Checkpoint.h"

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headlab {

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

    // The test loss of each of the `n` copies of `copies` with `gates` applied (its keep and
    // replacement).
    std::vector<double> testLosses(const Transformer &copies, int64_t n,
                                   const HeadProbe &gates) const
    {
        torch::NoGradGuard noGrad;
        const Intervening on(copies, gates);
        const auto loss = taskFor(n).evaluate(copies).loss.to(torch::kCPU, torch::kFloat64);
        std::vector<double> out;
        for (int64_t v = 0; v < n; ++v) out.push_back(loss[v].item<double>());
        return out;
    }

    // The gates after each removal of `sequence` (layer, head) in turn, from `kept`: per
    // removal, per layer (heads), 1 kept and 0 removed. `kept` itself is left as it is.
    static std::vector<std::vector<torch::Tensor>>
    masksAfter(const std::vector<torch::Tensor> &kept,
               const std::vector<std::pair<int64_t, int64_t>> &sequence)
    {
        std::vector<std::vector<torch::Tensor>> out;
        std::vector<torch::Tensor> keep;
        for (const auto &t : kept) keep.push_back(t.clone());
        for (const auto &[l, h] : sequence) {
            keep[size_t(l)][h] = 0.0f;
            out.push_back(keep);
            for (auto &t : keep) t = t.clone();
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

} // namespace headlab
