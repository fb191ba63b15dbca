// trajectory_dump.cpp — what tests/python/golden_trajectory.py needs to train test_core's golden
// run in plain PyTorch, independently of HeadLab's training code:
//
//   trajectory_dump DIR
//
// The run is test_core's tinyAddition(3e-3, 20, 7): the addition task with 512 training pairs,
// d_model 16, two layers of two heads, one answer-only phase of 20 steps at batch 16, Adam at
// η 3e-3. DIR/run-0.safetensors is its checkpoint at step 0 (the weights the trainer starts from,
// initialised by HeadLab), DIR/train.safetensors its training set in the trainer's order (batch t
// is rows (t·B + k) mod N) with the phase's settings in the metadata.
#include "core/config/Safetensors.h"
#include "core/config/Yaml.h"
#include "core/model/Transformer.h"
#include "core/tasks/Task.h"
#include "core/tasks/addition/AdditionTask.h"
#include "core/train/Checkpoint.h"
#include "tests/TinyRuns.h"

#include <torch/torch.h>

#include <cstdio>
#include <filesystem>

using namespace headlab;

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: trajectory_dump DIR\n");
        return 2;
    }
    try {
        const std::string dir = argv[1];
        std::filesystem::create_directories(dir);
        RunConfig c = testing::tinyAdditionRun(16, {2, 2}, 20, 3e-3); // test_core's tinyAddition
        c.logEvery = 1;
        c.initSeed = c.dataSeed = 7;
        const torch::Device cpu("cpu");
        const auto task = makeTask(c, {c.dataSeed}, cpu);
        const auto *addition = dynamic_cast<const AdditionTask *>(task.get());
        if (!addition) throw std::runtime_error("not the addition task");
        Transformer model(c.model, task->vocabSize(), task->maxPositions(), 1, cpu, {c.model.heads},
                          c.stabilizers);
        model.initializeRun(0, c.initSeed);
        TrainingPosition position;
        RunResult partial;
        partial.status = RunStatus::Running;
        writeCheckpoint(dir + "/run-0.safetensors", model, nullptr, 0, c, partial, position,
                        "periodic");

        const auto train = addition->trainingSet().to(torch::kCPU).contiguous();
        safetensors::Contents out;
        safetensors::Tensor t;
        t.name = "train";
        t.dtype = safetensors::DType::I64;
        t.shape.assign(train.sizes().begin(), train.sizes().end());
        t.data.assign(static_cast<const char *>(train.data_ptr()),
                      size_t(train.numel() * train.element_size()));
        out.tensors.push_back(std::move(t));
        const PhaseConfig &phase = c.phases.front();
        out.metadata["steps"] = std::to_string(phase.steps);
        out.metadata["batch_size"] = std::to_string(phase.batchSize);
        out.metadata["lr"] = yaml::formatNumber(c.lr);
        out.metadata["beta1"] = yaml::formatNumber(phase.optimizer.beta1);
        out.metadata["beta2"] = yaml::formatNumber(phase.optimizer.beta2);
        out.metadata["eps"] = yaml::formatNumber(phase.optimizer.eps);
        out.metadata["objective"] = "answer";
        safetensors::write(dir + "/train.safetensors", out);
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "trajectory_dump: %s\n", e.what());
        return 1;
    }
}
