// CpuParallel.cpp — see CpuParallel.h.
#include "core/model/CpuParallel.h"

#include "core/config/Switches.h"

namespace headlab {

bool cpuLoopsThreaded()
{
#ifdef HEADLAB_CPU_LOOPS_OPENMP
    return switchOn(Switch::CpuLoopThreads, true);
#else
    return false;
#endif
}

} // namespace headlab
