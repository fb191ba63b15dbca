// TaskTable.cpp — the task table: every task HeadLab can train, in the order of TaskList.h. A
// task's spec is defined in its own folder (core/schema/<task>/<Task>Spec.cpp). Torch-free.
#include "core/schema/TaskSpec.h"

#include "core/schema/TaskList.h"

#include <stdexcept>

namespace headlab {

#define HEADLAB_DECLARE_TASK(spec, factory) const TaskSpec &spec();
HEADLAB_TASK_LIST(HEADLAB_DECLARE_TASK)
#undef HEADLAB_DECLARE_TASK

namespace {

std::vector<const TaskSpec *> &rows()
{
#define HEADLAB_TASK_ROW(spec, factory) &spec(),
    static std::vector<const TaskSpec *> table = {HEADLAB_TASK_LIST(HEADLAB_TASK_ROW)};
#undef HEADLAB_TASK_ROW
    return table;
}

} // namespace

const std::vector<const TaskSpec *> &taskTable()
{
    return rows();
}

ScopedTaskSpec::ScopedTaskSpec(const TaskSpec &spec)
    : m_spec(&spec)
{
    if (findTaskSpec(spec.id))
        throw std::logic_error("ScopedTaskSpec: a task '" + spec.id + "' exists already");
    rows().push_back(m_spec);
}

ScopedTaskSpec::~ScopedTaskSpec()
{
    std::erase(rows(), m_spec);
}

const TaskSpec *findTaskSpec(const std::string &id)
{
    for (const TaskSpec *spec : taskTable())
        if (spec->id == id) return spec;
    return nullptr;
}

const TaskSpec &taskSpec(const std::string &id)
{
    if (const TaskSpec *spec = findTaskSpec(id)) return *spec;
    std::vector<std::string> ids;
    std::string list;
    for (const TaskSpec *spec : taskTable()) {
        ids.push_back(spec->id);
        list += (list.empty() ? "" : ", ") + spec->id;
    }
    const std::string near = yaml::nearestKey(id, ids);
    throw std::invalid_argument("unknown task '" + id + "'" +
                                (near.empty() ? "" : "; did you mean '" + near + "'?") +
                                " (the tasks are " + list + ")");
}

const MetricSpec *findTaskMetric(const std::string &name)
{
    if (const MetricSpec *row = findMetric(name)) return row;
    for (const TaskSpec *spec : taskTable())
        for (const auto &row : spec->metrics)
            if (row.family ? name.rfind(row.name, 0) == 0 : name == row.name) return &row;
    return nullptr;
}

int64_t sequenceLength(const TaskConfig &task)
{
    return taskSpec(task).sequenceLength(task);
}

} // namespace headlab
