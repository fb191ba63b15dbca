// TaskList.h — the list of tasks, one line each: the function that returns a task's spec (defined
// in core/schema/<task>/, torch-free) and the factory that builds it for training (defined in
// core/tasks/<task>/, LibTorch). The task table (TaskTable.cpp) and the factories
// (core/tasks/TaskFactories.cpp) both expand this one list, so adding a task adds one line here
// and its two folders. Every line ends in a backslash, the last included; clang-format leaves the
// list as it is, one task a line.
#pragma once

// clang-format off
#define HEADLAB_TASK_LIST(row)                                                                     \
    row(additionTask, makeAdditionTask)                                                            \
    row(nearestNeighbourTask, makeNearestNeighbourTask)                                            \
    row(textTask, makeTextTask)                                                                    \
    row(sequenceFileTask, makeSequenceFileTask) /* end of the task list */
// clang-format on
