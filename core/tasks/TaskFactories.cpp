// TaskFactories.cpp — the factory of every task of TaskList.h: what builds a task for training.
// Each factory is defined in its task's folder (core/tasks/<task>/<Task>Task.cpp); the one list
// pairs it with the task's spec, so a task id finds its factory without a second list.
#include "core/tasks/Task.h"

#include "core/schema/TaskList.h"
#include "core/schema/TaskSpec.h"

#include <stdexcept>

namespace headlab {

// Builds the task on `device` ("cpu", "cuda:0") for an ensemble whose runs have `dataSeeds`.
using TaskFactory = std::unique_ptr<Task> (*)(const RunConfig &config,
                                              const std::vector<uint64_t> &dataSeeds,
                                              const std::string &device);

#define HEADLAB_DECLARE_TASK(spec, factory)                                                        \
    const TaskSpec &spec();                                                                        \
    std::unique_ptr<Task> factory(const RunConfig &, const std::vector<uint64_t> &,                \
                                  const std::string &);
HEADLAB_TASK_LIST(HEADLAB_DECLARE_TASK)
#undef HEADLAB_DECLARE_TASK

std::unique_ptr<Task> makeTask(const RunConfig &config, const std::vector<uint64_t> &dataSeeds,
                               const torch::Device &device)
{
    const TaskSpec &wanted = taskSpec(config.task); // an unknown kind throws, naming the tasks
#define HEADLAB_TASK_FACTORY(spec, factory)                                                        \
    if (&spec() == &wanted) return factory(config, dataSeeds, device.str());
    HEADLAB_TASK_LIST(HEADLAB_TASK_FACTORY)
#undef HEADLAB_TASK_FACTORY
    throw std::invalid_argument("task.kind: the " + wanted.id + " task has no factory");
}

} // namespace headlab
