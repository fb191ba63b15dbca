# HeadlabLayer.cmake — one static library per source folder, each seeing only the folders below it.
#
# headlab_add_layer(TARGET FOLDER [SOURCES generated ...] [DEPENDS layer ...] [TORCH] [QT]
#                   [TRAINING])
#
# The layer compiles every .cpp under FOLDER, subfolders included (a task's folder, a figure's
# file): the build finds them, so adding a file is not also an edit of a list here. SOURCES names
# only what is generated into the build tree (the embedded presets, the build's commit).
#
# TORCH links LibTorch privately, QT marks a ui/ layer; each then compiles from its precompiled
# header (cmake/HeadlabPch.cmake).
#
# TRAINING marks a layer that every step of every run goes through (core/config, attention,
# metrics, model, tasks, train): it compiles at the build type's optimisation, -O3 in Release. The
# others (core/schema, session, report, lab, ui/, the app's and the CLI's own files) run once per
# thing a user does: reading a session, a summary, a window's redraw. In Release they compile at
# HEADLAB_LAB_OPTIMIZATION, -O1 unless set, which takes about a quarter off their compile time and
# a sixth off the first command's configure and build on 2 cores (377 s to 311 s, cold-start data
# files of 2026-12-06). headlab-cli summary, report, export-csv and predict of the 657-run Figure 2
# export, and the app writing every figure of a 75-run session, took 0.97-1.02 of their time at
# -O3 (bench/lab_optimization.sh; docs/PERFORMANCE.md, "Time to the first window", cites the data
# files). -DHEADLAB_LAB_OPTIMIZATION= (empty) compiles them at -O3 as well.
#
# A folder such as core/tasks becomes the target headlab_tasks. Its sources include headers by
# their path from the repository root ("core/config/RunConfig.h"), but the repository root is not
# on any layer's include path: each layer gets a directory of its own in the build tree holding a
# link to its folder only, and sees the folders of the layers it DEPENDS on through their (public)
# include directories. An include that runs up the stack, e.g. core/config including
# core/train/Trainer.h, names a file the compiler cannot find, and the build fails there.
function(headlab_add_layer target folder)
    cmake_parse_arguments(ARG "TORCH;QT;TRAINING" "" "SOURCES;DEPENDS" ${ARGN})
    set(stage "${CMAKE_BINARY_DIR}/layers/${target}")
    get_filename_component(parent "${stage}/${folder}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    if(NOT IS_SYMLINK "${stage}/${folder}")
        file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${folder}" "${stage}/${folder}" SYMBOLIC)
    endif()
    file(GLOB_RECURSE sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/${folder}/*.cpp")
    add_library(${target} STATIC ${sources} ${ARG_SOURCES})
    target_include_directories(${target} PUBLIC "${stage}")
    target_link_libraries(${target} PUBLIC ${ARG_DEPENDS})
    # Tables are aggregates whose rows name only the members they set (Field.h, TaskSpec.h).
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
    if(NOT ARG_TRAINING)
        headlab_outside_training(${target})
    endif()
    if(ARG_TORCH)
        target_link_libraries(${target} PRIVATE headlab_torch)
        headlab_use_pch(${target} torch)
    endif()
    if(ARG_QT)
        headlab_use_pch(${target} qt)
    else()
        # No Q_OBJECT outside ui/: moc's empty file would still load the precompiled header.
        set_target_properties(${target} PROPERTIES AUTOMOC OFF AUTOUIC OFF AUTORCC OFF)
    endif()
endfunction()

set(HEADLAB_LAB_OPTIMIZATION "-O1" CACHE STRING
    "Optimisation of the code outside the training path in Release builds; empty: the build type's")

# headlab_outside_training(TARGET): TARGET's own files compile at HEADLAB_LAB_OPTIMIZATION in a
# Release build (the app's and the CLI's executables, the layers without TRAINING).
function(headlab_outside_training target)
    if(HEADLAB_LAB_OPTIMIZATION)
        target_compile_options(${target} PRIVATE "$<$<CONFIG:Release>:${HEADLAB_LAB_OPTIMIZATION}>")
    endif()
endfunction()

# The ui/ layers start from Qt's precompiled header: it compiles as they do.
if(TARGET headlab_pch_qt)
    headlab_outside_training(headlab_pch_qt)
endif()
