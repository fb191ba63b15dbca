// stabilizer_dump.cpp — writes what HeadLab's C++ computes for a session's runs, trained as one
// ensemble, so that tests/python/test_stabilizers.py can check it against an independent PyTorch
// implementation (headlab.checkpoint, written from the papers):
//
//   stabilizer_dump SESSION.yaml DIR
//
// Every run of the session's sweep (they must form one ensemble) starts from its seed and takes
// three Adam steps on random batches, so that γ, the qk-norm gains and σReparam's vectors have
// moved. Then DIR/run-R.safetensors is run R's checkpoint at that point (the state before the
// step below), and DIR/dump.safetensors holds, for one more step on a random batch:
//   input        the batch: tokens (B, T) int64, or points (R, B, T, d) for continuous tasks
//   target       tokens (B, T), or points (R, B, T, d)
//   loss         (R): the training loss (cross-entropy with z-loss, or the mean squared error)
//   grad.NAME    (R, ...): its gradient for every parameter
//   after.NAME   (R, ...): σReparam's vectors after the forward pass's power-iteration step
//   step.NAME    (R, ...): every parameter after the optimizer's step (with independent decay)
//   sigma.NAME   (R): σ(W) of each reparametrized weight after 300 more power-iteration steps
// and in its metadata the learning rates, the schedule multiplier and the Adam step count.
#include "core/config/Safetensors.h"
#include "core/lab/SweepSession.h"
#include "core/model/Adam.h"
#include "core/model/Transformer.h"
#include "core/schema/RunConfigFields.h"
#include "core/session/Session.h"
#include "core/tasks/Task.h"
#include "core/train/Checkpoint.h"

#include <torch/torch.h>

#include <cstdio>
#include <filesystem>

using namespace headlab;

namespace {

safetensors::Tensor tensorOf(const std::string &name, const torch::Tensor &value)
{
    const auto t = value.detach().to(torch::kCPU).contiguous();
    safetensors::Tensor out;
    out.name = name;
    out.dtype =
        t.scalar_type() == torch::kInt64 ? safetensors::DType::I64 : safetensors::DType::F32;
    out.shape.assign(t.sizes().begin(), t.sizes().end());
    out.data.assign(static_cast<const char *>(t.data_ptr()), size_t(t.numel() * t.element_size()));
    return out;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: stabilizer_dump SESSION.yaml DIR\n");
        return 2;
    }
    try {
        torch::manual_seed(7);
        Session session = loadSession(argv[1]);
        expandSweep(session);
        const std::string dir = argv[2];
        std::filesystem::create_directories(dir);
        std::vector<RunConfig> configs;
        for (const auto &run : session.runs) configs.push_back(run.config);
        const RunConfig &c0 = configs.front();
        for (const auto &c : configs)
            if (ensembleKey(c) != ensembleKey(c0)) {
                std::fprintf(stderr, "the session's runs are not one ensemble\n");
                return 2;
            }
        const int64_t R = static_cast<int64_t>(configs.size());
        const torch::Device cpu("cpu");
        std::vector<uint64_t> seeds;
        std::vector<std::vector<int64_t>> runHeads;
        for (const auto &c : configs) {
            seeds.push_back(c.dataSeed);
            runHeads.push_back(c.model.heads);
        }
        const auto task = makeTask(c0, seeds, cpu);
        Transformer model(c0.model, task->vocabSize(), task->maxPositions(), R, cpu, runHeads,
                          c0.stabilizers);
        for (int64_t r = 0; r < R; ++r) model.initializeRun(r, configs[size_t(r)].initSeed);
        const PhaseConfig &phase = c0.phases.front();
        Adam adam(model, phase.optimizer, c0.stabilizers.independentWeightDecay);
        std::vector<torch::Tensor> lrs;
        for (const auto &p : model.parameters()) {
            std::vector<float> perRun;
            for (const auto &c : configs) perRun.push_back(float(c.lr));
            lrs.push_back(torch::tensor(perRun));
        }
        adam.setLearningRates(lrs);
        const double multiplier = 0.5; // a schedule's multiplier, so that it is seen to apply
        const auto scale = torch::tensor(multiplier, torch::kFloat64);

        const int64_t V = task->vocabSize(), m = c0.model.dModel, B = 4;
        const int64_t T = std::min<int64_t>(task->maxPositions() > 0 ? task->maxPositions() : 8, 8);
        auto batch = [&](torch::Tensor &input, torch::Tensor &target) {
            if (V > 0) {
                input = torch::randint(V, {B, T}, torch::kInt64);
                target = torch::randint(V, {B, T}, torch::kInt64);
            } else {
                input = torch::randn({R, B, T, m});
                target = torch::randn({R, B, T, m});
            }
        };
        auto lossOf = [&](const torch::Tensor &input, const torch::Tensor &target) {
            const auto out = model.forward(input);
            if (V > 0) return trainingCrossEntropy(model, out, target);
            return (out - target).pow(2).view({R, -1}).mean(1);
        };
        torch::Tensor input, target;
        for (int i = 0; i < 3; ++i) {
            batch(input, target);
            lossOf(input, target).sum().backward();
            adam.step(scale);
            adam.zeroGrad();
        }
        for (int64_t r = 0; r < R; ++r) {
            TrainingPosition position;
            position.step = 3;
            position.adamSteps = 3;
            RunResult partial;
            partial.status = RunStatus::Running;
            writeCheckpoint(dir + "/run-" + std::to_string(r) + ".safetensors", model, &adam, r,
                            configs[size_t(r)], partial, position, "periodic");
        }

        safetensors::Contents dump;
        batch(input, target);
        const auto loss = lossOf(input, target);
        loss.sum().backward();
        dump.tensors.push_back(tensorOf("input", input));
        dump.tensors.push_back(tensorOf("target", target));
        dump.tensors.push_back(tensorOf("loss", loss));
        for (const auto &p : model.parameters())
            dump.tensors.push_back(tensorOf("grad." + p.name, p.value.grad()));
        for (const auto &b : model.buffers())
            dump.tensors.push_back(tensorOf("after." + b.name, b.value));
        adam.step(scale);
        for (const auto &p : model.parameters())
            dump.tensors.push_back(tensorOf("step." + p.name, p.value));
        adam.zeroGrad();
        for (int i = 0; i < 300; ++i) model.forward(input); // gradients on: a power step each
        for (const auto &[name, sigma] : model.spectralNorms())
            dump.tensors.push_back(tensorOf("sigma." + name, sigma));
        for (const auto &p : model.parameters())
            dump.tensors.push_back(tensorOf("final." + p.name, p.value));
        std::string lrText;
        for (const auto &c : configs) lrText += (lrText.empty() ? "" : " ") + std::to_string(c.lr);
        dump.metadata["lr"] = lrText;
        dump.metadata["schedule"] = std::to_string(multiplier);
        dump.metadata["adam_steps"] = "4";
        safetensors::write(dir + "/dump.safetensors", dump);
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "stabilizer_dump: %s\n", e.what());
        return 1;
    }
}
