// TaskFactories.cpp — the factory of every task of TaskList.h: what builds a task for training.
// Each factory is defined in its task's folder (core/tasks/<task>/<Task>Task.cpp); the one list
// pairs it with the task's spec, so a task id finds its factory without a second list.
#include "core/tasks/Task.h"

#include "core/schema/TaskList.h"
#include "core/schema/TaskSpec.h"

#include <stdexcept>

namespace headlab {

namespace {

// The factories of the tasks a ScopedTask added.
std::vector<std::pair<const TaskSpec *, TaskFactory>> &scopedFactories()
{
    static std::vector<std::pair<const TaskSpec *, TaskFactory>> factories;
    return factories;
}

} // namespace

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
    for (const auto &[spec, factory] : scopedFactories())
        if (spec == &wanted) return factory(config, dataSeeds, device.str());
    throw std::invalid_argument("task.kind: the " + wanted.id + " task has no factory");
}

ScopedTask::ScopedTask(const TaskSpec &spec, TaskFactory factory)
    : m_row(spec)
    , m_spec(&spec)
{
    scopedFactories().emplace_back(&spec, factory);
}

ScopedTask::~ScopedTask()
{
    std::erase_if(scopedFactories(), [this](const auto &entry) { return entry.first == m_spec; });
}

} // namespace headlab
