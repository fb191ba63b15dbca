// PredictCommand.cpp — headlab-cli predict: the η* a search's law predicts for a configuration the
// search did not run, with a prediction interval (the command table: CliCommands.cpp).
#include "CliOptions.h"
#include "Commands.h"
#include "core/session/search/SearchSummary.h"

#include "core/config/Yaml.h"
#include "core/schema/Dimensions.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"
#include "core/session/SweepExpansion.h"
#include "core/session/search/SearchReport.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace headlab::cli {

namespace {

std::string number3(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", v);
    return text;
}

// The session's base configuration with the given dimensions' values applied, in the table's
// order; the values' labels; or an error (the option named).
struct Configured {
    RunConfig config;
    std::map<std::string, std::string> labels;
    std::string error;
};

Configured configure(const Session &session, const std::map<std::string, std::string> &values)
{
    Configured out;
    out.config = session.base;
    std::map<std::string, AxisValue> read;
    for (const auto &[name, text] : values) {
        const auto row = findDimension(name);
        if (!row) {
            out.error = "'" + name + "' is not a dimension a configuration sets (" +
                        joinedNames(sweptDimensionNames(), "and") + ")";
            return out;
        }
        try {
            read[name] = row->read(yaml::parseDocument(text, "--" + name));
        } catch (const SessionError &e) {
            out.error = e.what();
            return out;
        }
    }
    std::map<std::string, const AxisValue *> all;
    for (const auto &[name, value] : read) all[name] = &value;
    auto apply = [&](const Dimension &row) {
        const auto it = read.find(row.name);
        if (it == read.end()) return true;
        if (const std::string why = row.apply(out.config, it->second, all); !why.empty()) {
            out.error = "--" + row.name + " " + values.at(row.name) + ": " + why;
            return false;
        }
        out.labels[row.name] = it->second.label();
        return true;
    };
    for (const auto &row : dimensions())
        if (row.swept() && !apply(row)) return out;
    for (const auto &[name, value] : read) // field-table axes: after the named ones
        if (!out.labels.count(name) && !apply(*findDimension(name))) return out;
    return out;
}

// The law a configuration's prediction comes from: the report's, or with groups (configurations
// that differ in more than the shape) that of the group its labels name; null where they name none.
const LawFit *lawFor(const SearchReport &report, const std::map<std::string, std::string> &labels,
                     std::string *group)
{
    if (report.groups.empty()) return &report.law;
    for (const auto &g : report.groups) {
        bool match = true;
        for (const auto &[axis, value] : g.labels) {
            const auto it = labels.find(axis);
            match = match && it != labels.end() && it->second == value;
        }
        if (match) {
            *group = labelsText(g.labels);
            return &g.law;
        }
    }
    return nullptr;
}

// `predict --into NEW.yaml`: round 0 of each configuration of a search not begun placed over its
// predicted interval (SearchSpec::starts).
int predictInto(const SearchReport &report, LawChoice choice, const std::string &path)
{
    Session next = loadSweepRuns(path);
    expandSweep(next);
    if (!next.search) {
        std::fprintf(stderr,
                     "headlab-cli predict: --into %s: not a boundary search (no search: "
                     "block)\n",
                     path.c_str());
        return kExitBadInput;
    }
    if (!next.search->probes.empty() || !next.runs.empty()) {
        std::fprintf(stderr,
                     "headlab-cli predict: --into %s: its search has begun (it has rounds); a "
                     "prediction places round 0 only\n",
                     path.c_str());
        return kExitBadInput;
    }
    if (next.search->axis != report.axis) {
        std::fprintf(stderr, "headlab-cli predict: --into %s: it searches %s, the law is of %s\n",
                     path.c_str(), next.search->axis.c_str(), report.axis.c_str());
        return kExitBadInput;
    }
    next.search->starts.clear();
    for (const auto &labels : sweepConfigurations(next)) {
        std::map<std::string, std::string> values = labels;
        values.erase("seed");
        const Configured target = configure(next, values);
        std::string group;
        const LawFit *law = target.error.empty() ? lawFor(report, labels, &group) : nullptr;
        const CrossingPrediction p =
            law ? predictCrossing(report, *law, log10LawAxes(target.config, law->axes()), choice)
                : CrossingPrediction{};
        if (!p.ok) {
            std::fprintf(stderr, "headlab-cli predict: --into %s: %s: %s\n", path.c_str(),
                         labelsText(labels).c_str(),
                         !target.error.empty() ? target.error.c_str()
                         : law                 ? p.note.c_str()
                                               : "no group of the law has its labels");
            return kExitBadInput;
        }
        next.search->starts.push_back({labels, std::pow(10.0, p.low), std::pow(10.0, p.high)});
        std::printf("%s: round 0 over [%s, %s] (the %s law)%s\n", labelsText(labels).c_str(),
                    number3(std::pow(10.0, p.low)).c_str(), number3(std::pow(10.0, p.high)).c_str(),
                    p.law.c_str(), p.beyond.empty() ? "" : " (extrapolated)");
    }
    saveSessionAtomic(next, path);
    std::printf("wrote %s: %zu configurations start from the prediction\n", path.c_str(),
                next.search->starts.size());
    return kExitOk;
}

} // namespace

int predictCommand(const PredictArguments &a)
{
    Session session = loadSweepRuns(a.session);
    expandSweep(session);
    if (!session.search) {
        std::fprintf(stderr,
                     "headlab-cli predict: %s has no search: a prediction comes from a boundary "
                     "search's law\n",
                     a.session.c_str());
        return kExitBadInput;
    }
    if (!applySearchOptions(session, a.search, "predict")) return kExitBadInput;
    LawChoice choice = LawChoice::Chosen;
    lawChoiceFromString(a.law, &choice); // checked by the option
    if (!a.into.empty())
        return predictInto(searchReport(session, a.search.lawX, a.search.lawAlso), choice, a.into);
    if (a.values.empty()) {
        std::fprintf(stderr, "headlab-cli predict: give the configuration to predict: --d_model, "
                             "--heads, ... or --set NAME=VALUE\n");
        return kExitBadInput;
    }
    const Configured target = configure(session, a.values);
    if (!target.error.empty()) {
        std::fprintf(stderr, "headlab-cli predict: %s\n", target.error.c_str());
        return kExitBadInput;
    }
    const SearchReport report = searchReport(session, a.search.lawX, a.search.lawAlso);
    std::string group;
    const LawFit *law = lawFor(report, target.labels, &group);
    if (!law) {
        std::string names;
        for (const auto &[axis, value] : report.groups.front().labels)
            names += (names.empty() ? "--" : ", --") + axis;
        std::fprintf(stderr,
                     "headlab-cli predict: this search has a law per group; give the group "
                     "with %s (values the search has)\n",
                     names.c_str());
        return kExitBadInput;
    }
    const std::vector<std::string> axes = law->axes();
    const CrossingPrediction p =
        predictCrossing(report, *law, log10LawAxes(target.config, axes), choice);
    if (!p.ok) {
        std::fprintf(stderr, "headlab-cli predict: %s\n", p.note.c_str());
        return kExitRunFailed;
    }
    const std::string star = crossingSymbol(report.axis);
    if (a.json) {
        nlohmann::json out;
        out["axis"] = report.axis;
        out["estimate"] = std::pow(10.0, p.estimate);
        out["low"] = std::pow(10.0, p.low);
        out["high"] = std::pow(10.0, p.high);
        out["level"] = law->level;
        out["law_se_decades"] = p.lawSe;
        out["scatter_decades"] = p.scatter;
        out["model"] = law->model;
        out["law"] = p.law;
        out["configurations"] = law->configurations;
        out["group"] = group;
        for (size_t k = 0; k < axes.size(); ++k)
            out["law_axes"][axes[k]] = dimensionNumber(target.config, axes[k]);
        out["beyond"] = p.beyond;
        std::printf("%s\n", out.dump(2).c_str());
        return kExitOk;
    }
    std::string at;
    for (size_t k = 0; k < axes.size(); ++k)
        at += (at.empty() ? "" : ", ") + axes[k] + " " +
              yaml::formatNumber(dimensionNumber(target.config, axes[k]));
    std::printf("%s = %s [%s, %s] (%d %% prediction interval) at %s (%s)\n", star.c_str(),
                number3(std::pow(10.0, p.estimate)).c_str(), number3(std::pow(10.0, p.low)).c_str(),
                number3(std::pow(10.0, p.high)).c_str(), int(std::lround(law->level * 100)),
                labelsText(target.labels).c_str(), at.c_str());
    if (p.law == "bent") {
        const LawBend &bend = report.bend;
        std::printf("  from the bent law through %d configurations (%s): α = %.3f at %s %s, "
                    "γ = %.3f",
                    law->configurations,
                    bend.chosen ? "the test chooses it" : "asked for; the test keeps the power law",
                    bend.alpha, bend.x.c_str(), number3(std::pow(10.0, bend.x0)).c_str(),
                    bend.gamma);
        for (size_t k = 0; k < bend.beta.size(); ++k)
            std::printf(", β (%s) = %.3f", bend.also[k].c_str(), bend.beta[k]);
    } else {
        std::printf("  from the %s model's law over %d configurations%s: α = %.3f",
                    law->model.c_str(), law->configurations,
                    group.empty() ? "" : (" of " + group).c_str(), law->alpha);
        for (size_t k = 0; k < law->beta.size(); ++k)
            std::printf(", β (%s) = %.3f", law->also[k].c_str(), law->beta[k]);
    }
    std::printf("\n  the law's own uncertainty there %.3f decades (1 sd), the scatter of a "
                "configuration about the law %.3f decades\n",
                p.lawSe, p.scatter);
    for (const auto &axis : p.beyond)
        std::printf("  %s lies outside the span the law was fitted over: an extrapolation\n",
                    axis.c_str());
    if (law->provisional)
        std::printf("  the law is provisional: some configurations are still searching\n");
    return kExitOk;
}

namespace {

CommandAction definePredict(CLI::App &app)
{
    struct Arguments {
        PredictArguments predict;
        std::vector<std::string> set;
        std::map<std::string, std::string> direct;
    };
    auto a = std::make_shared<Arguments>();
    CLI::App *predict = app.add_subcommand(
        "predict", "η* a boundary search's law predicts for a configuration it did not run");
    predict->footer(
        "The law fitted through the search's crossings (the model in use, or --model), evaluated "
        "at the\nconfiguration given, with a prediction interval: the law's uncertainty there and "
        "the scatter of a\nconfiguration about the law, added. A value beyond the span the law "
        "was fitted over is said.\nWhere the report's test chooses the bent law (a curvature in "
        "log x), the prediction\ncomes from it; --law power or bent asks for either.\nExample: "
        "headlab-cli predict fig2-boundary.yaml --d_model 768 "
        "--heads 16");
    predict->add_option("session", a->predict.session, "The search's session file")->required();
    // One option per dimension a law can be fitted against, from the dimension table.
    for (const auto &name : lawDimensions()) {
        const auto row = findDimension(name);
        if (!row || !row->swept()) continue;
        predict->add_option("--" + name, a->direct[name], "The configuration's " + row->title);
    }
    predict->add_option("--set", a->set, "Any other dimension, NAME=VALUE (repeatable)");
    predict->add_option("--law-x", a->predict.search.lawX,
                        "Fit the law against this axis instead of the session's");
    predict->add_option("--law-also", a->predict.search.lawAlso, "Further axes of the law")
        ->delimiter(',');
    predict
        ->add_option("--model", a->predict.search.model,
                     "Read the search with this model: separate or joint")
        ->check(CLI::IsMember({"separate", "joint"}));
    predict
        ->add_option("--law", a->predict.law,
                     "The law to predict from: chosen (the bent law where the report's test "
                     "chooses it, else the power law), power or bent")
        ->check(CLI::IsMember(lawChoiceNames()))
        ->capture_default_str();
    predict->add_flag("--json", a->predict.json, "The prediction as JSON");
    predict->add_option("--into", a->predict.into,
                        "A boundary search not begun (NEW.yaml): round 0 of each of its "
                        "configurations over its predicted interval, written into it");
    return {predict, [a] {
                for (const auto &[name, value] : a->direct)
                    if (!value.empty()) a->predict.values[name] = value;
                for (const auto &item : a->set) {
                    const auto eq = item.find('=');
                    if (eq == std::string::npos || eq == 0) {
                        std::fprintf(stderr, "headlab-cli predict: --set %s: expected NAME=VALUE\n",
                                     item.c_str());
                        return kExitBadInput;
                    }
                    a->predict.values[item.substr(0, eq)] = item.substr(eq + 1);
                }
                return predictCommand(a->predict);
            }};
}

const CommandRegistration kPredictCommand(115, definePredict);

} // namespace

} // namespace headlab::cli
