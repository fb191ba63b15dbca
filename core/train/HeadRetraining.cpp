// HeadRetraining.cpp — pruning with retraining and its control: a pruned model fine-tuned, the
// surviving heads trained from scratch, L0 gates learnt with the weights (HeadInspector.h).
#include "core/train/HeadInspector.h"

#include "core/train/HeadInspectorImpl.h"

#include "core/model/Adam.h"
#include "core/schema/RunConfigFields.h"
#include "core/train/Trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace headlab {

namespace {

// The share of the last phase's learning rate retraining goes on at: where the phase's schedule
// ended, but no less than a tenth of its peak. A run that ended at the bottom of a cosine schedule
// and went on at its peak left its minimum (+3.5 % on tiny Shakespeare in 200 steps with no head
// removed: docs/FINDINGS.md); at zero it would not retrain at all.
double retrainingShare(const PhaseConfig &phase)
{
    return std::max(0.1, scheduleMultiplier(phase.schedule, std::max<int64_t>(0, phase.steps - 1),
                                            phase.steps));
}

// The learning rate fine-tuning and L0 gates train at (before the QK rule's factor on W_Q, W_K).
double retrainingLearningRate(const RunConfig &c)
{
    const PhaseConfig &phase = c.phases.back();
    return (phase.useScannedLr ? c.lr : phase.lr) * retrainingShare(phase);
}

// An Adam over every copy of `copies` at the retraining's learning rate (the QK rule's factor on
// W_Q and W_K), with the trainer's last phase's optimizer.
struct RunOptimizer {
    Adam adam;
    RunOptimizer(Transformer &copies, int64_t n, const RunConfig &c)
        : adam(copies, c.phases.back().optimizer, c.stabilizers.independentWeightDecay)
    {
        const double base = retrainingLearningRate(c);
        std::vector<torch::Tensor> perParam;
        for (const auto &p : copies.parameters()) {
            double lr = base;
            if (p.isQueryKey) lr *= qkLearningRateFactor(c, static_cast<size_t>(p.layer));
            perParam.push_back(torch::full({n}, lr, torch::kFloat64));
        }
        adam.setLearningRates(perParam);
    }
};

torch::Tensor stepTensor(int64_t step, const torch::Device &device)
{
    return torch::tensor(step, torch::TensorOptions().dtype(torch::kLong).device(device));
}

// Copies of the model retrained together, 32 at a time.
constexpr size_t kRetrainChunk = 32;

} // namespace

// The chunk of `count` items that starts at `begin`: its `n` copies of the checkpoint's model, an
// optimizer over them (from the checkpoint's Adam moments where it has them), their task, and the
// schedule multiplier 1 the optimizer steps with: what every retraining starts from.
struct HeadInspector::Retraining {
    int64_t n;
    std::unique_ptr<Transformer> model;
    RunOptimizer opt;
    Task &task;
    torch::Tensor one;
    Retraining(const Impl &d, size_t begin, size_t count)
        : n(static_cast<int64_t>(std::min(kRetrainChunk, count - begin)))
        , model(d.replicas(n))
        , opt(*model, n, d.checkpoint.config)
        , task(d.taskFor(n))
        , one(torch::ones({}, torch::TensorOptions().dtype(torch::kFloat64).device(d.device)))
    {
        if (d.checkpoint.hasMoments)
            for (int64_t r = 0; r < n; ++r) restoreMoments(d.checkpoint, opt.adam, *model, r);
    }
};

PruningCurve HeadInspector::fineTune(const PruningCurve &curve, int64_t steps,
                                     const std::function<bool(int64_t, int64_t)> &progress) const
{
    if (steps < 1) throw std::invalid_argument("fine-tuning needs at least one step");
    PruningCurve out = curve;
    out.method = PruningMethod::FineTune;
    out.trainedSteps = steps;
    out.learningRate = retrainingLearningRate(config());
    // Each count's gates along the curve: none removed, then its heads one by one.
    std::vector<std::pair<int64_t, int64_t>> sequence;
    for (const auto &step : curve.steps)
        if (step.layer >= 0) sequence.push_back({step.layer, step.head});
    auto masks = Impl::masksAfter(d->allKept(), sequence);
    masks.insert(masks.begin(), d->allKept());
    const auto replacement = d->replacementFor(curve.mode);
    const RunConfig &c = config();
    const PhaseConfig &phase = c.phases.back();
    const int64_t total = int64_t(masks.size()) * steps;
    int64_t done = 0;
    for (size_t begin = 0; begin < masks.size(); begin += kRetrainChunk) {
        Retraining r(*d, begin, masks.size());
        const int64_t n = r.n;
        Transformer &copies = *r.model;
        HeadProbe gates;
        for (size_t l = 0; l < masks.front().size(); ++l) {
            std::vector<torch::Tensor> keep;
            for (int64_t v = 0; v < n; ++v) keep.push_back(masks[begin + size_t(v)][l]);
            gates.keep.push_back(torch::stack(keep).to(d->device));
            if (!replacement.empty())
                gates.replacement.push_back(
                    replacement[l].unsqueeze(0).expand({n, -1, -1}).contiguous());
        }
        {
            const Impl::Intervening on(copies, gates);
            // The batches after the phase's own: what the run would have seen next.
            for (int64_t t = 0; t < steps; ++t) {
                r.task.trainLoss(copies, phase, stepTensor(phase.steps + t, d->device))
                    .sum()
                    .backward();
                r.opt.adam.step(r.one);
                r.opt.adam.zeroGrad();
                if (progress && !progress(done + (t + 1) * n, total)) return out;
            }
        }
        done += steps * n;
        const auto losses = d->testLosses(copies, n, gates);
        for (int64_t v = 0; v < n; ++v) out.steps[begin + size_t(v)].testLoss = losses[size_t(v)];
    }
    return out;
}

PruningCurve HeadInspector::fromScratch(const PruningCurve &curve, int64_t points,
                                        const std::function<bool(int64_t, int64_t)> &progress) const
{
    const RunConfig &c = config();
    const int64_t headDim = c.model.headDimOfLayer(0);
    for (size_t l = 1; l < c.model.heads.size(); ++l)
        if (c.model.headDimOfLayer(l) != headDim)
            throw std::invalid_argument(
                "the control needs one head dimension in every layer; this run's layers differ");
    // The counts trained: every one, or `points` of them evenly spaced with both ends.
    std::vector<size_t> picked;
    const size_t n = curve.steps.size();
    if (points <= 0 || size_t(points) >= n)
        for (size_t i = 0; i < n; ++i) picked.push_back(i);
    else
        for (int64_t k = 0; k < points; ++k) {
            const size_t i =
                points == 1 ? n - 1
                            : size_t(std::lround(double(k) * double(n - 1) / double(points - 1)));
            if (picked.empty() || picked.back() != i) picked.push_back(i);
        }
    PruningCurve out = curve;
    out.method = PruningMethod::Scratch;
    out.trainedSteps = c.totalSteps();
    out.steps.clear();
    // Each count's surviving heads per layer, as a run of its own.
    std::vector<RunConfig> runs;
    std::vector<int64_t> left = c.model.heads;
    size_t next = 0;
    for (size_t i = 0; i < n && next < picked.size(); ++i) {
        if (curve.steps[i].layer >= 0) --left[size_t(curve.steps[i].layer)];
        if (i != picked[next]) continue;
        ++next;
        RunConfig r = c;
        r.model.heads = left;
        r.model.headDim = headDim;
        r.device = d->device.is_cuda() ? "cuda" : "cpu";
        runs.push_back(r);
        out.steps.push_back(curve.steps[i]);
        out.steps.back().score = std::numeric_limits<double>::quiet_NaN();
    }
    // Trained in ensembles of one shape each, as a sweep would.
    std::map<std::string, std::vector<size_t>> groups;
    for (size_t i = 0; i < runs.size(); ++i) groups[ensembleKey(runs[i])].push_back(i);
    int64_t done = 0;
    for (const auto &[key, members] : groups) {
        std::vector<RunConfig> configs;
        for (auto i : members) configs.push_back(runs[i]);
        TrainerControl control;
        const auto results = trainMembers(configs, control);
        for (size_t m = 0; m < members.size(); ++m) {
            const auto &r = results[m];
            if (r.status == RunStatus::Failed) {
                std::string shape;
                for (auto h : configs[m].model.heads)
                    shape += (shape.empty() ? "" : " ") + std::to_string(h);
                throw std::runtime_error("the control run with heads " + shape +
                                         " failed: " + r.message);
            }
            out.steps[members[m]].testLoss =
                r.test.empty() ? std::numeric_limits<double>::quiet_NaN() : r.test.back().value;
        }
        done += int64_t(members.size());
        if (progress && !progress(done, int64_t(runs.size()))) break;
    }
    return out;
}

PruningCurve HeadInspector::l0Gates(const std::vector<double> &lambdas, int64_t steps,
                                    uint64_t seed,
                                    const std::function<bool(int64_t, int64_t)> &progress) const
{
    if (steps < 1) throw std::invalid_argument("L0 gates need at least one step");
    // Louizos et al. (2018)'s Hard Concrete: s = σ((log u − log(1−u) + log α)/β) stretched to
    // (γ, ζ) and clipped to [0, 1]; P(gate ≠ 0) = σ(log α − β log(−γ/ζ)).
    constexpr double kBeta = 2.0 / 3.0, kGamma = -0.1, kZeta = 1.1;
    constexpr double kGateLr = 0.05;
    const double kOpenLogAlpha = std::log(9.0); // gates open at the start: P(gate ≠ 0) ≈ 0.99
    const RunConfig &c = config();
    const PhaseConfig &phase = c.phases.back();
    const auto heads = d->heads();
    const double total = static_cast<double>(totalHeads());
    PruningCurve out;
    out.method = PruningMethod::L0Gates;
    out.trainedSteps = steps;
    out.learningRate = retrainingLearningRate(config());
    out.mode = AblationMode::Zero;
    out.seed = seed;
    std::vector<PruningStep> points;
    const auto intact = d->evaluate({d->allKept()}, {}).front().at("test_loss");
    const int64_t work = int64_t(lambdas.size()) * steps;
    int64_t done = 0;
    for (size_t begin = 0; begin < lambdas.size(); begin += kRetrainChunk) {
        Retraining r(*d, begin, lambdas.size());
        const int64_t n = r.n;
        Transformer &copies = *r.model;
        std::vector<torch::Tensor> logAlpha;
        for (auto h : heads) {
            auto a = torch::full({n, h}, kOpenLogAlpha,
                                 torch::TensorOptions().dtype(torch::kFloat32).device(d->device));
            a.set_requires_grad(true);
            logAlpha.push_back(a);
        }
        torch::optim::Adam gateAdam(logAlpha, torch::optim::AdamOptions(kGateLr));
        std::vector<double> lam(lambdas.begin() + long(begin), lambdas.begin() + long(begin) + n);
        const auto lambda = torch::tensor(lam, torch::kFloat64).to(d->device, torch::kFloat32);
        auto generator = at::make_generator<at::CPUGeneratorImpl>(seed + begin);
        HeadProbe gates;
        gates.keep.resize(heads.size());
        {
            const Impl::Intervening on(copies, gates);
            for (int64_t t = 0; t < steps; ++t) {
                torch::Tensor open = torch::zeros({n}, lambda.options());
                for (size_t l = 0; l < heads.size(); ++l) {
                    const auto u = torch::rand({n, heads[l]}, generator, torch::kFloat32)
                                       .clamp(1e-6, 1 - 1e-6)
                                       .to(d->device);
                    const auto s = torch::sigmoid((u.log() - (1 - u).log() + logAlpha[l]) / kBeta);
                    gates.keep[l] = (s * (kZeta - kGamma) + kGamma).clamp(0, 1);
                    open = open +
                           torch::sigmoid(logAlpha[l] - kBeta * std::log(-kGamma / kZeta)).sum(1);
                }
                const auto loss =
                    r.task.trainLoss(copies, phase, stepTensor(phase.steps + t, d->device)) +
                    lambda * open / total;
                loss.sum().backward();
                r.opt.adam.step(r.one);
                r.opt.adam.zeroGrad();
                gateAdam.step();
                gateAdam.zero_grad();
                if (progress && !progress(done + (t + 1) * n, work)) return out;
            }
        }
        done += steps * n;
        // Each gate at its expected value; a gate at 0 removes its head.
        torch::NoGradGuard noGrad;
        std::vector<int64_t> closed(size_t(n), 0);
        for (size_t l = 0; l < heads.size(); ++l) {
            gates.keep[l] = (torch::sigmoid(logAlpha[l]) * (kZeta - kGamma) + kGamma).clamp(0, 1);
            const auto shut = (gates.keep[l] <= 0).sum(1).to(torch::kCPU);
            for (int64_t v = 0; v < n; ++v) closed[size_t(v)] += shut[v].item<int64_t>();
        }
        const auto losses = d->testLosses(copies, n, gates);
        for (int64_t v = 0; v < n; ++v) {
            PruningStep p;
            p.removed = closed[size_t(v)];
            p.fraction = double(p.removed) / total;
            p.testLoss = losses[size_t(v)];
            p.score = lam[size_t(v)];
            points.push_back(p);
        }
    }
    std::stable_sort(points.begin(), points.end(),
                     [](const auto &a, const auto &b) { return a.removed < b.removed; });
    out.steps = {{0, 0.0, intact, -1, -1}};
    out.steps.insert(out.steps.end(), points.begin(), points.end());
    return out;
}

} // namespace headlab
