// test_nn.cpp — the nearest-neighbour task of EXPERIMENTS.md §2 and the model options it needs.
//
// Labels against brute force; predicting 0 scores 1; seeded per-run data; rank set apart from
// the head count (weight shapes); w parallel modules are averaged; the warm-up + cosine schedule
// at the paper's steps; epoch means and best_epoch_mean; the nn-* presets; a tiny run that learns;
// the points' CPU loop against ATen's passes.
// Everything on the CPU.
#include "core/config/RunConfig.h"
#include "core/metrics/EpochMetrics.h"
#include "core/model/Transformer.h"
#include "core/schema/RunConfigFields.h"
#include "core/schema/TaskSpec.h"
#include "core/session/Presets.h"
#include "core/session/Session.h"
#include "core/tasks/nearest_neighbour/NearestNeighbourTask.h"
#include "core/train/SweepRunner.h"
#include "core/train/Trainer.h"
#include "core/train/TrainingLoop.h"

#include <QtTest>

#include <xmmintrin.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

using namespace headlab;

namespace {

// QCOMPARE on a headlab enum would find headlab::toString by ADL and free its static string:
// compare the names instead.
template <typename Enum>
QString name(Enum e)
{
    return QString::fromLatin1(toString(e));
}
QString name(const std::string &text)
{
    return QString::fromStdString(text);
}
QString name(const char *text)
{
    return QString::fromUtf8(text);
}

TaskConfig nnTask(int64_t d, int64_t n)
{
    TaskConfig t;
    t.kind = "nearest_neighbour";
    t.pointDim = d;
    t.numPoints = n;
    return t;
}

// The §2 model at a small size: post-norm, unit-scale norm, bidirectional, biases, ReLU FFN.
ModelConfig nnModel(int64_t d, std::vector<int64_t> heads)
{
    ModelConfig m;
    m.dModel = d;
    m.heads = std::move(heads);
    m.norm = NormKind::UnitScale;
    m.placement = NormPlacement::PostNorm;
    m.finalNorm = false;
    m.causal = false;
    m.bias = true;
    m.ffnWidth = 4 * d;
    m.activation = Activation::Relu;
    m.zeroInitOutputs = false;
    return m;
}

RunConfig tinyNearestNeighbour(int64_t steps, uint64_t seed, int64_t heads = 1)
{
    RunConfig c;
    c.task = nnTask(8, 4);
    c.model = nnModel(8, {heads});
    PhaseConfig p;
    p.name = "train";
    p.objective = Objective::Regression;
    p.steps = steps;
    p.batchSize = 64;
    p.useScannedLr = true;
    p.optimizer.kind = OptimizerKind::AdamW;
    p.optimizer.beta1 = 0.9;
    p.optimizer.beta2 = 0.95;
    p.schedule.kind = ScheduleKind::WarmupCosine;
    p.schedule.warmupFraction = 0.05;
    c.phases = {p};
    c.lr = 1e-2;
    c.logEvery = 10;
    c.evalEvery = 100;
    c.initSeed = seed;
    c.dataSeed = seed;
    c.device = "cpu";
    return c;
}

torch::Tensor parameter(Transformer &model, const std::string &name)
{
    for (auto &p : model.parameters())
        if (p.name == name) return p.value;
    qFatal("no parameter %s", name.c_str());
    return {};
}

std::vector<int64_t> shapeOf(Transformer &model, const std::string &name)
{
    const auto s = parameter(model, name).sizes();
    return {s.begin(), s.end()};
}

} // namespace

class TestNearestNeighbour : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::manual_seed(0); }

    void labelIsTheFarthestPoint()
    {
        NearestNeighbourTask task(nnTask(5, 7), {3, 4}, torch::Device("cpu"));
        const auto points = task.trainingPoints(0, 20); // (2, 20, 7, 5)
        QCOMPARE(points.sizes().vec(), (std::vector<int64_t>{2, 20, 7, 5}));
        const auto targets = NearestNeighbourTask::farthestPointTargets(points);
        const auto p = points.to(torch::kFloat64).contiguous();
        const auto t = targets.to(torch::kFloat64).contiguous();
        const auto P = p.accessor<double, 4>();
        const auto T = t.accessor<double, 4>();
        for (int64_t r = 0; r < 2; ++r) {
            for (int64_t b = 0; b < 20; ++b) {
                for (int64_t i = 0; i < 7; ++i) {
                    int64_t farthest = -1;
                    double best = std::numeric_limits<double>::infinity();
                    for (int64_t j = 0; j < 7; ++j) {
                        if (j == i) continue;
                        double dot = 0;
                        for (int64_t k = 0; k < 5; ++k) dot += P[r][b][i][k] * P[r][b][j][k];
                        if (dot < best) best = dot, farthest = j;
                    }
                    QVERIFY(farthest != i);
                    for (int64_t k = 0; k < 5; ++k) QCOMPARE(T[r][b][i][k], P[r][b][farthest][k]);
                }
            }
        }
        // The points are on the unit sphere.
        QVERIFY((points.norm(2, -1) - 1).abs().max().item<double>() < 1e-5);
    }

    void predictingZeroScoresOne()
    {
        NearestNeighbourTask task(nnTask(16, 8), {0, 1, 2}, torch::Device("cpu"));
        const auto points = task.trainingPoints(5, 128);
        const auto loss = NearestNeighbourTask::squaredDistanceLoss(
            torch::zeros_like(points), NearestNeighbourTask::farthestPointTargets(points));
        QCOMPARE(loss.sizes().vec(), (std::vector<int64_t>{3}));
        for (int64_t r = 0; r < 3; ++r) QVERIFY(std::abs(loss[r].item<double>() - 1.0) < 1e-5);

        // Through the model: norm2's scalar s = 0 makes a post-norm model output exactly 0.
        Transformer model(nnModel(16, {2}), 0, 0, 3, torch::Device("cpu"));
        for (int64_t r = 0; r < 3; ++r) model.initializeRun(r, static_cast<uint64_t>(r));
        {
            torch::NoGradGuard noGrad;
            parameter(model, "layers.0.norm2.gain").zero_();
        }
        PhaseConfig phase;
        phase.objective = Objective::Regression;
        phase.batchSize = 64;
        const auto trainLoss = task.trainLoss(model, phase, torch::zeros({}, torch::kInt64));
        for (int64_t r = 0; r < 3; ++r) QVERIFY(std::abs(trainLoss[r].item<double>() - 1.0) < 1e-5);
        torch::NoGradGuard noGrad;
        const auto eval = task.evaluate(model);
        for (int64_t r = 0; r < 3; ++r) QVERIFY(std::abs(eval.loss[r].item<double>() - 1.0) < 1e-5);
    }

    // eval_batches: the held-out set's first batches of 256 point sets, the same ones whatever
    // the count (Inside the heads' statistics read the first 256); 4 batches are all 1024.
    void evalBatchesScoreTheFirstBatches()
    {
        Transformer model(nnModel(16, {2}), 0, 0, 2, torch::Device("cpu"));
        for (int64_t r = 0; r < 2; ++r) model.initializeRun(r, static_cast<uint64_t>(r + 3));
        torch::NoGradGuard noGrad;
        auto evaluate = [&](int64_t batches) {
            NearestNeighbourTask task(nnTask(16, 8), {0, 1}, torch::Device("cpu"), batches);
            return task.evaluate(model).loss;
        };
        const auto all = evaluate(0), one = evaluate(1), four = evaluate(4), many = evaluate(99);
        QVERIFY(torch::equal(all, four) && torch::equal(all, many));
        NearestNeighbourTask task(nnTask(16, 8), {0, 1}, torch::Device("cpu"));
        const auto first = task.statsInput(2).input; // (2, 256, N, d)
        const auto byHand = NearestNeighbourTask::squaredDistanceLoss(
            model.forward(first), NearestNeighbourTask::farthestPointTargets(first));
        QVERIFY2(
            torch::allclose(one, byHand, 1e-5, 1e-6),
            qPrintable(
                QString("%1 against %2").arg(one[0].item<double>()).arg(byHand[0].item<double>())));
        QVERIFY(!torch::allclose(one, all, 1e-4, 1e-5)); // the other 768 sets count
    }

    void dataIsSeededPerRun()
    {
        const torch::Device cpu("cpu");
        NearestNeighbourTask ensemble(nnTask(6, 5), {11, 12}, cpu);
        NearestNeighbourTask alone(nnTask(6, 5), {12}, cpu);
        const auto a = ensemble.trainingPoints(3, 8);
        const auto b = alone.trainingPoints(3, 8);
        // Run 1's data does not depend on who trains beside it, nor on what was drawn before.
        QVERIFY(torch::equal(a[1], b[0]));
        alone.trainingPoints(4, 8);
        QVERIFY(torch::equal(alone.trainingPoints(3, 8)[0], b[0]));
        // Different seeds, different steps: different points.
        QVERIFY(!torch::equal(a[0], a[1]));
        QVERIFY(!torch::equal(ensemble.trainingPoints(4, 8)[1], a[1]));
        // The step as a device tensor (the CUDA-graph path) draws the same batch.
        QVERIFY(torch::equal(ensemble.trainingPoints(torch::full({}, 3, torch::kInt64), 8), a));
        // The held-out set is the same whatever the data seeds.
        QVERIFY(torch::equal(ensemble.testPoints(), alone.testPoints()));
        QCOMPARE(ensemble.testPoints().size(0), NearestNeighbourTask::kTestSamples);
    }

    void pointsAreUniformOnTheSphere()
    {
        // On the 2-sphere (d = 3) each coordinate of a uniform point is uniform on [-1, 1]
        // (Archimedes): a check of the hash, the uniforms and Box–Muller together.
        const auto keys = NearestNeighbourTask::seedKeys({42, 43});
        const auto points = NearestNeighbourTask::unitPoints(
            keys, torch::full({}, 7, torch::kInt64), {20000, 4, 3});
        QCOMPARE(points.sizes().vec(), (std::vector<int64_t>{2, 20000, 4, 3}));
        const auto x = points.reshape({-1, 3}).to(torch::kFloat64); // 160,000 points
        const double n = static_cast<double>(x.size(0));
        for (int64_t k = 0; k < 3; ++k) {
            const auto c = x.select(1, k);
            QVERIFY2(std::abs(c.mean().item<double>()) < 0.01,
                     qPrintable(QString::number(c.mean().item<double>())));
            QVERIFY(std::abs(c.pow(2).mean().item<double>() - 1.0 / 3.0) < 0.01);
            const auto counts = torch::histc(c, 10, -1, 1);
            for (int64_t b = 0; b < 10; ++b)
                QVERIFY2(std::abs(counts[b].item<double>() / n - 0.1) < 0.005,
                         qPrintable(QStringLiteral("coordinate %1, bin %2: %3")
                                        .arg(k)
                                        .arg(b)
                                        .arg(counts[b].item<double>() / n)));
        }
        // Coordinates are uncorrelated.
        QVERIFY(std::abs((x.select(1, 0) * x.select(1, 1)).mean().item<double>()) < 0.01);
    }

    void cpuLoopPointsEqualAtenPasses()
    {
        // On the CPU the points come from one loop (core/model/Kernels.h), the CUDA kernel's
        // arithmetic; HEADLAB_FUSED_POINTS=0 keeps ATen's passes. The hash and the uniforms are
        // the same integers and floats; log, cos and the norm's sum may round differently in the
        // last bit. A wrong bit of the hash or a wrong constant would move whole points.
        const auto keys = NearestNeighbourTask::seedKeys({0, 1, 7, 123456789});
        for (int64_t step : {int64_t{0}, int64_t{1}, int64_t{99999}, int64_t{4294967301}}) {
            const auto s = torch::full({}, step, torch::kInt64);
            bool loop = false, aten = true;
            const auto a = NearestNeighbourTask::unitPoints(keys, s, {64, 8, 16}, &loop);
            qputenv("HEADLAB_FUSED_POINTS", "0");
            const auto b = NearestNeighbourTask::unitPoints(keys, s, {64, 8, 16}, &aten);
            qunsetenv("HEADLAB_FUSED_POINTS");
            QVERIFY(loop);
            QVERIFY(!aten);
            QCOMPARE(a.sizes().vec(), b.sizes().vec());
            const double gap = (a - b).abs().max().item<double>();
            QVERIFY2(
                gap <= 1e-6,
                qPrintable(QString("step %1: loop vs ATen, max |diff| %2").arg(step).arg(gap)));
        }
    }

    void rankIsIndependentOfHeadCount_data()
    {
        QTest::addColumn<qint64>("heads");
        QTest::addColumn<qint64>("headDim"); // 0: d / heads
        QTest::addColumn<qint64>("rank");
        QTest::newRow("4 heads, rank d/4") << qint64(4) << qint64(0) << qint64(4);
        QTest::newRow("4 heads of rank 16 (full)") << qint64(4) << qint64(16) << qint64(16);
        QTest::newRow("1 head of rank 2") << qint64(1) << qint64(2) << qint64(2);
        QTest::newRow("16 heads of rank 1") << qint64(16) << qint64(0) << qint64(1);
    }
    void rankIsIndependentOfHeadCount()
    {
        QFETCH(qint64, heads);
        QFETCH(qint64, headDim);
        QFETCH(qint64, rank);
        const int64_t d = 16, R = 2, w = 3;
        ModelConfig m = nnModel(d, {heads, heads});
        m.headDim = headDim;
        m.widthMultiplier = w;
        RunConfig c = tinyNearestNeighbour(1, 0);
        c.task = nnTask(d, 8);
        c.model = m;
        QVERIFY2(validate(c).empty(), validate(c).c_str());
        QCOMPARE(m.headDimOfLayer(1), rank);
        Transformer model(m, 0, 0, R, torch::Device("cpu"));
        for (int64_t r = 0; r < R; ++r) model.initializeRun(r, static_cast<uint64_t>(r + 1));
        const int64_t inner = w * heads * rank; // w modules of H heads of rank hd
        for (const char *proj : {"wq", "wk", "wv"})
            QCOMPARE(shapeOf(model, std::string("layers.1.") + proj),
                     (std::vector<int64_t>{R, d, inner}));
        QCOMPARE(shapeOf(model, "layers.1.bq"), (std::vector<int64_t>{R, inner}));
        QCOMPARE(shapeOf(model, "layers.0.wo"), (std::vector<int64_t>{R, inner, d}));
        QCOMPARE(shapeOf(model, "layers.0.bo"), (std::vector<int64_t>{R, d}));
        QCOMPARE(shapeOf(model, "layers.0.norm1.gain"),
                 (std::vector<int64_t>{R, 1})); // one learned scalar
        QCOMPARE(shapeOf(model, "layers.0.w1"), (std::vector<int64_t>{R, d, 4 * d}));
        for (const auto &p : model.parameters()) {
            QVERIFY2(p.name != "embedding" && p.name != "unembedding" && p.name != "positions",
                     p.name.c_str());
        }
        torch::NoGradGuard noGrad;
        const auto x = torch::randn({R, 5, 8, d});
        const auto y = model.forward(x);
        QCOMPARE(y.sizes().vec(), (std::vector<int64_t>{R, 5, 8, d}));
        // Post-norm with a unit-scale norm last: every output has norm s = 1 at the start.
        QVERIFY((y.norm(2, -1) - 1).abs().max().item<double>() < 1e-5);
    }

    void widthMultiplierAveragesModules()
    {
        // A pre-norm layer with its MLP switched off computes x + Attn(Norm(x)), so the model's
        // output minus its input is the attention output: with w = 2 it must be the mean of two
        // w = 1 models' whose attention weights are the two halves.
        const int64_t d = 8, H = 2, hd = 3, R = 1;
        ModelConfig one = nnModel(d, {H});
        one.placement = NormPlacement::PreNorm;
        one.headDim = hd;
        ModelConfig two = one;
        two.widthMultiplier = 2;
        const torch::Device cpu("cpu");
        Transformer a(one, 0, 0, R, cpu), b(one, 0, 0, R, cpu), w2(two, 0, 0, R, cpu);
        a.initializeRun(0, 1);
        b.initializeRun(0, 2);
        w2.initializeRun(0, 3);
        torch::NoGradGuard noGrad;
        const int64_t half = H * hd;
        for (auto *model : {&a, &b}) {
            parameter(*model, "layers.0.w2").zero_();
            parameter(*model, "layers.0.b2").zero_();
        }
        for (const char *n : {"wq", "wk", "wv"}) {
            const auto full = parameter(w2, std::string("layers.0.") + n); // (R, d, 2·H·hd)
            full.narrow(2, 0, half).copy_(parameter(a, std::string("layers.0.") + n));
            full.narrow(2, half, half).copy_(parameter(b, std::string("layers.0.") + n));
        }
        for (const char *n : {"bq", "bk", "bv"}) {
            const auto full = parameter(w2, std::string("layers.0.") + n); // (R, 2·H·hd)
            full.narrow(1, 0, half).copy_(parameter(a, std::string("layers.0.") + n));
            full.narrow(1, half, half).copy_(parameter(b, std::string("layers.0.") + n));
        }
        const auto wo = parameter(w2, "layers.0.wo"); // (R, 2·H·hd, d): the modules' projections
        wo.narrow(1, 0, half).copy_(parameter(a, "layers.0.wo"));
        wo.narrow(1, half, half).copy_(parameter(b, "layers.0.wo"));
        // One output bias for the layer, added after the average: the modules' biases' mean.
        parameter(w2, "layers.0.bo")
            .copy_((parameter(a, "layers.0.bo") + parameter(b, "layers.0.bo")) / 2);
        parameter(w2, "layers.0.w2").zero_();
        parameter(w2, "layers.0.b2").zero_();

        const auto x = torch::randn({R, 4, 6, d});
        const auto meanOfModules = (a.forward(x) + b.forward(x)) / 2;
        const auto averaged = w2.forward(x);
        QVERIFY2(
            torch::allclose(averaged, meanOfModules, 1e-5, 1e-6),
            qPrintable(QString::number((averaged - meanOfModules).abs().max().item<double>())));
        // And it is not the sum: the check can fail.
        QVERIFY(
            !torch::allclose(averaged - x, (a.forward(x) - x) + (b.forward(x) - x), 1e-3, 1e-4));
    }

    void warmupCosineAtThePapersSteps()
    {
        ScheduleConfig s;
        s.kind = ScheduleKind::WarmupCosine;
        s.warmupFraction = 0.05;
        const int64_t steps = 100000; // warm-up over 5,000 steps, cosine over 95,000
        QCOMPARE(scheduleMultiplier(s, 0, steps), 0.0);
        QCOMPARE(scheduleMultiplier(s, 1000, steps), 0.2);
        QCOMPARE(scheduleMultiplier(s, 2500, steps), 0.5);
        QCOMPARE(scheduleMultiplier(s, 5000, steps), 1.0);
        QVERIFY(std::abs(scheduleMultiplier(s, 5000 + 95000 / 4, steps) -
                         0.5 * (1 + std::cos(M_PI / 4))) < 1e-12);
        QVERIFY(std::abs(scheduleMultiplier(s, 52500, steps) - 0.5) < 1e-12);
        QVERIFY(std::abs(scheduleMultiplier(s, steps, steps)) < 1e-12);
    }

    void scheduleSteppedPerEpoch()
    {
        // The reference code's scheduler steps once per 100-step epoch (EXPERIMENTS.md §2): at
        // 20,000 steps, 200 epochs, warm-up over 10 of them from lr 0.
        ScheduleConfig s;
        s.kind = ScheduleKind::WarmupCosine;
        s.warmupFraction = 0.05;
        s.stepEvery = 100;
        const int64_t steps = 20000;
        for (int64_t t : {0, 1, 50, 99})
            QCOMPARE(scheduleMultiplier(s, t, steps), 0.0); // first epoch: lr 0
        for (int64_t t : {100, 150, 199}) QCOMPARE(scheduleMultiplier(s, t, steps), 0.1);
        QCOMPARE(scheduleMultiplier(s, 999, steps), 0.9);
        QCOMPARE(scheduleMultiplier(s, 1000, steps), 1.0);
        QCOMPARE(scheduleMultiplier(s, 1099, steps), 1.0);
        QVERIFY(std::abs(scheduleMultiplier(s, 10500, steps) -
                         0.5 * (1 + std::cos(M_PI * 95 / 190))) < 1e-12);
        QVERIFY(scheduleMultiplier(s, steps - 1, steps) > 0); // the last epoch: cos at 189/190
        // step_every 1 is the per-step schedule; an epoch that does not divide the phase counts
        // its last partial epoch.
        ScheduleConfig perStep = s;
        perStep.stepEvery = 1;
        ScheduleConfig plain;
        plain.kind = ScheduleKind::WarmupCosine;
        for (int64_t t : {0, 7, 500, 777, 19999})
            QCOMPARE(scheduleMultiplier(perStep, t, steps), scheduleMultiplier(plain, t, steps));
        QCOMPARE(scheduleMultiplier(s, 250, 450), scheduleMultiplier(plain, 2, 5));
        // The key round-trips, and is not written at its default (run file names stay as they were).
        RunConfig c = loadPreset("nn-classroom").base;
        const std::string text = yaml::canonicalYaml(c);
        QVERIFY2(text.find("step_every: 100") != std::string::npos, text.c_str());
        QVERIFY2(text.find("init: pytorch") != std::string::npos, text.c_str());
        c.phases[0].schedule.stepEvery = 1;
        c.model.init = InitKind::Uniform;
        const std::string plainText = yaml::canonicalYaml(c);
        QVERIFY2(plainText.find("step_every") == std::string::npos, plainText.c_str());
        QVERIFY2(plainText.find("init:") == std::string::npos, plainText.c_str());
    }

    void pytorchInitialisation()
    {
        // init: pytorch gives nn.MultiheadAttention's and nn.Linear's defaults, per module.
        const int64_t d = 64, F = 256, w = 4;
        ModelConfig m;
        m.dModel = d;
        m.heads = {2, 2};
        m.ffnWidth = F;
        m.bias = true;
        m.zeroInitOutputs = false;
        m.norm = NormKind::UnitScale;
        m.placement = NormPlacement::PostNorm;
        m.finalNorm = false;
        m.causal = false;
        m.widthMultiplier = w;
        m.init = InitKind::PyTorch;
        Transformer model(m, 0, 0, 1, torch::Device("cpu"));
        model.initializeRun(0, 3);
        auto range = [&](const std::string &n) {
            return parameter(model, n).abs().max().item<double>();
        };
        const double xavier = std::sqrt(6.0 / (d + 3.0 * d)); // packed (3d, d) in-projection
        for (const char *n : {"wq", "wk", "wv"}) {
            const double top = range(std::string("layers.1.") + n);
            QVERIFY2(top <= xavier && top > 0.97 * xavier, qPrintable(QString::number(top)));
        }
        for (const char *n : {"bq", "bk", "bv", "bo"})
            QCOMPARE(range(std::string("layers.0.") + n), 0.0);
        const double wo = range("layers.0.wo"); // each module's own d × d projection: U(±1/sqrt(d))
        QVERIFY2(wo <= 1 / std::sqrt(double(d)) && wo > 0.97 / std::sqrt(double(d)),
                 qPrintable(QString::number(wo)));
        const double b2 = range("layers.0.b2"); // nn.Linear(F, d)'s bias: U(±1/sqrt(F))
        QVERIFY2(b2 <= 1 / std::sqrt(double(F)) && b2 > 0.8 / std::sqrt(double(F)),
                 qPrintable(QString::number(b2)));
        QCOMPARE(range("layers.0.norm1.gain"), 1.0);
        // HeadLab's own initialisation differs where the reference's does: the check can fail.
        m.init = InitKind::Uniform;
        Transformer own(m, 0, 0, 1, torch::Device("cpu"));
        own.initializeRun(0, 3);
        QVERIFY(parameter(own, "layers.0.bq").abs().max().item<double>() > 0);

        // The unit-scale norm has no epsilon, as the reference's: a zero vector gives NaN (a
        // diverged run), not a silent zero.
        torch::NoGradGuard noGrad;
        const auto out = model.forward(torch::zeros({1, 2, 4, d}));
        QVERIFY(torch::isnan(out).any().item<bool>());
    }

    void fusedProjectionsMatchSeparateOnes()
    {
        // The GPU's Q/K/V-as-one-product and split weight-gradient paths, forced on the CPU,
        // against the CPU's own (tests/cuda compares them on the GPU).
        RunConfig c = loadPreset("nn-classroom").base;
        c.model.heads = {4, 4};
        c.phases[0].steps = 200;
        c.phases[0].batchSize = 64; // 512 rows: the weight gradients split in two
        c.logEvery = 1;
        c.evalEvery = 100;
        c.device = "cpu";
        const RunResult plain = trainRun(c);
        ::setenv("HEADLAB_FUSED_QKV", "1", 1);
        ::setenv("HEADLAB_SPLIT_K", "1", 1);
        const RunResult fused = trainRun(c);
        ::unsetenv("HEADLAB_FUSED_QKV");
        ::unsetenv("HEADLAB_SPLIT_K");
        QCOMPARE(fused.train.size(), plain.train.size());
        double worst = 0;
        for (size_t k = 0; k < plain.train.size(); ++k)
            worst = std::max(worst, std::abs(fused.train[k].value - plain.train[k].value));
        QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
        QCOMPARE(fused.provenance.at("env.HEADLAB_FUSED_QKV"),
                 std::string("1")); // the paths were asked for
        QVERIFY(plain.train.back().value < 0.9 * plain.train.front().value); // and it trained
    }

    void epochMeansFromLoggedWindows()
    {
        // 250 steps logged every 10 steps with loss = the window's end step: two full epochs.
        Curve train;
        for (int64_t s = 10; s <= 250; s += 10) train.push_back({s, static_cast<double>(s)});
        Curve e = epochMeans(train);
        QCOMPARE(e.size(), size_t(2));
        QCOMPARE(e[0].step, int64_t(100));
        QCOMPARE(e[0].value, 55.0); // mean of 10, 20, ..., 100
        QCOMPARE(e[1].step, int64_t(200));
        QCOMPARE(e[1].value, 155.0);
        // Windows of 30 steps straddle epoch boundaries: split in proportion to their steps.
        Curve coarse = {{30, 1.0},  {60, 1.0},  {90, 1.0}, {120, 4.0},
                        {150, 4.0}, {180, 4.0}, {210, 4.0}};
        e = epochMeans(coarse);
        QCOMPARE(e.size(), size_t(2));
        QCOMPARE(e[0].value, (90 * 1.0 + 10 * 4.0) / 100);
        QCOMPARE(e[1].value, 4.0);
        // The final window of a phase may be short.
        e = epochMeans({{40, 2.0}, {80, 2.0}, {100, 5.0}});
        QCOMPARE(e.size(), size_t(1));
        QCOMPARE(e[0].value, (80 * 2.0 + 20 * 5.0) / 100);

        RunConfig c = tinyNearestNeighbour(1, 0);
        RunResult r;
        r.train = train;
        addEpochMetrics(r);
        QCOMPARE(r.metrics.at("best_epoch_mean"), 55.0);
        QCOMPARE(r.extra.at("epoch_mean").size(), size_t(2));
        RunResult shortRun;
        shortRun.train = {{50, 1.0}};
        addEpochMetrics(shortRun); // no complete epoch: no metric
        QVERIFY(!shortRun.metrics.count("best_epoch_mean"));
        // The trainer adds them for tasks whose spec lists the curve: nearest neighbour only.
        auto lists = [](const std::string &task) {
            const auto &curves = taskSpec(task).extraCurves;
            return std::find(curves.begin(), curves.end(), "epoch_mean") != curves.end();
        };
        QVERIFY(lists(c.task.kind));
        QVERIFY(!lists("addition") && !lists("text"));
    }

    void tinyRunLearns()
    {
        const RunResult r = trainRun(tinyNearestNeighbour(400, 1));
        QCOMPARE(name(r.status), name(RunStatus::Done));
        QCOMPARE(r.stepsDone, int64_t(400));
        QVERIFY(!r.train.empty() && !r.test.empty());
        QVERIFY(r.train.front().value > 0.9); // about 1 + ||s·u||² at the start
        QVERIFY2(r.metrics.at("best_epoch_mean") < 0.9,
                 qPrintable(QString::number(r.metrics.at("best_epoch_mean"))));
        QVERIFY2(r.test.back().value < 0.9, qPrintable(QString::number(r.test.back().value)));
        QVERIFY(r.test.back().value < r.test.front().value - 0.2);
        QCOMPARE(r.extra.at("epoch_mean").size(), size_t(4));
        QVERIFY(r.extra.count("test_accuracy"));
        QVERIFY(r.extra.at("test_accuracy").back().value >
                r.extra.at("test_accuracy").front().value);
        // Its verdict: the chance plateau is the zero predictor's 1, and this run left it.
        QCOMPARE(taskSpec("nearest_neighbour").chancePlateau(TaskConfig{}), 1.0);
        QCOMPARE(r.metrics.at("left_chance_plateau"), r.test.back().value < 5.0 / 6.0 ? 1.0 : 0.0);
        QCOMPARE(r.metrics.at("learned"), 1.0);
    }

    // The guard the trainer holds on the CPU (core/train/TrainingLoop.h): while alive, a denormal
    // result is zero on this thread, in a plain product and in an ATen pass run on it; after, as
    // before.
    void flushDenormalsGuardFlushesAndRestores()
    {
        const int threads = torch::get_num_threads();
        torch::set_num_threads(1); // the passes on this thread, as a CPU worker's plan runs them
        const unsigned int before = _mm_getcsr() & ~0x3Fu; // the modes, not the status flags
        volatile float tiny = 1e-30f;
        {
            const headlab::detail::FlushDenormals guard(true);
            QVERIFY(guard.active());
            QCOMPARE(float(tiny * 1e-10f), 0.0f);
            const auto t = torch::full({1 << 16}, 1e-30f) * 1e-10f;
            QCOMPARE(t.abs().max().item<float>(), 0.0f);
        }
        QCOMPARE(_mm_getcsr() & ~0x3Fu, before);
        QVERIFY(float(tiny * 1e-10f) > 0.0f);
        QVERIFY((torch::full({1 << 16}, 1e-30f) * 1e-10f).min().item<float>() > 0.0f);
        const headlab::detail::FlushDenormals off(false);
        QVERIFY(!off.active());
        QCOMPARE(_mm_getcsr() & ~0x3Fu, before);
        torch::set_num_threads(threads);
    }

    // A run whose output collapsed to 0 (norm2's gain held at 0, as the rank paper's 3-layer
    // reference did) sits at the chance plateau, and its verdict says not learned.
    void aRunStuckAtZeroIsNotLearned()
    {
        RunConfig c = tinyNearestNeighbour(100, 1);
        c.lr = 10.0; // AdamW at 10: the first steps throw the weights far off
        const RunResult r = trainRun(c);
        QVERIFY(isFinished(r.status));
        if (r.status == RunStatus::Done) {
            QVERIFY2(r.test.back().value > 5.0 / 6.0,
                     qPrintable(QString::number(r.test.back().value)));
            QCOMPARE(r.metrics.at("left_chance_plateau"), 0.0);
        } else {
            QCOMPARE(name(r.status), name(RunStatus::Diverged));
            QCOMPARE(r.metrics.at("left_chance_plateau"), 0.0);
            QCOMPARE(r.metrics.at("learned"), 0.0);
        }
    }

    void ensembleMatchesRunsTrainedAlone()
    {
        // Different seeds (so different data), learning rates and head counts at one width: the
        // core trains runs that differ only in head count as one ensemble.
        std::vector<RunConfig> configs = {tinyNearestNeighbour(30, 1), tinyNearestNeighbour(30, 2),
                                          tinyNearestNeighbour(30, 3, 4)};
        configs[1].lr = 3e-3;
        QCOMPARE(QString::fromStdString(ensembleKey(configs[2])),
                 QString::fromStdString(ensembleKey(configs[0])));
        const auto together = trainEnsemble(configs);
        for (size_t i = 0; i < configs.size(); ++i) {
            const RunResult alone = trainRun(configs[i]);
            QCOMPARE(together[i].train.size(), alone.train.size());
            for (size_t k = 0; k < alone.train.size(); ++k)
                QVERIFY2(std::abs(together[i].train[k].value - alone.train[k].value) < 2e-5,
                         qPrintable(QStringLiteral("run %1 point %2: %3 vs %4")
                                        .arg(i)
                                        .arg(k)
                                        .arg(together[i].train[k].value)
                                        .arg(alone.train[k].value)));
        }
        QVERIFY(std::abs(together[0].train.front().value - together[1].train.front().value) > 1e-4);
    }

    void presetsFollowThePaper()
    {
        // A preset that does not load fails here with its file, line and key.
        auto load = [](const char *preset) {
            try {
                Session s = loadPreset(preset);
                expandSweep(s);
                return s;
            } catch (const SessionError &e) {
                QTest::qFail(e.what(), __FILE__, __LINE__);
                return Session{};
            }
        };
        const Session full = load("nn-fig1-full");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(full.runs.size(), size_t(7 * 3 * 3));
        QVERIFY(full.skipped.empty());
        std::set<int64_t> ranks, layers, widths;
        for (const auto &run : full.runs) {
            const RunConfig &c = run.config;
            QVERIFY2(validate(c).empty(), validate(c).c_str());
            QCOMPARE(name(c.task.kind), name("nearest_neighbour"));
            QCOMPARE(c.task.pointDim, int64_t(64));
            QCOMPARE(c.task.numPoints, int64_t(16));
            QCOMPARE(name(c.model.norm), name(NormKind::UnitScale));
            QCOMPARE(name(c.model.placement), name(NormPlacement::PostNorm));
            QCOMPARE(name(c.model.activation), name(Activation::Relu));
            QVERIFY(!c.model.causal && c.model.bias && !c.model.finalNorm);
            QCOMPARE(c.model.ffn(), int64_t(2048));
            QCOMPARE(c.phases.size(), size_t(1));
            const PhaseConfig &p = c.phases[0];
            QCOMPARE(p.steps, int64_t(100000));
            QCOMPARE(p.batchSize, int64_t(256));
            QCOMPARE(name(p.optimizer.kind), name(OptimizerKind::AdamW));
            QCOMPARE(p.optimizer.beta2, 0.95);
            QCOMPARE(p.optimizer.weightDecay, 0.0);
            QCOMPARE(name(p.schedule.kind), name(ScheduleKind::WarmupCosine));
            QCOMPARE(p.schedule.warmupFraction, 0.05);
            QCOMPARE(p.schedule.stepEvery,
                     kStepsPerEpoch); // stepped per epoch, as the reference code
            QCOMPARE(name(c.model.init), name(InitKind::PyTorch));
            QCOMPARE(c.lr, 0.01);
            QCOMPARE(kStepsPerEpoch % c.logEvery, int64_t(0)); // epoch means are exact
            ranks.insert(c.model.headDimOfLayer(0));
            layers.insert(c.model.layers());
            widths.insert(c.model.widthMultiplier);
        }
        QCOMPARE(ranks, (std::set<int64_t>{1, 2, 4, 8, 16, 32, 64}));
        QCOMPARE(layers, (std::set<int64_t>{1, 3, 5}));
        QCOMPARE(widths, (std::set<int64_t>{1, 8, 64}));

        for (const char *preset : {"nn-reduced", "nn-classroom"}) {
            const Session s = load(preset);
            if (QTest::currentTestFailed()) return;
            QVERIFY2(!s.runs.empty(), preset);
            QVERIFY2(s.skipped.empty(), preset);
            std::set<int64_t> presetRanks;
            for (const auto &run : s.runs) {
                QVERIFY2(validate(run.config).empty(), validate(run.config).c_str());
                QCOMPARE(name(run.config.task.kind), name("nearest_neighbour"));
                QCOMPARE(kStepsPerEpoch % run.config.logEvery, int64_t(0));
                presetRanks.insert(run.config.model.headDimOfLayer(0));
            }
            QVERIFY2(presetRanks.size() >= 3, preset); // rank is what these presets are about
        }
    }
};

QTEST_GUILESS_MAIN(TestNearestNeighbour)
#include "test_nn.moc"
