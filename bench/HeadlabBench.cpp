// HeadlabBench.cpp — throughput and equivalence measurements of the training core.
//
//   headlab-bench single   --device D --shapes 24x1,96x3 --steps N [--threads T] [--batch B]
//                          [--profile 1 [--products 1]]   (on the CPU: where a step's time goes;
//                          with --products, each matrix product by its shapes against the cores'
//                          measured FP32 peak)
//                          [--timed 1]   (on the CPU: each product and the step's parts by the
//                          clock alone, without the profiler: CpuProfile.h's TimedProducts)
//   headlab-bench peak     --threads T      (the FP32 peak of T cores, measured; one op's dispatch)
//   headlab-bench ensemble --device D --shapes 96x3 --runs R --steps N [--mix 1,2,3,6,12]
//   headlab-bench sweep    --device D --widths 24,48,96 --heads 1,3 --lrs 1e-4,1e-3,1e-2 --steps N
//                          [--max-ensemble K] [--concurrent C]   (through the scheduler)
//   headlab-bench equivalence --device D --steps N   (ensemble vs alone: max |Δloss|)
//   headlab-bench devices  --steps N                 (the same seeded run on cpu and cuda:0)
//   headlab-bench fused-adam --device D --steps N    (fused CUDA Adam/AdamW vs the ATen passes)
//   headlab-bench determinism --device D --steps N   (same seed twice, and twice in one ensemble: Δ = 0)
//   headlab-bench profile  --device D --shapes 384x3 --runs R [--mix 1,2,3,6,12] --steps N [--trace F]
//                          [--products 1]
//                          (GPU time per kernel class, the top kernels and the idle time between
//                          kernels, from the Kineto profiler; with --products, each matrix product's
//                          achieved rate against the card's peak: run it with HEADLAB_CUDA_GRAPHS=0)
//   headlab-bench preset   --preset NAME --steps N [--layers L] [--w W] [--heads H] [--runs R]
//                          [--threads T] [--phase NAME]
//                          [--profile 1 [--products 1]]   (runs of a preset's sweep as one
//                          ensemble: run-steps/s, matmul TFLOP/s; with --profile, as `profile`)
//   headlab-bench price    --preset NAME --ensembles "W:H,H;W:H" [--layers L] [--steps N]
//                          [--measure 1 --device D --measure-steps S]
//                          (the scheduler's modelled work of each ensemble: ensembleWork; with
//                          --measure, each ensemble also timed alone on D: seconds per step)
//   headlab-bench plan     (--session S.yaml | --preset NAME) --devices N [--max-ensemble K]
//                          [--measure 1 --device D --steps S] [--simulate 1]   (the scheduler's plan on N GPUs,
//                          each card's modelled load; with --measure, each ensemble timed alone on
//                          one card D and each card's measured load beside the model's)
//   headlab-bench storage  --runs N --points P --out DIR   (writes a synthetic session of N finished
//                          runs with P points per curve in the stored layout, DIR/stored.yaml +
//                          DIR/stored.results/, and as one file, DIR/single.yaml; times both saves;
//                          bench/storage_bench.sh times loading them). --head-curves K adds K
//                          per-head curves (head.L.H.STAT, float32 values as the trainer logs) to
//                          every run, and writes DIR/inline.yaml + DIR/inline.results/ too: the
//                          same runs with those curves as text in the run files (the previous
//                          release's layout), against the binary files beside them.
//   headlab-bench save-sweep --session S.yaml --out DIR
//                          (trains the session's sweep three times through the scheduler, on the
//                          CPU: without saving, saving each finished run as headlab-cli does (on the
//                          thread that receives results, beside training), and saving on the
//                          training thread itself (saves stall training); wall times and ratios)
//   headlab-bench inside --device D --shapes 96x12 --runs R --steps N [--eval-every E] [--repeats K]
//                          (what looking inside the heads costs: the same ensemble with the per-head
//                          statistics off, on, and on with live attention maps of one run at each
//                          evaluation; interleaved K times, best of each; steps/s and ratios)
//   headlab-bench inputs [--repeats K]
//                          (what the tests once bounded by wall-clock time: 2 MB of the story
//                          corpus, head_schedule of a prime width near 10^12, and the loader's
//                          refusal of a 10^6-run sweep; best of K, in ms)
// Every line of output is one JSON object. single, ensemble and preset give steps_per_s as the
// steps alone ("timing": "steady-min3", see Rate) and steps_per_s_end_to_end as the whole run.
#include "bench/CpuProfile.h"
#include "core/config/HeadSchedule.h"
#include "core/config/RunConfig.h"
#include "core/lab/SweepSession.h"
#include "core/model/Device.h"
#include "core/schema/RunConfigFields.h"
#include "core/schema/TaskSpec.h"
#include "core/schema/addition/AdditionSpec.h"
#include "core/schema/text/StoryCorpus.h"
#include "core/session/Presets.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"
#include "core/session/SweepExpansion.h"
#include "core/train/SweepRunner.h"
#include "core/train/Trainer.h"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace headlab;

namespace {

struct Args {
    std::string mode;
    std::map<std::string, std::string> opts;
    std::string get(const std::string &k, const std::string &def) const
    {
        auto it = opts.find(k);
        return it == opts.end() ? def : it->second;
    }
};

std::vector<std::string> split(const std::string &s, char sep = ',')
{
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, sep))
        if (!item.empty()) out.push_back(item);
    return out;
}

RunConfig answerOnly(int64_t m, int64_t heads, double lr, int64_t steps, const std::string &device,
                     uint64_t seed)
{
    RunConfig c = additionPaperConfig(m, heads, lr);
    c.phases = {c.phases[1]};
    c.phases[0].steps = steps;
    c.evalEvery = steps + 1; // evaluate at step 0 and at the end only
    c.logEvery = 50;
    c.device = device;
    c.initSeed = c.dataSeed = seed;
    const char *tf32 = std::getenv("HEADLAB_BENCH_TF32");
    c.tf32 = tf32 && std::string(tf32) == "1";
    return c;
}

double seconds(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A training rate two ways. steady: the steps alone, as the peers' timers count them (they start
// after their warm-up and compile): the wall time of a run of N steps less that of a run of
// kShortSteps, which pays the same fixed costs (the model and the task's data made, the two
// evaluations, the eager steps and the graph capture, a text run's final samples), over the N −
// kShortSteps steps between. Each wall time is the least of kRepeats runs, short and long taken in
// turn: one run's fixed costs varied by 0.4 s on the H200 (a 10-step text run took 0.34 s in one
// call and 0.75 s in another), which a single difference turned into a rate 1.8× too high.
// endToEnd: N over the least whole long run's wall time (the rate before 2026-11-28, which
// counted those costs as training).
constexpr int64_t kShortSteps = 10;
constexpr int kRepeats = 3;
struct Rate {
    double steady = 0, endToEnd = 0;
};

// `train(n)` trains the runs for n steps (with the evaluations at the start and the end only); the
// caller keeps its results, and the last call is a timed long run.
template <typename Train>
Rate steadyRate(int64_t steps, Train &&train)
{
    train(kShortSteps); // warm caches, kernels and the graph capture path
    double shortWall = 0, wall = 0;
    for (int i = 0; i < kRepeats; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        train(kShortSteps);
        const double s = seconds(t0);
        t0 = std::chrono::steady_clock::now();
        train(steps);
        const double l = seconds(t0);
        shortWall = i == 0 ? s : std::min(shortWall, s);
        wall = i == 0 ? l : std::min(wall, l);
    }
    Rate r;
    r.endToEnd = steps / wall;
    r.steady = steps > kShortSteps && wall > shortWall ? (steps - kShortSteps) / (wall - shortWall)
                                                       : r.endToEnd;
    return r;
}

// What `profiled` prints besides the kernel classes: with `products`, each matrix product (an aten
// op with FLOPs, its input shapes) with the GPU time of the kernels it launched and its achieved rate
// against the card's peak; always, the time the GPU sat idle between kernels.
struct ProfileOptions {
    std::string trace;
    bool products = false;
    bool tf32 = false;
    double plainMsPerStep = 0; // the step without the profiler: a CPU profile's dispatch share
    double peakGflops = 0;     // the cores' measured FP32 peak: a CPU profile's products table
};

// Trains under the Kineto profiler and prints where the time went (GPU kernels, or the CPU's ops);
// returns the wall time.
template <typename Train>
double profiled(const std::string &tag, int64_t steps, const ProfileOptions &o, Train &&train);

// --batch B: the answer phase's batch (the paper's 64; the classroom preset's 256). --profile 1:
// then the same run under the profiler (on the CPU: CpuProfile.h's table).
void single(const Args &a)
{
    const int64_t steps = std::stoll(a.get("steps", "300"));
    const std::string device = a.get("device", "cpu");
    const int threads = std::stoi(a.get("threads", "0"));
    const int64_t batch = std::stoll(a.get("batch", "64"));
    for (const auto &shape : split(a.get("shapes", "24x1,96x3,384x12"))) {
        const auto mh = split(shape, 'x');
        const int64_t m = std::stoll(mh[0]), h = std::stoll(mh[1]);
        auto config = [&](int64_t n) {
            RunConfig c = answerOnly(m, h, 1e-3, n, device, 0);
            c.phases[0].batchSize = batch;
            return c;
        };
        TrainerControl control;
        control.threads = threads;
        std::vector<RunResult> r;
        const Rate rate =
            steadyRate(steps, [&](int64_t n) { r = trainMembers({config(n)}, control); });
        const double flops = estimateStepFlops(config(steps));
        std::printf("{\"impl\": \"headlab-single\", \"device\": \"%s\", \"threads\": %d, \"m\": "
                    "%lld, \"heads\": %lld, \"batch\": %lld, \"steps_per_s\": %.2f, "
                    "\"steps_per_s_end_to_end\": %.2f, \"gflop_per_step\": %.5f, \"gflops\": %.2f, "
                    "\"timing\": \"steady-min3\", \"status\": \"%s\"}\n",
                    r[0].device.c_str(), threads, (long long)m, (long long)h, (long long)batch,
                    rate.steady, rate.endToEnd, flops / 1e9, flops * rate.steady / 1e9,
                    toString(r[0].status));
        std::fflush(stdout);
        const std::string tag =
            "\"m\": " + std::to_string(m) + ", \"heads\": " + std::to_string(h) +
            ", \"batch\": " + std::to_string(batch) + ", \"threads\": " + std::to_string(threads);
        if (a.get("timed", "0") == "1") { // the products by the clock, without the profiler
            const double peakGflops =
                bench::measureFp32Peak(threads > 0 ? threads : at::get_num_threads()).gflops;
            trainMembers({config(20)}, control); // warm
            bench::TimedProducts timed;
            const auto t0 = std::chrono::steady_clock::now();
            const auto status = trainMembers({config(steps)}, control)[0].status;
            const double wall = seconds(t0);
            timed.print(tag + ", \"status\": \"" + toString(status) + "\"", steps, wall,
                        peakGflops);
        }
        if (a.get("profile", "0") == "1") {
            ProfileOptions o;
            o.plainMsPerStep = 1e3 / rate.steady;
            // --products 1: each product by its shapes, against the cores' measured peak.
            o.products = a.get("products", "0") == "1";
            if (o.products)
                o.peakGflops =
                    bench::measureFp32Peak(threads > 0 ? threads : at::get_num_threads()).gflops;
            profiled(tag, steps, o, [&] {
                return std::string(toString(trainMembers({config(steps)}, control)[0].status));
            });
        }
    }
}

// headlab-bench peak --threads T: the FP32 peak of T cores, measured (CpuProfile.h), and the cost
// of one op's dispatch.
void peak(const Args &a)
{
    const int threads = std::stoi(a.get("threads", "1"));
    const auto p = bench::measureFp32Peak(threads);
    std::printf("{\"impl\": \"cpu-peak\", \"threads\": %d, \"isa\": \"%s\", \"lanes\": %d, "
                "\"ghz\": %.3f, \"fma_per_cycle\": %.2f, \"gflops_per_core\": %.1f, "
                "\"gflops\": %.1f, \"dispatch_us_per_call\": %.3f}\n",
                threads, p.isa.c_str(), p.lanes, p.ghz, p.fmaPerCycle, p.perCoreGflops, p.gflops,
                bench::dispatchMicroseconds());
}

// --mix 1,2,3,6,12: run r gets heads mix[r % n] (one ensemble for a whole width of the grid).
std::vector<RunConfig> ensembleConfigs(const Args &a, int64_t m, int64_t h, int64_t steps)
{
    const int runs = std::stoi(a.get("runs", "8"));
    const auto mix = split(a.get("mix", ""));
    std::vector<RunConfig> cs;
    for (int r = 0; r < runs; ++r) {
        const int64_t heads =
            mix.empty() ? h : std::stoll(mix[static_cast<size_t>(r) % mix.size()]);
        cs.push_back(answerOnly(m, heads, 3e-5 * std::pow(100.0, r / std::max(1.0, runs - 1.0)),
                                steps, a.get("device", "cpu"), r));
    }
    return cs;
}

void ensemble(const Args &a)
{
    const int64_t steps = std::stoll(a.get("steps", "300"));
    const std::string device = a.get("device", "cpu");
    const int runs = std::stoi(a.get("runs", "8"));
    const int threads = std::stoi(a.get("threads", "0"));
    for (const auto &shape : split(a.get("shapes", "96x3"))) {
        const auto mh = split(shape, 'x');
        const int64_t m = std::stoll(mh[0]), h = std::stoll(mh[1]);
        auto make = [&](int64_t n) { return ensembleConfigs(a, m, h, n); };
        TrainerControl control;
        control.threads = threads;
        std::vector<RunResult> res;
        const Rate rate =
            steadyRate(steps, [&](int64_t n) { res = trainMembers(make(n), control); });
        std::printf("{\"impl\": \"headlab-ensemble\", \"mix\": \"%s\", \"device\": \"%s\", \"m\": "
                    "%lld, \"heads\": %lld, \"runs\": %d, \"steps_per_s\": %.2f, "
                    "\"run_steps_per_s\": %.2f, \"steps_per_s_end_to_end\": %.2f, \"timing\": "
                    "\"steady-min3\", \"status\": \"%s\"}\n",
                    a.get("mix", "").c_str(), res[0].device.c_str(), (long long)m, (long long)h,
                    runs, rate.steady, runs * rate.steady, rate.endToEnd, toString(res[0].status));
        std::fflush(stdout);
    }
}

void sweep(const Args &a)
{
    // Through the scheduler, as the app and the CLI train: widths × heads × learning rates.
    const int64_t steps = std::stoll(a.get("steps", "300"));
    std::vector<SweepJob> jobs;
    int i = 0;
    for (const auto &w : split(a.get("widths", "24,48,96")))
        for (const auto &h : split(a.get("heads", "3")))
            for (const auto &lr : split(a.get("lrs", "1e-4,1e-3,1e-2")))
                jobs.push_back({i++, answerOnly(std::stoll(w), std::stoll(h), std::stod(lr), steps,
                                                a.get("device", "cpu"), i)});
    SweepOptions opt;
    opt.device = a.get("device", "cpu");
    opt.threads = std::stoi(a.get("threads", "0"));
    opt.maxEnsemble = std::stoi(a.get("max-ensemble", "0"));
    opt.concurrent = std::stoi(a.get("concurrent", "0"));
    SweepRunner runner;
    std::mutex mutex;
    int done = 0, eager = 0;
    SweepCallbacks cb;
    cb.onRunFinished = [&](int, const RunResult &r) {
        std::lock_guard<std::mutex> lock(mutex);
        done += r.status == RunStatus::Done;
        eager += r.message.find("CUDA graph capture failed") != std::string::npos;
    };
    const auto t0 = std::chrono::steady_clock::now();
    runner.start(jobs, opt, cb);
    runner.wait();
    const double dt = seconds(t0);
    std::printf(
        "{\"impl\": \"headlab-sweep\", \"device\": \"%s\", \"widths\": \"%s\", \"heads\": \"%s\", "
        "\"runs\": %zu, \"steps\": %lld, \"done\": %d, \"graph_capture_failed\": %d, "
        "\"max_ensemble\": %d, \"concurrent\": %d, \"run_steps_per_s\": %.2f, \"seconds\": %.2f}\n",
        opt.device.c_str(), a.get("widths", "24,48,96").c_str(), a.get("heads", "3").c_str(),
        jobs.size(), (long long)steps, done, eager, opt.maxEnsemble, opt.concurrent,
        jobs.size() * steps / dt, dt);
    std::fflush(stdout);
}

void equivalence(const Args &a)
{
    const int64_t steps = std::stoll(a.get("steps", "100"));
    const std::string device = a.get("device", "cpu");
    std::vector<RunConfig> cs;
    const double lrs[] = {1e-4, 1e-3, 3e-3, 1e-2};
    for (int r = 0; r < 4; ++r) {
        RunConfig c = additionPaperConfig(48, 3, lrs[r]);
        c.phases[0].steps = steps / 2;
        c.phases[1].steps = steps;
        c.logEvery = 1;
        c.evalEvery = 25;
        c.device = device;
        c.initSeed = c.dataSeed = 100 + r;
        c.qkRule.enabled = r == 3;
        cs.push_back(c);
    }
    const auto together = trainEnsemble(cs);
    double worst = 0, worstRel = 0;
    for (size_t r = 0; r < cs.size(); ++r) {
        const auto alone = trainRun(cs[r]);
        for (size_t k = 0; k < alone.train.size() && k < together[r].train.size(); ++k) {
            const double d = std::abs(alone.train[k].value - together[r].train[k].value);
            worst = std::max(worst, d);
            worstRel = std::max(worstRel, d / std::max(1e-6, std::abs(alone.train[k].value)));
        }
        std::printf("{\"check\": \"equivalence\", \"device\": \"%s\", \"run\": %zu, "
                    "\"final_alone\": %.8f, \"final_ensemble\": %.8f}\n",
                    alone.device.c_str(), r, alone.train.back().value,
                    together[r].train.back().value);
    }
    std::printf("{\"check\": \"equivalence\", \"device\": \"%s\", \"max_abs_diff\": %.3g, "
                "\"max_rel_diff\": %.3g, \"steps\": %lld}\n",
                device.c_str(), worst, worstRel, (long long)(steps + steps / 2));
}

// Same seed, same numbers: a run trained twice alone, and two copies of it in one ensemble, must
// give bit-identical losses on the device (max |Δ| = 0).
void determinism(const Args &a)
{
    const int64_t steps = std::stoll(a.get("steps", "300"));
    const std::string device = a.get("device", "cuda:0");
    RunConfig c = additionPaperConfig(24, 3, 1e-3);
    c.phases[0].steps = steps / 2;
    c.phases[1].steps = steps;
    c.logEvery = 1;
    c.evalEvery = 50;
    c.device = device;
    c.initSeed = c.dataSeed = 5;
    auto maxDiff = [](const RunResult &x, const RunResult &y) {
        double worst = x.train.size() == y.train.size() ? 0.0 : INFINITY;
        for (size_t k = 0; k < x.train.size() && k < y.train.size(); ++k)
            worst = std::max(worst, std::abs(x.train[k].value - y.train[k].value));
        for (size_t k = 0; k < x.test.size() && k < y.test.size(); ++k)
            worst = std::max(worst, std::abs(x.test[k].value - y.test[k].value));
        return worst;
    };
    const auto first = trainRun(c), second = trainRun(c);
    RunConfig other = c;
    other.lr = 3e-3;
    other.initSeed = other.dataSeed = 6;
    const auto together = trainEnsemble({c, other, c});
    std::printf("{\"check\": \"determinism\", \"device\": \"%s\", \"steps\": %lld, "
                "\"repeat_max_abs_diff\": %.3g, \"duplicates_in_ensemble_max_abs_diff\": %.3g, "
                "\"final_train_loss\": %.8f}\n",
                device.c_str(), (long long)(steps + steps / 2), maxDiff(first, second),
                maxDiff(together[0], together[2]),
                first.train.empty() ? NAN : first.train.back().value);
    std::fflush(stdout);
}

// The fused CUDA Adam/AdamW kernel against the ATen passes, on one device: AdamW with weight decay
// and a warm-up + cosine schedule (the text presets' optimizer), and plain Adam.
void fusedAdam(const Args &a)
{
    const int64_t steps = std::stoll(a.get("steps", "200"));
    const std::string device = a.get("device", "cuda:0");
    for (const bool adamw : {false, true}) {
        RunConfig c = additionPaperConfig(48, 3, 1e-3);
        c.phases = {c.phases[1]};
        c.phases[0].steps = steps;
        if (adamw) {
            c.phases[0].optimizer.kind = OptimizerKind::AdamW;
            c.phases[0].optimizer.weightDecay = 0.1;
            c.phases[0].schedule.kind = ScheduleKind::WarmupCosine;
            c.phases[0].schedule.warmupFraction = 0.05;
        }
        c.logEvery = 1;
        c.evalEvery = steps;
        c.device = device;
        c.initSeed = c.dataSeed = 11;
        const auto fused = trainRun(c);
        setenv("HEADLAB_FUSED_ADAM", "0", 1);
        const auto aten = trainRun(c);
        unsetenv("HEADLAB_FUSED_ADAM");
        double worst = 0;
        for (size_t k = 0; k < fused.train.size() && k < aten.train.size(); ++k)
            worst = std::max(worst, std::abs(fused.train[k].value - aten.train[k].value));
        std::printf(
            "{\"check\": \"fused-adam\", \"device\": \"%s\", \"optimizer\": \"%s\", \"steps\": "
            "%lld, \"final_fused\": %.8f, \"final_aten\": %.8f, \"max_abs_diff\": %.3g}\n",
            device.c_str(), adamw ? "adamw+warmup_cosine" : "adam", (long long)steps,
            fused.train.empty() ? NAN : fused.train.back().value,
            aten.train.empty() ? NAN : aten.train.back().value, worst);
        std::fflush(stdout);
    }
}

void devices(const Args &a)
{
    const int64_t steps = std::stoll(a.get("steps", "100"));
    std::map<std::string, RunResult> res;
    for (const std::string dev : {"cpu", "cuda:0"}) {
        RunConfig c = additionPaperConfig(48, 3, 1e-3);
        c.phases[0].steps = steps;
        c.phases[1].steps = steps;
        c.logEvery = 1;
        c.evalEvery = steps;
        c.device = dev;
        c.initSeed = c.dataSeed = 7;
        res[dev] = trainRun(c);
        const auto &r = res[dev];
        std::printf("{\"check\": \"devices\", \"device\": \"%s\", \"status\": \"%s\", "
                    "\"train_loss_step_%lld\": %.8f, \"train_loss_step_%lld\": %.8f, "
                    "\"test_loss_step_%lld\": %.8f, \"message\": \"%s\"}\n",
                    dev.c_str(), toString(r.status), (long long)steps,
                    r.train.size() >= (size_t)steps ? r.train[steps - 1].value : NAN,
                    (long long)(2 * steps), r.train.empty() ? NAN : r.train.back().value,
                    (long long)steps, r.test.size() > 1 ? r.test[1].value : NAN, r.message.c_str());
    }
}

// A kernel's name as a JSON string's text: its quotes and backslashes (C++ templates) as '.
std::string jsonSafe(std::string name)
{
    for (auto &ch : name)
        if (ch == '"' || ch == '\\') ch = '\'';
    return name;
}

// Kernel classes by name, coarse enough to say where a step's GPU time goes.
std::string kernelClass(const std::string &n)
{
    auto has = [&](const char *s) { return n.find(s) != std::string::npos; };
    if (has("gemm") || has("Gemm") || has("cutlass") || has("cublas") || has("sm90_xmma") ||
        has("ampere_"))
        return "matmul";
    if (has("fmha") || has("attention") || has("Attention") || has("softmax") || has("Softmax"))
        return "attention";
    if (has("layer_norm") || has("LayerNorm")) return "layer_norm";
    if (has("index") || has("Index") || has("gather") || has("scatter") || has("CatArray") ||
        has("cat_"))
        return "index/cat";
    if (has("reduce") || has("Reduce")) return "reduce";
    if (has("elementwise") || has("vectorized") || has("unrolled")) return "elementwise";
    if (has("Memcpy") || has("Memset") || has("memcpy") || has("memset")) return "memcpy/memset";
    return "other";
}

// The card's dense peak in TFLOP/s at a product's precision, from NVIDIA's data sheets (SXM parts),
// to say how far a product is from the hardware rather than from cuBLAS. 0 where the card is not
// listed (the products are still printed, without a share). The card's name comes from HEADLAB_CARD,
// which the bench scripts set from nvidia-smi (the bench itself stays free of CUDA headers).
double cardPeakTflops(bool tf32)
{
    const char *card = std::getenv("HEADLAB_CARD");
    const std::string name = card ? card : "";
    struct Card {
        const char *name;
        double fp32, tf32;
    };
    static const Card kCards[] = {
        {"H200", 67.0, 494.7}, {"H100", 67.0, 494.7}, {"A100", 19.5, 156.0}};
    for (const auto &card : kCards)
        if (name.find(card.name) != std::string::npos) return tf32 ? card.tf32 : card.fp32;
    return 0;
}

// Prints the GPU's busy time (the union of its kernels' intervals), the span from the first kernel's
// start to the last one's end, and what lies between: the idle time between kernels, per step.
void printGaps(const std::string &tag, int64_t steps,
               std::vector<std::pair<uint64_t, uint64_t>> intervals)
{
    if (intervals.empty()) return;
    std::sort(intervals.begin(), intervals.end());
    uint64_t busy = 0, start = intervals[0].first, end = intervals[0].second;
    const uint64_t first = start;
    uint64_t last = end;
    for (const auto &[s, e] : intervals) {
        last = std::max(last, e);
        if (s > end) {
            busy += end - start;
            start = s;
            end = e;
        } else {
            end = std::max(end, e);
        }
    }
    busy += end - start;
    const double span = static_cast<double>(last - first);
    std::printf(
        "{\"profile\": \"gaps\", %s, \"span_ms_per_step\": %.4f, \"busy_ms_per_step\": %.4f, "
        "\"idle_ms_per_step\": %.4f, \"idle_share\": %.3f}\n",
        tag.c_str(), span / 1e6 / steps, busy / 1e6 / steps, (span - busy) / 1e6 / steps,
        span > 0 ? (span - busy) / span : 0.0);
}

// Each product's GPU time: the kernels whose linked correlation id is the op's (as PyTorch's own
// profiler tables attach kernels to ops). Needs the ops recorded, so CUDA graphs off
// (HEADLAB_CUDA_GRAPHS=0): under a graph replay no op runs on the host.
void printProducts(const std::string &tag, int64_t steps, double total_us, const ProfileOptions &o,
                   const std::vector<torch::autograd::profiler::KinetoEvent> &events)
{
    struct Op {
        std::string key;
        double flops = 0;
    };
    std::map<uint64_t, Op> ops; // correlation id -> op
    for (const auto &e : events)
        if (e.deviceType() == c10::DeviceType::CPU && e.flops() > 0 && e.correlationId() > 0)
            ops[e.correlationId()] = {e.name() + " " + bench::shapesText(e.shapes()),
                                      static_cast<double>(e.flops())};
    struct Product {
        double us = 0, flops = 0;
        int64_t calls = 0;
        std::set<uint64_t> seen;
        std::map<std::string, double> kernels;
    };
    std::map<std::string, Product> products;
    double attributed = 0;
    for (const auto &e : events) {
        if (e.deviceType() != c10::DeviceType::CUDA) continue;
        const auto op = ops.find(e.linkedCorrelationId());
        if (op == ops.end()) continue;
        Product &p = products[op->second.key];
        const double us = static_cast<double>(e.durationNs()) / 1e3;
        p.us += us;
        attributed += us;
        p.kernels[e.name().substr(0, 80)] += us;
        if (p.seen.insert(op->first).second) {
            p.calls++;
            p.flops += op->second.flops;
        }
    }
    const double peak = cardPeakTflops(o.tf32);
    std::vector<std::pair<std::string, Product>> top(products.begin(), products.end());
    std::sort(top.begin(), top.end(),
              [](const auto &x, const auto &y) { return x.second.us > y.second.us; });
    double productUs = 0, productFlops = 0;
    for (const auto &[key, p] : top) {
        productUs += p.us;
        productFlops += p.flops;
    }
    std::printf("{\"profile\": \"products\", %s, \"precision\": \"%s\", \"peak_tflops\": %.1f, "
                "\"ms_per_step\": %.4f, \"share\": %.3f, \"tflops\": %.2f, \"peak_share\": %.3f, "
                "\"ops\": %zu}\n",
                tag.c_str(), o.tf32 ? "tf32" : "fp32", peak, productUs / 1e3 / steps,
                attributed / std::max(total_us, 1e-9),
                productFlops / std::max(productUs, 1e-9) / 1e6,
                peak > 0 ? productFlops / std::max(productUs, 1e-9) / 1e6 / peak : 0.0, top.size());
    for (size_t i = 0; i < top.size() && i < 30; ++i) {
        const auto &[key, p] = top[i];
        const double tflops = p.flops / std::max(p.us, 1e-9) / 1e6;
        const auto kernel = std::max_element(p.kernels.begin(), p.kernels.end(),
                                             [](auto &x, auto &y) { return x.second < y.second; });
        const std::string k = jsonSafe(kernel->first);
        std::printf(
            "{\"profile\": \"product\", %s, \"op\": \"%s\", \"calls_per_step\": %.1f, "
            "\"gflop_per_call\": %.5f, \"us_per_call\": %.2f, \"ms_per_step\": %.4f, "
            "\"share\": %.3f, \"tflops\": %.2f, \"peak_share\": %.3f, \"kernel\": \"%s\"}\n",
            tag.c_str(), key.c_str(), double(p.calls) / steps, p.flops / p.calls / 1e9,
            p.us / p.calls, p.us / 1e3 / steps, p.us / std::max(total_us, 1e-9), tflops,
            peak > 0 ? tflops / peak : 0.0, k.c_str());
    }
}

// Runs `train` (which trains `steps` steps) under the Kineto profiler and prints GPU time per kernel
// class and the top kernels, each line tagged with `tag` (a JSON fragment: "\"m\": 384, ..."), the
// idle time between kernels and, with o.products, each matrix product's rate. Returns the wall
// seconds of `train`.
template <typename Train>
double profiled(const std::string &tag, int64_t steps, const ProfileOptions &o, Train &&train)
{
    using namespace torch::profiler::impl;
    const ProfilerConfig config(ProfilerState::KINETO, o.products, false, false, o.products, false);
    const std::set<ActivityType> activities{ActivityType::CPU, ActivityType::CUDA};
    torch::autograd::profiler::prepareProfiler(config, activities);
    torch::autograd::profiler::enableProfiler(config, activities);
    const auto t0 = std::chrono::steady_clock::now();
    const std::string status = train();
    const double wall = seconds(t0);
    auto result = torch::autograd::profiler::disableProfiler();
    if (!o.trace.empty()) result->save(o.trace);
    const bool onGpu =
        std::any_of(result->events().begin(), result->events().end(),
                    [](const auto &e) { return e.deviceType() == c10::DeviceType::CUDA; });
    if (!onGpu) { // a CPU step: its ops by self time, its parts, and the dispatch share
        bench::printCpuProfile(tag + ", \"status\": \"" + status + "\"", steps, wall,
                               o.plainMsPerStep, result->events(), o.products ? o.peakGflops : 0.0);
        return wall;
    }
    struct Acc {
        double us = 0;
        int64_t count = 0;
    };
    std::map<std::string, Acc> byClass, byName;
    std::vector<std::pair<uint64_t, uint64_t>> intervals;
    double total = 0;
    int64_t kernels = 0;
    for (const auto &e : result->events()) {
        if (e.deviceType() != c10::DeviceType::CUDA) continue;
        const double us = static_cast<double>(e.durationNs()) / 1e3;
        const std::string name = e.name();
        byClass[kernelClass(name)].us += us;
        byClass[kernelClass(name)].count++;
        byName[name].us += us;
        byName[name].count++;
        intervals.emplace_back(e.startNs(), e.endNs());
        total += us;
        ++kernels;
    }
    const char *graphs = std::getenv("HEADLAB_CUDA_GRAPHS");
    std::printf(
        "{\"profile\": \"total\", %s, \"steps\": %lld, \"graphs\": %s, \"wall_ms_per_step\": %.4f, "
        "\"gpu_ms_per_step\": %.4f, \"kernels_per_step\": %.1f, \"status\": \"%s\"}\n",
        tag.c_str(), (long long)steps, graphs && std::string(graphs) == "0" ? "false" : "true",
        wall * 1e3 / steps, total / 1e3 / steps, double(kernels) / steps, status.c_str());
    printGaps(tag, steps, std::move(intervals));
    for (const auto &[cls, acc] : byClass)
        std::printf("{\"profile\": \"class\", %s, \"class\": \"%s\", \"ms_per_step\": %.4f, "
                    "\"share\": %.3f, \"kernels_per_step\": %.1f}\n",
                    tag.c_str(), cls.c_str(), acc.us / 1e3 / steps, acc.us / std::max(total, 1e-9),
                    double(acc.count) / steps);
    std::vector<std::pair<std::string, Acc>> top(byName.begin(), byName.end());
    std::sort(top.begin(), top.end(),
              [](const auto &x, const auto &y) { return x.second.us > y.second.us; });
    for (size_t i = 0; i < top.size() && i < 25; ++i) {
        const std::string n = jsonSafe(top[i].first.substr(0, 120));
        std::printf("{\"profile\": \"kernel\", %s, \"name\": \"%s\", \"class\": \"%s\", "
                    "\"ms_per_step\": %.4f, \"share\": %.3f, \"per_step\": %.1f}\n",
                    tag.c_str(), n.c_str(), kernelClass(top[i].first).c_str(),
                    top[i].second.us / 1e3 / steps, top[i].second.us / std::max(total, 1e-9),
                    double(top[i].second.count) / steps);
    }
    if (o.products) printProducts(tag, steps, total, o, result->events());
    std::fflush(stdout);
    return wall;
}

void profile(const Args &a)
{
    const int64_t steps = std::stoll(a.get("steps", "200"));
    const std::string trace = a.get("trace", "");
    for (const auto &shape : split(a.get("shapes", "384x3"))) {
        const auto mh = split(shape, 'x');
        const int64_t m = std::stoll(mh[0]), h = std::stoll(mh[1]);
        TrainerControl control;
        trainMembers(ensembleConfigs(a, m, h, 10), control); // warm caches and kernels
        const std::string tag =
            "\"m\": " + std::to_string(m) + ", \"heads\": " + std::to_string(h) +
            ", \"runs\": " + a.get("runs", "8") + ", \"mix\": \"" + a.get("mix", "") + "\"";
        const ProfileOptions o{trace.empty() ? trace : trace + "-" + shape + ".json",
                               a.get("products", "0") == "1", ensembleConfigs(a, m, h, 1)[0].tf32};
        profiled(tag, steps, o, [&] {
            return std::string(
                toString(trainMembers(ensembleConfigs(a, m, h, steps), control)[0].status));
        });
    }
}

// A run's one phase cut to n steps, evaluated at the start and the end only, on one batch: the
// two evaluations stay out of a step rate (preset, plan).
void cutToSteps(RunConfig &c, int64_t n)
{
    c.phases[0].steps = n;
    c.evalEvery = n + 1;
    c.evalBatches = 1;
    c.logEvery = std::min<int64_t>(c.logEvery, n);
}

// headlab-bench preset --preset NAME --steps N [--layers L] [--w W] [--heads H] [--schedules S]
//                      [--runs R] [--device D] [--profile 1] [--trace F]
// Trains runs of a preset's sweep as one ensemble, as headlab-cli would, for N steps (its first
// phase, evaluated on one batch only at the start and the end) and prints run-steps/s and the matmul TFLOP/s
// that is. --layers/--w/--heads keep the runs with that many layers, width multiplier and
// first-layer heads, --schedules "1,2,4,8;4,4,4,4" those heads per layer; --runs R takes R of them, or repeats them with new seeds when there are
// fewer. HEADLAB_BENCH_TF32=1 or 0 sets TF32 (else the preset's own).
void preset(const Args &a)
{
    const std::string name = a.get("preset", "nn-fig1-full");
    Session session = loadPreset(name);
    expandSweep(session);
    std::vector<RunConfig> picked;
    for (const auto &run : session.runs) {
        const RunConfig &c = run.config;
        if (a.opts.count("layers") && c.model.layers() != std::stoll(a.get("layers", ""))) continue;
        if (a.opts.count("w") && c.model.widthMultiplier != std::stoll(a.get("w", ""))) continue;
        if (a.opts.count("heads") && c.model.heads.front() != std::stoll(a.get("heads", "")))
            continue;
        if (a.opts.count(
                "schedules")) { // "1,2,4,8;4,4,4,4": runs with one of these heads per layer
            std::string one;
            for (auto h : c.model.heads) one += (one.empty() ? "" : ",") + std::to_string(h);
            const auto wanted = split(a.get("schedules", ""), ';');
            if (std::find(wanted.begin(), wanted.end(), one) == wanted.end()) continue;
        }
        picked.push_back(c);
    }
    if (picked.empty()) {
        std::fprintf(stderr, "headlab-bench preset: no run of %s has those layers/w/heads\n",
                     name.c_str());
        std::exit(2);
    }
    const int64_t steps = std::stoll(a.get("steps", "200"));
    const size_t runs = a.opts.count("runs") ? std::stoul(a.get("runs", "")) : picked.size();
    const char *tf32 = std::getenv("HEADLAB_BENCH_TF32");
    std::vector<RunConfig> configs;
    for (size_t r = 0; r < runs; ++r) {
        RunConfig c = picked[r % picked.size()];
        if (a.opts.count("phase")) { // that phase alone (the classroom's answer phase)
            const auto named = std::find_if(c.phases.begin(), c.phases.end(), [&](const auto &p) {
                return p.name == a.get("phase", "");
            });
            if (named == c.phases.end()) {
                std::fprintf(stderr, "headlab-bench preset: %s has no phase '%s'\n", name.c_str(),
                             a.get("phase", "").c_str());
                std::exit(2);
            }
            c.phases = {*named};
        }
        c.phases.resize(1);
        cutToSteps(c, steps);
        c.device = a.get("device", "cuda:0");
        if (r >= picked.size()) c.initSeed = c.dataSeed = 1000 + r;
        if (tf32) c.tf32 = std::string(tf32) == "1";
        configs.push_back(c);
    }
    // Runs that can share an ensemble train as one, as the scheduler groups them; groups one
    // after another. train(n): every group for n steps, evaluated at the start and the end only.
    TrainerControl control;
    control.threads = std::stoi(a.get("threads", "0"));
    std::vector<RunResult> results;
    auto train = [&](int64_t n) {
        std::map<std::string, std::vector<RunConfig>> groups;
        for (auto c : configs) {
            cutToSteps(c, n);
            groups[ensembleKey(c)].push_back(c);
        }
        results.clear();
        for (const auto &[key, group] : groups) {
            const auto r = trainMembers(group, control);
            results.insert(results.end(), r.begin(), r.end());
        }
    };
    const auto &c0 = configs.front();
    std::string heads;
    for (auto h : c0.model.heads) heads += (heads.empty() ? "" : " ") + std::to_string(h);
    std::set<std::string> keys;
    for (const auto &c : configs) keys.insert(ensembleKey(c));
    const size_t ensembles = keys.size();
    const std::string tag =
        "\"preset\": \"" + name + "\", \"layers\": " + std::to_string(c0.model.layers()) +
        ", \"w\": " + std::to_string(c0.model.widthMultiplier) + ", \"heads\": \"" + heads +
        "\", \"runs\": " + std::to_string(runs) + ", \"ensembles\": " + std::to_string(ensembles);
    Rate rate;
    if (a.get("profile", "0") == "1") {
        // Without a text run's final sample (200 forward passes of one byte each), whose kernels the
        // per-step counts would otherwise include (profiles before 2026-11-28's second session did).
        for (auto &c : configs) c.task.sampleLength = 0;
        ProfileOptions o{a.get("trace", ""), a.get("products", "0") == "1", c0.tf32};
        if (c0.device == "cpu") // the step without the profiler first: the dispatch share's base
            o.plainMsPerStep = 1e3 / steadyRate(steps, train).steady;
        train(kShortSteps); // warm caches, kernels and the graph capture path
        const double wall = profiled(tag, steps, o, [&] {
            train(steps);
            return std::string(toString(results[0].status));
        });
        rate.steady = rate.endToEnd = steps / wall; // under the profiler: the whole run
    } else {
        rate = steadyRate(steps, train);
    }
    double flops = 0;
    std::set<std::string> schedules; // each run's heads per layer, "1,2,4,8", for the peers
    for (const auto &c : configs) {
        flops += estimateStepFlops(c);
        std::string one;
        for (auto h : c.model.heads) one += (one.empty() ? "" : ",") + std::to_string(h);
        schedules.insert(one);
    }
    std::string scheduleList;
    for (const auto &one : schedules) scheduleList += (scheduleList.empty() ? "" : ";") + one;
    std::printf(
        "{\"impl\": \"headlab-preset\", %s, \"device\": \"%s\", \"tf32\": %s, \"steps\": %lld, "
        "\"steps_per_s\": %.2f, \"run_steps_per_s\": %.2f, \"steps_per_s_end_to_end\": %.2f, "
        "\"timing\": \"%s\", \"tflops\": %.3f, \"gflop_per_run_step\": %.4f, "
        "\"attention\": \"%s\", \"schedules\": \"%s\", \"status\": \"%s\"}\n",
        tag.c_str(), results[0].device.c_str(), c0.tf32 ? "true" : "false", (long long)steps,
        rate.steady, runs * rate.steady, rate.endToEnd,
        a.get("profile", "0") == "1" ? "profiled" : "steady-min3", flops * rate.steady / 1e12,
        estimateStepFlops(c0) / 1e9,
        results[0].provenance.count("attention") ? results[0].provenance.at("attention").c_str()
                                                 : "",
        scheduleList.c_str(), toString(results[0].status));
    std::fflush(stdout);
}

// The index of a run's longest phase: the one `price`, `plan --measure` and price_fit.py time.
size_t longestPhase(const RunConfig &c)
{
    const auto longest = std::max_element(
        c.phases.begin(), c.phases.end(),
        [](const PhaseConfig &x, const PhaseConfig &y) { return x.steps < y.steps; });
    return static_cast<size_t>(longest - c.phases.begin());
}

// The scheduler's price of one step of the ensemble's longest phase, by its parts
// (ensembleStep): JSON fields for bench/price_fit.py, which refits the price's constants.
std::string stepFields(const std::vector<SweepJob> &ensemble)
{
    const EnsembleStep s = ensembleStep(ensemble, pricedAttentionPlan(ensemble),
                                        longestPhase(ensemble.front().config));
    char text[512];
    std::snprintf(text, sizeof text,
                  "\"step\": {\"products\": %.6g, \"micro_heads\": %.6g, \"mix\": %.6g, "
                  "\"sdpa_narrow\": %.6g, \"sdpa_fused\": %.6g, \"sdpa_long\": %.6g, "
                  "\"sdpa_runs\": %.6g, \"explicit\": %.6g, \"work\": %.6g, \"price\": %.6g}",
                  s.products, s.scores.microHeads, s.scores.mix, s.scores.sdpaNarrow,
                  s.scores.sdpaFused, s.scores.sdpaLong, s.scores.sdpaRuns,
                  s.scores.explicitSoftmax, s.work, s.price);
    return text;
}

// One ensemble trained alone on `device`: the seconds a step of its longest phase takes, cut to
// `steps` steps and evaluated at the start and the end only (steady rate, as `preset`).
double measureStep(const std::vector<SweepJob> &ensemble, const std::string &device, int64_t steps)
{
    auto cut = [&](int64_t n) {
        std::vector<RunConfig> configs;
        for (const auto &job : ensemble) {
            RunConfig c = job.config;
            c.phases = {c.phases.at(longestPhase(c))};
            cutToSteps(c, n);
            c.stopAfterLearned = 0;
            c.device = device;
            configs.push_back(c);
        }
        return configs;
    };
    TrainerControl control;
    return 1.0 / steadyRate(steps, [&](int64_t k) { trainMembers(cut(k), control); }).steady;
}

// headlab-bench price (--preset NAME | --session S.yaml) --ensembles "W:H,H,...;W:H,..."
//                     [--layers L] [--d-model M] [--steps N] [--measure 1 --device D --measure-steps S]
// The scheduler's modelled work of each ensemble (ensembleWork, core/train/SweepRunner.cpp), for
// bench/multi4_balance.py and bench/price_fit.py, which compare it with measured times: W is the
// ensemble's width multiplier and each H one run's first-layer heads; each run is a copy of the
// preset's (or session's) run with those layers (default 1), w, heads (and d_model, where given),
// trained N steps (default 1,000) of its longest phase alone. With --measure each ensemble is also
// timed alone on D (measureStep). One JSON line
// per ensemble, in order, with the micro-heads its first layer takes on the GPU (the attention plan
// it is priced by, pricedAttentionPlan: 0 where each run attends head by head; HEADLAB_ATTENTION
// moves it as it moves training).
void price(const Args &a)
{
    const std::string name =
        a.opts.count("session") ? a.get("session", "") : a.get("preset", "nn-fig1-full");
    Session session = a.opts.count("session") ? loadSession(name) : loadPreset(name);
    if (session.runs.empty()) expandSweep(session);
    const int64_t layers = std::stoll(a.get("layers", "1"));
    const int64_t steps = std::stoll(a.get("steps", "1000"));
    const int64_t dModel = std::stoll(a.get("d-model", "0"));
    const bool measure = a.get("measure", "0") == "1";
    const std::string device = a.get("device", "cuda:0");
    const int64_t measureSteps = std::stoll(a.get("measure-steps", "200"));
    auto fail = [&](const std::string &why) {
        std::fprintf(stderr, "headlab-bench price: %s\n", why.c_str());
        std::exit(2);
    };
    for (const auto &spec : split(a.get("ensembles", ""), ';')) {
        const auto colon = spec.find(':');
        if (colon == std::string::npos) fail("ensemble '" + spec + "' is not W:H,H,...");
        const int64_t w = std::stoll(spec.substr(0, colon));
        std::vector<SweepJob> jobs;
        std::string heads;
        for (const auto &h : split(spec.substr(colon + 1))) {
            const int64_t H = std::stoll(h);
            const auto it =
                std::find_if(session.runs.begin(), session.runs.end(), [&](const auto &run) {
                    const ModelConfig &m = run.config.model;
                    return m.layers() == layers && m.widthMultiplier == w && m.heads.front() == H &&
                           (dModel == 0 || m.dModel == dModel);
                });
            if (it == session.runs.end())
                fail("no run of " + name + " has " + std::to_string(layers) +
                     (layers == 1 ? " layer, w " : " layers, w ") + std::to_string(w) + " and " +
                     h + " heads");
            SweepJob job;
            job.runIndex = static_cast<int>(jobs.size());
            job.config = it->config;
            // The longest phase alone, as measureStep times it.
            job.config.phases = {job.config.phases.at(longestPhase(job.config))};
            job.config.phases[0].steps = steps;
            jobs.push_back(std::move(job));
            heads += (heads.empty() ? "" : ",") + h;
        }
        if (jobs.empty()) fail("ensemble '" + spec + "' has no runs");
        const LayerAttention first = pricedAttentionPlan(jobs).layers.front();
        const double measured = measure ? measureStep(jobs, device, measureSteps) : 0.0;
        std::printf("{\"price\": \"ensemble\", \"preset\": \"%s\", \"layers\": %lld, \"w\": %lld, "
                    "\"heads\": \"%s\", \"runs\": %zu, \"steps\": %lld, \"micro_heads\": %lld, "
                    "\"path\": \"%s\", \"work\": %.9g, \"measured_s_per_step\": %.6g, %s}\n",
                    name.c_str(), (long long)layers, (long long)w, heads.c_str(), jobs.size(),
                    (long long)steps, (long long)first.microHeads, toString(first.path),
                    ensembleWork(jobs), measured, stepFields(jobs).c_str());
        std::fflush(stdout);
    }
    std::fflush(stdout);
}

// Trains `ensembles` whole on `device` as one card of a sweep does (SweepRunner's workers): `slots`
// workers, each taking the next ensemble in order until none is left. Returns the wall seconds.
double simulateCard(const std::vector<std::vector<SweepJob>> &ensembles, size_t slots,
                    const std::string &device)
{
    std::mutex mutex;
    size_t next = 0;
    auto worker = [&] {
        for (;;) {
            std::vector<RunConfig> configs;
            {
                std::lock_guard<std::mutex> lock(mutex);
                if (next == ensembles.size()) return;
                for (const auto &job : ensembles[next++]) {
                    configs.push_back(job.config);
                    configs.back().device = device;
                }
            }
            trainMembers(configs, TrainerControl{});
        }
    };
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (size_t w = 0; w < std::max<size_t>(1, std::min(slots, ensembles.size())); ++w)
        workers.emplace_back(worker);
    for (auto &t : workers) t.join();
    return seconds(t0);
}

// headlab-bench plan (--session S.yaml | --preset NAME) --devices N [--max-ensemble K]
//                    [--measure 1 --device D --steps S] [--simulate 1]
// The plan SweepRunner follows for the session's pending runs on N GPUs (planSweep: the ensembles,
// their splits and their cards), priced by the scheduler's cost model (ensembleWork), without N
// GPUs: issue 57's one-card check of the four-card placement. With --measure 1 each planned
// ensemble is also trained alone on D (one card) for S steps of its longest phase (steady rate,
// as `preset`), and its whole training timed from that rate; each card's load is then the model's
// share and the measured one, side by side. JSON lines: one per ensemble, one per card, a summary
// (the speed-up over one card that the plan's busiest card allows, by the model and measured).
// With --simulate 1, each card's share of the plan is also trained on D as that card would train
// it (its ensembles whole, in the plan's order, by as many workers at once as a card has slots),
// one card after another, and so is the plan for one card: the speed-up the four cards would give
// if each trained its part as fast as D does, with one card's concurrency in both.
void plan(const Args &a)
{
    Session session = a.opts.count("session") ? loadSession(a.get("session", ""))
                                              : loadPreset(a.get("preset", ""));
    if (session.runs.empty()) expandSweep(session);
    const size_t n = std::stoul(a.get("devices", "4"));
    std::vector<std::string> cards;
    for (size_t k = 0; k < n; ++k) cards.push_back("cuda:" + std::to_string(k));
    SweepOptions options;
    options.maxEnsemble = std::stoi(a.get("max-ensemble", "0"));
    const bool measure = a.get("measure", "0") == "1";
    const bool simulate = a.get("simulate", "0") == "1";
    const std::string device = a.get("device", "cuda:0");
    const int64_t freeBytes = measure || simulate ? deviceMemory(device).freeBytes : 0;
    std::vector<SweepJob> jobs = pendingJobs(session);
    if (jobs.empty()) {
        std::fprintf(stderr, "headlab-bench plan: no pending runs in the session\n");
        std::exit(2);
    }
    const SweepPlan p = planSweep(jobs, options, cards, freeBytes);
    const int64_t steps = std::stoll(a.get("steps", "300"));
    double totalWork = 0;
    for (double w : p.work) totalWork += w;
    std::vector<double> measured(p.ensembles.size(), 0.0);
    for (size_t e = 0; e < p.ensembles.size(); ++e) {
        const auto &ensemble = p.ensembles[e];
        const RunConfig &c0 = ensemble.front().config;
        std::string heads;
        for (const auto &job : ensemble)
            heads += (heads.empty() ? "" : ",") + std::to_string(job.config.model.heads.front());
        int64_t total = 0;
        for (const auto &job : ensemble) total = std::max(total, job.config.totalSteps());
        double perStep = 0;
        if (measure) {
            perStep = measureStep(ensemble, device, steps);
            measured[e] = perStep * static_cast<double>(total);
        }
        std::printf("{\"plan\": \"ensemble\", \"index\": %zu, \"card\": %d, \"task\": \"%s\", "
                    "\"d_model\": %lld, \"layers\": %lld, \"w\": %lld, \"runs\": %zu, \"heads\": "
                    "\"%s\", \"steps\": %lld, \"work\": %.6g, \"work_share\": %.4f, "
                    "\"measured_s_per_step\": %.6g, \"measured_s\": %.3f, %s}\n",
                    e, p.device[e], c0.task.kind.c_str(), (long long)c0.model.dModel,
                    (long long)c0.model.layers(), (long long)c0.model.widthMultiplier,
                    ensemble.size(), heads.c_str(), (long long)total, p.work[e],
                    p.work[e] / totalWork, perStep, measured[e], stepFields(ensemble).c_str());
        std::fflush(stdout);
    }
    double totalMeasured = 0;
    for (double s : measured) totalMeasured += s;
    double maxWork = 0, maxMeasured = 0;
    for (size_t k = 0; k < n; ++k) {
        double work = 0, secs = 0;
        const std::vector<size_t> mine = p.onDevice(k);
        for (const size_t e : mine) {
            work += p.work[e];
            secs += measured[e];
        }
        maxWork = std::max(maxWork, work);
        maxMeasured = std::max(maxMeasured, secs);
        std::printf("{\"plan\": \"card\", \"card\": %zu, \"ensembles\": %zu, \"work_share\": %.4f, "
                    "\"measured_s\": %.3f, \"measured_share\": %.4f}\n",
                    k, mine.size(), work / totalWork, secs,
                    totalMeasured > 0 ? secs / totalMeasured : 0.0);
    }
    double simulatedOne = 0, simulatedMost = 0;
    if (simulate) {
        const SweepPlan one = planSweep(jobs, options, {device}, freeBytes);
        // The ensembles a card of plan q trains, in the plan's order.
        auto all = [](const SweepPlan &q, size_t card) {
            std::vector<std::vector<SweepJob>> mine;
            for (const size_t e : q.onDevice(card)) mine.push_back(q.ensembles[e]);
            return mine;
        };
        const size_t slots = p.slots.size() / std::max<size_t>(1, n);
        simulatedOne = simulateCard(all(one, 0), slots, device);
        std::printf("{\"plan\": \"simulated\", \"card\": \"all on one\", \"ensembles\": %zu, "
                    "\"seconds\": %.3f}\n",
                    one.ensembles.size(), simulatedOne);
        std::fflush(stdout);
        for (size_t k = 0; k < n; ++k) {
            const auto mine = all(p, k);
            const double secs = simulateCard(mine, slots, device);
            simulatedMost = std::max(simulatedMost, secs);
            std::printf("{\"plan\": \"simulated\", \"card\": \"%zu\", \"ensembles\": %zu, "
                        "\"seconds\": %.3f}\n",
                        k, mine.size(), secs);
            std::fflush(stdout);
        }
    }
    std::printf(
        "{\"plan\": \"summary\", \"session\": \"%s\", \"cards\": %zu, \"placed\": %s, "
        "\"ensembles\": %zu, \"runs\": %zu, \"speedup_by_model\": %.3f, "
        "\"speedup_measured\": %.3f, \"measured_one_card_s\": %.3f, "
        "\"speedup_simulated\": %.3f, \"simulated_one_card_s\": %.3f, \"device\": \"%s\"}\n",
        session.name.c_str(), n, p.placed ? "true" : "false", p.ensembles.size(),
        session.runs.size(), totalWork / maxWork,
        maxMeasured > 0 ? totalMeasured / maxMeasured : 0.0, totalMeasured,
        simulatedMost > 0 ? simulatedOne / simulatedMost : 0.0, simulatedOne,
        measure || simulate ? device.c_str() : "");
    std::fflush(stdout);
}

// A session of `runs` finished runs (an lr × seed sweep of the addition grid's shape) whose
// curves have `points` points each, like a 30,000-step run logged every 100 steps.
void storage(const Args &a)
{
    const int runs = std::stoi(a.get("runs", "2000"));
    const int points = std::stoi(a.get("points", "300"));
    const int headCurves = std::stoi(a.get("head-curves", "0"));
    const std::string out = a.get("out", "bench-out/storage");
    std::string mkdir = "mkdir -p '" + out + "'";
    if (std::system(mkdir.c_str()) != 0) return;
    Session s;
    s.name = "storage-bench";
    s.base = additionPaperConfig(48, 3, 1e-3);
    SweepAxis lr{"lr", {}}, seed{"seed", {}};
    const int lrs = 20;
    for (int i = 0; i < lrs; ++i) {
        AxisValue v;
        v.number = 1e-4 * std::pow(10.0, 2.0 * i / (lrs - 1));
        lr.values.push_back(v);
    }
    for (int i = 0; i < (runs + lrs - 1) / lrs; ++i) {
        AxisValue v;
        v.kind = AxisValue::Kind::Unsigned;
        v.unsignedValue = static_cast<uint64_t>(i);
        seed.values.push_back(v);
    }
    s.axes = {lr, seed};
    expandSweep(s);
    s.runs.resize(std::min<size_t>(s.runs.size(), static_cast<size_t>(runs)));
    uint64_t state = 12345;
    auto noise = [&] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<double>(state >> 11) / 9007199254740992.0;
    };
    for (auto &run : s.runs) {
        RunResult &r = run.result;
        r.status = RunStatus::Done;
        r.stepsDone = 30500;
        r.phaseStarts = {0, 500};
        r.wallSeconds = 60 + noise();
        r.device = "cpu";
        for (int k = 0; k < points; ++k) {
            const int64_t step = (k + 1) * 100;
            r.train.push_back({step, 2.3 * std::exp(-k / 80.0) + 0.01 * noise()});
            r.test.push_back({step, 2.3 * std::exp(-k / 90.0) + 0.01 * noise()});
            for (int d = 0; d < 3; ++d)
                r.extra["test_digit_" + std::to_string(d)].push_back(
                    {step, 2.3 * std::exp(-k / (70.0 + 10 * d)) + 0.01 * noise()});
        }
        r.metrics = {
            {"final_test_loss", r.test.back().value}, {"learned", 1}, {"left_ln10_plateau", 1}};
        // 12 heads in each layer, 9 statistics (as the trainer names them), until K curves.
        static const char *kStats[] = {"logit_rms", "logit_max", "entropy", "wq_norm", "wk_norm",
                                       "wv_norm",   "wo_norm",   "wq_grad", "wk_grad"};
        for (int c = 0; c < headCurves; ++c) {
            Curve &curve = r.extra["head." + std::to_string(c / (12 * 9)) + "." +
                                   std::to_string(c / 9 % 12) + "." + kStats[c % 9]];
            for (int k = 0; k < points; ++k)
                curve.push_back({int64_t(k) * 100, float(1 + c % 7 + 0.5 * noise())});
        }
    }
    auto seconds = [](auto start) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    auto t0 = std::chrono::steady_clock::now();
    {
        SessionStore store(out + "/stored.yaml");
        store.saveSession(s);
    }
    const double storedSave = seconds(t0);
    if (headCurves > 0) { // the previous release's layout: every curve as text in the run file
        if (std::system(("mkdir -p '" + out + "/inline.results/runs'").c_str()) != 0) return;
        for (const auto &run : s.runs)
            writeFileAtomic(out + "/inline.results/runs/" + runFileName(run.config), runToYaml(run),
                            false);
        writeFileAtomic(out + "/inline.yaml", sessionIndexToYaml(s, "inline.results"));
    }
    // Finishing one run in the stored layout: one run file.
    t0 = std::chrono::steady_clock::now();
    {
        SessionStore store(out + "/stored.yaml");
        for (int k = 0; k < 20; ++k) {
            s.runs[static_cast<size_t>(k)].result.wallSeconds += 1; // changed: written again
            store.saveRun(s.runs[static_cast<size_t>(k)]);
        }
    }
    const double perRun = seconds(t0) / 20;
    // Where one run's save goes: naming (the config's hash), text (and the per-head curves'
    // bytes), the atomic writes; into a folder of their own, leaving the stored session intact.
    double naming = 0, text = 0, writing = 0;
    if (std::system(("mkdir -p '" + out + "/one-run'").c_str()) != 0) return;
    for (int k = 0; k < std::min<int>(200, int(s.runs.size())); ++k) {
        const SessionRun &run = s.runs[static_cast<size_t>(k)];
        auto t = std::chrono::steady_clock::now();
        const std::string name = runFileName(run.config);
        naming += seconds(t);
        t = std::chrono::steady_clock::now();
        const StoredRunFiles files = storedRunFiles(run);
        text += seconds(t);
        t = std::chrono::steady_clock::now();
        if (!files.headCurvesName.empty())
            writeFileAtomic(out + "/one-run/" + files.headCurvesName, files.headCurves, false);
        writeFileAtomic(out + "/one-run/" + name, files.yaml);
        writing += seconds(t);
    }
    std::printf("{\"storage\": \"one_run\", \"points\": %d, \"name_ms\": %.4f, \"text_ms\": %.4f, "
                "\"write_ms\": %.4f}\n",
                points, naming * 5, text * 5, writing * 5);
    t0 = std::chrono::steady_clock::now();
    saveSessionAtomic(s, out + "/single.yaml");
    const double singleSave = seconds(t0);
    std::printf("{\"storage\": \"save\", \"runs\": %zu, \"points\": %d, \"stored_save_s\": %.3f, "
                "\"stored_one_run_s\": %.5f, \"single_file_save_s\": %.3f}\n",
                s.runs.size(), points, storedSave, perRun, singleSave);
}

void saveSweep(const Args &a)
{
    const std::string out = a.get("out", "bench-out/save-sweep");
    Session base = loadSession(a.get("session", ""));
    expandSweep(base);
    auto seconds = [](auto start) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    struct Result {
        double wall = 0, saving = 0;
    };
    // mode 0: no saving; 1: a saver thread (as headlab-cli); 2: saving inside the callback.
    auto trainOnce = [&](int mode) {
        Session s = base;
        std::unique_ptr<SessionStore> store;
        if (mode > 0) {
            const std::string dir = out + "/mode" + std::to_string(mode);
            std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
            store = std::make_unique<SessionStore>(dir + "/s.yaml");
            store->saveSession(s);
        }
        std::vector<SweepJob> jobs;
        for (size_t i = 0; i < s.runs.size(); ++i) jobs.push_back({int(i), s.runs[i].config});
        std::mutex mutex;
        std::condition_variable changed;
        std::deque<std::pair<int, RunResult>> finished;
        bool done = false;
        SweepCallbacks callbacks;
        callbacks.onRunFinished = [&](int index, const RunResult &r) {
            if (mode == 2) {
                s.runs[size_t(index)].result = r;
                store->saveRun(s.runs[size_t(index)]);
                return;
            }
            std::lock_guard lock(mutex);
            finished.emplace_back(index, r);
            changed.notify_one();
        };
        callbacks.onSweepFinished = [&] {
            std::lock_guard lock(mutex);
            done = true;
            changed.notify_one();
        };
        SweepOptions options;
        options.device = "cpu";
        options.threads = 1;
        const auto start = std::chrono::steady_clock::now();
        SweepRunner runner;
        runner.start(std::move(jobs), options, callbacks);
        for (;;) {
            std::deque<std::pair<int, RunResult>> batch;
            bool over = false;
            {
                std::unique_lock lock(mutex);
                changed.wait(lock, [&] { return !finished.empty() || done; });
                batch.swap(finished);
                over = done;
            }
            for (auto &[index, r] : batch) {
                s.runs[size_t(index)].result = std::move(r);
                if (mode == 1) store->saveRun(s.runs[size_t(index)], false);
            }
            if (mode == 1 && !batch.empty()) store->syncRuns();
            if (over) break;
        }
        runner.wait();
        if (store) store->saveSession(s);
        return Result{seconds(start), store ? store->secondsSaving() : 0.0};
    };
    const Result none = trainOnce(0), beside = trainOnce(1), inside = trainOnce(2);
    std::printf("{\"save_sweep\": \"%s\", \"runs\": %zu, \"wall_no_save_s\": %.2f, "
                "\"wall_saving_beside_s\": %.2f, \"saving_beside_s\": %.2f, "
                "\"wall_saving_inside_s\": %.2f, \"saving_inside_s\": %.2f, "
                "\"overhead_beside\": %.3f, \"overhead_inside\": %.3f}\n",
                base.name.c_str(), base.runs.size(), none.wall, beside.wall, beside.saving,
                inside.wall, inside.saving, beside.wall / none.wall - 1,
                inside.wall / none.wall - 1);
}

} // namespace

void inside(const Args &a)
{
    const int64_t steps = std::stoll(a.get("steps", "2000"));
    const int64_t evalEvery = std::stoll(a.get("eval-every", "100"));
    const int repeats = std::stoi(a.get("repeats", "3"));
    const int threads = std::stoi(a.get("threads", "0"));
    for (const auto &shape : split(a.get("shapes", "96x12"))) {
        const auto mh = split(shape, 'x');
        auto configs = ensembleConfigs(a, std::stoll(mh[0]), std::stoll(mh[1]), steps);
        for (auto &c : configs) c.evalEvery = evalEvery;
        double best[3] = {0, 0, 0};
        std::string device;
        int maps = 0;
        for (int k = 0; k < repeats; ++k)
            for (int variant = 0; variant < 3; ++variant) {
                ::setenv("HEADLAB_HEAD_STATS", variant == 0 ? "0" : "1", 1);
                TrainerControl control;
                control.threads = threads;
                if (variant == 2) {
                    control.attentionWanted = [] {
                        return TrainerControl::AttentionWanted{0, "123 + 456, digit 0"};
                    };
                    control.onAttention = [&](size_t, const AttentionMaps &) { ++maps; };
                }
                if (k == 0 && variant == 0) trainMembers({configs.front()}, control); // warm up
                const auto t0 = std::chrono::steady_clock::now();
                const auto r = trainMembers(configs, control);
                best[variant] = std::max(best[variant], double(steps) / seconds(t0));
                device = r[0].device;
            }
        ::unsetenv("HEADLAB_HEAD_STATS");
        std::printf(
            "{\"impl\": \"headlab-inside\", \"device\": \"%s\", \"shape\": \"%s\", \"runs\": %zu, "
            "\"eval_every\": %lld, "
            "\"steps_per_s_plain\": %.2f, \"steps_per_s_head_stats\": %.2f, "
            "\"steps_per_s_head_stats_live_maps\": %.2f, "
            "\"ratio_head_stats\": %.4f, \"ratio_live_maps\": %.4f, \"live_maps_delivered\": %d}\n",
            device.c_str(), shape.c_str(), configs.size(), (long long)evalEvery, best[0], best[1],
            best[2], best[1] / best[0], best[2] / best[0], maps);
        std::fflush(stdout);
    }
}

// The timings that were assertions in tests (tests/storage, tests/text): each is best of K.
void inputs(const Args &a)
{
    const int repeats = std::stoi(a.get("repeats", "5"));
    auto best = [&](auto &&work) {
        double ms = 1e300;
        for (int k = 0; k < repeats; ++k) {
            const auto t0 = std::chrono::steady_clock::now();
            work();
            ms = std::min(ms, 1000.0 * seconds(t0));
        }
        return ms;
    };
    size_t bytes = 0;
    const double corpus = best([&] { bytes = generateStoryCorpus(1, 2'000'000).size(); });
    const double schedule =
        best([] { headSchedule(HeadScheme::Descending, 180, 4, 999'999'999'989LL); });
    std::string huge = "schema_version: 1\nexperiment:\n  phases: [{steps: 1}]\nsweep:\n"
                       "  lr: {logspace: {from: 1e-5, to: 1, count: 1000}}\n  seed: [0";
    for (int i = 1; i < 1000; ++i) huge += ", " + std::to_string(i);
    huge += "]\n";
    bool refused = false;
    const double refusal = best([&] {
        try {
            Session s = sessionFromYaml(huge, "huge.yaml");
            expandSweep(s);
        } catch (const SessionError &) {
            refused = true;
        }
    });
    std::printf("{\"impl\": \"headlab-inputs\", \"story_corpus_2mb_ms\": %.2f, \"bytes\": %zu, "
                "\"head_schedule_prime_1e12_ms\": %.3f, \"refuse_1e6_run_sweep_ms\": %.3f, "
                "\"refused\": %s}\n",
                corpus, bytes, schedule, refusal, refused ? "true" : "false");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: headlab-bench single|ensemble|sweep|equivalence|devices|profile "
                     "[--key value ...]\n");
        return 2;
    }
    Args a;
    a.mode = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        if (k.rfind("--", 0) == 0) k = k.substr(2);
        a.opts[k] = argv[i + 1];
    }
    if (a.mode == "single")
        single(a);
    else if (a.mode == "ensemble")
        ensemble(a);
    else if (a.mode == "inside")
        inside(a);
    else if (a.mode == "sweep")
        sweep(a);
    else if (a.mode == "equivalence")
        equivalence(a);
    else if (a.mode == "devices")
        devices(a);
    else if (a.mode == "profile")
        profile(a);
    else if (a.mode == "preset")
        preset(a);
    else if (a.mode == "price")
        price(a);
    else if (a.mode == "plan")
        plan(a);
    else if (a.mode == "fused-adam")
        fusedAdam(a);
    else if (a.mode == "determinism")
        determinism(a);
    else if (a.mode == "storage")
        storage(a);
    else if (a.mode == "save-sweep")
        saveSweep(a);
    else if (a.mode == "inputs")
        inputs(a);
    else if (a.mode == "peak")
        peak(a);
    else {
        std::fprintf(stderr, "headlab-bench: unknown mode '%s'\n", a.mode.c_str());
        return 2;
    }
    return 0;
}
