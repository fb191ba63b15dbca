// CpuClones.h — HEADLAB_CPU_CLONES: a CPU loop compiled for AVX-512, AVX2 with FMA and the
// baseline, the widest the CPU runs chosen when the program loads (GCC's and Clang's function
// multiversioning; on other platforms the baseline alone). Internal to core/model.
#pragma once

#if defined(__x86_64__) && defined(__gnu_linux__)
#define HEADLAB_CPU_CLONES                                                                         \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HEADLAB_CPU_CLONES
#endif
