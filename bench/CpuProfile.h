// CpuProfile.h — what headlab-bench measures of the CPU itself: where a training step's time goes
// (the profiler's CPU ops, each by its self time, and the step's named parts), what one operator
// call costs the framework before any arithmetic (its dispatch), and the cores' FP32 peak.
#pragma once

#include <torch/csrc/autograd/profiler_kineto.h>

#include <cstdint>
#include <string>
#include <vector>

namespace headlab::bench {

// Prints JSON lines: "cpu-total" (wall and op time per step, operator calls per step and the
// dispatch share they make at dispatchMicroseconds each), "cpu-part" (the training step's scopes,
// headlab::forward, backward, optimizer, bookkeeping: inclusive ms per step), "cpu-class" (the ops'
// self time by class: products, attention, norm, autograd, elementwise) and "cpu-op" (the 25 ops
// of most self time). `wallSeconds` is the profiled run's wall time; `plainMsPerStep` the same
// step's time without the profiler, for the dispatch share.
// With `peakGflops` > 0 (the profile recorded shapes and FLOPs: headlab-bench --products 1), also
// "cpu-products" and "cpu-product": each matrix product by its input shapes, its self time, its
// GFLOP/s and its share of that peak (the cores' measured FP32 peak), the 30 of most time.
void printCpuProfile(const std::string &tag, int64_t steps, double wallSeconds,
                     double plainMsPerStep,
                     const std::vector<torch::autograd::profiler::KinetoEvent> &events,
                     double peakGflops = 0);

// The products, the ops by class and the step's parts timed by the clock alone, without the
// profiler: a callback on the ops and on HeadLab's named scopes, which reads the clock at each
// one's start and end. The Kineto profiler with shapes made a wide step 4-5x slower
// and its products' rates varied 45-161 GFLOP/s from one run to the next; this costs a clock read
// per op, so the rates are those of the step as it trains. Install, train, then print():
// "cpu-timed-total" (the step's wall time, its products' time and rate), "cpu-timed-part" (each
// scope's inclusive ms per step), "cpu-timed-class" (the ops no other op called, by class, each
// with its children; "between ops": the rest of the wall time) and "cpu-timed-product" (each product by its input shapes, its
// ms per step, GFLOP/s and share of peakGflops).
class TimedProducts {
public:
    TimedProducts();
    ~TimedProducts();
    TimedProducts(const TimedProducts &) = delete;
    TimedProducts &operator=(const TimedProducts &) = delete;
    void print(const std::string &tag, int64_t steps, double wallSeconds, double peakGflops) const;

private:
    uint64_t m_handle = 0;
};

// An op's input shapes as "64x12x32 64x32x12" (empty shapes left out).
std::string shapesText(const c10::ArrayRef<std::vector<int64_t>> &shapes);

// The cost of one operator call that does no work to speak of (an in-place add on a one-element
// tensor), in µs, the least of several timings: the framework's part of every op.
double dispatchMicroseconds();

// The FP32 peak of `threads` cores, measured: each core runs chains of fused multiply-adds at the
// widest vector the CPU has (AVX-512, else AVX2 with FMA, else SSE), enough of them in flight to
// hide the latency; the best of three timings each. lanes: floats per vector; gflops: all the threads together; perCoreGflops: one
// core alone; ghz: the clock one core runs at, from a chain of dependent integer adds (one cycle
// each); fmaPerCycle: lanes-wide FMAs per cycle that makes (perCoreGflops / (2 · lanes · ghz)), the
// core's FMA units.
struct CpuPeak {
    std::string isa;
    int lanes = 0;
    double gflops = 0, perCoreGflops = 0, ghz = 0, fmaPerCycle = 0;
};
CpuPeak measureFp32Peak(int threads);

} // namespace headlab::bench
