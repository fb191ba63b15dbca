// CpuProfile.cpp — the CPU's side of headlab-bench: a step's profile by op and part, the dispatch
// cost of one op, and the cores' measured FP32 peak (CpuProfile.h).
#include "bench/CpuProfile.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace headlab::bench {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool startsWith(const std::string &s, const char *prefix)
{
    return s.rfind(prefix, 0) == 0;
}

// Op classes by name, coarse enough to say where a CPU step's time goes.
std::string opClass(const std::string &n)
{
    static const char *kProducts[] = {"aten::mm",      "aten::bmm",    "aten::addmm",
                                      "aten::baddbmm", "aten::addbmm", "aten::mv"};
    for (const char *p : kProducts)
        if (n == p) return "products";
    auto has = [&](const char *s) { return n.find(s) != std::string::npos; };
    if (startsWith(n, "headlab::")) return "headlab code between ops";
    // HeadLab's own attention functions run their kernels inside their autograd nodes.
    if (has("LaneAttention") || has("MicroAttention")) return "attention";
    if (has("autograd::") || has("Backward0") || has("Backward1")) return "autograd engine";
    if (has("softmax") || has("scaled_dot_product") || has("attention")) return "attention";
    if (has("layer_norm") || has("aten::var") || has("aten::mean") || has("aten::std"))
        return "norm";
    static const char *kLayout[] = {"aten::copy_",
                                    "aten::contiguous",
                                    "aten::clone",
                                    "aten::to",
                                    "aten::_to_copy",
                                    "aten::empty",
                                    "aten::empty_like",
                                    "aten::empty_strided",
                                    "aten::view",
                                    "aten::reshape",
                                    "aten::_reshape_alias",
                                    "aten::transpose",
                                    "aten::permute",
                                    "aten::expand",
                                    "aten::as_strided",
                                    "aten::select",
                                    "aten::slice",
                                    "aten::unsqueeze",
                                    "aten::squeeze",
                                    "aten::t",
                                    "aten::split",
                                    "aten::cat",
                                    "aten::stack",
                                    "aten::index_select",
                                    "aten::index",
                                    "aten::embedding",
                                    "aten::zeros",
                                    "aten::zeros_like",
                                    "aten::fill_",
                                    "aten::zero_",
                                    "aten::resize_",
                                    "aten::unbind",
                                    "aten::narrow",
                                    "aten::detach",
                                    "detach",
                                    "aten::alias",
                                    "aten::_unsafe_view",
                                    "aten::flatten",
                                    "aten::unflatten",
                                    "aten::expand_as"};
    for (const char *p : kLayout)
        if (n == p) return "layout and copies";
    return "elementwise and reductions";
}

struct Span {
    uint64_t start = 0, end = 0;
    size_t index = 0;
};

} // namespace

std::string shapesText(const c10::ArrayRef<std::vector<int64_t>> &shapes)
{
    std::string text;
    for (const auto &shape : shapes) {
        if (shape.empty()) continue;
        std::string one;
        for (auto d : shape) one += (one.empty() ? "" : "x") + std::to_string(d);
        text += (text.empty() ? "" : " ") + one;
    }
    return text;
}

void printCpuProfile(const std::string &tag, int64_t steps, double wallSeconds,
                     double plainMsPerStep,
                     const std::vector<torch::autograd::profiler::KinetoEvent> &events,
                     double peakGflops)
{
    // Each event's self time: its duration less its direct children's, nesting by thread.
    std::map<uint64_t, std::vector<Span>> byThread;
    for (size_t i = 0; i < events.size(); ++i) {
        const auto &e = events[i];
        if (e.deviceType() != c10::DeviceType::CPU || e.endNs() <= e.startNs()) continue;
        byThread[e.startThreadId()].push_back({e.startNs(), e.endNs(), i});
    }
    std::vector<double> selfNs(events.size(), 0.0);
    for (auto &[thread, spans] : byThread) {
        std::sort(spans.begin(), spans.end(), [](const Span &x, const Span &y) {
            return x.start != y.start ? x.start < y.start : x.end > y.end;
        });
        std::vector<Span> open;
        for (const auto &s : spans) {
            while (!open.empty() && open.back().end <= s.start) open.pop_back();
            const double d = static_cast<double>(s.end - s.start);
            selfNs[s.index] += d;
            if (!open.empty()) selfNs[open.back().index] -= d;
            open.push_back(s);
        }
    }
    struct Acc {
        double ns = 0;
        int64_t calls = 0;
    };
    std::map<std::string, Acc> byName, byClass, parts;
    double opNs = 0;
    int64_t atenCalls = 0;
    for (const auto &[thread, spans] : byThread)
        for (const auto &s : spans) {
            const std::string name = events[s.index].name();
            const double self = std::max(0.0, selfNs[s.index]);
            Acc &ofName = byName[name], &ofClass = byClass[opClass(name)];
            ofName.ns += self;
            ofName.calls++;
            ofClass.ns += self;
            ofClass.calls++;
            opNs += self;
            if (startsWith(name, "aten::")) ++atenCalls;
            if (startsWith(name, "headlab::")) {
                parts[name].ns += static_cast<double>(s.end - s.start);
                parts[name].calls++;
            }
        }
    const double perStep = 1.0 / static_cast<double>(std::max<int64_t>(1, steps));
    const double dispatchUs = dispatchMicroseconds();
    const double callsPerStep = static_cast<double>(atenCalls) * perStep;
    std::printf("{\"profile\": \"cpu-total\", %s, \"steps\": %lld, \"profiled_wall_ms_per_step\": "
                "%.4f, \"wall_ms_per_step\": %.4f, \"op_ms_per_step\": %.4f, "
                "\"aten_calls_per_step\": %.1f, \"dispatch_us_per_call\": %.3f, "
                "\"dispatch_ms_per_step\": %.4f, \"dispatch_share\": %.3f}\n",
                tag.c_str(), (long long)steps, wallSeconds * 1e3 * perStep, plainMsPerStep,
                opNs / 1e6 * perStep, callsPerStep, dispatchUs, callsPerStep * dispatchUs / 1e3,
                plainMsPerStep > 0 ? callsPerStep * dispatchUs / 1e3 / plainMsPerStep : 0.0);
    for (const auto &[name, acc] : parts)
        std::printf("{\"profile\": \"cpu-part\", %s, \"part\": \"%s\", \"ms_per_step\": %.4f, "
                    "\"share\": %.3f}\n",
                    tag.c_str(), name.c_str(), acc.ns / 1e6 * perStep,
                    acc.ns / std::max(1.0, wallSeconds * 1e9));
    for (const auto &[cls, acc] : byClass)
        std::printf("{\"profile\": \"cpu-class\", %s, \"class\": \"%s\", \"ms_per_step\": %.4f, "
                    "\"share\": %.3f, \"calls_per_step\": %.1f}\n",
                    tag.c_str(), cls.c_str(), acc.ns / 1e6 * perStep, acc.ns / std::max(1.0, opNs),
                    static_cast<double>(acc.calls) * perStep);
    std::vector<std::pair<std::string, Acc>> top(byName.begin(), byName.end());
    std::sort(top.begin(), top.end(),
              [](const auto &x, const auto &y) { return x.second.ns > y.second.ns; });
    for (size_t i = 0; i < top.size() && i < 25; ++i) {
        std::string name = top[i].first.substr(0, 100);
        for (auto &ch : name)
            if (ch == '"' || ch == '\\') ch = '\'';
        std::printf("{\"profile\": \"cpu-op\", %s, \"name\": \"%s\", \"class\": \"%s\", "
                    "\"ms_per_step\": %.4f, \"share\": %.3f, \"calls_per_step\": %.1f, "
                    "\"us_per_call\": %.2f}\n",
                    tag.c_str(), name.c_str(), opClass(top[i].first).c_str(),
                    top[i].second.ns / 1e6 * perStep, top[i].second.ns / std::max(1.0, opNs),
                    static_cast<double>(top[i].second.calls) * perStep,
                    top[i].second.ns / 1e3 / static_cast<double>(top[i].second.calls));
    }
    if (peakGflops > 0) { // each product by its shapes: its rate against the cores' peak
        struct Product {
            double ns = 0, flops = 0;
            int64_t calls = 0;
        };
        std::map<std::string, Product> products;
        double productNs = 0, productFlops = 0;
        for (const auto &[thread, spans] : byThread)
            for (const auto &s : spans) {
                const auto &e = events[s.index];
                if (e.flops() <= 0) continue;
                Product &p = products[e.name() + " " + shapesText(e.shapes())];
                const double self = std::max(0.0, selfNs[s.index]);
                p.ns += self;
                p.flops += static_cast<double>(e.flops());
                p.calls++;
                productNs += self;
                productFlops += static_cast<double>(e.flops());
            }
        const double rate = productFlops / std::max(productNs, 1.0);
        std::printf("{\"profile\": \"cpu-products\", %s, \"peak_gflops\": %.1f, \"ms_per_step\": "
                    "%.4f, \"share\": %.3f, \"gflop_per_step\": %.4f, \"gflops\": %.1f, "
                    "\"peak_share\": %.3f, \"ops\": %zu}\n",
                    tag.c_str(), peakGflops, productNs / 1e6 * perStep,
                    productNs / std::max(1.0, opNs), productFlops / 1e9 * perStep, rate,
                    rate / peakGflops, products.size());
        std::vector<std::pair<std::string, Product>> top(products.begin(), products.end());
        std::sort(top.begin(), top.end(),
                  [](const auto &x, const auto &y) { return x.second.ns > y.second.ns; });
        for (size_t i = 0; i < top.size() && i < 30; ++i) {
            const auto &[key, p] = top[i];
            std::string name = key.substr(0, 120);
            for (auto &ch : name)
                if (ch == '"' || ch == '\\') ch = '\'';
            const double gflops = p.flops / std::max(p.ns, 1.0);
            std::printf("{\"profile\": \"cpu-product\", %s, \"op\": \"%s\", "
                        "\"calls_per_step\": %.1f, \"gflop_per_call\": %.5f, \"us_per_call\": "
                        "%.2f, \"ms_per_step\": %.4f, \"share\": %.3f, \"gflops\": %.1f, "
                        "\"peak_share\": %.3f}\n",
                        tag.c_str(), name.c_str(), static_cast<double>(p.calls) * perStep,
                        p.flops / static_cast<double>(p.calls) / 1e9,
                        p.ns / 1e3 / static_cast<double>(p.calls), p.ns / 1e6 * perStep,
                        p.ns / std::max(1.0, opNs), gflops, gflops / peakGflops);
        }
    }
    std::fflush(stdout);
}

namespace {

// What TimedProducts' callback gathers, across every thread that runs an op.
struct Timed {
    double ns = 0, flops = 0;
    int64_t calls = 0;
};
struct TimedState {
    std::mutex mutex;
    std::map<std::string, Timed> products, parts, classes;
};
TimedState &timedState()
{
    static TimedState s;
    return s;
}
thread_local int t_productDepth = 0; // a product inside a product (bmm through mm) counts once
thread_local int t_opDepth = 0;      // the ops called from no other op: a class's time counts once

struct TimedContext : at::ObserverContext {
    Clock::time_point t0;
    std::string key, opClass; // opClass: a top-level op's class (opClass()), else empty
    double flops = 0;
    bool product = false, op = false;
};

bool isProduct(std::string_view name)
{
    return name == "aten::mm" || name == "aten::bmm" || name == "aten::addmm" ||
           name == "aten::baddbmm";
}

std::vector<int64_t> sizesOf(const c10::IValue &v)
{
    return v.isTensor() ? v.toTensor().sizes().vec() : std::vector<int64_t>{};
}

// The FLOPs of a product from its operands' shapes: (b ×) M × K by K × N makes 2·b·M·K·N.
double productFlops(const std::vector<int64_t> &a, const std::vector<int64_t> &b)
{
    if (a.size() < 2 || b.size() < 2) return 0;
    double batch = 1;
    for (size_t i = 0; i + 2 < a.size(); ++i) batch *= static_cast<double>(a[i]);
    return 2.0 * batch * static_cast<double>(a[a.size() - 2]) * static_cast<double>(a.back()) *
           static_cast<double>(b.back());
}

std::unique_ptr<at::ObserverContext> timedStart(const at::RecordFunction &fn)
{
    const std::string_view name = fn.name();
    auto ctx = std::make_unique<TimedContext>();
    if (fn.scope() == at::RecordScope::USER_SCOPE) {
        if (name.rfind("headlab::", 0) != 0) return nullptr;
        ctx->key = name;
    } else {
        ctx->op = true;
        if (t_opDepth++ == 0) ctx->opClass = opClass(std::string(name));
        // mm(A, B), bmm(A, B); addmm(C, A, B), baddbmm(C, A, B)
        const bool three = name == "aten::addmm" || name == "aten::baddbmm";
        if (isProduct(name) && t_productDepth++ == 0) {
            ctx->product = true;
            const auto inputs = fn.inputs();
            const size_t first = three ? 1 : 0;
            if (inputs.size() >= first + 2) {
                const auto a = sizesOf(inputs[first]), b = sizesOf(inputs[first + 1]);
                std::vector<std::vector<int64_t>> shapes{a, b};
                ctx->key = std::string(name) + " " + shapesText(shapes);
                ctx->flops = productFlops(a, b);
            }
        }
        if (ctx->opClass.empty() && !ctx->product) {
            --t_opDepth; // nothing to time: no context, so the end callback sees none
            if (isProduct(name)) --t_productDepth;
            return nullptr;
        }
    }
    ctx->t0 = Clock::now();
    return ctx;
}

void timedEnd(const at::RecordFunction &fn, at::ObserverContext *base)
{
    const auto end = Clock::now();
    (void)fn;
    if (!base) return; // timedStart undid its counts for the ops it gave no context
    auto *ctx = static_cast<TimedContext *>(base);
    if (ctx->product) --t_productDepth;
    if (ctx->op) --t_opDepth;
    const double ns = std::chrono::duration<double, std::nano>(end - ctx->t0).count();
    auto &s = timedState();
    std::lock_guard lock(s.mutex);
    if (ctx->product && !ctx->key.empty()) {
        Timed &t = s.products[ctx->key];
        t.ns += ns;
        t.flops += ctx->flops;
        t.calls++;
    }
    if (!ctx->opClass.empty()) {
        Timed &t = s.classes[ctx->opClass];
        t.ns += ns;
        t.calls++;
    }
    if (!ctx->op) {
        Timed &t = s.parts[ctx->key];
        t.ns += ns;
        t.calls++;
    }
}

} // namespace

TimedProducts::TimedProducts()
{
    auto &s = timedState();
    {
        std::lock_guard lock(s.mutex);
        s.products.clear();
        s.parts.clear();
        s.classes.clear();
    }
    m_handle = at::addGlobalCallback(
        at::RecordFunctionCallback(timedStart, timedEnd)
            .needsInputs(true)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
}

TimedProducts::~TimedProducts()
{
    at::removeCallback(m_handle);
}

void TimedProducts::print(const std::string &tag, int64_t steps, double wallSeconds,
                          double peakGflops) const
{
    auto &s = timedState();
    std::lock_guard lock(s.mutex);
    const double perStep = 1.0 / static_cast<double>(std::max<int64_t>(steps, 1));
    double ns = 0, flops = 0;
    for (const auto &[key, t] : s.products) {
        ns += t.ns;
        flops += t.flops;
    }
    const double wallMs = wallSeconds * 1e3 * perStep;
    std::printf("{\"profile\": \"cpu-timed-total\", %s, \"steps\": %lld, \"wall_ms_per_step\": "
                "%.4f, \"product_ms_per_step\": %.4f, \"product_share\": %.3f, "
                "\"gflop_per_step\": %.4f, \"gflops\": %.1f, \"peak_gflops\": %.1f, "
                "\"peak_share\": %.3f}\n",
                tag.c_str(), static_cast<long long>(steps), wallMs, ns / 1e6 * perStep,
                ns / 1e6 * perStep / std::max(wallMs, 1e-9), flops / 1e9 * perStep,
                flops / std::max(ns, 1.0), peakGflops,
                peakGflops > 0 ? flops / std::max(ns, 1.0) / peakGflops : 0.0);
    double opNs = 0;
    for (const auto &[cls, t] : s.classes) opNs += t.ns;
    for (const auto &[cls, t] : s.classes)
        std::printf("{\"profile\": \"cpu-timed-class\", %s, \"class\": \"%s\", \"ms_per_step\": "
                    "%.4f, \"share\": %.3f, \"calls_per_step\": %.1f}\n",
                    tag.c_str(), cls.c_str(), t.ns / 1e6 * perStep,
                    t.ns / 1e6 * perStep / std::max(wallMs, 1e-9),
                    static_cast<double>(t.calls) * perStep);
    // What no op's clock covers: HeadLab's code and the autograd engine between the ops.
    const double between = wallMs - opNs / 1e6 * perStep;
    std::printf("{\"profile\": \"cpu-timed-class\", %s, \"class\": \"between ops\", "
                "\"ms_per_step\": %.4f, \"share\": %.3f, \"calls_per_step\": 0}\n",
                tag.c_str(), between, between / std::max(wallMs, 1e-9));
    for (const auto &[key, t] : s.parts)
        std::printf("{\"profile\": \"cpu-timed-part\", %s, \"part\": \"%s\", \"ms_per_step\": "
                    "%.4f, \"share\": %.3f}\n",
                    tag.c_str(), key.c_str(), t.ns / 1e6 * perStep,
                    t.ns / 1e6 * perStep / std::max(wallMs, 1e-9));
    std::vector<std::pair<std::string, Timed>> top(s.products.begin(), s.products.end());
    std::sort(top.begin(), top.end(),
              [](const auto &x, const auto &y) { return x.second.ns > y.second.ns; });
    for (size_t i = 0; i < top.size() && i < 30; ++i) {
        const auto &[key, t] = top[i];
        const double gflops = t.flops / std::max(t.ns, 1.0);
        std::printf("{\"profile\": \"cpu-timed-product\", %s, \"op\": \"%s\", "
                    "\"calls_per_step\": %.1f, \"us_per_call\": %.2f, \"ms_per_step\": %.4f, "
                    "\"gflops\": %.1f, \"peak_share\": %.3f}\n",
                    tag.c_str(), key.c_str(), static_cast<double>(t.calls) * perStep,
                    t.ns / 1e3 / static_cast<double>(t.calls), t.ns / 1e6 * perStep, gflops,
                    peakGflops > 0 ? gflops / peakGflops : 0.0);
    }
    std::fflush(stdout);
}

double dispatchMicroseconds()
{
    torch::NoGradGuard noGrad;
    auto t = torch::zeros({1});
    constexpr int kCalls = 100000;
    double best = 1e9;
    for (int repeat = 0; repeat < 5; ++repeat) {
        const auto t0 = Clock::now();
        for (int i = 0; i < kCalls; ++i) t.add_(1.0);
        best = std::min(best, secondsSince(t0) * 1e6 / kCalls);
    }
    return best;
}

namespace {

constexpr int64_t kPeakIterations = 20'000'000;
constexpr int kChains = 16; // FMA latency (4 cycles) × 2 units × 2: every unit kept busy

#if defined(__x86_64__)
__attribute__((target("avx512f"))) double fmaChainsAvx512()
{
    __m512 acc[kChains];
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (auto &x : acc) x = _mm512_set1_ps(1.0f);
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < kPeakIterations / 4; ++i)
#pragma GCC unroll 16
        for (auto &x : acc) x = _mm512_fmadd_ps(x, a, b);
    const double s = secondsSince(t0);
    float sink = 0;
    for (auto &x : acc) sink += _mm512_reduce_add_ps(x);
    asm volatile("" ::"x"(sink));
    return 2.0 * 16 * kChains * (kPeakIterations / 4) / s;
}

__attribute__((target("avx2,fma"))) double fmaChainsAvx2()
{
    __m256 acc[kChains];
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (auto &x : acc) x = _mm256_set1_ps(1.0f);
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < kPeakIterations / 2; ++i)
#pragma GCC unroll 16
        for (auto &x : acc) x = _mm256_fmadd_ps(x, a, b);
    const double s = secondsSince(t0);
    alignas(32) float out[8];
    float sink = 0;
    for (auto &x : acc) {
        _mm256_store_ps(out, x);
        sink += out[0];
    }
    asm volatile("" ::"x"(sink));
    return 2.0 * 8 * kChains * (kPeakIterations / 2) / s;
}

// The clock: a chain of dependent one-cycle register adds (an add of an immediate is not used:
// Golden Cove's renamer folds chains of those, and the chain then ran at 15 "GHz").
double clockGhz()
{
    constexpr int64_t kLoops = 20'000'000;
    uint64_t x = 0, one = 1;
    double best = 1e9;
    for (int repeat = 0; repeat < 3; ++repeat) {
        const auto t0 = Clock::now();
        for (int64_t i = 0; i < kLoops; ++i)
            asm volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                         : "+r"(x)
                         : "r"(one));
        best = std::min(best, secondsSince(t0));
    }
    return 16.0 * kLoops / best / 1e9;
}
#endif

} // namespace

CpuPeak measureFp32Peak(int threads)
{
    CpuPeak peak;
#if defined(__x86_64__)
    double (*chains)() = nullptr;
    if (__builtin_cpu_supports("avx512f")) {
        chains = fmaChainsAvx512;
        peak.isa = "AVX-512 FMA";
        peak.lanes = 16;
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        chains = fmaChainsAvx2;
        peak.isa = "AVX2 FMA";
        peak.lanes = 8;
    }
    if (!chains) return peak;
    peak.ghz = clockGhz();
    for (int repeat = 0; repeat < 3; ++repeat)
        peak.perCoreGflops = std::max(peak.perCoreGflops, chains() / 1e9);
    for (int repeat = 0; repeat < 3; ++repeat) { // the best of three: the cores may be a VM's
        std::vector<double> each(static_cast<size_t>(std::max(1, threads)));
        std::vector<std::thread> pool;
        for (size_t t = 0; t < each.size(); ++t) pool.emplace_back([&, t] { each[t] = chains(); });
        for (auto &t : pool) t.join();
        double all = 0;
        for (double g : each) all += g / 1e9;
        peak.gflops = std::max(peak.gflops, all);
    }
    peak.fmaPerCycle = peak.perCoreGflops / (2.0 * peak.lanes * peak.ghz);
#else
    (void)threads;
#endif
    return peak;
}

} // namespace headlab::bench
