// CpuParallel.h — HeadLab's own CPU loops (Adam's pass, the LayerNorm, the embedding, the lanes,
// the nearest-neighbour points) over ATen's intra-op threads. at::parallel_for in an OpenMP LibTorch
// (the PyPI wheel's) is a pragma in ATen's header, so it runs on one thread in a file compiled
// without OpenMP; core/model/CMakeLists.txt compiles these loops' files with it, against the libgomp
// LibTorch loads, and defines HEADLAB_CPU_LOOPS_OPENMP where it did. HEADLAB_CPU_LOOP_THREADS=0 runs
// them on one thread (to measure). Each loop's chunks are fixed by its grain, not by the thread
// count, where the result depends on the order of a sum.
#pragma once

#include <ATen/Parallel.h>

#include <cstdint>

namespace headlab {

// Whether the loops take ATen's intra-op threads: the build compiled them with LibTorch's OpenMP,
// and HEADLAB_CPU_LOOP_THREADS is not "0". A run's provenance says which (cpu_loops).
bool cpuLoopsThreaded();

// f(begin, end) over [begin, end) in chunks of at least `grain`, on the intra-op threads where
// cpuLoopsThreaded(), else in one call.
template <typename F>
void cpuParallelFor(int64_t begin, int64_t end, int64_t grain, const F &f)
{
    if (cpuLoopsThreaded())
        at::parallel_for(begin, end, grain, f);
    else if (begin < end)
        f(begin, end);
}

} // namespace headlab
