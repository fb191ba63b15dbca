// test_cuda.cpp — every CUDA path of the training core against the path it replaces, on each task
// (addition, nearest neighbour, text). Each case names the path it covers in provenance, so a path
// that silently stops being taken fails too. Skips where no CUDA device is (CI); scripts/gpu-tests.sh
// builds and runs it on the GPU machine with the other suites.
//
//   ensembleEqualsAlone      runs trained as one batched ensemble = each trained alone
//   graphsEqualEager         the captured CUDA graph step = the same step launched eagerly
//   fusedAdamEqualsAten      the fused Adam/AdamW kernel = ATen's foreach passes
//   microHeadsEqualFused     explicit micro-head attention = scaled_dot_product_attention
//   microHeadsBeyond64EqualFused  the same beyond 64 micro-heads: outputs, gradients, training
//   fusedQkvAndSplitKEqualPlain  Q/K/V as one product, weight gradients split over rows = plain
//   fusedPointsEqualAten     the nearest-neighbour points from one CUDA kernel = ATen's passes
//   fusedFeedForwardEqualsAten  the ReLU feed-forward block's bias + ReLU and their gradients as
//                            one kernel each way = ATen's passes: values, every gradient, training
//   fusedUnitNormEqualsAten  the unit-scale norm's residual step in one kernel each way = ATen's
//                            passes: values, gradients (with and without a floor), training
//   fusedLayerNormEqualsAten  the LayerNorm with each run's scale and shift in one kernel each
//                            way = ATen's: values, every gradient of a text model, training
//   fusedMicroAttentionEqualsAten  attention over micro-heads in one kernel each way = ATen's
//                            batched products: values, each parameter's gradient, training
//   sameSeedIsBitIdentical   a seed trained twice, and twice in one ensemble: Δ = 0 exactly
//   stoppedRunsResumeWhereTheyStopped  an ensemble stopped mid-run resumes from its stop
//                            checkpoints (not from step 0) and ends as the uninterrupted one
//   sweepOverEveryGpuPlacesEachRunAndAgrees  a sweep over every GPU (--device all) places each
//                            run and agrees with one GPU
//   cpuAndCudaAgree          the CPU and the GPU within the tolerance stated there
//
// Each task is also run with every stabilizer on ("TASK stabilized": qk-layernorm with gains,
// soft-capping, z-loss where it applies, σReparam on every product, independent weight decay).
//
// Tolerances are on the logged training losses (every step), relative: |a − b| ≤ tol · max(1, |a|).
#include "core/config/RunConfig.h"
#include "core/config/Switches.h"
#include "core/model/Kernels.h"
#include "core/model/Transformer.h"
#include "core/schema/TaskSpec.h"
#include "core/schema/addition/AdditionSpec.h"
#include "core/session/Presets.h"
#include "core/session/Session.h"
#include "core/tasks/nearest_neighbour/NearestNeighbourTask.h"
#include "core/train/SweepRunner.h"
#include "core/train/Trainer.h"

#include "tests/LayerNormReference.h"
#include "tests/cuda/RunComparison.h"

#include <torch/cuda.h>

#include <QtTest>

#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>

using namespace headlab;
using headlab::testing::relativeGap;

namespace {

// A short run of each task with the shapes its presets use, scaled down: every CUDA path of the
// task is taken (short sequences: micro-heads; tokens: the one-hot embedding; AdamW + warm-up
// cosine for nn and text).
RunConfig taskRun(const QString &row, double lr, uint64_t seed, const std::string &device)
{
    // "TASK stabilized": the same run with every stabilizer that applies on (docs/STABILIZERS.md).
    const QString task = row.section(QLatin1Char(' '), 0, 0);
    const bool stabilized = row.endsWith(QStringLiteral(" stabilized"));
    RunConfig c;
    if (task == "addition") {
        c = additionPaperConfig(48, 3, lr);
        c.phases[0].steps = 40;
        c.phases[1].steps = 80;
        c.evalEvery = 40;
    } else if (task == "nearest_neighbour") {
        c = loadPreset("nn-classroom")
                .base; // d 16, N 8, unit-scale post-norm, PyTorch init, per-epoch schedule
        c.model.heads = {4, 4};
        c.phases[0].steps = 300; // three epochs: lr 0, then warm-up, then cosine
        c.phases[0].schedule.stepEvery = 100;
        c.evalEvery = 100;
        c.lr = lr * 10;
    } else if (task == "sequence_file") {
        // The copy task of tests/search (one layer, d 16, answers of a file of examples).
        c = loadSession(HEADLAB_SOURCE_DIR "/tests/search/fixtures/copy-search.yaml").base;
        c.task.options["path"] = HEADLAB_SOURCE_DIR "/tests/search/fixtures/copy.txt";
        c.phases[0].steps = 60;
        c.evalEvery = 20;
    } else if (task == "text") {
        c = loadPreset("head-progression-classroom").base; // d 64, 4 layers, context 32
        c.model.heads = {1, 2, 4, 8};
        c.task.corpusBytes = 200000;
        c.phases[0].steps = 100;
        c.phases[0].batchSize = 16;
        c.evalEvery = 50;
        c.tf32 = false;
    } else {
        c.task.kind = task.toStdString(); // a task without a case here: its runs fail, named
    }
    c.lr = task == "nearest_neighbour" ? c.lr : lr;
    if (stabilized) {
        c.model.zeroInitOutputs = false;
        c.stabilizers = {QkNorm::Gain, 5.0, task == "nearest_neighbour" ? 0.0 : 1e-4,
                         SigmaReparam::All, 1e-3};
    }
    c.logEvery = 1;
    c.device = device;
    c.initSeed = c.dataSeed = seed;
    // Under compute-sanitizer (scripts/gpu-tests.sh) every launch is checked and slow: a few
    // steps of each phase still take every kernel both ways.
    // Their evaluations take one batch, not the whole test set (racecheck over a text run's test
    // set passed 120 s).
    if (qgetenv("HEADLAB_SANITIZING") == "1") {
        for (auto &phase : c.phases) phase.steps = std::min<int64_t>(phase.steps, 6);
        c.evalEvery = 3;
        c.evalBatches = 1;
    }
    return c;
}

// Under compute-sanitizer (scripts/gpu-tests.sh, HEADLAB_SANITIZING=1) each thread's accesses are
// checked, racecheck's hundreds of times slower: the kernels' own cases keep every shape's
// widths, head counts and variants (causal, packed, eps) but at most `few` of the rows or runs
// that only repeat them.
int64_t fewUnderSanitizer(int64_t n, int64_t few)
{
    return qgetenv("HEADLAB_SANITIZING") == "1" ? std::min(n, few) : n;
}

// Fails the case, naming `what` and `where`, when max |got − want| is over `allowed`.
void checkClose(const char *what, const QString &where, const torch::Tensor &got,
                const torch::Tensor &want, double allowed)
{
    const double diff = (got - want).abs().max().item<double>();
    QVERIFY2(diff <= allowed, qPrintable(QString("%1 at %2: max |diff| %3 (allowed %4)")
                                             .arg(what, where)
                                             .arg(diff)
                                             .arg(allowed)));
}

// `config` trained alone with the HEADLAB_* switches `env` set for that run only (the other path).
RunResult trainedWith(const RunConfig &config,
                      std::initializer_list<std::pair<const char *, const char *>> env)
{
    for (const auto &[name, value] : env) ::setenv(name, value, 1);
    RunResult r = trainRun(config);
    for (const auto &[name, value] : env) ::unsetenv(name);
    return r;
}

std::string provenance(const RunResult &r, const std::string &key)
{
    const auto it = r.provenance.find(key);
    return it == r.provenance.end() ? std::string("(none)") : it->second;
}

QString describe(const char *what, double gap, const RunResult &a, const RunResult &b)
{
    const std::string why = testing::whyNotComparable(a, b); // an infinite gap says why
    return QString("%1: relative gap %2%3 (final train loss %4, status %5, %6)")
        .arg(what)
        .arg(gap, 0, 'g', 3)
        .arg(why.empty() ? QString() : QString::fromStdString(": " + why))
        .arg(a.train.empty() ? NAN : a.train.back().value, 0, 'g', 8)
        .arg(toString(a.status))
        .arg(QString::fromStdString(a.message));
}

// A task's test run (nearest neighbour unless named) trained with a kernel's switch unset and at "0": each side took
// its path (provenance `key` "on" and "off"), and the curves agree within `tolerance`.
void trainedOnAndOff(const char *switchName, const std::string &key, double tolerance,
                     const char *what, const QString &task = "nearest_neighbour")
{
    const RunConfig c = taskRun(task, 1e-3, 4, "cuda");
    const RunResult on = trainRun(c);
    const RunResult off = trainedWith(c, {{switchName, "0"}});
    QCOMPARE(provenance(on, key), std::string("on"));
    QCOMPARE(provenance(off, key), std::string("off"));
    const double gap = relativeGap(on, off);
    QVERIFY2(gap <= tolerance, qPrintable(describe(what, gap, on, off)));
}

// `config` trained through micro-heads (the default path) and head by head (HEADLAB_ATTENTION=sdpa:
// scaled_dot_product_attention, or with a soft cap the explicit softmax, which provenance names):
// each side took its path, and the curves agree within 1e-4.
void trainedMicroAndSdpa(const RunConfig &config, const char *what)
{
    const RunResult micro = trainRun(config);
    const RunResult sdpa = trainedWith(config, {{"HEADLAB_ATTENTION", "sdpa"}});
    QCOMPARE(provenance(micro, "attention"), std::string("micro-heads"));
    QCOMPARE(provenance(sdpa, "attention"),
             std::string(config.stabilizers.softcap > 0 ? "explicit" : "sdpa"));
    const double gap = relativeGap(micro, sdpa);
    QVERIFY2(gap <= 1e-4, qPrintable(describe(what, gap, micro, sdpa)));
}

// One forward and backward pass of a fresh Transformer on the GPU, for the cases that compare a
// kernel's whole model with the path it replaces: `runs` runs initialized with seeds initSeed + r;
// then, from torch's seed `dataSeed`, nearest-neighbour points (vocab 0: 32 samples of 16 points
// in 64 dimensions, the loss their squared distance to random targets) or 8 samples of token
// sequences (the loss the logits' logsumexp).
struct PassSpec {
    ModelConfig model;
    int64_t vocab = 0, positions = 0, runs = 3;
    uint64_t initSeed = 60, dataSeed = 5;
    std::vector<std::vector<int64_t>> heads; // per run, per layer; {}: the model's
};

struct ModelPass {
    torch::Tensor y;                                          // the outputs
    torch::Tensor flat;                                       // every gradient, flat
    std::vector<std::pair<std::string, torch::Tensor>> grads; // each parameter's, by name
    bool fusedFfn = false, fusedLayerNorm = false, fusedAttention = false;
    std::string attentionPath;
    bool fusedFfnProduct = false;
};

// The pass with the HEADLAB_* switch `env` set to `value` for it alone (nullptr: none).
ModelPass modelPass(const PassSpec &s, const char *env = nullptr, const char *value = "0")
{
    if (env) ::setenv(env, value, 1);
    const auto opts = torch::TensorOptions().device(torch::kCUDA);
    Transformer t(s.model, s.vocab, s.positions, s.runs, torch::Device(torch::kCUDA), s.heads);
    for (int64_t r = 0; r < s.runs; ++r) t.initializeRun(r, s.initSeed + static_cast<uint64_t>(r));
    torch::manual_seed(s.dataSeed);
    torch::Tensor y;
    if (s.vocab > 0) {
        y = t.forward(
            torch::randint(0, s.vocab, {s.runs, 8, s.positions}, opts.dtype(torch::kLong)));
        y.logsumexp(-1).sum().backward();
    } else {
        const auto points = torch::randn({s.runs, 32, 16, 64}, opts);
        const auto target = torch::randn_like(points);
        y = t.forward(points);
        (y - target).pow(2).sum().backward();
    }
    if (env) ::unsetenv(env);
    ModelPass out{y.detach().clone(), t.flatGradients().clone(), {},
                  t.fusedFfn(),       t.fusedLayerNorm(),        t.fusedAttention(),
                  t.attentionPath(),  t.fusedFfnProduct()};
    for (auto &p : t.parameters()) out.grads.emplace_back(p.name, p.value.grad().clone());
    return out;
}

} // namespace

class TestCuda : public QObject {
    Q_OBJECT

private:
    static void tasks()
    {
        QTest::addColumn<QString>("task");
        // Every row of the task table, plain and with every stabilizer on.
        for (const char *suffix : {"", " stabilized"})
            for (const TaskSpec *spec : taskTable()) {
                const QString row = QString::fromStdString(spec->id) + suffix;
                QTest::newRow(qPrintable(row)) << row;
            }
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (!torch::cuda::is_available())
            QSKIP("no CUDA device here: these cases run on the GPU machine (scripts/gpu-tests.sh)");
        // Case by case, each path is switched by its HEADLAB_* variable; none may be set from
        // outside (an outside HEADLAB_SPLIT_K=0 made the split-K case compare plain with plain),
        // except HEADLAB_CUDA_GRAPHS=0 under compute-sanitizer (scripts/gpu-tests.sh: without
        // PyTorch's caching allocator a capture would call cudaMalloc), whose cases switch no graph.
        const bool sanitizing = qgetenv("HEADLAB_SANITIZING") == "1";
        for (const auto &s : kEnvSwitches)
            QVERIFY2(!std::getenv(s.name) ||
                         (sanitizing && s.id == Switch::CudaGraphs && qgetenv(s.name) == "0"),
                     s.name);
    }

    void ensembleEqualsAlone_data() { tasks(); }
    void ensembleEqualsAlone()
    {
        QFETCH(QString, task);
        std::vector<RunConfig> configs;
        for (int r = 0; r < 3; ++r)
            configs.push_back(taskRun(task, 1e-3 * (1 + r), 20 + r, "cuda"));
        const auto together = trainEnsemble(configs);
        // The same products batched over 3 runs or 1: cuBLAS picks its kernels by the batch, so
        // the rounding differs and training carries it on. Measured on an H100 over these runs:
        // within 1e-4 for addition and nearest neighbour, 2.1e-4 and 2.7e-4 for the 4-layer text
        // model (two runs of the suite); a path that mixed runs up would be off by far more.
        const double tolerance = task.startsWith("text") ? 1e-3 : 1e-4;
        for (size_t r = 0; r < configs.size(); ++r) {
            const auto alone = trainRun(configs[r]);
            QCOMPARE(toString(alone.status), "done");
            const double gap = relativeGap(alone, together[r]);
            QVERIFY2(gap <= tolerance,
                     qPrintable(describe("ensemble vs alone", gap, alone, together[r])));
        }
    }

    void graphsEqualEager_data() { tasks(); }
    void graphsEqualEager()
    {
        QFETCH(QString, task);
        const RunConfig c = taskRun(task, 1e-3, 3, "cuda");
        const RunResult graphs = trainRun(c);
        const RunResult eager = trainedWith(c, {{"HEADLAB_CUDA_GRAPHS", "0"}});
        QCOMPARE(provenance(graphs, "cuda_graphs"), std::string("on"));
        QCOMPARE(provenance(eager, "cuda_graphs"), std::string("off"));
        // The graph replays the kernels the eager step launches, with the same inputs: the same bits.
        const double gap = relativeGap(graphs, eager);
        QVERIFY2(gap == 0, qPrintable(describe("graphs vs eager", gap, graphs, eager)));
    }

    void fusedAdamEqualsAten_data() { tasks(); }
    void fusedAdamEqualsAten()
    {
        QFETCH(QString, task);
        const RunConfig c = taskRun(task, 1e-3, 4, "cuda");
        const RunResult fused = trainRun(c);
        const RunResult aten = trainedWith(c, {{"HEADLAB_FUSED_ADAM", "0"}});
        QVERIFY2(provenance(fused, "fused_adam").rfind("on", 0) == 0,
                 provenance(fused, "fused_adam").c_str());
        QVERIFY2(provenance(aten, "fused_adam").rfind("off", 0) == 0,
                 provenance(aten, "fused_adam").c_str());
        // One kernel against ATen's passes: the same formula, rounded in another order.
        const double gap = relativeGap(fused, aten);
        QVERIFY2(gap <= 1e-5, qPrintable(describe("fused Adam vs ATen", gap, fused, aten)));
    }

    // The nearest-neighbour task's training points from one CUDA kernel (core/model/cuda/
    // UnitPoints.cu) against ATen's passes over the same counters, on the GPU and on the CPU. The
    // hash, the uniforms and Box–Muller are the same operations; the norm sums the coordinates in
    // another order, so a coordinate (|x| ≤ 1) may differ in its last bits. A wrong bit of the hash
    // or a wrong constant moves whole points (a gap of order 1). Then a run trained on each.
    void fusedPointsEqualAten()
    {
        const auto keys = NearestNeighbourTask::seedKeys({0, 1, 7, 123456789}).to(torch::kCUDA);
        const std::vector<int64_t> shape = {256, 16, 64};
        for (int64_t step : {int64_t{0}, int64_t{1}, int64_t{99999}, int64_t{4294967301}}) {
            const auto s = torch::full({}, step, keys.options());
            bool fused = false, aten = true;
            const auto a = NearestNeighbourTask::unitPoints(keys, s, shape, &fused);
            ::setenv("HEADLAB_FUSED_POINTS", "0", 1);
            const auto b = NearestNeighbourTask::unitPoints(keys, s, shape, &aten);
            ::unsetenv("HEADLAB_FUSED_POINTS");
            const auto c = NearestNeighbourTask::unitPoints(keys.cpu(), s.cpu(), shape);
            QVERIFY2(fused, "the kernel was not taken");
            QVERIFY(!aten);
            QCOMPARE(a.sizes().vec(), b.sizes().vec());
            const double gpu = (a - b).abs().max().item<double>();
            const double cpu = (a.cpu() - c).abs().max().item<double>();
            QVERIFY2(gpu <= 1e-6, qPrintable(QString("step %1: kernel vs ATen on the GPU, max "
                                                     "|diff| %2")
                                                 .arg(step)
                                                 .arg(gpu)));
            QVERIFY2(cpu <= 1e-6, qPrintable(QString("step %1: kernel vs ATen on the CPU, max "
                                                     "|diff| %2")
                                                 .arg(step)
                                                 .arg(cpu)));
        }
        trainedOnAndOff("HEADLAB_FUSED_POINTS", "task.fused_points", 1e-5, "fused points vs ATen");
    }

    // The ReLU feed-forward block's bias and ReLU as one kernel on the product x·w1, and the ReLU's
    // and b1's gradients as one kernel on the product that makes dh (Kernels.h), against ATen's
    // relu(baddbmm), the mask and the sum. First the kernels alone, at the nearest-neighbour
    // model's shape and at shapes that are no multiple of the kernels' blocks (F not of 512, N odd,
    // fewer rows than slices, F odd: one column a thread); then every gradient of a whole nn-fig1
    // model; then a run trained on each path. A wrong bias index, mask or slice is off by the
    // entries' own size (order 1).
    void fusedFeedForwardEqualsAten()
    {
        at::globalContext().setAllowTF32CuBLAS(false);
        const auto opts = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32);
        // (R, N, m, F)
        for (const auto &[R, N, m, F] : std::vector<std::array<int64_t, 4>>{
                 {8, 4096, 64, 2048}, {3, 101, 16, 64}, {2, 37, 24, 200}, {1, 5, 8, 75}}) {
            torch::manual_seed(R * 1000 + F);
            const auto x = torch::randn({R, N, m}, opts), w1 = torch::randn({R, m, F}, opts) / 8;
            const auto b1 = torch::randn({R, F}, opts), w2 = torch::randn({R, F, m}, opts) / 8;
            const auto dy = torch::randn({R, N, m}, opts);
            const QString shape = QString("R %1, N %2, m %3, F %4").arg(R).arg(N).arg(m).arg(F);
            auto h = torch::bmm(x, w1);
            QVERIFY2(fusedBiasRelu(h, b1), qPrintable("the forward kernel failed at " + shape));
            const auto hRef = torch::relu(torch::baddbmm(b1.unsqueeze(1), x, w1));
            auto dh = torch::bmm(dy, w2.transpose(1, 2));
            const auto dhRef = dh * (h > 0); // the kernel's own signs: the mask alone is tested
            const auto gbRef = dhRef.sum(1);
            auto gb1 = torch::full({R, F}, 7.0, opts); // written, not added to
            QVERIFY2(fusedReluBackward(dh, h, gb1),
                     qPrintable("the backward kernel failed at " + shape));
            // The bias added after the product or inside it: rounding of a few 1e-7 of the
            // entries' scale; the bias gradient sums the rows in slices, then the slices.
            checkClose("h", shape, h, hRef, 1e-5 * hRef.abs().max().item<double>());
            checkClose("dh", shape, dh, dhRef, 0.0); // the same entries kept or zeroed: exact
            checkClose("b1's gradient", shape, gb1, gbRef,
                       1e-5 * dhRef.abs().sum(1).max().item<double>());
        }
        // NaN stays NaN (torch.relu's), so a diverged run's loss is still not finite.
        auto t = torch::tensor({-1.0f, 0.0f, 2.0f, NAN}, opts).view({1, 1, 4});
        QVERIFY(fusedBiasRelu(t, torch::zeros({1, 4}, opts)));
        const auto back = t.cpu();
        QCOMPARE(back[0][0][0].item<float>(), 0.0f);
        QCOMPARE(back[0][0][1].item<float>(), 0.0f);
        QCOMPARE(back[0][0][2].item<float>(), 2.0f);
        QVERIFY(std::isnan(back[0][0][3].item<float>()));

        // Every parameter's gradient of the 1-layer nn-fig1 model (FFN 2048), 4 runs.
        const PassSpec spec{loadPreset("nn-fig1-full").base.model, 0, 0, 4, 40, 3, {}};
        const ModelPass fused = modelPass(spec), aten = modelPass(spec, "HEADLAB_FUSED_FFN");
        QVERIFY2(fused.fusedFfn, "the fused block was not taken");
        QVERIFY(!aten.fusedFfn);
        checkClose("the nn model's gradients", "FFN 2048", fused.flat, aten.flat,
                   1e-5 * aten.flat.abs().max().item<double>());

        trainedOnAndOff("HEADLAB_FUSED_FFN", "fused_ffn", 1e-4, "fused feed-forward vs ATen");
    }

    // The feed-forward block's first product with its bias and ReLU in a CUTLASS epilogue
    // (Kernels.h: fusedBiasReluProduct, issue 56) against cuBLAS's product with them after it.
    // First the kernel alone: at nearest neighbour's shape, at rows, widths and inner sizes that
    // are no multiple of its tile (256 × 128 × 8), NaN kept; then where it is taken and where not;
    // then every gradient of a whole nn-fig1 model, and an nn-fig1 run trained on each path. A
    // wrong bias index, tile edge or ReLU is off by the entries' own size (order 1). Skips where
    // the build has no CUTLASS (no nvidia-cutlass headers).
    void ffnProductEqualsCublas()
    {
        at::globalContext().setAllowTF32CuBLAS(false);
        const auto opts = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32);
        {
            const auto x = torch::zeros({1, 256, 64}, opts), w1 = torch::zeros({1, 64, 1024}, opts);
            if (!fusedFfnProductFits(x, w1, torch::zeros({1, 1024}, opts)))
                QSKIP("this build has no CUTLASS product (cmake/HeadlabCutlass.cmake found no "
                      "headers)");
        }
        // (R, N, m, F)
        for (const auto &[R, N, m, F] : std::vector<std::array<int64_t, 4>>{
                 {8, 4096, 64, 2048}, {3, 101, 16, 1024}, {2, 37, 64, 1031}, {1, 5, 7, 1100}}) {
            torch::manual_seed(R * 1000 + F);
            const auto x = torch::randn({R, N, m}, opts), w1 = torch::randn({R, m, F}, opts) / 8;
            const auto b1 = torch::randn({R, F}, opts);
            const QString shape = QString("R %1, N %2, m %3, F %4").arg(R).arg(N).arg(m).arg(F);
            const auto h = fusedBiasReluProduct(x, w1, b1);
            QVERIFY2(h, qPrintable("the product failed at " + shape));
            const auto hRef = torch::relu(torch::baddbmm(b1.unsqueeze(1), x, w1));
            // The same products summed in another order: a few 1e-7 of the entries' scale.
            checkClose("h", shape, *h, hRef, 1e-5 * hRef.abs().max().item<double>());
        }
        // NaN in x stays NaN in its row (torch.relu keeps it), so a diverged run still diverges.
        {
            auto x = torch::randn({1, 300, 64}, opts);
            x[0][7][3] = NAN;
            const auto h = fusedBiasReluProduct(x, torch::randn({1, 64, 1024}, opts),
                                                torch::zeros({1, 1024}, opts));
            QVERIFY(h);
            QVERIFY(torch::isnan((*h)[0][7]).all().item<bool>());
            QVERIFY(!torch::isnan((*h)[0][8]).any().item<bool>());
        }
        // Taken only where it was measured faster, in FP32, and with its switch on.
        const auto x = torch::randn({2, 64, 64}, opts), w1 = torch::randn({2, 64, 1024}, opts);
        const auto b1 = torch::randn({2, 1024}, opts);
        QVERIFY(fusedFfnProductFits(x, w1, b1));
        QVERIFY(!fusedFfnProductFits(torch::randn({2, 64, 65}, opts),
                                     torch::randn({2, 65, 1024}, opts), b1));
        QVERIFY(!fusedFfnProductFits(x, torch::randn({2, 64, 512}, opts),
                                     torch::randn({2, 512}, opts)));
        QVERIFY(!fusedFfnProductFits(x.to(torch::kDouble), w1.to(torch::kDouble),
                                     b1.to(torch::kDouble)));
        at::globalContext().setAllowTF32CuBLAS(true);
        QVERIFY(!fusedFfnProductFits(x, w1, b1));
        at::globalContext().setAllowTF32CuBLAS(false);
        ::setenv("HEADLAB_FFN_PRODUCT", "0", 1);
        QVERIFY(!fusedFfnProductFits(x, w1, b1));
        ::unsetenv("HEADLAB_FFN_PRODUCT");

        // Every parameter's gradient of the 1-layer nn-fig1 model (d 64, FFN 2048), 4 runs.
        const PassSpec spec{loadPreset("nn-fig1-full").base.model, 0, 0, 4, 40, 3, {}};
        const ModelPass product = modelPass(spec), cublas = modelPass(spec, "HEADLAB_FFN_PRODUCT");
        QVERIFY2(product.fusedFfnProduct, "the CUTLASS product was not taken");
        QVERIFY(!cublas.fusedFfnProduct && cublas.fusedFfn);
        checkClose("the nn model's outputs", "FFN 2048", product.y, cublas.y,
                   1e-5 * cublas.y.abs().max().item<double>());
        checkClose("the nn model's gradients", "FFN 2048", product.flat, cublas.flat,
                   1e-5 * cublas.flat.abs().max().item<double>());

        // An nn-fig1 run (200 steps, 4,096 rows a step) trained on each path.
        RunConfig c = loadPreset("nn-fig1-full").base;
        c.phases[0].steps = 200;
        c.evalEvery = 100;
        c.logEvery = 1;
        c.device = "cuda";
        const RunResult on = trainRun(c);
        const RunResult off = trainedWith(c, {{"HEADLAB_FFN_PRODUCT", "0"}});
        QCOMPARE(provenance(on, "ffn_product"), std::string("on"));
        QCOMPARE(provenance(off, "ffn_product"), std::string("off"));
        const double gap = relativeGap(on, off);
        QVERIFY2(gap <= 1e-4, qPrintable(describe("CUTLASS product vs cuBLAS", gap, on, off)));
    }

    // The unit-scale norm's residual step y = g · (a + r) / ‖a + r‖ as one kernel each way
    // (Kernels.h: fusedResidualUnitNorm) against ATen's passes and autograd through them: at the
    // nearest-neighbour model's rows (d 64), at d that is no multiple of a warp, with the norm's
    // floor (eps, HEADLAB_UNIT_NORM_EPS) under and over some rows' norms, and a zero row without a
    // floor (NaN, as the paper's code). Then a run trained on each path.
    void fusedUnitNormEqualsAten()
    {
        const auto opts = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32);
        struct Case {
            int64_t R, rows, d;
            double eps;
        };
        for (Case c : {Case{8, 4096, 64, 0.0}, Case{3, 17, 16, 0.0}, Case{2, 5, 40, 0.0},
                       Case{2, 64, 64, 1e-3}, Case{1, 9, 100, 0.5}}) {
            c.R = fewUnderSanitizer(c.R, 2);
            c.rows = fewUnderSanitizer(c.rows, 64);
            torch::manual_seed(c.R * 100 + c.d);
            auto a = torch::randn({c.R, c.rows, c.d}, opts),
                 r = torch::randn({c.R, c.rows, c.d}, opts);
            if (c.eps > 0) { // some rows far below the floor
                a.narrow(1, 0, 2).mul_(1e-5);
                r.narrow(1, 0, 2).mul_(1e-5);
            }
            const auto gain = (torch::rand({c.R, 1}, opts) + 0.5);
            const auto dy = torch::randn({c.R, c.rows, c.d}, opts);
            const QString shape =
                QString("R %1, rows %2, d %3, eps %4").arg(c.R).arg(c.rows).arg(c.d).arg(c.eps);
            const auto parts = fusedResidualUnitNorm(a, r, gain, c.eps);
            QVERIFY2(parts, qPrintable("the forward kernel failed at " + shape));
            const auto back = fusedResidualUnitNormBackward(dy, *parts, gain, c.eps);
            QVERIFY2(back, qPrintable("the backward kernel failed at " + shape));
            // ATen's path, as Transformer::norm computes it, and autograd through it.
            const auto ar = a.clone().requires_grad_(true), rr = r.clone().requires_grad_(true);
            const auto gr = gain.clone().requires_grad_(true);
            const auto sum = rr + ar;
            auto n = sum.norm(2, -1, true);
            if (c.eps > 0) n = n.clamp_min(c.eps);
            const auto y = gr.view({c.R, 1, 1}) * sum / n;
            y.backward(dy);
            checkClose("y", shape, parts->y, y.detach(), 1e-5 * y.abs().max().item<double>());
            checkClose("s", shape, parts->s, sum.detach(), 0.0);
            checkClose("the gradient of a", shape, back->first, ar.grad(),
                       1e-5 * ar.grad().abs().max().item<double>());
            checkClose("the gradient of r", shape, back->first, rr.grad(),
                       1e-5 * rr.grad().abs().max().item<double>());
            checkClose("g's gradient", shape, back->second.sum(1).view({c.R, 1}), gr.grad(),
                       1e-5 * back->second.abs().sum(1).max().item<double>());
        }
        // A zero row without a floor: NaN, as ATen's 0 / 0 (the run is then diverged).
        const auto zero = torch::zeros({1, 2, 8}, opts);
        const auto nan = fusedResidualUnitNorm(zero, zero, torch::ones({1, 1}, opts), 0.0);
        QVERIFY(nan && torch::isnan(nan->y).all().item<bool>());

        trainedOnAndOff("HEADLAB_FUSED_NORM", "fused_norm", 1e-4, "fused unit-scale norm vs ATen");
    }

    // The LayerNorm with each run's scale and shift, y = b + (x − μ) / sqrt(unbiased var + 1e-9) ·
    // g, as one kernel each way (Kernels.h: fusedLayerNormForward) against ATen's path in
    // Transformer::norm (layer_norm, then addcmul) and autograd through it: at the text model's
    // width (256), the addition model's (384 and 24), at widths that are no multiple of a warp (100,
    // 1000, 2), with rows that leave some slices empty; then every gradient of a whole text model;
    // then a text run and an addition run trained on each path.
    void fusedLayerNormEqualsAten()
    {
        at::globalContext().setAllowTF32CuBLAS(false);
        const auto opts = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32);
        // (R, rows, d)
        for (const auto &given : std::vector<std::array<int64_t, 3>>{{1, 8192, 256},
                                                                     {8, 1216, 384},
                                                                     {3, 37, 24},
                                                                     {2, 5, 100},
                                                                     {1, 3, 1000},
                                                                     {2, 130, 2}}) {
            const int64_t R = fewUnderSanitizer(given[0], 2),
                          rows = fewUnderSanitizer(given[1], 64), d = given[2];
            torch::manual_seed(R * 1000 + d);
            const auto x = torch::randn({R, rows, d}, opts) * 3 + 1;
            const auto gain = torch::rand({R, d}, opts) + 0.5, shift = torch::randn({R, d}, opts);
            const auto dy = torch::randn({R, rows, d}, opts);
            const QString shape = QString("R %1, rows %2, d %3").arg(R).arg(rows).arg(d);
            const double n = static_cast<double>(d), eps = 1e-9 * (n - 1.0) / n;
            const double c = std::sqrt((n - 1.0) / n);
            const auto parts = fusedLayerNormForward(x, gain, shift, eps, c);
            QVERIFY2(parts, qPrintable("the forward kernel failed at " + shape));
            const auto back = fusedLayerNormBackward(dy, x, *parts, gain, c);
            QVERIFY2(back, qPrintable("the backward kernel failed at " + shape));
            // ATen's path, as Transformer::norm computes it without the kernel.
            const auto ref = testing::layerNormReference(x, gain, shift, dy, eps, c);
            checkClose("y", shape, parts->y, ref.y, 1e-5 * ref.y.abs().max().item<double>());
            checkClose("x's gradient", shape, back->dx, ref.dx,
                       1e-5 * ref.dx.abs().max().item<double>());
            checkClose("g's gradient", shape, back->gain, ref.gain,
                       1e-5 * (dy * parts->y).abs().sum(1).max().item<double>());
            checkClose("b's gradient", shape, back->shift, ref.shift,
                       1e-5 * dy.abs().sum(1).max().item<double>());
        }

        // Every parameter's gradient of a text model (d 64, heads 1, 2, 4, 8), 3 runs.
        PassSpec spec{loadPreset("head-progression-classroom").base.model, 256, 32, 3, 60, 5, {}};
        spec.model.heads = {1, 2, 4, 8};
        const ModelPass fused = modelPass(spec), aten = modelPass(spec, "HEADLAB_FUSED_LAYER_NORM");
        QVERIFY2(fused.fusedLayerNorm, "the fused layer norm was not taken");
        QVERIFY(!aten.fusedLayerNorm);
        checkClose("the text model's gradients", "d 64", fused.flat, aten.flat,
                   1e-5 * aten.flat.abs().max().item<double>());

        // Under compute-sanitizer the text model's pass above stands for its training: racecheck
        // over the text run and the addition run passed 110 s (2026-12-04 verdict at b6ec3fa).
        if (qgetenv("HEADLAB_SANITIZING") != "1")
            trainedOnAndOff("HEADLAB_FUSED_LAYER_NORM", "fused_layer_norm", 1e-4,
                            "fused layer norm vs ATen, text", "text");
        trainedOnAndOff("HEADLAB_FUSED_LAYER_NORM", "fused_layer_norm", 1e-4,
                        "fused layer norm vs ATen, addition", "addition");
    }

    // Attention over micro-heads as one kernel each way (Kernels.h: fusedMicroAttentionForward)
    // against ATen's path in Transformer::attendMicro (batched products over (R, B, M, T, dm)
    // views, the scale, the causal mask, softmax) and autograd through it: at nn-fig1-full's w 64
    // (64 micro-heads of 64), w 1 and w 8 at 16 and 64 heads, an addition-like causal shape and odd
    // sizes, from three tensors and from thirds of one; then every gradient of whole models (nn at
    // w 64, 8 and 1; text, causal) against ATen's micro-heads, with the distance to sdpa for
    // scale; then runs of three tasks trained on each path.
    void fusedMicroAttentionEqualsAten()
    {
        at::globalContext().setAllowTF32CuBLAS(false);
        const auto opts = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32);
        struct Shape {
            int64_t R, B, T, M, dm;
            bool causal, packed;
        };
        for (const Shape &given :
             {Shape{2, 8, 16, 64, 64, false, false}, Shape{3, 5, 16, 1, 64, false, true},
              Shape{2, 4, 16, 128, 4, false, false}, Shape{2, 3, 16, 512, 1, false, true},
              Shape{1, 6, 13, 12, 32, true, true}, Shape{2, 3, 33, 3, 5, true, false}}) {
            const Shape s{fewUnderSanitizer(given.R, 1),
                          fewUnderSanitizer(given.B, 2),
                          given.T,
                          given.M,
                          given.dm,
                          given.causal,
                          given.packed};
            const int64_t inner = s.M * s.dm;
            const QString shape = QString("R %1, B %2, T %3, M %4, dm %5%6%7")
                                      .arg(s.R)
                                      .arg(s.B)
                                      .arg(s.T)
                                      .arg(s.M)
                                      .arg(s.dm)
                                      .arg(s.causal ? ", causal" : "")
                                      .arg(s.packed ? ", packed" : "");
            QVERIFY2(fusedMicroAttentionFits(s.T, s.M, s.dm), qPrintable(shape));
            torch::manual_seed(s.T * 1000 + s.M);
            const auto qkv = torch::randn({s.R, s.B, s.T, 3 * inner}, opts);
            const auto third = [&](int64_t i) {
                const auto t = qkv.narrow(3, i * inner, inner);
                return s.packed ? t : t.contiguous();
            };
            const auto q = third(0), k = third(1), v = third(2);
            const auto dout = torch::randn({s.R, s.B, s.T, inner}, opts);
            const double scale = 0.7 / std::sqrt(static_cast<double>(s.dm));
            const auto o = fusedMicroAttentionForward(q, k, v, s.M, scale, s.causal);
            QVERIFY2(o, qPrintable("the forward kernel failed at " + shape));
            auto grads =
                torch::full({s.R, s.B, s.T, 3 * inner}, NAN, opts); // every element written
            auto dq = grads.narrow(3, 0, inner), dk = grads.narrow(3, inner, inner),
                 dv = grads.narrow(3, 2 * inner, inner);
            QVERIFY2(fusedMicroAttentionBackward(dout, q, k, v, s.M, scale, s.causal, dq, dk, dv),
                     qPrintable("the backward kernel failed at " + shape));
            // ATen's path, as Transformer::attendMicro computes it without the kernel.
            const auto qr = q.detach().clone().requires_grad_(true),
                       kr = k.detach().clone().requires_grad_(true),
                       vr = v.detach().clone().requires_grad_(true);
            const auto heads = [&](const torch::Tensor &t) {
                return t.view({s.R, s.B, s.T, s.M, s.dm}).transpose(2, 3);
            };
            auto scores = torch::matmul(heads(qr), heads(kr).transpose(-1, -2)) * scale;
            if (s.causal)
                scores =
                    scores.masked_fill(torch::ones({s.T, s.T}, opts.dtype(torch::kBool)).triu(1),
                                       -std::numeric_limits<float>::infinity());
            const auto want = torch::matmul(torch::softmax(scores, -1), heads(vr))
                                  .transpose(2, 3)
                                  .reshape({s.R, s.B, s.T, inner});
            want.backward(dout);
            checkClose("o", shape, *o, want.detach(), 1e-5 * want.abs().max().item<double>());
            checkClose("q's gradient", shape, dq, qr.grad(),
                       1e-5 * qr.grad().abs().max().item<double>());
            checkClose("k's gradient", shape, dk, kr.grad(),
                       1e-5 * kr.grad().abs().max().item<double>());
            checkClose("v's gradient", shape, dv, vr.grad(),
                       1e-5 * vr.grad().abs().max().item<double>());
        }

        // Whole models: the outputs and every parameter's gradient with the kernel and without.
        struct Model {
            const char *name;
            PassSpec spec;
        };
        // The nn models with GELU for ReLU: where a ReLU's input is within rounding of 0, two
        // correct paths may leave it on either side, and the first layer's gradient jumps there
        // (the first GPU run: nn at w 8, layers.0.w1 off by 0.10 between ATen's micro-heads and
        // both the kernel and sdpa, which agreed). The attention they are here for is the same.
        auto nn = loadPreset("nn-fig1-full").base.model;
        nn.activation = Activation::Gelu;
        auto text = loadPreset("head-progression-classroom").base.model;
        text.heads = {1, 2, 4, 8};
        std::vector<Model> models;
        for (const int64_t w : {64, 8, 1}) {
            nn.widthMultiplier = w;
            models.push_back({w == 64  ? "nn, w 64"
                              : w == 8 ? "nn, w 8"
                                       : "nn, w 1",
                              {nn, 0, 0, 3, 60, 5, {}}});
        }
        models.push_back({"text", {text, 256, 32, 3, 60, 5, {}}});
        for (const Model &m : models) {
            const ModelPass kernel = modelPass(m.spec),
                            aten = modelPass(m.spec, "HEADLAB_FUSED_ATTENTION"),
                            sdpa = modelPass(m.spec, "HEADLAB_ATTENTION", "sdpa");
            QVERIFY2(kernel.fusedAttention, m.name);
            QVERIFY2(!aten.fusedAttention && !sdpa.fusedAttention, m.name);
            checkClose("outputs", m.name, kernel.y, aten.y,
                       1e-5 * aten.y.abs().max().item<double>());
            // Each parameter's gradient within 1e-5 of the largest of all; where one is not, the
            // message says which, and how far ATen's two paths (micro-heads, sdpa) are apart there.
            double largest = 0;
            for (const auto &[name, g] : aten.grads)
                largest = std::max(largest, g.abs().max().item<double>());
            for (size_t i = 0; i < aten.grads.size(); ++i) {
                const auto &[name, g] = aten.grads[i];
                const double diff = (kernel.grads[i].second - g).abs().max().item<double>();
                const double paths = (sdpa.grads[i].second - g).abs().max().item<double>();
                QVERIFY2(diff <= 1e-5 * largest,
                         qPrintable(
                             QString("%1, %2's gradient: kernel − ATen max |diff| %3 (allowed %4; "
                                     "its largest entry %5; sdpa − ATen %6)")
                                 .arg(m.name, QString::fromStdString(name))
                                 .arg(diff)
                                 .arg(1e-5 * largest)
                                 .arg(g.abs().max().item<double>())
                                 .arg(paths)));
            }
        }

        for (const char *task : {"nearest_neighbour", "addition", "text"})
            trainedOnAndOff("HEADLAB_FUSED_ATTENTION", "fused_attention", 1e-4,
                            "micro-heads' attention kernel vs ATen", task);
    }

    // The attention plan (core/attention/AttentionPlan.h) for a text run at context 128: every
    // layer attends through sdpa on the GPU, and provenance says so. Before the plan the model
    // built micro-heads for it and recorded "micro-heads" while its forward pass took sdpa.
    void textAtContext128AttendsThroughSdpa()
    {
        RunConfig c = taskRun("text", 1e-3, 5, "cuda");
        c.task.contextLength = 128;
        c.phases[0].steps = 20;
        c.evalEvery = 20;
        const RunResult r = trainRun(c);
        QVERIFY2(r.status == RunStatus::Done, r.message.c_str());
        QCOMPARE(provenance(r, "attention"), std::string("sdpa"));
        QCOMPARE(provenance(r, "fused_attention"), std::string("off"));
        // At its own context of 32 the same run takes micro-heads, the kernel among them.
        const RunResult short32 = trainRun(taskRun("text", 1e-3, 5, "cuda"));
        QCOMPARE(provenance(short32, "attention"), std::string("micro-heads"));
    }

    void microHeadsEqualFused_data() { tasks(); }
    void microHeadsEqualFused()
    {
        QFETCH(QString, task);
        trainedMicroAndSdpa(taskRun(task, 1e-3, 5, "cuda"), "micro-heads vs sdpa");
    }

    // Micro-heads beyond 64 (kMaxMicroHeads, kMaxMixedMicroHeads): the nn-fig1 slice's model at
    // w 8 with 16 heads a run (128 micro-heads of width 4), with 64 (512 of width 1), and with
    // runs of 2, 8 and 16 heads (128, whose scores the mix adds up per head), against
    // scaled_dot_product_attention head by head (HEADLAB_ATTENTION=sdpa): the outputs and every
    // gradient, then a run trained on each path. The losses alone missed a logit scale off by 5 %
    // (bench/broken_kernel_check.sh, 2026-11-29); the gradients do not.
    void microHeadsBeyond64EqualFused()
    {
        at::globalContext().setAllowTF32CuBLAS(false);
        auto model = loadPreset("nn-fig1-full").base.model;
        model.widthMultiplier = 8;
        struct Layout {
            const char *name;
            std::vector<std::vector<int64_t>> heads; // per run, per layer
            int64_t micro;                           // the micro-heads the default path takes
        };
        for (const Layout &l : {Layout{"16 heads", {{16}, {16}, {16}}, 128},
                                Layout{"64 heads", {{64}, {64}, {64}}, 512},
                                Layout{"2, 8 and 16 heads", {{2}, {8}, {16}}, 128}}) {
            QCOMPARE(
                microHeadCount({l.heads[0][0] * 8, l.heads[1][0] * 8, l.heads[2][0] * 8}, 8 * 64),
                l.micro);
            const PassSpec spec{model, 0, 0, 3, 60, 5, l.heads};
            const ModelPass micro = modelPass(spec),
                            sdpa = modelPass(spec, "HEADLAB_ATTENTION", "sdpa");
            QCOMPARE(micro.attentionPath, std::string("micro-heads"));
            QCOMPARE(sdpa.attentionPath, std::string("sdpa"));
            checkClose("outputs", l.name, micro.y, sdpa.y,
                       1e-5 * sdpa.y.abs().max().item<double>());
            checkClose("gradients", l.name, micro.flat, sdpa.flat,
                       1e-5 * sdpa.flat.abs().max().item<double>());
        }
        RunConfig c = taskRun("nearest_neighbour", 1e-3, 5, "cuda");
        c.model.widthMultiplier = 8;
        c.model.heads = {16, 16};
        trainedMicroAndSdpa(c, "micro-heads (128) vs sdpa");
    }

    void fusedQkvAndSplitKEqualPlain_data() { tasks(); }
    void fusedQkvAndSplitKEqualPlain()
    {
        // Q, K and V as one product, and weight gradients summed over row slices, against three
        // products and one long reduction each.
        QFETCH(QString, task);
        const RunConfig c = taskRun(task, 1e-3, 9, "cuda");
        const RunResult fast = trainRun(c);
        const RunResult plain =
            trainedWith(c, {{"HEADLAB_FUSED_QKV", "0"}, {"HEADLAB_SPLIT_K", "0"}});
        QCOMPARE(provenance(plain, "env.HEADLAB_FUSED_QKV"), std::string("0"));
        // Each side took its path: the fast one the fused product and the split.
        QCOMPARE(provenance(fast, "fused_qkv"), std::string("on"));
        QCOMPARE(provenance(fast, "split_k"), std::string("on"));
        QCOMPARE(provenance(plain, "fused_qkv"), std::string("off"));
        QCOMPARE(provenance(plain, "split_k"), std::string("off"));
        const double gap = relativeGap(fast, plain);
        QVERIFY2(gap <= 1e-4,
                 qPrintable(describe("fused QKV + split-K vs plain", gap, fast, plain)));
    }

    void sameSeedIsBitIdentical_data() { tasks(); }
    void sameSeedIsBitIdentical()
    {
        QFETCH(QString, task);
        const RunConfig c = taskRun(task, 1e-3, 6, "cuda");
        const RunResult first = trainRun(c), second = trainRun(c);
        QCOMPARE(relativeGap(first, second), 0.0);
        RunConfig other = taskRun(task, 2e-3, 7, "cuda");
        const auto together = trainEnsemble({c, other, c});
        QCOMPARE(relativeGap(together[0], together[2]), 0.0);
        QVERIFY(relativeGap(together[0], together[1]) > 0); // and the check can fail
    }

    void cpuAndCudaAgree_data() { tasks(); }
    // An ensemble stopped on the GPU halfway resumes from its stop checkpoints, and ends as the
    // ensemble trained uninterrupted (CUDA graphs, fused Adam and every kernel as the task takes
    // them). The nearest-neighbour task once recorded which path made its points (the CUDA kernel)
    // as part of its data; at a resume, before its first batch, it said "off", so every
    // checkpoint it had written on the GPU was refused and its runs trained again from step 0.
    void stoppedRunsResumeWhereTheyStopped_data() { tasks(); }
    void stoppedRunsResumeWhereTheyStopped()
    {
        QFETCH(QString, task);
        const RunConfig a = taskRun(task, 1e-3, 8, "cuda"), b = taskRun(task, 1e-3, 9, "cuda");
        QTemporaryDir tmp;
        const std::string dir = tmp.path().toStdString();
        auto control = [](std::vector<std::string> dirs, std::vector<std::string> resume,
                          std::function<bool(size_t)> stop) {
            TrainerControl c;
            c.checkpoints.every = 20;
            c.checkpoints.keep = 2;
            c.checkpointDirs = std::move(dirs);
            c.resumeFrom = std::move(resume);
            c.memberStopRequested = std::move(stop);
            return c;
        };
        const int64_t half = a.totalSteps() / 2;
        int64_t polls = 0;
        const auto stopped =
            trainMembers({a, b}, control({dir + "/a", dir + "/b"}, {},
                                         [&](size_t) { return ++polls > 2 * half; }));
        QVERIFY2(stopped[0].status == RunStatus::Stopped, stopped[0].message.c_str());
        QVERIFY(stopped[0].stepsDone > 0 && stopped[0].stepsDone < a.totalSteps());
        const auto resumed =
            trainMembers({a, b}, control({dir + "/a", dir + "/b"},
                                         {dir + "/a/" + stopped[0].checkpoints.back().file,
                                          dir + "/b/" + stopped[1].checkpoints.back().file},
                                         {}));
        const auto whole = trainMembers({a, b}, control({dir + "/wa", dir + "/wb"}, {}, {}));
        for (size_t i = 0; i < 2; ++i) {
            QVERIFY2(resumed[i].status == RunStatus::Done, resumed[i].message.c_str());
            QVERIFY2(resumed[i].message.find("not a usable checkpoint") == std::string::npos &&
                         resumed[i].message.find("from step 0") == std::string::npos,
                     resumed[i].message.c_str());
            const double gap = relativeGap(whole[i], resumed[i]);
            QVERIFY2(gap == 0.0,
                     qPrintable(describe("resumed vs uninterrupted", gap, whole[i], resumed[i])));
        }
    }

    // A sweep over every GPU (SweepOptions::device "all") places its ensembles on the cards
    // before any starts (placeOnDevices): runs of two widths, one run an ensemble, land on every
    // card, and each ends as it does trained alone on the first. Skips with fewer than two GPUs.
    void sweepOverEveryGpuPlacesEachRunAndAgrees()
    {
        const int gpus = static_cast<int>(torch::cuda::device_count());
        if (gpus < 2) QSKIP("one GPU here: this case needs two or more");
        std::vector<SweepJob> jobs;
        for (int i = 0; i < 2 * gpus; ++i) {
            RunConfig c = taskRun("addition", 1e-3 * (1 + i % 3), uint64_t(30 + i), "cuda:0");
            if (i % 2) c.model.dModel = 96; // a second shape, twice as wide
            jobs.push_back({i, c});
        }
        std::map<int, RunResult> finished;
        SweepCallbacks cb;
        cb.onRunFinished = [&](int i, const RunResult &r) { finished[i] = r; };
        SweepOptions opt;
        opt.device = "all";
        opt.maxEnsemble = 1;
        SweepRunner runner;
        QVERIFY(runner.start(jobs, opt, cb));
        runner.wait();
        QCOMPARE(finished.size(), jobs.size());
        std::set<std::string> used;
        for (const auto &j : jobs) {
            const RunResult &r = finished.at(j.runIndex);
            QVERIFY2(r.status == RunStatus::Done, r.message.c_str());
            used.insert(r.device);
            const RunResult alone = trainRun(j.config);
            const double gap = relativeGap(alone, r);
            QVERIFY2(gap <= 1e-5,
                     qPrintable(describe("placed on a card vs alone on cuda:0", gap, alone, r) +
                                " on " + QString::fromStdString(r.device)));
        }
        QCOMPARE(int(used.size()), gpus);
    }

    void cpuAndCudaAgree()
    {
        // The same seeded run on the CPU and the GPU, FP32 (no TF32): float rounding differs
        // (other kernels, other summation orders, the one-hot embedding product on the GPU), and
        // training amplifies it a little; over these runs the losses agree within 1e-3 relative.
        QFETCH(QString, task);
        const RunResult cpu = trainRun(taskRun(task, 1e-3, 8, "cpu"));
        const RunResult gpu = trainRun(taskRun(task, 1e-3, 8, "cuda"));
        QCOMPARE(toString(gpu.status), "done");
        const double gap = relativeGap(cpu, gpu);
        QVERIFY2(gap <= 1e-3, qPrintable(describe("cpu vs cuda", gap, gpu, cpu)));
        QVERIFY2(gap > 0, "cpu and cuda gave the same bits: is the GPU run really on the GPU?");
    }
};

QTEST_GUILESS_MAIN(TestCuda)
#include "test_cuda.moc"
