# HeadlabLayer.cmake — one static library per source folder, each seeing only the folders below it.
#
# headlab_add_layer(TARGET FOLDER [SOURCES generated ...] [DEPENDS layer ...] [TORCH] [QT])
#
# The layer compiles every .cpp under FOLDER, subfolders included (a task's folder, a figure's
# file): the build finds them, so adding a file is not also an edit of a list here. SOURCES names
# only what is generated into the build tree (the embedded presets, the build's commit).
#
# TORCH links LibTorch privately, QT marks a ui/ layer; each then compiles from its precompiled
# header (cmake/HeadlabPch.cmake).
#
# A folder such as core/tasks becomes the target headlab_tasks. Its sources include headers by
# their path from the repository root ("core/config/RunConfig.h"), but the repository root is not
# on any layer's include path: each layer gets a directory of its own in the build tree holding a
# link to its folder only, and sees the folders of the layers it DEPENDS on through their (public)
# include directories. An include that runs up the stack, e.g. core/config including
# core/train/Trainer.h, names a file the compiler cannot find, and the build fails there.
function(headlab_add_layer target folder)
    cmake_parse_arguments(ARG "TORCH;QT" "" "SOURCES;DEPENDS" ${ARGN})
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
