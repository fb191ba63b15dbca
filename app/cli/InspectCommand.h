// InspectCommand.h — `headlab-cli inspect`: inside the heads of one run at one of its checkpoints.
#pragma once

#include "core/train/HeadInspector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace headlab::cli {

struct InspectArguments {
    std::string session;
    std::string
        run; // its row (0-based, as in `headlab-cli status`/runs.csv) or its result file's hash
    long long step = -1;           // a checkpoint's step; -1: the newest
    std::string input;             // the task's input syntax; "" the task's example
    std::string ablation = "zero"; // zero | mean
    bool prune = true;
    std::vector<std::string> orders; // pruning orders by name (HeadInspector.h); set to all
    int randomOrders = PruningDefaults{}.randomOrders; // seeds seed, seed + 1, ...
    uint64_t seed = 0;
    long long keepPerLayer = 1;
    std::vector<std::string> retrain; // fine-tune, scratch, l0 (HeadInspector.h's methods)
    long long fineTuneSteps = PruningDefaults{}.fineTuneSteps;
    long long scratchPoints = PruningDefaults{}.scratchPoints;
    std::vector<double> lambdas = PruningDefaults{}.lambdas;
    bool json = false;
    std::string output; // folder for the CSV files; "" S.results/inspect/<hash>-step-N
    std::string device = "cpu";
};

int inspectCommand(const InspectArguments &a);

} // namespace headlab::cli
