// SweepExpansion.cpp — see SweepExpansion.h.
#include "core/session/SweepExpansion.h"

#include "core/config/HeadSchedule.h"
#include "core/schema/Dimensions.h"
#include "core/schema/RunConfigFields.h"
#include "core/schema/TaskSpec.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

namespace headlab {

using yaml::canonicalYaml;

namespace {

// Checks that are the session's own: every layer's head count must divide d_model unless the
// head dimension is given. Names every layer that fails.
std::string checkHeads(const RunConfig &config)
{
    const ModelConfig &model = config.model;
    if (model.heads.empty()) return "model.heads: no layers";
    std::string message;
    for (size_t l = 0; l < model.heads.size(); ++l) {
        const int64_t h = model.heads[l];
        std::string problem;
        if (h < 1)
            problem = std::to_string(h) + " heads (layer " + std::to_string(l) + ")";
        else if (model.headDim == 0 && model.dModel % h != 0)
            problem = std::to_string(h) + " heads do not divide d_model " +
                      std::to_string(model.dModel) + " (layer " + std::to_string(l) + ")";
        if (problem.empty()) continue;
        if (!message.empty()) message += "; ";
        message += "model.heads[" + std::to_string(l) + "]: " + problem;
    }
    return message;
}

} // namespace

std::string checkSweepSize(const Session &session)
{
    // The product, saturated at the limit + 1 so that it cannot overflow.
    const int64_t cap = RunLimits::kMaxSweepRuns + 1;
    int64_t runs = std::max<int64_t>(1, static_cast<int64_t>(session.combinations.size()));
    std::string sizes = session.combinations.empty()
                            ? std::string()
                            : std::to_string(session.combinations.size()) + " combinations";
    for (const auto &axis : session.axes) {
        const auto n = static_cast<int64_t>(axis.values.size());
        runs = n == 0 ? 0 : std::min(cap, runs > cap / n ? cap : runs * n);
        sizes += (sizes.empty() ? "" : " × ") + std::to_string(n) + " " + axis.name;
    }
    if (session.search) { // a search's runs are its probes' replicates
        int64_t probed = 0;
        for (const auto &probe : session.search->probes)
            probed = std::min(cap, probed + probe.replicates);
        if (probed > RunLimits::kMaxSweepRuns)
            return "the search has more than " + std::to_string(RunLimits::kMaxSweepRuns) +
                   " runs (" + std::to_string(session.search->probes.size()) +
                   " probes), a HeadLab limit; split it into several sessions";
    }
    if (runs <= RunLimits::kMaxSweepRuns) return {};
    return "the sweep has more than " + std::to_string(RunLimits::kMaxSweepRuns) + " runs (" +
           sizes + "), a HeadLab limit; split it into several sessions";
}

namespace {

// Calls `visit` with each assignment of the sweep (a combination × one value of every axis), the
// last axis fastest.
void forEachAssignment(
    const Session &session,
    const std::function<void(const std::map<std::string, const AxisValue *> &)> &visit)
{
    std::vector<SweepCombination> combinations = session.combinations;
    if (combinations.empty()) combinations.emplace_back();
    for (const auto &axis : session.axes)
        if (axis.values.empty()) return;
    for (const auto &combination : combinations) {
        std::vector<size_t> index(session.axes.size(), 0);
        for (;;) {
            std::map<std::string, const AxisValue *> assignment;
            for (const auto &[name, value] : combination) assignment[name] = &value;
            for (size_t a = 0; a < session.axes.size(); ++a)
                assignment[session.axes[a].name] = &session.axes[a].values[index[a]];
            visit(assignment);
            bool carry = true;
            for (size_t a = session.axes.size(); carry && a > 0;) {
                --a;
                if (++index[a] < session.axes[a].values.size())
                    carry = false;
                else
                    index[a] = 0;
            }
            if (carry) break;
        }
    }
}

std::map<std::string, std::string>
labelsOf(const std::map<std::string, const AxisValue *> &assignment)
{
    std::map<std::string, std::string> labels;
    for (const auto &[name, value] : assignment) labels[name] = value->label();
    return labels;
}

} // namespace

std::vector<std::map<std::string, std::string>> sweepConfigurations(const Session &session)
{
    std::vector<std::map<std::string, std::string>> configurations;
    forEachAssignment(
        session, [&](const auto &assignment) { configurations.push_back(labelsOf(assignment)); });
    return configurations;
}

void expandSweep(Session &session)
{
    if (const std::string tooLarge = checkSweepSize(session); !tooLarge.empty())
        throw SessionError("", 0, 0, "sweep", tooLarge);
    // Results to keep, by canonical config.
    std::map<std::string, RunResult> previous;
    for (const auto &run : session.runs) previous.emplace(canonicalYaml(run.config), run.result);

    std::vector<SessionRun> runs;
    std::vector<SkippedRun> skipped;
    std::map<std::string, size_t> seen; // canonical config -> index in runs
    DimensionLookup rowOf; // each axis's row found once per expansion, not once per run
    const std::vector<std::string> namedOrder = sweptDimensionNames(); // the table's order

    auto addRun = [&](const std::map<std::string, const AxisValue *> &assignment) {
        const std::map<std::string, std::string> labels = labelsOf(assignment);
        RunConfig config = session.base;
        std::string reason;
        // The named axes in their order, then the field-table axes (stabilizers, model.KEY).
        std::vector<std::string> order = namedOrder;
        for (const auto &[name, value] : assignment)
            if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
        for (const auto &name : order) {
            if (!assignment.count(name)) continue;
            const auto &axis = rowOf(name);
            if (!axis) continue; // read by findDimension's rows only
            reason = axis->apply(config, *assignment.at(name), assignment);
            if (!reason.empty()) break;
        }
        if (reason.empty()) reason = checkHeads(config);
        if (reason.empty()) reason = validate(config);
        if (reason.empty()) {
            const std::string canonical = canonicalYaml(config);
            if (auto it = seen.find(canonical); it != seen.end()) {
                reason = "the same configuration as run " + std::to_string(it->second);
            } else {
                SessionRun run;
                run.labels = labels;
                run.config = config;
                if (auto old = previous.find(canonical); old != previous.end())
                    run.result = old->second;
                seen.emplace(canonical, runs.size());
                runs.push_back(std::move(run));
            }
        }
        if (!reason.empty()) skipped.push_back({labels, reason});
    };

    forEachAssignment(session, [&](const std::map<std::string, const AxisValue *> &assignment) {
        if (!session.search) {
            addRun(assignment);
            return;
        }
        // A search: this configuration's probes, each replicate with its own seed.
        const SearchSpec &search = *session.search;
        const std::map<std::string, std::string> configuration = labelsOf(assignment);
        for (const auto &probe : search.probes) {
            if (probe.configuration != configuration) continue;
            const AxisValue value = numberAxisValue(probe.value);
            for (int j = 0; j < probe.replicates; ++j) {
                AxisValue seed;
                seed.kind = AxisValue::Kind::Unsigned;
                seed.unsignedValue = session.base.initSeed + uint64_t(probe.firstReplicate + j);
                std::map<std::string, const AxisValue *> withProbe = assignment;
                withProbe[search.axis] = &value;
                withProbe["seed"] = &seed;
                addRun(withProbe);
            }
        }
    });
    session.runs = std::move(runs);
    session.skipped = std::move(skipped);
}

} // namespace headlab
