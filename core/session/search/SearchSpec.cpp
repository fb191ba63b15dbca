// SearchSpec.cpp — see SearchSpec.h.
#include "core/session/search/SearchSpec.h"

#include "core/schema/Dimensions.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace headlab {

using namespace headlab::yaml;

namespace {
// The seed plans and their names: one row each.
constexpr std::pair<SearchSpec::SeedPlan, const char *> kSeedPlans[] = {
    {SearchSpec::SeedPlan::Fresh, "fresh"},
    {SearchSpec::SeedPlan::Replicates, "replicates"},
    {SearchSpec::SeedPlan::Paired, "paired"},
};
} // namespace

const char *seedPlanName(SearchSpec::SeedPlan plan)
{
    for (const auto &[p, name] : kSeedPlans)
        if (p == plan) return name;
    return "";
}

std::optional<SearchSpec::SeedPlan> seedPlanNamed(const std::string &name)
{
    for (const auto &[plan, n] : kSeedPlans)
        if (name == n) return plan;
    return std::nullopt;
}

double toSearchUnits(const SearchSpec &spec, double value)
{
    return spec.logScale ? std::log10(value) : value;
}

double fromSearchUnits(const SearchSpec &spec, double x)
{
    return spec.logScale ? std::pow(10.0, x) : x;
}

double snapSearchValue(const SearchSpec &spec, double value)
{
    if (isIntegerDimension(spec.axis)) return std::max(1.0, std::round(value));
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", value);
    return std::strtod(text, nullptr);
}

namespace yaml {

SearchSpec readSearchSpec(const YamlField &field)
{
    checkKeys(field, {"axis", "range", "scale", "target", "direction", "replicates", "seeds",
                      "initial_points", "points_per_round", "level", "interval_width", "budget",
                      "model", "law_width", "law", "start", "probes"});
    SearchSpec spec;
    if (auto f = child(field, "axis"); f.present()) {
        spec.axis = readString(f);
        const auto &axes = searchableDimensions();
        if (std::find(axes.begin(), axes.end(), spec.axis) == axes.end()) {
            const std::string near = nearestKey(spec.axis, axes);
            fail(f, "'" + spec.axis + "' cannot be searched" +
                        (near.empty() ? "" : "; did you mean '" + near + "'?") +
                        " (a search runs along " + joinedNames(axes) + ")");
        }
    }
    if (auto f = child(field, "scale"); f.present()) {
        const std::string scale = readString(f);
        if (scale != "log" && scale != "linear")
            fail(f, "expected log or linear, got '" + scale + "'");
        spec.logScale = scale == "log";
    }
    const YamlField range = child(field, "range");
    if (!range.present()) fail(range, "missing: the searched range as [low, high]");
    const auto ends = items(range);
    if (ends.size() != 2) fail(range, "expected [low, high], two numbers");
    spec.low = readNumber(ends[0]);
    spec.high = readNumber(ends[1]);
    if (!std::isfinite(spec.low) || !std::isfinite(spec.high) || !(spec.low < spec.high))
        fail(range, "expected low < high, both finite");
    if (spec.logScale && !(spec.low > 0)) fail(ends[0], "a log-scaled range must start above 0");
    if (isIntegerDimension(spec.axis) && spec.low < 1)
        fail(ends[0], "an integer axis starts at 1 or more");
    if (auto f = child(field, "target"); f.present())
        spec.target = readNumberInRange(f, 0, false, 1, false);
    if (auto f = child(field, "direction"); f.present()) {
        const std::string direction = readString(f);
        if (direction == "auto")
            spec.direction = SearchSpec::Direction::Auto;
        else if (direction == "decreasing")
            spec.direction = SearchSpec::Direction::Decreasing;
        else if (direction == "increasing")
            spec.direction = SearchSpec::Direction::Increasing;
        else
            fail(f, "expected auto, decreasing (P(learned) falls as the value grows: η) or "
                    "increasing, got '" +
                        direction + "'");
    }
    if (auto f = child(field, "replicates"); f.present()) {
        // A plan by name, but Replicates, which is written as its number of runs per point. Names
        // as written, as every other name of a session (model: JOINT is refused too).
        const std::string text = isScalar(f) ? readString(f) : "";
        const auto named = seedPlanNamed(text);
        if (named && *named != SearchSpec::SeedPlan::Replicates)
            spec.seedPlan = *named;
        else if (int64_t n = 0; isScalar(f) && !parseInt(text, &n))
            fail(f, "expected a number of runs per point (the same seeds at every point), fresh "
                    "(one run a point, every run its own seed) or paired (each seed searched on "
                    "its own), got '" +
                        readString(f) + "'");
        else {
            spec.seedPlan = SearchSpec::SeedPlan::Replicates;
            spec.replicates = static_cast<int>(readIntInRange(f, 1, 1000));
        }
    }
    if (auto f = child(field, "seeds"); f.present()) {
        if (!spec.paired())
            fail(f, "seeds: is the number of paired seeds; it goes with replicates: paired");
        spec.seeds = static_cast<int>(readIntInRange(f, 2, 1000));
    }
    if (auto f = child(field, "initial_points"); f.present())
        spec.initialPoints = static_cast<int>(readIntInRange(f, 2, 1000));
    if (auto f = child(field, "points_per_round"); f.present())
        spec.pointsPerRound = static_cast<int>(readIntInRange(f, 1, 1000));
    if (auto f = child(field, "level"); f.present())
        spec.level = readNumberInRange(f, 0.5, true, 1, false);
    if (auto f = child(field, "interval_width"); f.present()) spec.intervalWidth = readPositive(f);
    if (auto f = child(field, "budget"); f.present())
        spec.budget = static_cast<int>(readIntInRange(f, 1, RunLimits::kMaxSweepRuns));
    if (spec.budget < spec.initialPoints * spec.replicates)
        fail(child(field, "budget"),
             "the budget of " + std::to_string(spec.budget) +
                 " runs per configuration is smaller than round 0 (initial_points × replicates = " +
                 std::to_string(spec.initialPoints * spec.replicates) + ")");
    if (auto f = child(field, "model"); f.present()) {
        const std::string model = readString(f);
        if (model == "separate")
            spec.model = SearchSpec::Model::Separate;
        else if (model == "joint")
            spec.model = SearchSpec::Model::Joint;
        else
            fail(f, "expected separate (a logistic per configuration) or joint (one model of "
                    "every configuration with the law inside it), got '" +
                        model + "'");
        if (spec.model == SearchSpec::Model::Joint && !spec.logScale)
            fail(f, "the joint model needs a log-scaled search (scale: log)");
        if (spec.model == SearchSpec::Model::Joint && spec.paired())
            fail(f, "paired seeds (replicates: paired) have their own model, one slope with "
                    "each seed's offset, per configuration; the joint model takes replicates: N "
                    "or fresh");
    }
    if (auto f = child(field, "law_width"); f.present()) {
        spec.lawWidth = readPositive(f);
        if (spec.model != SearchSpec::Model::Joint)
            fail(f, "law_width (search on until the law's α interval is this narrow) needs the "
                    "joint model, whose law is fitted with the runs: add model: joint");
    }
    if (auto f = child(field, "law"); f.present() && !f.isNull()) {
        checkKeys(f, {"x", "also"});
        auto readAxis = [](const YamlField &a) {
            const std::string name = readString(a);
            const auto &axes = lawDimensions();
            if (std::find(axes.begin(), axes.end(), name) == axes.end()) {
                const std::string near = nearestKey(name, axes);
                fail(a, "'" + name + "' is not an axis a law can be fitted against" +
                            (near.empty() ? "" : "; did you mean '" + near + "'?"));
            }
            return name;
        };
        if (auto x = child(f, "x"); x.present()) spec.lawX = readAxis(x);
        if (auto also = child(f, "also"); also.present() && !also.isNull())
            for (const auto &a : items(also)) spec.lawAlso.push_back(readAxis(a));
    }
    if (auto f = child(field, "start"); f.present() && !f.isNull()) {
        for (const auto &item : items(f)) {
            checkKeys(item, {"at", "low", "high"});
            SearchStart start;
            start.configuration = readTextMap(child(item, "at"));
            const YamlField low = child(item, "low"), high = child(item, "high");
            if (!low.present()) fail(item, "missing: low, the predicted interval's lower end");
            if (!high.present()) fail(item, "missing: high, the predicted interval's upper end");
            start.low = readNumber(low);
            start.high = readNumber(high);
            if (!std::isfinite(start.low) || (spec.logScale && !(start.low > 0)))
                fail(low, spec.logScale ? "expected a positive number (the search is log-scaled)"
                                        : "expected a finite number");
            if (!std::isfinite(start.high) || !(start.high > start.low))
                fail(high, "expected a number above low");
            spec.starts.push_back(start);
        }
    }
    if (auto f = child(field, "probes"); f.present() && !f.isNull()) {
        // Runs each configuration's probes ask for: never more than the budget (a hand-edited or
        // hostile list would otherwise train any number of runs).
        std::map<std::map<std::string, std::string>, int64_t> runsOf;
        for (const auto &p : items(f)) {
            checkKeys(p, {"round", "at", "value", "first_replicate", "replicates"});
            SearchProbe probe;
            probe.round = static_cast<int>(readIntInRange(child(p, "round"), 0, 1'000'000));
            probe.configuration = readTextMap(child(p, "at"));
            const YamlField value = child(p, "value");
            if (!value.present()) fail(value, "missing: the point's value of " + spec.axis);
            probe.value = readNumber(value);
            if (!std::isfinite(probe.value)) fail(value, "expected a finite number");
            if (auto r = child(p, "first_replicate"); r.present())
                probe.firstReplicate = static_cast<int>(readIntInRange(r, 0, 1'000'000));
            probe.replicates = static_cast<int>(readIntInRange(child(p, "replicates"), 1, 1000));
            if (spec.paired() && probe.replicates != 1)
                fail(child(p, "replicates"),
                     "a paired search's probe is one run of one seed (replicates: 1)");
            if ((runsOf[probe.configuration] += probe.replicates) > spec.budget)
                fail(child(p, "replicates"),
                     "the probes of this configuration ask for " +
                         std::to_string(runsOf[probe.configuration]) +
                         " runs so far, more than the search's budget of " +
                         std::to_string(spec.budget) +
                         " runs per configuration (search.budget); raise the budget or remove "
                         "probes");
            spec.probes.push_back(std::move(probe));
        }
    }
    return spec;
}

void writeSearchSpec(YAML::Emitter &out, const SearchSpec &spec)
{
    out << YAML::BeginMap;
    out << YAML::Key << "axis" << YAML::Value << spec.axis;
    out << YAML::Key << "range" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    writeNumber(out, spec.low);
    writeNumber(out, spec.high);
    out << YAML::EndSeq;
    out << YAML::Key << "scale" << YAML::Value << (spec.logScale ? "log" : "linear");
    out << YAML::Key << "target" << YAML::Value;
    writeNumber(out, spec.target);
    out << YAML::Key << "direction" << YAML::Value
        << (spec.direction == SearchSpec::Direction::Decreasing   ? "decreasing"
            : spec.direction == SearchSpec::Direction::Increasing ? "increasing"
                                                                  : "auto");
    if (spec.seedPlan == SearchSpec::SeedPlan::Replicates)
        out << YAML::Key << "replicates" << YAML::Value << spec.replicates;
    else
        out << YAML::Key << "replicates" << YAML::Value << seedPlanName(spec.seedPlan);
    if (spec.paired()) out << YAML::Key << "seeds" << YAML::Value << spec.seeds;
    out << YAML::Key << "initial_points" << YAML::Value << spec.initialPoints;
    out << YAML::Key << "points_per_round" << YAML::Value << spec.pointsPerRound;
    out << YAML::Key << "level" << YAML::Value;
    writeNumber(out, spec.level);
    out << YAML::Key << "interval_width" << YAML::Value;
    writeNumber(out, spec.intervalWidth);
    out << YAML::Key << "budget" << YAML::Value << spec.budget;
    if (spec.model == SearchSpec::Model::Joint)
        out << YAML::Key << "model" << YAML::Value << "joint";
    if (spec.lawWidth > 0) {
        out << YAML::Key << "law_width" << YAML::Value;
        writeNumber(out, spec.lawWidth);
    }
    out << YAML::Key << "law" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "x"
        << YAML::Value << spec.lawX << YAML::Key << "also" << YAML::Value << YAML::BeginSeq;
    for (const auto &a : spec.lawAlso) out << a;
    out << YAML::EndSeq << YAML::EndMap;
    if (!spec.starts.empty()) {
        out << YAML::Key << "start" << YAML::Value << YAML::BeginSeq;
        for (const auto &start : spec.starts) {
            out << YAML::Flow << YAML::BeginMap;
            out << YAML::Key << "at" << YAML::Value;
            writeTextMap(out, start.configuration);
            out << YAML::Key << "low" << YAML::Value;
            writeNumber(out, start.low);
            out << YAML::Key << "high" << YAML::Value;
            writeNumber(out, start.high);
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    if (!spec.probes.empty()) {
        out << YAML::Key << "probes" << YAML::Value << YAML::BeginSeq;
        for (const auto &p : spec.probes) {
            out << YAML::Flow << YAML::BeginMap;
            out << YAML::Key << "round" << YAML::Value << p.round;
            out << YAML::Key << "at" << YAML::Value;
            writeTextMap(out, p.configuration);
            out << YAML::Key << "value" << YAML::Value;
            writeNumber(out, p.value);
            out << YAML::Key << "first_replicate" << YAML::Value << p.firstReplicate;
            out << YAML::Key << "replicates" << YAML::Value << p.replicates;
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    out << YAML::EndMap;
}

} // namespace yaml

} // namespace headlab
