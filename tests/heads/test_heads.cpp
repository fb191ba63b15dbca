// test_heads.cpp — attention maps, head statistics, ablation and pruning, and headlab-cli inspect.
#include "core/metrics/Metrics.h"
#include "core/model/HeadRoles.h"
#include "core/model/Transformer.h"
#include "core/schema/TaskSpec.h"
#include "core/session/Presets.h"
#include "core/tasks/Task.h"
#include "core/train/Checkpoint.h"
#include "core/train/HeadInspector.h"
#include "core/train/Trainer.h"
#include "tests/TinyRuns.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>

using namespace headlab;

namespace {

// A run that has learned something: 24 wide, heads {2, 3}, 400 steps at 3e-3.
RunConfig learningRun(uint64_t seed = 1)
{
    RunConfig c = testing::tinyAdditionRun(24, {2, 3}, 400, 3e-3);
    c.evalEvery = 100;
    c.initSeed = seed;
    c.dataSeed = seed;
    return c;
}

std::string trainWithCheckpoint(const std::vector<RunConfig> &configs, const QTemporaryDir &tmp,
                                size_t member, std::vector<RunResult> *results = nullptr)
{
    TrainerControl control;
    control.threads = 1;
    for (size_t i = 0; i < configs.size(); ++i)
        control.checkpointDirs.push_back(tmp.path().toStdString() + "/m" + std::to_string(i));
    auto r = trainMembers(configs, control);
    if (results) *results = r;
    return control.checkpointDirs[member] + "/" + checkpointFileName(configs[member].totalSteps());
}

double maxAbsDiff(const torch::Tensor &a, const torch::Tensor &b)
{
    return (a - b).abs().max().item<double>();
}

// A trained run's checkpoint loaded twice into one model (copies 0 and 1), with its task: an
// ablation in one copy compared with an edit of the weights in the other, in one evaluation.
struct TwoCopies {
    QTemporaryDir tmp;
    RunConfig config = learningRun();
    LoadedCheckpoint checkpoint = loadCheckpoint(trainWithCheckpoint({config}, tmp, 0));
    std::unique_ptr<Task> task =
        makeTask(config, {config.dataSeed, config.dataSeed}, torch::Device("cpu"));
    Transformer model{config.model, task->vocabSize(), task->maxPositions(), 2,
                      torch::Device("cpu")};
    TwoCopies()
    {
        restoreWeights(checkpoint, model, 0);
        restoreWeights(checkpoint, model, 1);
    }
    torch::Tensor parameter(const std::string &name)
    {
        for (auto &p : model.parameters())
            if (p.name == name) return p.value;
        throw std::invalid_argument(name);
    }
    TaskEvaluation evaluate(const HeadProbe &intervention)
    {
        torch::NoGradGuard noGrad;
        model.setIntervention(&intervention);
        TaskEvaluation e = task->evaluate(model);
        model.setIntervention(nullptr);
        return e;
    }
};

} // namespace

class TestHeads : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void roleScoresOfHeadsBuiltForTheirRole();
    void inspectAtACheckpointGivesTheLoggedStatistics();
    void everyTaskSaysWhatItsInputIs();
    void attentionRowsSumToOneAndTheMaskGivesExactZeros();
    void thePredictionIsTheModelsOwnAnswer();
    void everyAttentionPathGivesTheSameOutput();
    void aKernelThatRefusesFallsBackAndSaysSo();
    void aHeadWithAZeroOutputProjectionCostsNothing();
    void everyHeadRemovedIsTheModelWithoutAttention();
    void importanceInAnEnsembleEqualsTheRunAlone();
    void pruningRemovesEveryHeadOnce();
    void everyOrderKeepsAHeadInEveryLayer();
    void headsRemovableCountAlongACurveAndOverSeparateModels();
    void aHeadWhoseCopyCarriesItsWorkIsPrunedFirst();
    void randomOrdersDifferBySeedAndRepeatWithIt();
    void theOptimalConstantCostsNoMoreThanTheMean();
    void fineTuningACurveInOneEnsembleEqualsEachAlone();
    void theControlWithEveryHeadIsTheRunItself();
    void l0GatesCloseMoreHeadsAsLambdaGrows();
    void headStatisticsAreLoggedForEveryRun();
    void anUpdateAlignedWithEveryInputScoresRootFanIn();
    void liveMapsArriveAtEachEvaluation();
    void inspectPrintsWritesAndRefusesBadInput();
    void everyTaskShowsItsHeadsOnItsInput_data();
    void everyTaskShowsItsHeadsOnItsInput();
};

void TestHeads::attentionRowsSumToOneAndTheMaskGivesExactZeros()
{
    QTemporaryDir tmp;
    const HeadInspector inspector(trainWithCheckpoint({learningRun()}, tmp, 0));
    const AttentionMaps maps = inspector.attention("987 + 65, digit 2");
    QCOMPARE(maps.heads, (std::vector<int64_t>{2, 3}));
    QCOMPARE(maps.queries, int64_t(18));
    QCOMPARE(maps.keys, int64_t(18));
    QCOMPARE(maps.focusRow, int64_t(17));
    QCOMPARE(maps.labels[4], std::string("9"));
    QCOMPARE(maps.labels[13], std::string("2"));
    QVERIFY2(maps.description.find("answer 0") != std::string::npos,
             maps.description.c_str()); // 987 + 65 = 1052
    for (size_t l = 0; l < maps.weights.size(); ++l)
        for (int64_t h = 0; h < maps.heads[l]; ++h)
            for (int64_t q = 0; q < maps.queries; ++q) {
                double sum = 0;
                for (int64_t k = 0; k < maps.keys; ++k) {
                    const float w = maps.at(l, h, q, k);
                    if (k > q) QCOMPARE(w, 0.0f); // causal: exactly zero, not small
                    QVERIFY(w >= 0.0f);
                    sum += w;
                }
                QVERIFY2(std::abs(sum - 1.0) < 1e-5, qPrintable(QString::number(sum, 'g', 10)));
            }
    // Bad input says what is expected.
    try {
        inspector.attention("12 plus 3");
        QFAIL("accepted a bad input");
    } catch (const std::invalid_argument &e) {
        QVERIFY2(QString(e.what()).contains("expected two numbers"), e.what());
    }
}

void TestHeads::thePredictionIsTheModelsOwnAnswer()
{
    // The prediction beside the maps is the checkpoint's model's most probable token at the
    // answer position: checked against the model rebuilt from the checkpoint and run without
    // the probe.
    QTemporaryDir tmp;
    const RunConfig config = learningRun();
    const std::string path = trainWithCheckpoint({config}, tmp, 0);
    const HeadInspector inspector(path);
    const AttentionMaps maps = inspector.attention("987 + 65, digit 2");
    QVERIFY(maps.probability >= 1.0 / 22 && maps.probability <= 1.0);
    const LoadedCheckpoint checkpoint = loadCheckpoint(path);
    const std::unique_ptr<Task> task = makeTask(config, {config.dataSeed}, torch::Device("cpu"));
    Transformer model{config.model, task->vocabSize(), task->maxPositions(), 1,
                      torch::Device("cpu")};
    restoreWeights(checkpoint, model, 0);
    const ProbeInput input = task->probeInput("987 + 65, digit 2", 1);
    torch::NoGradGuard noGrad;
    const torch::Tensor logits = model.forward(input.input, false); // (R, B, T, V)
    const torch::Tensor p = torch::softmax(logits[0][0][17].to(torch::kFloat64), 0);
    const int64_t best = p.argmax().item<int64_t>();
    QCOMPARE(maps.prediction, input.vocabulary[size_t(best)]);
    QVERIFY(std::abs(maps.probability - p[best].item<double>()) < 1e-6);
    QCOMPARE(int64_t(input.vocabulary.size()), task->vocabSize());
    QCOMPARE(input.vocabulary[12], std::string("0")); // digits follow the 12 special tokens
}

void TestHeads::everyAttentionPathGivesTheSameOutput()
{
    // Runs with 1 and 2 heads in one ensemble: micro-heads by default, grouped fused kernels with
    // HEADLAB_ATTENTION=sdpa, and the probe's explicit softmax: the same outputs.
    torch::manual_seed(0);
    ModelConfig m;
    m.dModel = 8;
    m.heads = {1, 1};
    m.zeroInitOutputs = false;
    const std::vector<std::vector<int64_t>> runHeads = {{1, 2}, {2, 1}};
    const auto tokens = torch::randint(0, 22, {5, 18}, torch::kInt64);
    auto build = [&](const char *attention) {
        if (attention)
            ::setenv("HEADLAB_ATTENTION", attention, 1);
        else
            ::unsetenv("HEADLAB_ATTENTION");
        auto model = std::make_unique<Transformer>(m, 22, 19, 2, torch::Device("cpu"), runHeads);
        model->initializeRun(0, 3);
        model->initializeRun(1, 4);
        ::unsetenv("HEADLAB_ATTENTION");
        return model;
    };
    torch::NoGradGuard noGrad;
    const auto micro = build(nullptr), fused = build("sdpa");
    QCOMPARE(QString::fromStdString(micro->attentionPath()), QStringLiteral("micro-heads"));
    QCOMPARE(QString::fromStdString(fused->attentionPath()), QStringLiteral("sdpa"));
    const auto a = micro->forward(tokens), b = fused->forward(tokens);
    HeadProbe probe;
    probe.captureWeights = true;
    const auto c = micro->forward(tokens, false, probe);
    QVERIFY2(maxAbsDiff(a, b) < 1e-5, qPrintable(QString::number(maxAbsDiff(a, b))));
    QVERIFY2(maxAbsDiff(a, c) < 1e-5, qPrintable(QString::number(maxAbsDiff(a, c))));
    // Run 0 has 1 head in layer 0: its second column is NaN, not a head.
    QCOMPARE(probe.weights[0].size(2), int64_t(2));
    QVERIFY(torch::isnan(probe.weights[0][0][0][1]).all().item<bool>());
    QVERIFY(!torch::isnan(probe.weights[0][1][0][1]).any().item<bool>());
}

// The attention plan (core/attention/AttentionPlan.h) may take the micro-heads kernel for a layer;
// where a launch refuses the layout (here: the CPU, which the kernel never takes, as a plan for a
// GPU would meet a layout it cannot read), the layer falls back to the explicit products with the
// same output, training goes on, and provenance names the fallback. Before the plan, the refusal
// ended training ("the micro-heads' attention kernel failed to launch").
void TestHeads::aKernelThatRefusesFallsBackAndSaysSo()
{
    torch::manual_seed(0);
    ModelConfig m;
    m.dModel = 8;
    m.heads = {2};
    m.zeroInitOutputs = false;
    const std::vector<std::vector<int64_t>> runHeads = {{2}, {2}};
    const AttentionDevice gpu{true, true, [](int64_t, int64_t, int64_t) { return true; }};
    AttentionPlan kernel = planAttention(m, runHeads, 18, gpu, false);
    QCOMPARE(kernel.layers.size(), size_t(1));
    QVERIFY(kernel.layers[0].path == AttentionPath::MicroHeads && kernel.layers[0].kernel);
    AttentionPlan products = kernel;
    products.layers[0].kernel = false;
    auto build = [&](const AttentionPlan &plan) {
        auto model = std::make_unique<Transformer>(m, 22, 19, 2, torch::Device("cpu"), runHeads,
                                                   StabilizerConfig{}, &plan);
        model->initializeRun(0, 3);
        model->initializeRun(1, 4);
        return model;
    };
    const auto refused = build(kernel), explicitProducts = build(products);
    QCOMPARE(QString::fromStdString(explicitProducts->attentionPath()),
             QStringLiteral("micro-heads"));
    const auto tokens = torch::randint(0, 22, {5, 18}, torch::kInt64);
    torch::Tensor a;
    try {
        a = refused->forward(tokens);
    } catch (const std::exception &e) {
        QFAIL(qPrintable(QStringLiteral("the refusal was not caught: ") + e.what()));
    }
    const auto b = explicitProducts->forward(tokens);
    QVERIFY2(maxAbsDiff(a, b) == 0, qPrintable(QString::number(maxAbsDiff(a, b))));
    const QString path = QString::fromStdString(refused->attentionPath());
    QVERIFY2(path.startsWith(QStringLiteral("micro-heads (kernel refused: ")), qPrintable(path));
    QVERIFY(!refused->fusedAttention());
    // The gradients flow through the fallback as through the products.
    refused->forward(tokens).sum().backward();
    explicitProducts->forward(tokens).sum().backward();
    QVERIFY(torch::equal(refused->flatGradients(), explicitProducts->flatGradients()));
}

void TestHeads::aHeadWithAZeroOutputProjectionCostsNothing()
{
    TwoCopies two;
    torch::NoGradGuard noGrad;
    // Layer 1, head 2 (of 3, width 8): its rows of W_O are zero in both copies.
    two.parameter("layers.1.wo").narrow(1, 16, 8).zero_();
    HeadProbe off; // removed in copy 1 only
    off.keep = {torch::ones({2, 2}), torch::tensor({{1.f, 1.f, 1.f}, {1.f, 1.f, 0.f}})};
    const auto loss = two.evaluate(off).loss;
    QCOMPARE(loss[0].item<double>(), loss[1].item<double>());
}

void TestHeads::everyHeadRemovedIsTheModelWithoutAttention()
{
    TwoCopies two;
    {
        torch::NoGradGuard
            noGrad; // copy 1: no attention at all (every W_O zero; the model has no biases)
        two.parameter("layers.0.wo")[1].zero_();
        two.parameter("layers.1.wo")[1].zero_();
    }
    HeadProbe off; // copy 0: every head removed
    off.keep = {torch::tensor({{0.f, 0.f}, {1.f, 1.f}}),
                torch::tensor({{0.f, 0.f, 0.f}, {1.f, 1.f, 1.f}})};
    const auto e = two.evaluate(off);
    QCOMPARE(e.loss[0].item<double>(), e.loss[1].item<double>());
    // And the inspector's pruning curve ends at that loss.
    const HeadInspector inspector(two.checkpoint.path);
    PruningOptions all;
    all.keepPerLayer = 0;
    const auto curve = inspector.prune(all).steps;
    QVERIFY(std::abs(curve.back().testLoss - e.loss[0].item<double>()) < 1e-6);
}

void TestHeads::importanceInAnEnsembleEqualsTheRunAlone()
{
    QTemporaryDir alone, together;
    const std::string a = trainWithCheckpoint({learningRun(1)}, alone, 0);
    const std::string b = trainWithCheckpoint({learningRun(2), learningRun(1)}, together, 1);
    for (AblationMode mode : {AblationMode::Zero, AblationMode::Mean}) {
        const auto x = HeadInspector(a).ablate(mode), y = HeadInspector(b).ablate(mode);
        QCOMPARE(x.size(), size_t(5));
        QCOMPARE(y.size(), x.size());
        for (size_t i = 0; i < x.size(); ++i) {
            QCOMPARE(x[i].layer, y[i].layer);
            QCOMPARE(x[i].head, y[i].head);
            QVERIFY2(std::abs(x[i].delta - y[i].delta) < 1e-6,
                     qPrintable(QString("%1 vs %2").arg(x[i].delta).arg(y[i].delta)));
            QCOMPARE(x[i].extraDelta.size(), size_t(3)); // each digit's loss
        }
    }
}

void TestHeads::pruningRemovesEveryHeadOnce()
{
    QTemporaryDir tmp;
    const HeadInspector inspector(trainWithCheckpoint({learningRun()}, tmp, 0));
    PruningOptions greedy;
    greedy.mode = AblationMode::Mean;
    greedy.keepPerLayer = 0;
    const auto curve = inspector.prune(greedy).steps;
    QCOMPARE(curve.size(), size_t(6)); // 0 .. 5 heads removed
    QCOMPARE(curve.front().removed, int64_t(0));
    QCOMPARE(curve.back().fraction, 1.0);
    std::set<std::pair<int64_t, int64_t>> seen;
    for (size_t i = 1; i < curve.size(); ++i)
        QVERIFY(seen.insert({curve[i].layer, curve[i].head}).second);
    // Step 1 removes the head whose single removal costs least.
    const auto single = inspector.ablate(AblationMode::Mean);
    const auto least = std::min_element(single.begin(), single.end(),
                                        [](auto &p, auto &q) { return p.testLoss < q.testLoss; });
    QCOMPARE(curve[1].layer, least->layer);
    QCOMPARE(curve[1].head, least->head);
    QVERIFY(std::abs(curve[0].testLoss - inspector.baseline().at("test_loss")) < 1e-9);
}

void TestHeads::everyOrderKeepsAHeadInEveryLayer()
{
    QTemporaryDir tmp;
    const HeadInspector inspector(trainWithCheckpoint({learningRun()}, tmp, 0));
    const double intact = inspector.baseline().at("test_loss");
    for (const auto &row : pruningOrderTable())
        for (int64_t keep : {1, 2}) {
            PruningOptions o;
            o.order = row.order;
            o.keepPerLayer = keep;
            const PruningCurve c = inspector.prune(o);
            QCOMPARE(c.order, row.order);
            // Heads {2, 3}: one kept in each layer leaves 3 to remove; two kept, 1.
            QCOMPARE(c.steps.size(), size_t(keep == 1 ? 4 : 2));
            QVERIFY(std::abs(c.steps.front().testLoss - intact) < 1e-9);
            std::set<std::pair<int64_t, int64_t>> seen;
            std::vector<int64_t> left = {2, 3};
            for (size_t i = 1; i < c.steps.size(); ++i) {
                QVERIFY(seen.insert({c.steps[i].layer, c.steps[i].head}).second);
                QVERIFY(--left[size_t(c.steps[i].layer)] >= keep);
                QCOMPARE(c.steps[i].removed, int64_t(i));
                QCOMPARE(c.steps[i].fraction, double(i) / 5.0);
            }
            const LossBoundRow everything{"all", "all", 1e9, true}, none{"none", "0", 0, false};
            QVERIFY(c.removableWithin(everything, intact) == int64_t(c.steps.size()) - 1);
            QVERIFY(c.removableWithin(none, intact) <= c.removableWithin(everything, intact));
        }
}

void TestHeads::headsRemovableCountAlongACurveAndOverSeparateModels()
{
    // Test losses at 0, 1, 2 and 3 heads removed from an intact 2.0: the second removal passes
    // 1 % (2.03 > 2.02), the third comes back within it.
    PruningCurve c;
    for (const auto &[removed, loss] :
         std::vector<std::pair<int64_t, double>>{{0, 2.001}, {1, 2.01}, {2, 2.03}, {3, 2.015}})
        c.steps.push_back({removed, double(removed) / 4.0, loss, -1, -1});
    const auto &bounds = lossBoundTable();
    const auto bound = [&](const char *name) {
        return *std::find_if(bounds.begin(), bounds.end(),
                             [&](const auto &b) { return std::string(b.name) == name; });
    };
    // One model pruned in sequence: it stops where the loss first leaves the bound.
    for (auto method : {PruningMethod::PostHoc, PruningMethod::FineTune}) {
        c.method = method;
        QCOMPARE(c.removableWithin(bound("1pct"), 2.0), int64_t(1));
        QCOMPARE(c.removableWithin(bound("5pct"), 2.0), int64_t(3));
        QCOMPARE(c.removableWithin(bound("0.05nats"), 2.0), int64_t(3));
    }
    // Separate models: the most heads any of them removed within it.
    for (auto method : {PruningMethod::Scratch, PruningMethod::L0Gates}) {
        c.method = method;
        QCOMPARE(c.removableWithin(bound("1pct"), 2.0), int64_t(3));
    }
    // Against the model before any head went, not the curve's first point: 2.001 is past 0.04 %.
    c.method = PruningMethod::PostHoc;
    const LossBoundRow tight{"tight", "0.04 %", 0.0004, false};
    QCOMPARE(c.removableWithin(tight, 2.0), int64_t(0));
    QCOMPARE(c.removableWithin(bound("0.05nats"), 1.97), int64_t(1));
}

void TestHeads::aHeadWhoseCopyCarriesItsWorkIsPrunedFirst()
{
    // Layer 1, head 2 made a copy of head 0 (its W_Q, W_K, W_V), its output projection zero: it
    // computes what head 0 computes and head 0 carries that to the output. Every order that
    // looks at the model removes it first; its gradient importance is exactly zero.
    TwoCopies two;
    {
        torch::NoGradGuard noGrad;
        for (const char *w : {"layers.1.wq", "layers.1.wk", "layers.1.wv"})
            two.parameter(w).narrow(2, 16, 8).copy_(two.parameter(w).narrow(2, 0, 8));
        two.parameter("layers.1.wo").narrow(1, 16, 8).zero_();
    }
    const std::string path = two.tmp.path().toStdString() + "/copy.safetensors";
    writeCheckpoint(path, two.model, nullptr, 0, two.config, two.checkpoint.partial,
                    two.checkpoint.position, "final");
    const HeadInspector inspector(path);
    for (AblationMode mode : {AblationMode::Zero, AblationMode::Mean}) {
        const auto importance = inspector.gradientImportance(mode);
        QCOMPARE(importance[1][2], 0.0);
        for (size_t l = 0; l < importance.size(); ++l) // each layer normalised to unit L2 norm
            QVERIFY(std::abs(std::hypot(importance[l][0], importance[l][1],
                                        l == 1 ? importance[l][2] : 0.0) -
                             1.0) < 1e-9);
        for (PruningOrder order :
             {PruningOrder::Gradient, PruningOrder::SingleShot, PruningOrder::Greedy}) {
            PruningOptions o;
            o.mode = mode;
            o.order = order;
            const auto steps = inspector.prune(o).steps;
            // First, or after heads whose removal lowered the loss (they cost less than it).
            size_t at = 1;
            while (at < steps.size() && !(steps[at].layer == 1 && steps[at].head == 2)) ++at;
            QVERIFY2(at < steps.size(), toString(order));
            for (size_t i = 1; i < at; ++i)
                QVERIFY2(steps[i].score <= steps[0].testLoss + 1e-12 &&
                             order != PruningOrder::Gradient,
                         qPrintable(QString("%1 removed %2.%3 first")
                                        .arg(toString(order))
                                        .arg(steps[i].layer)
                                        .arg(steps[i].head)));
            // Removing it changes nothing.
            QVERIFY(std::abs(steps[at].testLoss - steps[at - 1].testLoss) < 1e-6);
        }
    }
}

void TestHeads::randomOrdersDifferBySeedAndRepeatWithIt()
{
    QTemporaryDir tmp;
    RunConfig c = learningRun();
    c.model.heads = {4, 4};
    const HeadInspector inspector(trainWithCheckpoint({c}, tmp, 0));
    auto sequence = [&](uint64_t seed) {
        PruningOptions o;
        o.order = PruningOrder::Random;
        o.seed = seed;
        const auto curve = inspector.prune(o);
        std::vector<std::pair<int64_t, int64_t>> out;
        if (curve.seed != seed) return out; // fails below: no order of six
        for (size_t i = 1; i < curve.steps.size(); ++i)
            out.push_back({curve.steps[i].layer, curve.steps[i].head});
        return out;
    };
    std::set<std::vector<std::pair<int64_t, int64_t>>> seen;
    for (uint64_t seed = 0; seed < 4; ++seed) {
        const auto a = sequence(seed);
        QCOMPARE(a.size(), size_t(6));
        QCOMPARE(sequence(seed), a); // a seed gives one order
        seen.insert(a);
    }
    QCOMPARE(seen.size(), size_t(4)); // and seeds give different ones
}

void TestHeads::theOptimalConstantCostsNoMoreThanTheMean()
{
    // The optimal constant starts from the mean output and lowers the training loss; on the test
    // set it costs no more than the mean (within what training and test batches differ by), and
    // less overall.
    QTemporaryDir tmp;
    const HeadInspector inspector(trainWithCheckpoint({learningRun()}, tmp, 0));
    const auto mean = inspector.ablate(AblationMode::Mean);
    const auto optimal = inspector.ablate(AblationMode::OptimalConstant);
    QCOMPARE(optimal.size(), mean.size());
    double sumMean = 0, sumOptimal = 0;
    for (size_t i = 0; i < mean.size(); ++i) {
        QVERIFY2(optimal[i].delta <= mean[i].delta + 0.02,
                 qPrintable(QString("head %1.%2: optimal %3, mean %4")
                                .arg(mean[i].layer)
                                .arg(mean[i].head)
                                .arg(optimal[i].delta)
                                .arg(mean[i].delta)));
        sumMean += mean[i].delta;
        sumOptimal += optimal[i].delta;
    }
    QVERIFY2(sumOptimal < sumMean, qPrintable(QString("%1 vs %2").arg(sumOptimal).arg(sumMean)));
    QCOMPARE(ablationModeOf("optimal"), AblationMode::OptimalConstant);
    QCOMPARE(pruningOrderOf("single-shot"), PruningOrder::SingleShot);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, pruningOrderOf("alphabetical"));
}

void TestHeads::fineTuningACurveInOneEnsembleEqualsEachAlone()
{
    QTemporaryDir tmp;
    const HeadInspector inspector(trainWithCheckpoint({learningRun()}, tmp, 0));
    PruningOptions o;
    o.keepPerLayer = 0;
    const PruningCurve curve = inspector.prune(o); // greedy, every head: 6 models
    const PruningCurve tuned = inspector.fineTune(curve, 40);
    QCOMPARE(tuned.method, PruningMethod::FineTune);
    QCOMPARE(tuned.trainedSteps, int64_t(40));
    QCOMPARE(tuned.steps.size(), curve.steps.size());
    // The models train side by side in one ensemble: each as it would alone.
    PruningCurve prefix = curve;
    prefix.steps.resize(2);
    const PruningCurve alone = inspector.fineTune(prefix, 40);
    for (size_t i = 0; i < 2; ++i)
        QVERIFY2(
            std::abs(alone.steps[i].testLoss - tuned.steps[i].testLoss) < 1e-5,
            qPrintable(
                QString("%1 vs %2").arg(alone.steps[i].testLoss).arg(tuned.steps[i].testLoss)));
    // With every head gone, training on recovers part of what removing them cost.
    QVERIFY2(
        tuned.steps.back().testLoss < curve.steps.back().testLoss,
        qPrintable(
            QString("%1 vs %2").arg(tuned.steps.back().testLoss).arg(curve.steps.back().testLoss)));
    for (size_t i = 0; i < curve.steps.size(); ++i) { // the heads removed are the curve's
        QCOMPARE(tuned.steps[i].layer, curve.steps[i].layer);
        QCOMPARE(tuned.steps[i].head, curve.steps[i].head);
    }
}

void TestHeads::theControlWithEveryHeadIsTheRunItself()
{
    // The control at 0 heads removed is the run's own architecture trained as it was: the same
    // final test loss, to the bit. The others have fewer heads of the same dimension.
    QTemporaryDir tmp;
    RunConfig c = learningRun();
    c.model.heads = {3, 3};
    const HeadInspector inspector(trainWithCheckpoint({c}, tmp, 0));
    PruningOptions o;
    o.order = PruningOrder::SingleShot;
    const PruningCurve curve = inspector.prune(o); // 4 removed: 5 counts
    const PruningCurve control = inspector.fromScratch(curve, 3);
    QCOMPARE(control.method, PruningMethod::Scratch);
    QCOMPARE(control.trainedSteps, c.totalSteps());
    QCOMPARE(control.steps.size(), size_t(3));
    QCOMPARE(control.steps[0].removed, int64_t(0));
    QCOMPARE(control.steps[1].removed, int64_t(2));
    QCOMPARE(control.steps[2].removed, int64_t(4));
    QCOMPARE(control.steps[0].testLoss, inspector.loggedTestLoss());
    for (const auto &s : control.steps) QVERIFY(std::isfinite(s.testLoss));
    // Per-layer head dimensions that differ have no one control architecture.
    QTemporaryDir other;
    const HeadInspector mixed(trainWithCheckpoint({learningRun()}, other, 0)); // heads {2, 3}
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, mixed.fromScratch(mixed.prune({}), 0));
}

void TestHeads::l0GatesCloseMoreHeadsAsLambdaGrows()
{
    QTemporaryDir tmp;
    const HeadInspector inspector(trainWithCheckpoint({learningRun()}, tmp, 0));
    const PruningCurve c = inspector.l0Gates({0.0, 100.0}, 150, 7);
    QCOMPARE(c.method, PruningMethod::L0Gates);
    QCOMPARE(c.steps.size(), size_t(3)); // the intact model, then a point per lambda
    QCOMPARE(c.steps[0].removed, int64_t(0));
    QVERIFY(std::abs(c.steps[0].testLoss - inspector.baseline().at("test_loss")) < 1e-9);
    std::map<double, int64_t> removed;
    for (size_t i = 1; i < c.steps.size(); ++i) {
        QVERIFY(c.steps[i].removed >= c.steps[i - 1].removed); // sorted by heads removed
        removed[c.steps[i].score] = c.steps[i].removed;
    }
    QCOMPARE(removed.size(), size_t(2));
    QCOMPARE(removed.at(0.0), int64_t(0));   // no price on heads: every gate stays open
    QCOMPARE(removed.at(100.0), int64_t(5)); // a high one: every gate closes
}

void TestHeads::headStatisticsAreLoggedForEveryRun()
{
    // An ensemble whose runs differ in heads: each run logs its own heads only.
    RunConfig a = learningRun(1), b = learningRun(2);
    b.model.heads = {3, 2};
    const auto results = trainMembers({a, b}, TrainerControl{});
    for (size_t r = 0; r < results.size(); ++r) {
        const RunResult &run = results[r];
        const auto &heads = (r == 0 ? a : b).model.heads;
        int curves = 0;
        for (const auto &[name, curve] : run.extra) {
            int64_t layer = 0, head = 0;
            std::string stat;
            if (!parseHeadCurve(name, &layer, &head, &stat)) continue;
            ++curves;
            QVERIFY2(head < heads[size_t(layer)], name.c_str());
            // An update's alignment has no point at step 0, before any update.
            const bool alignment = stat.size() > 6 && stat.substr(stat.size() - 6) == "_align";
            QCOMPARE(curve.size(), run.test.size() - (alignment ? 1 : 0));
            QVERIFY(findMetric(name));
            for (const auto &p : curve)
                QVERIFY2(std::isfinite(p.value) && p.value >= 0, name.c_str());
            if (stat == "entropy")
                for (const auto &p : curve) QVERIFY(p.value <= std::log(18.0) + 1e-5);
        }
        QCOMPARE(curves, int((heads[0] + heads[1]) * int64_t(headStatTable().size())));
        // RMS never exceeds the max; gradients are there at every evaluation after the first.
        const Curve &rms = run.extra.at(headCurveName(1, 0, "logit_rms")),
                    &max = run.extra.at(headCurveName(1, 0, "logit_max"));
        for (size_t i = 0; i < rms.size(); ++i) QVERIFY(rms[i].value <= max[i].value + 1e-6);
        QVERIFY(run.extra.at(headCurveName(0, 0, "wq_grad")).back().value > 0);
        // Adam's first updates line up with the inputs (Everett et al.): above what an
        // independent change gives, below full alignment (√d_model).
        for (const char *w : {"wq_align", "wk_align", "wv_align", "wo_align"}) {
            const Curve &align = run.extra.at(headCurveName(0, 0, w));
            QCOMPARE(align.front().step, int64_t(100));
            for (const auto &p : align) QVERIFY2(p.value > 1.0, w);
        }
        // Not in the scalar metrics (runs.csv would get hundreds of columns).
        for (const auto &[name, value] : run.metrics)
            QVERIFY2(name.find("head.") == std::string::npos, name.c_str());
    }
}

// The update alignment's known answers: a change of a head's columns along the one input every
// row holds moves its outputs √fan-in times as far as an independent change of the same size; a
// change orthogonal to the inputs moves them not at all; a random change on random rows about as
// far as an independent one (1). The same for W_O's rows on the head's outputs, with √head_dim.
void TestHeads::anUpdateAlignedWithEveryInputScoresRootFanIn()
{
    using torch::indexing::Slice;
    torch::manual_seed(3);
    const int64_t m = 16, h = 2, d = 8, N = 50;
    const auto xbar = torch::randn({m});
    const auto x = xbar.expand({1, N, m}).contiguous();
    auto dw = torch::zeros({1, m, h * d});
    dw.index_put_({0, Slice(), Slice(0, d)}, torch::outer(xbar, torch::randn({d})));
    auto across = torch::randn({m, d});
    across = across - torch::outer(xbar, xbar.matmul(across)) / xbar.dot(xbar);
    dw.index_put_({0, Slice(), Slice(d, 2 * d)}, across);
    auto a = updateAlignment(x, torch::Tensor(), {{"wq", dw}}, h, d).at("wq");
    QVERIFY2(std::fabs(a[0][0].item<double>() - std::sqrt(double(m))) < 1e-4,
             qPrintable(QString::number(a[0][0].item<double>())));
    QVERIFY2(a[0][1].item<double>() < 1e-3, qPrintable(QString::number(a[0][1].item<double>())));
    // Random rows, a random change.
    const auto rows = torch::randn({1, 4000, m});
    a = updateAlignment(rows, torch::Tensor(), {{"wk", torch::randn({1, m, h * d})}}, h, d)
            .at("wk");
    for (int64_t k = 0; k < h; ++k)
        QVERIFY2(std::fabs(a[0][k].item<double>() - 1) < 0.1,
                 qPrintable(QString::number(a[0][k].item<double>())));
    // W_O: each head's output the same vector at every row, its rows changed along it.
    const auto zbar = torch::randn({h, d});
    const auto z = zbar.reshape({1, 1, h * d}).expand({1, N, h * d}).contiguous();
    auto dwo = torch::zeros({1, h, d, m});
    for (int64_t k = 0; k < h; ++k)
        dwo.index_put_({0, k}, torch::outer(zbar[k], torch::randn({m})));
    a = updateAlignment(x, z, {{"wo", dwo.reshape({1, h * d, m})}}, h, d).at("wo");
    for (int64_t k = 0; k < h; ++k)
        QVERIFY2(std::fabs(a[0][k].item<double>() - std::sqrt(double(d))) < 1e-4,
                 qPrintable(QString::number(a[0][k].item<double>())));
}

void TestHeads::liveMapsArriveAtEachEvaluation()
{
    TrainerControl control;
    std::vector<AttentionMaps> got;
    std::string input = "12 + 34, digit 1";
    control.attentionWanted = [&] { return TrainerControl::AttentionWanted{1, input}; };
    control.onAttention = [&](size_t member, const AttentionMaps &maps) {
        QCOMPARE(member, size_t(1));
        got.push_back(maps);
        input = "nonsense"; // the next one: a bad input comes back with the reason
    };
    RunConfig b = learningRun(2);
    b.model.heads = {3, 2};
    trainMembers({learningRun(1), b}, control);
    QCOMPARE(got.size(), size_t(5)); // steps 0, 100, ..., 400
    QCOMPARE(got[0].heads, (std::vector<int64_t>{3, 2}));
    QCOMPARE(got[0].step, int64_t(0));
    QVERIFY(got[1].weights.empty());
    QVERIFY2(got[1].description.find("expected two numbers") != std::string::npos,
             got[1].description.c_str());
}

void TestHeads::inspectPrintsWritesAndRefusesBadInput()
{
    QTemporaryDir tmp;
    // An addition session of `heads` heads and `steps` steps, checkpoints every 100.
    auto writeSession = [&tmp](const QString &name, int heads, int steps) {
        const QString path = tmp.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return QString();
        f.write(
            QStringLiteral(
                "schema_version: 2\nname: %1\ncheckpoints: {every: 100}\nexperiment:\n"
                "  task: {kind: addition, train_pairs: 512, test_pairs: 32}\n"
                "  model: {d_model: 24, heads: %2, layers: 2}\n"
                "  phases:\n    - {name: answer, objective: answer, steps: %3, batch_size: 16}\n"
                "  lr: 3.0e-3\n  eval_every: 100\n  device: cpu\n")
                .arg(name.section('.', 0, 0))
                .arg(heads)
                .arg(steps)
                .toUtf8());
        return path;
    };
    const QString session = writeSession(QStringLiteral("heads.yaml"), 2, 300);
    QVERIFY(!session.isEmpty());
    auto cli = [](const QStringList &args) {
        QProcess p;
        p.start(QStringLiteral(HEADLAB_CLI_PATH), args);
        p.waitForFinished(120000);
        return std::tuple<int, QString, QString>(p.exitCode(),
                                                 QString::fromUtf8(p.readAllStandardOutput()),
                                                 QString::fromUtf8(p.readAllStandardError()));
    };
    {
        auto [code, out, err] = cli({"inspect", session, "--run", "0"});
        QCOMPARE(code, 2);
        QVERIFY2(err.contains("has no checkpoint"), qPrintable(err));
    }
    QCOMPARE(std::get<0>(cli({"run", session, "--threads", "1"})), 0);
    {
        auto [code, out, err] = cli({"inspect", session, "--run", "0", "--step", "200", "--input",
                                     "500 + 499, digit 2", "--json"});
        QVERIFY2(code == 0, qPrintable(err));
        const auto doc = QJsonDocument::fromJson(out.toUtf8()).object();
        QCOMPARE(doc["step"].toInt(), 200);
        QCOMPARE(doc["input"].toString(), QStringLiteral("500 + 499, digit 2: answer 9"));
        QCOMPARE(doc["attention"].toArray().size(), 2);              // layers
        QCOMPARE(doc["attention"].toArray()[0].toArray().size(), 2); // heads
        QCOMPARE(doc["head_stats"].toArray().size(), 4);
        QCOMPARE(doc["ablation"].toObject()["heads"].toArray().size(), 4);
        // One curve per order, three random ones; one head of each layer's two kept.
        const auto curves = doc["pruning"].toArray();
        QCOMPARE(curves.size(), 6);
        QSet<QString> orders;
        for (const auto &c : curves) {
            orders.insert(c.toObject()["order"].toString());
            QCOMPARE(c.toObject()["steps"].toArray().size(), 3);
            QCOMPARE(c.toObject()["ablation"].toString(), QStringLiteral("zero"));
        }
        QCOMPARE(orders, (QSet<QString>{"gradient", "single-shot", "greedy", "random"}));
        QVERIFY(std::abs(doc["test_loss"].toDouble() - doc["logged_test_loss"].toDouble()) < 1e-5);
        for (const char *file : {"attention.csv", "head_stats.csv", "ablation.csv", "pruning.csv"})
            QVERIFY2(QFile::exists(doc["csv"].toString() + "/" + file), file);
    }
    {
        auto [code, out, err] = cli({"inspect", session, "--run", "0"});
        QVERIFY2(code == 0 && out.contains("ablation (zero)") && out.contains("pruning (zero") &&
                     out.contains("random (seed 2)"),
                 qPrintable(out + err));
    }
    {
        // One order, optimal-constant ablation, every head allowed to go: the CSV says so.
        const QString folder = QFileInfo(session).absolutePath() + "/one-order";
        auto [code, out, err] =
            cli({"inspect", session, "--run", "0", "--order", "single-shot", "--ablation",
                 "optimal", "--keep-per-layer", "0", "-o", folder});
        QVERIFY2(code == 0, qPrintable(err));
        QFile csv(folder + "/pruning.csv");
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split('\n');
        QCOMPARE(lines.front(), QStringLiteral("method,trained_steps,order,seed,ablation,removed,"
                                               "fraction,test_loss,layer,head,score"));
        QCOMPARE(lines.size(), 1 + 5); // 0 .. 4 heads removed
        QVERIFY2(lines.back().startsWith(QStringLiteral("post-hoc,0,single-shot,0,optimal,4,1,")),
                 qPrintable(lines.back()));
    }
    {
        // With retraining: the first order's curve fine-tuned and its control, and L0 gates.
        auto [code, out, err] = cli({"inspect", session, "--run", "0", "--order", "gradient",
                                     "--retrain", "fine-tune,scratch,l0", "--fine-tune-steps", "5",
                                     "--scratch-points", "2", "--l0-lambdas", "0,1", "--json"});
        QVERIFY2(code == 0, qPrintable(err));
        const auto curves = QJsonDocument::fromJson(out.toUtf8()).object()["pruning"].toArray();
        QStringList methods;
        for (const auto &c : curves) methods << c.toObject()["method"].toString();
        QCOMPARE(methods, (QStringList{"post-hoc", "fine-tune", "scratch", "l0"}));
        QCOMPARE(curves[1].toObject()["trained_steps"].toInt(), 5);
        QCOMPARE(curves[2].toObject()["trained_steps"].toInt(), 300); // the run's own steps
        QCOMPARE(curves[2].toObject()["steps"].toArray().size(), 2);
        QCOMPARE(curves[3].toObject()["steps"].toArray().size(), 3);
        QCOMPARE(curves[3].toObject()["order"].toString(), QString());
        // Every curve is counted within each bound the document names; fine-tuning and L0
        // gates say the learning rate they trained at.
        const QJsonObject doc = QJsonDocument::fromJson(out.toUtf8()).object();
        const auto bounds = doc["bounds"].toArray();
        QCOMPARE(bounds.size(), qsizetype(lossBoundTable().size()));
        for (const auto &c : curves)
            for (const auto &b : bounds)
                QVERIFY(c.toObject().contains("removable_" + b.toObject()["name"].toString()));
        QVERIFY(curves[1].toObject()["learning_rate"].toDouble() > 0);
        QVERIFY(!curves[0].toObject().contains("learning_rate"));
        // `recount` of a file without the counts gives them back as inspect wrote them.
        QJsonObject stripped = doc;
        stripped.remove("bounds");
        QJsonArray bare;
        for (const auto &c : curves) {
            QJsonObject o = c.toObject();
            for (const auto &b : bounds) o.remove("removable_" + b.toObject()["name"].toString());
            bare.append(o);
        }
        stripped["pruning"] = bare;
        QFile old(tmp.filePath("old-inspection.json"));
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write(QJsonDocument(stripped).toJson());
        old.close();
        auto [rc, recounted, rerr] = cli({"recount", old.fileName()});
        QVERIFY2(rc == 0, qPrintable(rerr));
        const QJsonObject again = QJsonDocument::fromJson(recounted.toUtf8()).object();
        QCOMPARE(again["bounds"].toArray(), bounds);
        QCOMPARE(again["pruning"].toArray(), curves);
        auto [bad, none, why] = cli({"recount", session});
        QCOMPARE(bad, 1);
        QVERIFY2(why.contains("not an inspect --json document"), qPrintable(why));
    }
    auto refuses = [&](const QStringList &args, const char *expected) {
        auto [code, out, err] = cli(args);
        QCOMPARE(code, 2);
        QVERIFY2(err.contains(expected), qPrintable(err));
    };
    refuses({"inspect", session, "--run", "7"}, "the session has runs 0 to 0");
    refuses({"inspect", session, "--run", "0", "--step", "150"}, "it has steps 100, 200, 300");
    refuses({"inspect", session, "--run", "0", "--input", "1000 + 1"}, "--input");
    refuses({"inspect", session, "--run", "0", "--ablation", "half"}, "--ablation");
    refuses({"inspect", session, "--run", "0", "--order", "gradient,alphabetical"}, "--order");
    refuses({"inspect", session, "--run", "0", "--retrain", "post-hoc"}, "--retrain");
    refuses({"inspect", session, "--run", "0", "--input", "1+1" + QString(30000, ' ') + "x"},
            "--input"); // no stack overflow

    // A foreign checkpoint (another configuration's: 1 head, this run has 2) in the run's folder:
    // inspect showed its 1-head model without a word. Now it is refused, by file and reason.
    const QString other = writeSession(QStringLiteral("other.yaml"), 1, 400);
    QVERIFY(!other.isEmpty());
    QCOMPARE(std::get<0>(cli({"run", other, "--threads", "1"})), 0);
    QDir ours(tmp.filePath("heads.results/checkpoints")),
        theirs(tmp.filePath("other.results/checkpoints"));
    const QString ourRun = ours.entryList(QDir::Dirs | QDir::NoDotAndDotDot).value(0);
    const QString theirRun = theirs.entryList(QDir::Dirs | QDir::NoDotAndDotDot).value(0);
    QVERIFY(QFile::copy(theirs.filePath(theirRun + "/step-000000400.safetensors"),
                        ours.filePath(ourRun + "/step-000000400.safetensors")));
    {
        auto [code, out, err] = cli({"inspect", session, "--run", "0", "--step", "400"});
        QCOMPARE(code, 2);
        QVERIFY2(err.contains("step-000000400.safetensors") &&
                     err.contains("another configuration"),
                 qPrintable(err));
    }
    { // without --step: the newest of this run's own, the foreign one named and passed over
        auto [code, out, err] = cli({"inspect", session, "--run", "0", "--json"});
        QVERIFY2(code == 0 &&
                     err.contains(
                         "another configuration than this run's; an earlier checkpoint is used"),
                 qPrintable(err));
        QCOMPARE(QJsonDocument::fromJson(out.toUtf8()).object()["step"].toInt(), 300);
    }
}

void TestHeads::everyTaskShowsItsHeadsOnItsInput_data()
{
    QTest::addColumn<QString>("task");
    QTest::addColumn<QString>("input"); // a custom input the task accepts
    QTest::addColumn<int>("keys");      // positions it gives
    QTest::addColumn<QString>("bad");   // an input it refuses
    QTest::addColumn<QString>("badMessage");
    QTest::newRow("text") << "text"
                          << "To be, or not" << 13 << ""
                          << "type a prompt";
    QTest::newRow("nearest neighbour") << "nearest_neighbour"
                                       << "42" << 4 << "a seed"
                                       << "expected a seed";
    QTest::newRow("sequence file") << "sequence_file"
                                   << "3 + 4 =" << 4 << "3 + x ="
                                   << "'x' is not a token";
}

void TestHeads::everyTaskShowsItsHeadsOnItsInput()
{
    // Each task's own input (Task::probeInput): the maps are attention rows over its positions,
    // its example input is accepted, a bad one is refused saying why, and its runs log statistics.
    QFETCH(QString, task);
    QFETCH(QString, input);
    QFETCH(int, keys);
    QFETCH(QString, bad);
    QFETCH(QString, badMessage);
    QTemporaryDir tmp;
    RunConfig c;
    c.task.kind = task.toStdString();
    c.model.dModel = 16;
    c.model.heads = {2, 2};
    PhaseConfig p;
    p.steps = 40;
    p.batchSize = 8;
    if (task == "text") {
        c.task.corpusBytes = 50'000;
        c.task.contextLength = 24;
        c.task.sampleLength = 0;
        p.objective = Objective::NextToken;
        c.evalBatches = 1;
    } else if (task == "nearest_neighbour") {
        c.task.pointDim = 16;
        c.task.numPoints = 4;
        c.model.norm = NormKind::UnitScale;
        c.model.placement = NormPlacement::PostNorm;
        c.model.finalNorm = false;
        c.model.causal = false;
        c.model.bias = true;
        p.objective = Objective::Regression;
    } else {
        const std::string file = tmp.path().toStdString() + "/mod7.txt";
        std::ofstream out(file);
        for (int a = 0; a < 7; ++a)
            for (int b = 0; b < 7; ++b) out << a << " + " << b << " =\t" << (a + b) % 7 << "\n";
        out.close();
        c.task.options = {{"path", file}, {"tokens", "words"}, {"test_fraction", "0.2"}};
        p.objective = Objective::Answer;
    }
    c.phases = {p};
    c.lr = 1e-3;
    c.evalEvery = 20;
    c.device = "cpu";
    QVERIFY2(validate(c).empty(), validate(c).c_str());
    std::vector<RunResult> results;
    const HeadInspector inspector(trainWithCheckpoint({c}, tmp, 0, &results));
    QCOMPARE(toString(results[0].status), "done");
    QVERIFY(results[0].extra.count(headCurveName(1, 1, "entropy")));
    for (const std::string &text : {inspector.exampleInput(), input.toStdString()}) {
        const AttentionMaps maps = inspector.attention(text);
        QCOMPARE(maps.heads, (std::vector<int64_t>{2, 2}));
        QCOMPARE(int64_t(maps.labels.size()), maps.keys);
        for (size_t l = 0; l < maps.weights.size(); ++l)
            for (int64_t h = 0; h < 2; ++h)
                for (int64_t q = 0; q < maps.queries; ++q) {
                    double sum = 0;
                    for (int64_t k = 0; k < maps.keys; ++k) sum += maps.at(l, h, q, k);
                    QVERIFY(std::abs(sum - 1.0) < 1e-5);
                }
        if (text == input.toStdString()) QCOMPARE(maps.keys, int64_t(keys));
    }
    try {
        inspector.attention(bad.toStdString());
        QFAIL("a bad input was accepted");
    } catch (const std::invalid_argument &e) {
        QVERIFY2(QString(e.what()).contains(badMessage), e.what());
    }
    QCOMPARE(inspector.statistics().size(), size_t(4));
    QCOMPARE(inspector.ablate(AblationMode::Mean).size(), size_t(4));
}

// Each task's row says what an input to look inside the heads with is (the app's tooltip and
// inspect's help read it), and gives an example where it does not depend on the data: the
// task's own example, which it reads as an input. The app had a second copy of addition's.
void TestHeads::everyTaskSaysWhatItsInputIs()
{
    int examples = 0;
    for (const TaskSpec *spec : taskTable()) {
        QVERIFY2(!spec->inputHelp.empty(), spec->id.c_str());
        if (spec->exampleInput.empty()) continue;
        Session session;
        bool found = false;
        for (const auto &info : builtinPresets()) {
            session = loadPreset(info.name);
            if ((found = session.base.task.kind == spec->id)) break;
        }
        QVERIFY2(found, qPrintable(QString::fromStdString("no preset of " + spec->id)));
        RunConfig c = session.base;
        c.device = "cpu";
        const auto task = makeTask(c, {c.dataSeed}, torch::Device("cpu"));
        QCOMPARE(task->exampleProbeText(), spec->exampleInput);
        const ProbeInput input = task->probeInput(spec->exampleInput, 1);
        QVERIFY2(!input.description.empty(), spec->id.c_str());
        ++examples;
    }
    QVERIFY(examples >= 2); // addition and nearest neighbour
}

// The inspector's statistics at a checkpoint are the values the run logged at that step, for every
// row of the statistics table and every head (both come from core/train/HeadStats.h now; before,
// the inspector named the statistics again and nothing compared the two).
void TestHeads::inspectAtACheckpointGivesTheLoggedStatistics()
{
    QTemporaryDir tmp;
    const RunConfig c = learningRun();
    std::vector<RunResult> results;
    const HeadInspector inspector(trainWithCheckpoint({c}, tmp, 0, &results));
    QCOMPARE(inspector.step(), c.totalSteps());
    const auto stats = inspector.statistics();
    QCOMPARE(stats.size(), size_t(2 + 3));
    int compared = 0;
    for (const auto &s : stats)
        for (const auto &row : headStatTable()) {
            const auto curve = results[0].extra.find(headCurveName(s.layer, s.head, row.name));
            QVERIFY2(curve != results[0].extra.end(), row.name);
            QCOMPARE(curve->second.back().step, c.totalSteps());
            const double logged = curve->second.back().value;
            QVERIFY2(s.values.count(row.name), row.name);
            const double inspected = s.values.at(row.name);
            QVERIFY2(std::abs(inspected - logged) <= 1e-5 * std::max(1.0, std::abs(logged)),
                     qPrintable(QStringLiteral("layer %1 head %2 %3: inspected %4, logged %5")
                                    .arg(s.layer)
                                    .arg(s.head)
                                    .arg(row.name)
                                    .arg(inspected, 0, 'g', 9)
                                    .arg(logged, 0, 'g', 9)));
            ++compared;
        }
    QCOMPARE(compared, int((2 + 3) * headStatTable().size()));
}

// Issue 76 item 1: the role scores on cases whose answer is known. Tokens 5 6 7 5 6 7 (a sequence
// repeated once): a head built to attend to the previous token scores 1 as previous-token and as
// positional; one built to attend to the position after the query token's earlier copy scores 1
// as induction; uniform attention scores its share (worked out by hand below).
void TestHeads::roleScoresOfHeadsBuiltForTheirRole()
{
    const auto tokens = torch::tensor({5, 6, 7, 5, 6, 7}, torch::kLong).view({1, 6});
    const auto patterns = rolePatterns(tokens);
    QCOMPARE(int(patterns.size()), 3);
    auto at = [&](const char *name, int64_t q, int64_t k) {
        return patterns.at(name)[0][q][k].item<double>();
    };
    QCOMPARE(at("previous_token", 3, 2), 1.0);
    QCOMPARE(at("previous_token", 3, 1), 0.0);
    QCOMPARE(at("previous_token", 0, 0), 0.0);
    QCOMPARE(at("duplicate_token", 3, 0), 1.0);
    QCOMPARE(at("duplicate_token", 4, 1), 1.0);
    QCOMPARE(at("duplicate_token", 1, 0), 0.0);
    QCOMPARE(at("duplicate_token", 3, 3), 0.0); // not itself
    QCOMPARE(at("induction", 3, 1), 1.0);       // 5 came at 0: what followed it, at 1
    QCOMPARE(at("induction", 5, 3), 1.0);       // 7 came at 2: 3 followed
    QCOMPARE(at("induction", 2, 0), 0.0);
    // Three heads (R 1, B 1): previous-token, induction, uniform over the causal keys.
    const int64_t T = 6;
    auto w = torch::zeros({1, 1, 3, T, T}, torch::kFloat64);
    for (int64_t q = 0; q < T; ++q) {
        w[0][0][0][q][std::max<int64_t>(0, q - 1)] = 1;
        w[0][0][1][q][q >= 3 ? q - 2 : q] = 1; // after the earlier copy at q − 3: q − 2
        for (int64_t k = 0; k <= q; ++k) w[0][0][2][q][k] = 1.0 / double(q + 1);
    }
    const auto previous = patternScore(w, patterns.at("previous_token"));
    const auto induction = patternScore(w, patterns.at("induction"));
    const auto positional = positionalScore(w);
    QCOMPARE(previous.sizes().vec(), (std::vector<int64_t>{1, 3}));
    QCOMPARE(previous[0][0].item<double>(), 1.0);
    QCOMPARE(induction[0][1].item<double>(), 1.0);
    QCOMPARE(positional[0][0].item<double>(), 1.0); // offset 1 at every query after the first
    // The induction head by position: offset 2 at queries 3, 4, 5 of the four that have one.
    QVERIFY(std::abs(positional[0][1].item<double>() - 0.75) < 1e-12);
    // Uniform: the previous token's share at queries 1 … 5 is 1/(q + 1).
    const double uniform = (1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5 + 1.0 / 6) / 5;
    QVERIFY(std::abs(previous[0][2].item<double>() - uniform) < 1e-12);
    QVERIFY(previous[0][1].item<double>() < 0.5); // the induction head is no previous-token head
    // No query with a target (no token repeats): NaN, not 0.
    const auto distinct = rolePatterns(torch::arange(4, torch::kLong).view({1, 4}));
    QVERIFY(std::isnan(patternScore(torch::full({1, 1, 1, 4, 4}, 0.25, torch::kFloat64),
                                    distinct.at("induction"))[0][0]
                           .item<double>()));
    // A continuous input (nearest neighbour's vectors) has no token patterns.
    QVERIFY(rolePatterns(torch::zeros({1, 4, 8})).empty());
}

QTEST_GUILESS_MAIN(TestHeads)
#include "test_heads.moc"
