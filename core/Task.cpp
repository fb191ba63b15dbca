// Task.cpp — builds the task a run asks for.
#include "core/Task.h"

#include "core/AdditionTask.h"
#include "core/NearestNeighbourTask.h"
#include "core/TextTask.h"

#include <stdexcept>

namespace headlab {

std::unique_ptr<Task> makeTask(const RunConfig &config, const std::vector<uint64_t> &dataSeeds,
                               const torch::Device &device)
{
    switch (config.task.kind) {
    case TaskKind::Addition: return std::make_unique<AdditionTask>(config.task, device);
    case TaskKind::NearestNeighbour: return std::make_unique<NearestNeighbourTask>(config.task, dataSeeds, device);
    case TaskKind::Text: return std::make_unique<TextTask>(config, dataSeeds, device);
    }
    throw std::invalid_argument(std::string("task.kind: the ") + toString(config.task.kind) +
                                " task is not available in this build");
}

} // namespace headlab
