# HeadlabCutlass.cmake — CUTLASS's C++ headers for the one HeadLab kernel built on them
# (core/model/cuda/BiasReluProduct.cu, issue 56), from the pinned PyPI wheel nvidia-cutlass
# (scripts/setup.sh's CUTLASS_VERSION), which carries them under cutlass_library/source/include.
# Found, in this order:
#   1. -DHEADLAB_CUTLASS_INCLUDE=DIR;
#   2. the wheel installed beside torch (the .venv that scripts/setup.sh makes);
#   3. the wheel file itself in .deps/ (scripts/stage-deps.sh puts it there for the GPU machine,
#      which cannot download), unpacked into the build tree once.
# Sets HEADLAB_CUTLASS_INCLUDE, or leaves it empty: the kernel is then left out and cuBLAS with
# HeadLab's bias-ReLU pass does the same work. Only read where CUDA kernels are compiled.
set(HEADLAB_CUTLASS_INCLUDE "" CACHE PATH "CUTLASS's include folder (found from the nvidia-cutlass wheel when empty)")
set(_headlab_cutlass_probe cutlass/gemm/device/gemm_universal.h)
if(NOT HEADLAB_CUTLASS_INCLUDE AND Torch_DIR)
    # Torch_DIR is <site-packages>/torch/share/cmake/Torch.
    get_filename_component(_headlab_site "${Torch_DIR}/../../../.." ABSOLUTE)
    if(EXISTS "${_headlab_site}/cutlass_library/source/include/${_headlab_cutlass_probe}")
        set(HEADLAB_CUTLASS_INCLUDE "${_headlab_site}/cutlass_library/source/include" CACHE PATH "" FORCE)
    endif()
endif()
if(NOT HEADLAB_CUTLASS_INCLUDE)
    file(GLOB _headlab_cutlass_wheels "${PROJECT_SOURCE_DIR}/.deps/nvidia_cutlass-*.whl")
    if(_headlab_cutlass_wheels)
        list(GET _headlab_cutlass_wheels 0 _headlab_wheel)
        get_filename_component(_headlab_wheel_name "${_headlab_wheel}" NAME)
        set(_headlab_unpacked "${CMAKE_BINARY_DIR}/cutlass/${_headlab_wheel_name}")
        if(NOT EXISTS "${_headlab_unpacked}/cutlass_library/source/include/${_headlab_cutlass_probe}")
            message(STATUS "HeadLab: unpacking CUTLASS's headers from ${_headlab_wheel_name}")
            file(ARCHIVE_EXTRACT INPUT "${_headlab_wheel}" DESTINATION "${_headlab_unpacked}"
                 PATTERNS "cutlass_library/source/include/*")
        endif()
        set(HEADLAB_CUTLASS_INCLUDE "${_headlab_unpacked}/cutlass_library/source/include" CACHE PATH "" FORCE)
    endif()
endif()
if(HEADLAB_CUTLASS_INCLUDE AND EXISTS "${HEADLAB_CUTLASS_INCLUDE}/cutlass/version.h")
    file(STRINGS "${HEADLAB_CUTLASS_INCLUDE}/cutlass/version.h" _headlab_cutlass_version
         REGEX "#define CUTLASS_(MAJOR|MINOR|PATCH) [0-9]+")
    string(REGEX REPLACE "[^0-9;]|#define CUTLASS_[A-Z]+ " "" _headlab_cutlass_version "${_headlab_cutlass_version}")
    string(REPLACE ";" "." _headlab_cutlass_version "${_headlab_cutlass_version}")
    message(STATUS "HeadLab: CUTLASS ${_headlab_cutlass_version} headers in ${HEADLAB_CUTLASS_INCLUDE}")
else()
    set(HEADLAB_CUTLASS_INCLUDE "" CACHE PATH "" FORCE)
    message(STATUS "HeadLab: no CUTLASS headers (the nvidia-cutlass wheel): the feed-forward block's first product stays cuBLAS's")
endif()
