# HeadlabPch.cmake — precompiled headers, so that LibTorch's and Qt's headers are parsed once per
# build instead of once per file (issue 73: a file that includes LibTorch took 40-80 s to compile,
# most of it parsing the same headers again).
#
# One header target per kind of file, each compiling its precompiled header once:
#   headlab_pch_torch   LibTorch and the standard library, for the layers that link LibTorch
#                       (core/model, core/tasks, core/train; headlab_add_layer(... TORCH));
#   headlab_pch_qt      Qt Widgets and Charts and the standard library, for ui/ (headlab_add_layer(... QT)).
# A target reuses a header (REUSE_FROM) only where its flags match the header's: the same LibTorch
# flags, and position-independent code exactly where Qt asks for it (ui/ and every test link Qt,
# whose targets require -fPIC; core/ does not).
#
# HEADLAB_PCH=OFF turns them off (a compiler without PCH support, or to measure without them).
# ccache caches files compiled with them when told to ignore the header's time stamps and the
# __DATE__-style macros in it: scripts/setup.sh sets CCACHE_SLOPPINESS for that.
option(HEADLAB_PCH "Precompile LibTorch's and Qt's headers (parsed once per build)" ON)

set(HEADLAB_PCH_STD <algorithm> <cmath> <cstdint> <functional> <map> <memory> <optional> <string>
                    <unordered_map> <utility> <vector>)

if(HEADLAB_PCH)
    add_library(headlab_pch_torch STATIC "${PROJECT_SOURCE_DIR}/cmake/pch/Empty.cpp")
    target_link_libraries(headlab_pch_torch PRIVATE headlab_torch)
    target_compile_options(headlab_pch_torch PRIVATE -Wall -Wextra -Wno-unused-parameter
                                                     -Wno-missing-field-initializers)
    target_precompile_headers(headlab_pch_torch PRIVATE <torch/torch.h> ${HEADLAB_PCH_STD})
    set_target_properties(headlab_pch_torch PROPERTIES AUTOMOC OFF AUTOUIC OFF AUTORCC OFF)
    if(TARGET Qt6::Widgets AND TARGET Qt6::Charts)
        add_library(headlab_pch_qt STATIC "${PROJECT_SOURCE_DIR}/cmake/pch/Empty.cpp")
        # Not Svg: ui/model does not link it, and a macro its target defines (QT_SVG_LIB) would
        # have to be defined wherever the header is used.
        target_link_libraries(headlab_pch_qt PRIVATE Qt6::Widgets Qt6::Charts)
        target_compile_definitions(headlab_pch_qt PRIVATE QT_NO_KEYWORDS)
        set_target_properties(headlab_pch_qt PROPERTIES AUTOMOC OFF AUTOUIC OFF AUTORCC OFF)
        target_compile_options(headlab_pch_qt PRIVATE -Wall -Wextra -Wno-unused-parameter
                                                      -Wno-missing-field-initializers)
        target_precompile_headers(headlab_pch_qt PRIVATE <QtWidgets/QtWidgets> <QtCharts/QtCharts>
                                                         ${HEADLAB_PCH_STD})
    endif()
endif()

# headlab_use_pch(TARGET torch|qt): TARGET's files start from that precompiled header.
function(headlab_use_pch target kind)
    if(HEADLAB_PCH AND TARGET headlab_pch_${kind})
        target_precompile_headers(${target} REUSE_FROM headlab_pch_${kind})
    endif()
endfunction()
