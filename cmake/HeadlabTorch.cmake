# HeadlabTorch.cmake — the LibTorch that HeadLab links (target headlab_torch), and whether it has
# CUDA (HEADLAB_TORCH_CUDA, issue 54).
#
# The PyPI torch wheel has CUDA; PyTorch's CPU wheels (its own index) and CPU LibTorch archives do
# not. With CUDA, every target that links LibTorch compiles with HEADLAB_TORCH_CUDA=1, and only then do core/model's
# Device, kernels and Adam, and core/train's training loop include CUDA headers or call the CUDA
# runtime. Without it, HeadLab trains on the CPU and says so.
#
# HEADLAB_TORCH_CPU_ONLY=ON builds as against a CPU LibTorch even when this one has CUDA: no CUDA
# header on any include path, no CUDA library linked (torch_cpu and c10 only), HeadLab's own CUDA
# kernels off. tests/setup/cpu_torch_test.sh (ctest cpu_torch_build) builds that way in a build tree
# of its own and runs the CLI: the check that a CPU LibTorch builds, on a machine that can only
# download the CUDA wheel.
option(HEADLAB_TORCH_CPU_ONLY "Build as against a CPU-only LibTorch: no CUDA header or library" OFF)
add_library(headlab_torch INTERFACE)
if(TARGET torch_cuda AND NOT HEADLAB_TORCH_CPU_ONLY)
    set(HEADLAB_TORCH_CUDA ON)
    target_link_libraries(headlab_torch INTERFACE ${TORCH_LIBRARIES})
    # Every file that includes LibTorch links this target, so all of them see the same
    # definition (TrainingLoop.h holds a CUDA graph only with it).
    target_compile_definitions(headlab_torch INTERFACE HEADLAB_TORCH_CUDA=1)
    message(STATUS "HeadLab: LibTorch with CUDA")
else()
    set(HEADLAB_TORCH_CUDA OFF)
    # What a CPU LibTorch's TORCH_LIBRARIES holds: torch_cpu (with c10), torch's include folders
    # and its compile flags; none of torch_cuda's, c10_cuda's or the CUDA runtime's.
    target_link_libraries(headlab_torch INTERFACE torch_cpu_library)
    target_include_directories(headlab_torch INTERFACE ${TORCH_INCLUDE_DIRS})
    if(HEADLAB_TORCH_CPU_ONLY)
        # CUDA's own headers may sit on the compiler's search path (/usr/local/include); these
        # stand-ins, found first, stop the build at any include of them outside the guard.
        target_include_directories(headlab_torch BEFORE INTERFACE "${PROJECT_SOURCE_DIR}/cmake/no-cuda")
    endif()
    if(TORCH_CXX_FLAGS)
        separate_arguments(_headlab_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
        target_compile_options(headlab_torch INTERFACE ${_headlab_torch_flags})
    endif()
    message(STATUS "HeadLab: LibTorch without CUDA (CPU training only)")
endif()
