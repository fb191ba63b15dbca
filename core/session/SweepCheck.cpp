// SweepCheck.cpp — see SweepCheck.h.
#include "core/session/SweepCheck.h"

#include "core/schema/RunConfigFields.h"
#include "core/session/SessionYaml.h"
#include "core/session/SweepExpansion.h"
#include "core/session/search/SearchPlanner.h"

#include <set>

namespace headlab {

std::string SweepCheck::refusal() const
{
    if (!errors.empty()) return errors.front();
    if (runs == 0)
        return skipped.empty() ? std::string("no combination can run")
                               : "no combination can run: " + skipped.front().reason;
    return {};
}

SweepCheck checkSweep(Session definition, const RunLabeller &labelOf)
{
    SweepCheck c;
    try {
        // A search's runs are those of its next round (round 0 before it starts); planning
        // expands them, else the sweep is expanded here.
        if (!definition.search || planSearchRound(definition) == 0) expandSweep(definition);
        std::set<std::string> seen;
        for (const auto &run : definition.runs) {
            const std::string why = validate(run.config);
            if (why.empty() || !seen.insert(why).second) continue;
            std::string label;
            if (labelOf)
                label = labelOf(definition, run);
            else
                for (const auto &[axis, value] : run.labels)
                    label += (label.empty() ? "" : " ") + axis + "=" + value;
            c.errors.push_back((label.empty() ? std::string("the run") : label) + ": " + why);
        }
        c.skipped = definition.skipped;
        c.runs = int(definition.runs.size());
        c.pending = int(pendingRuns(definition).size());
        // The YAML loader's own checks (ranges, names): the same messages a file would get.
        sessionFromYaml(sessionToYaml(definition), "<form>");
    } catch (const SessionError &e) {
        c.errors.push_back((e.keyPath().empty() ? std::string() : e.keyPath() + ": ") +
                           e.message());
    } catch (const std::exception &e) {
        c.errors.push_back(e.what());
    }
    return c;
}

} // namespace headlab
