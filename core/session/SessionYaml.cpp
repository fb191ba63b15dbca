// SessionYaml.cpp — sessions and run records in YAML (docs/SESSION_FORMAT.md) and atomic saving.
#include "core/session/SessionYaml.h"

#include "core/metrics/RunValues.h"
#include "core/session/RunFilter.h"

#include "core/metrics/Metrics.h"

#include "core/config/Files.h"
#include "core/config/Hash.h"
#include "core/config/HeadSchedule.h"
#include "core/config/Yaml.h"
#include "core/schema/Dimensions.h"
#include "core/schema/RunConfigFields.h"
#include "core/schema/TaskSpec.h"
#include "core/session/RunFiles.h"
#include "core/session/SweepExpansion.h"
#include "core/session/search/SearchReport.h"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace headlab {

using namespace headlab::yaml;

namespace {

// Sweep axes are rows (Dimensions.h): the one `key` names, or a located error at `field`.
std::optional<Dimension> axisRow(const std::string &key, const YamlField &field)
{
    auto row = findDimension(key);
    if (!row) fail(field, "unknown axis '" + key + "'");
    return row;
}

void writeAxisValue(YAML::Emitter &out, const std::optional<Dimension> &row, const AxisValue &value)
{
    if (row)
        row->write(out, value);
    else
        writeText(out, value.label());
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The keys of each record

const std::vector<RecordKeys> &recordKeyTable()
{
    static const std::vector<RecordKeys> table = [] {
        const std::vector<std::string> run = {
            "labels",       "config",  "status",     "steps_done",   "diverged_at_step",
            "wall_seconds", "device",  "message",    "phase_starts", "metrics",
            "curves",       "samples", "provenance", "checkpoints",  "head_curves",
            "origin",       "run_id"};
        std::vector<std::string> runFile = run;
        runFile.push_back("schema_version");
        return std::vector<RecordKeys>{
            {"session",
             {"schema_version", "name", "description", "note", "tags", "annotations",
              "learned_rule", "replicate_axes", "checkpoints", "experiment", "sweep", "search",
              "results", "runs", "skipped", "view", "search_report"}},
            {"run_record", run},
            {"run_file", runFile},
            {"index_entry", {"file", "labels", "status", metric::kFinalTestLoss}},
            {"checkpoint_record", {"step", "file", "reason", "keep"}},
            {"head_curves_record", {"file", "curves"}},
            {"live_file", {"schema_version", "trainer", "host", "pid", "updated_at", "runs"}},
            {"origin_record",
             [] {
                 std::vector<std::string> keys;
                 for (const auto &row : kOriginFields) keys.push_back(row.key);
                 return keys;
             }()},
            {"checkpoints_policy",
             {"every", "keep", "plateaus", "enabled", "resume_state", "budget_mb", "kept_weights"}},
            {"skipped_record", {"labels", "reason"}},
            {"curve", {"steps", "values"}},
        };
    }();
    return table;
}

const std::vector<std::string> &recordKeys(const std::string &name)
{
    for (const auto &row : recordKeyTable())
        if (row.name == name) return row.keys;
    throw std::logic_error("recordKeys: no row '" + name + "'");
}

namespace {

// A YAML node HeadLab wrote as JSON: plain scalars typed as a YAML reader types them (null, true
// and false, integers, numbers), quoted ones as text.
nlohmann::ordered_json jsonOf(const YAML::Node &node)
{
    if (node.IsMap()) {
        nlohmann::ordered_json out = nlohmann::ordered_json::object();
        for (const auto &item : node) out[item.first.Scalar()] = jsonOf(item.second);
        return out;
    }
    if (node.IsSequence()) {
        nlohmann::ordered_json out = nlohmann::ordered_json::array();
        for (const auto &item : node) out.push_back(jsonOf(item));
        return out;
    }
    if (node.IsNull()) return nullptr;
    const std::string &text = node.Scalar();
    if (node.Tag() == "!") return text; // quoted: text, whatever it looks like
    if (text == "true" || text == "false") return text == "true";
    int64_t integer = 0;
    if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), integer);
        ec == std::errc() && end == text.data() + text.size())
        return integer;
    double number = 0;
    if (yaml::parseNumber(text, &number) && std::isfinite(number)) return number;
    return text;
}

// The roles as the schema names them.
constexpr std::pair<DimensionRole, const char *> kRoleNames[] = {
    {DimensionRole::Shape, "shape"},
    {DimensionRole::Training, "training"},
    {DimensionRole::Seed, "seed"},
    {DimensionRole::Choice, "choice"},
};

const char *roleName(DimensionRole role)
{
    for (const auto &[r, name] : kRoleNames)
        if (r == role) return name;
    return "";
}

} // namespace

std::string sessionSchemaJson()
{
    using Json = nlohmann::ordered_json;
    Json schema = Json::object();
    schema["schema_version"] = Session::kSchemaVersion;
    for (const auto &row : recordKeyTable()) schema[row.name] = row.keys;
    schema["run_config"] = keysOf(runConfigFields());
    schema["model"] = keysOf(modelFields());
    schema["phase"] = keysOf(phaseFields());
    schema["stabilizers"] = keysOf(stabilizerFields());
    schema["optimizer"] = keysOf(optimizerFields());
    schema["schedule"] = keysOf(scheduleFields());
    schema["qk_rule"] = keysOf(qkRuleFields());
    std::vector<std::string> task = {"kind"};
    for (const TaskSpec *spec : taskTable())
        for (const auto &key : keysOf(spec->options))
            if (std::find(task.begin(), task.end(), key) == task.end()) task.push_back(key);
    schema["task"] = task;
    // What a run that does not set a stabilizer has on it, as the canonical text its axis labels
    // take (Replicates.h configurationLabels): the Python package's `configuration` column.
    const RunConfig defaults;
    Json axisDefaults = Json::object();
    for (const auto &name : fieldAxisNames())
        axisDefaults[name] = findFieldAxis(name)->text(defaults);
    schema["axis_defaults"] = axisDefaults;
    // Each task: whether a run of it gets a learned verdict (TaskSpec::learnedMeaning) and the unit
    // of its losses. The Python package reads these instead of keeping its own list.
    Json tasks = Json::object();
    for (const TaskSpec *spec : taskTable())
        tasks[spec->id] = {{"verdict", spec->learnedMeaning != nullptr},
                           {"chance_plateau", spec->chancePlateau != nullptr},
                           {"loss_unit", spec->lossUnit}};
    schema["tasks"] = tasks;
    // The learned rules a session may name, in the table's order (the first is the default), and
    // how each judges a run (LearnedRule.h): the metric it reads, or null for the paper's rule,
    // and the paper's rule itself: the trainer's verdict, else the final test loss.
    Json rules = Json::array();
    for (const auto &row : kLearnedRuleRows)
        rules.push_back({{"name", row.name},
                         {"metric", row.metric ? Json(row.metric) : Json(nullptr)},
                         {"description", row.description}});
    schema["learned_rules"] = rules;
    // Run values (RunValues.h) and the run filter's ranking (RunFilter.h): the statistics of a
    // curve STAT(CURVE) names, the curves and metrics where higher is better, and the value
    // best:K, worst:K and !outliers rank by where none is given.
    Json statistics = Json::array();
    for (const auto &row : curveStatisticTable())
        statistics.push_back(
            {{"name", row.name}, {"title", row.title}, {"description", row.description}});
    Json higher = Json::array();
    for (const auto &row : metricTable())
        if (row.higherIsBetter) higher.push_back(row.name);
    schema["run_values"] = {
        {"statistics", statistics}, {"higher_is_better", higher}, {"rank_key", kRunFilterRankKey}};
    // The computation today's reports are made by (SearchReport.h): a stored report of a lower
    // one is stale.
    schema["search_report_method"] = kSearchReportMethod;
    // A plateau rule's stand-in where a run lacks the rule's metric, and a task judged by it
    // (tasks[...].chance_plateau) gives a run with neither it nor the paper's metric no verdict.
    schema["chance_plateau_metric"] = metric::kLeftChancePlateau;
    schema["paper_rule"] = {{"metric", metric::kLearned},
                            {"final_metric", metric::kFinalTestLoss},
                            {"below", std::log(10.0)}};
    // A run's configuration where the file says nothing, written by the field table's own
    // writers: what every reader takes for a key a run's config leaves out.
    schema["defaults"] = jsonOf(YAML::Load(yaml::canonicalYaml(defaults)));
    // The dimension table (Dimensions.h): what each dimension is to the search, the law and the
    // tables, and its value of the default configuration.
    Json dimensionsJson = Json::object();
    for (const Dimension &row : dimensions()) {
        Json d = {
            {"title", row.title},   {"symbol", row.symbol},       {"role", roleName(row.use.role)},
            {"swept", row.swept()}, {"integer", row.use.integer}, {"law", row.use.law}};
        d["search"] = row.use.search ? Json::array({row.use.search->low, row.use.search->high})
                                     : Json(nullptr);
        d["headline"] = row.use.headline;
        d["default"] = row.resolved(defaults);
        d["field"] = row.field.empty() ? Json(nullptr) : Json(row.field);
        dimensionsJson[row.name] = d;
    }
    schema["dimensions"] = dimensionsJson;
    // One key a line, as the file has always been laid out.
    std::string out = "{";
    bool first = true;
    for (const auto &[key, value] : schema.items()) {
        out += std::string(first ? "\n  " : ",\n  ") + Json(key).dump() + ": " +
               value.dump(-1, ' ', false, Json::error_handler_t::strict);
        first = false;
    }
    return out + "\n}\n";
}

// ---------------------------------------------------------------------------------------------
// Reading

namespace {

Curve readCurve(const YamlField &field)
{
    if (const Curve *curve = preparsedCurve(field)) return *curve;
    checkKeys(field, recordKeys("curve"));
    const YamlField steps = child(field, "steps");
    const YamlField values = child(field, "values");
    if (!steps.node.IsDefined() || !steps.node.IsSequence())
        fail(steps, "expected a list of steps");
    if (!values.node.IsDefined() || !values.node.IsSequence())
        fail(values, "expected a list of values");
    if (steps.node.size() != values.node.size())
        fail(values, std::to_string(values.node.size()) + " values for " +
                         std::to_string(steps.node.size()) + " steps");
    Curve curve(steps.node.size());
    for (size_t i = 0; i < curve.size(); ++i) {
        const YAML::Node s = steps.node[i];
        const YAML::Node v = values.node[i];
        if (!s.IsScalar() || !parseInt(s.Scalar(), &curve[i].step)) readInt(item(steps, i));
        if (!v.IsScalar() || !parseNumber(v.Scalar(), &curve[i].value)) readNumber(item(values, i));
    }
    return curve;
}

RunStatus readStatus(const YamlField &field)
{
    const std::string text = readString(field);
    const RunStatus all[] = {RunStatus::Queued, RunStatus::Running,  RunStatus::Paused,
                             RunStatus::Done,   RunStatus::Diverged, RunStatus::Failed,
                             RunStatus::Stopped};
    std::vector<std::string> names;
    for (RunStatus s : all) {
        if (lower(text) == lower(toString(s))) return s;
        names.push_back(toString(s));
    }
    std::string message = "unknown status '" + text + "'";
    const std::string suggestion = nearestKey(text, names);
    if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
    message += " (expected one of ";
    for (size_t i = 0; i < names.size(); ++i) message += (i ? ", " : "") + names[i];
    fail(field, message + ")");
}

// A run record; a run file's has schema_version too (`inRunFile`).
SessionRun readRun(const YamlField &field, bool inRunFile = false)
{
    checkKeys(field, recordKeys(inRunFile ? "run_file" : "run_record"));
    SessionRun run;
    run.labels = readTextMap(child(field, "labels"));
    const YamlField config = child(field, "config");
    if (!config.present()) fail(config, "missing: the run's resolved configuration");
    run.config = readRunConfig(config);
    RunResult &result = run.result;
    if (auto f = child(field, "status"); f.present()) result.status = readStatus(f);
    if (auto f = child(field, "steps_done"); f.present()) result.stepsDone = readIntAtLeast(f, 0);
    if (auto f = child(field, "diverged_at_step"); f.present())
        result.divergedAtStep = readIntAtLeast(f, -1);
    if (auto f = child(field, "wall_seconds"); f.present()) result.wallSeconds = readNumber(f);
    if (auto f = child(field, "device"); f.present()) result.device = readString(f);
    if (auto f = child(field, "message"); f.present()) result.message = readString(f);
    if (auto f = child(field, "phase_starts"); f.present() && !f.isNull())
        for (const auto &s : items(f)) result.phaseStarts.push_back(readIntAtLeast(s, 0));
    if (auto f = child(field, "metrics"); f.present() && !f.isNull())
        for (const auto &[key, value] : entries(f)) result.metrics[key] = readNumber(value);
    if (auto f = child(field, "samples"); f.present() && !f.isNull())
        for (const auto &sample : items(f)) result.samples.push_back(readString(sample));
    if (auto f = child(field, "provenance"); f.present() && !f.isNull())
        for (const auto &[key, value] : entries(f)) result.provenance[key] = readString(value);
    if (auto f = child(field, "origin"); f.present() && !f.isNull()) {
        checkKeys(f, recordKeys("origin_record"));
        for (const auto &row : kOriginFields)
            if (auto v = child(f, row.key); v.present() && !v.isNull())
                result.origin.*row.member = readString(v);
    }
    // run_id (written in self-contained exports) is the config's hash, computed again where needed.
    if (auto f = child(field, "run_id"); f.present() && !f.isNull()) (void)readString(f);
    if (auto f = child(field, "checkpoints"); f.present() && !f.isNull())
        for (const auto &item : items(f)) {
            checkKeys(item, recordKeys("checkpoint_record"));
            CheckpointRecord c;
            c.step = readIntAtLeast(child(item, "step"), 0);
            c.file = readString(child(item, "file"));
            if (c.file.empty() || c.file.find('/') != std::string::npos || c.file[0] == '.')
                fail(child(item, "file"), "'" + c.file +
                                              "' is not a checkpoint file name (a name inside the "
                                              "run's checkpoint folder)");
            if (auto r = child(item, "reason"); r.present()) c.reason = readString(r);
            if (auto k = child(item, "keep"); k.present()) c.keep = readBool(k);
            result.checkpoints.push_back(c);
        }
    if (auto f = child(field, "curves"); f.present() && !f.isNull()) {
        for (const auto &[key, value] : entries(f)) {
            if (key == "train")
                result.train = readCurve(value);
            else if (key == "test")
                result.test = readCurve(value);
            else
                result.extra[key] = readCurve(value);
        }
    }
    // The per-head curves of a stored run live in a binary file beside it (SessionStore.h). A
    // file that is missing or damaged costs those curves only: the run keeps its result.
    if (auto f = child(field, "head_curves"); f.present() && !f.isNull()) {
        checkKeys(f, recordKeys("head_curves_record"));
        const std::string name = readString(child(f, "file"));
        if (!isHeadCurvesFileName(name))
            fail(child(f, "file"), "'" + name +
                                       "' is not a per-head curves file name (NAME.heads-HASH."
                                       "safetensors beside the run file)");
        const int64_t count = readIntAtLeast(child(f, "curves"), 0);
        const std::string path = directoryOf(field.file) + "/" + name;
        try {
            for (auto &[key, curve] : readHeadCurves(path, count))
                result.extra[key] = std::move(curve);
        } catch (const SessionError &e) {
            run.loadProblem =
                std::string(e.what()) +
                " (the run's per-head curves are left out; its other results are kept)";
        }
    }
    return run;
}

// The axes a sweep may name: the named ones, the stabilizers, and any field-table axis that
// `map` uses (model.KEY).
std::vector<std::string> axisNamesFor(const YamlField &map)
{
    std::vector<std::string> allowed = sweptDimensionNames();
    for (const auto &name : fieldAxisNames()) allowed.push_back(name);
    if (map.node.IsMap())
        for (const auto &entry : map.node) {
            const std::string key = entry.first.as<std::string>("");
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end() &&
                findDimension(key))
                allowed.push_back(key); // a field-table axis (model.bias)
        }
    return allowed;
}

void readSweep(const YamlField &field, Session &session)
{
    std::vector<std::string> allowed = axisNamesFor(field);
    allowed.push_back("combinations");
    checkKeys(field, allowed);
    for (const auto &[key, value] : entries(field)) {
        if (key == "combinations") continue;
        const std::optional<Dimension> row = axisRow(key, value);
        SweepAxis axis{key, readAxisValues(*row, value), {}};
        // Given in the row's own form: kept, so that a save writes the generator, not its list.
        if (row->readForm && value.node.IsMap()) axis.form = flowYaml(value.node);
        session.axes.push_back(std::move(axis));
    }
    const bool hasHeads = std::any_of(session.axes.begin(), session.axes.end(),
                                      [](const SweepAxis &a) { return a.name == "heads"; });
    if (auto f = child(field, "combinations"); f.present()) {
        for (const auto &c : items(f)) {
            checkKeys(c, axisNamesFor(c));
            SweepCombination combination;
            for (const auto &[key, value] : entries(c)) {
                const std::string &name = key; // clang 14 cannot capture a structured binding
                if (std::any_of(session.axes.begin(), session.axes.end(),
                                [&](const SweepAxis &a) { return a.name == name; }))
                    fail(value, "'" + key + "' is already a sweep axis; set it in one place only");
                combination[key] = axisRow(key, value)->read(value);
            }
            if (combination.empty()) fail(c, "an empty combination");
            if (session.combinations.size() >= static_cast<size_t>(RunLimits::kMaxSweepRuns))
                fail(f, "more than " + std::to_string(RunLimits::kMaxSweepRuns) +
                            " combinations (a HeadLab limit)");
            session.combinations.push_back(std::move(combination));
        }
    }
    if (const std::string tooLarge = checkSweepSize(session); !tooLarge.empty())
        fail(field, tooLarge);
    for (const auto &axis : session.axes) {
        if (axis.name == "head_schedule" && hasHeads)
            fail(child(field, "head_schedule"),
                 "cannot be swept together with heads: both set the head counts");
    }
}

} // namespace

namespace {
// `note:` and `tags:` of a session or of one run's entry under `annotations:`.
Annotation readAnnotation(const YamlField &map)
{
    Annotation a;
    if (auto f = child(map, "note"); f.present() && !f.isNull()) a.note = readString(f);
    if (auto f = child(map, "tags"); f.present() && !f.isNull())
        for (const auto &item : items(f)) {
            const std::string tag = readString(item);
            if (const std::string why = validTag(tag); !why.empty()) fail(item, why);
            if (!a.hasTag(tag)) a.tags.push_back(tag);
        }
    return a;
}

// The same, written: `note:` where there is one, `tags:` where there are some.
void writeAnnotation(YAML::Emitter &out, const Annotation &a)
{
    if (!a.note.empty()) {
        out << YAML::Key << "note" << YAML::Value;
        yaml::writeText(out, a.note);
    }
    if (!a.tags.empty()) {
        out << YAML::Key << "tags" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto &tag : a.tags) yaml::writeText(out, tag);
        out << YAML::EndSeq;
    }
}
} // namespace

Session sessionFromYaml(const std::string &yamlText, const std::string &file)
{
    // search_report: HeadLab computes the report from the runs each time, and never reads it.
    const YamlField root = parseDocument(yamlText, file, {"search_report"});
    if (!root.node.IsDefined() || root.node.IsNull())
        fail(root, "empty document; a session is a mapping with schema_version and experiment");
    checkKeys(root, recordKeys("session"));

    Session session;
    const YamlField version = child(root, "schema_version");
    if (!version.present()) fail(version, "missing (this HeadLab writes 1)");
    session.schemaVersion = static_cast<int>(readIntAtLeast(version, 1));
    if (session.schemaVersion > Session::kSchemaVersion)
        fail(version, "schema version " + std::to_string(session.schemaVersion) +
                          " is newer than this HeadLab reads (" +
                          std::to_string(Session::kSchemaVersion) + ")");
    session.schemaVersion = Session::kSchemaVersion; // read as the current schema from here on
    if (auto f = child(root, "name"); f.present()) session.name = readString(f);
    if (auto f = child(root, "description"); f.present()) session.description = readString(f);
    session.annotation = readAnnotation(root);
    if (auto f = child(root, "annotations"); f.present() && !f.isNull()) {
        for (const auto &[id, entry] : entries(f)) {
            if (id.size() != 16 || id.find_first_not_of("0123456789abcdef") != std::string::npos)
                fail(entry, "'" + id + "' is not a run_id (16 hex digits, as runs.csv gives it)");
            checkKeys(entry, {"note", "tags"});
            Annotation a = readAnnotation(entry);
            if (!a.empty()) session.runAnnotations[id] = std::move(a);
        }
    }
    if (auto f = child(root, "learned_rule"); f.present()) {
        const std::string text = readString(f);
        if (!parseLearnedRule(text, &session.learnedRule))
            fail(f, "unknown rule '" + text + "' (expected " + learnedRuleNames() + ")");
    }
    if (auto f = child(root, "replicate_axes"); f.present() && !f.isNull()) {
        for (const auto &item : items(f)) {
            const std::string axis = readString(item);
            if (const auto names = sweptDimensionNames();
                std::find(names.begin(), names.end(), axis) == names.end()) {
                const std::string near = nearestKey(axis, names);
                fail(item, "'" + axis + "' is not a sweep axis" +
                               (near.empty() ? "" : "; did you mean '" + near + "'?"));
            }
            session.replicateAxes.push_back(axis);
        }
    }
    if (auto f = child(root, "checkpoints"); f.present() && !f.isNull()) {
        CheckpointPolicy &c = session.checkpoints;
        if (f.node.IsScalar()) {
            c.enabled = readBool(f); // `checkpoints: false`
        } else {
            checkKeys(f, recordKeys("checkpoints_policy"));
            if (auto e = child(f, "every"); e.present())
                c.every = readIntInRange(e, 0, int64_t(1) << 40);
            if (auto k = child(f, "keep"); k.present())
                c.keep = static_cast<int>(readIntInRange(k, 1, 1000));
            if (auto pl = child(f, "plateaus"); pl.present()) c.plateaus = readBool(pl);
            if (auto en = child(f, "enabled"); en.present()) c.enabled = readBool(en);
            if (auto r = child(f, "resume_state"); r.present()) {
                const std::string text = readString(r);
                if (text != "newest" && text != "every")
                    fail(r, "expected newest (only the newest checkpoint keeps what resuming "
                            "needs; the default) or every, got '" +
                                text + "'");
                c.resumeStateNewestOnly = text == "newest";
            }
            if (auto b = child(f, "budget_mb"); b.present())
                c.budgetMb = readNumberInRange(b, 0, true, 1e12, true);
            if (auto w = child(f, "kept_weights"); w.present()) {
                const std::string text = readString(w);
                if (text != "float32" && text != "bfloat16")
                    fail(w, "expected float32 (the default) or bfloat16, got '" + text + "'");
                c.keptWeightsBf16 = text == "bfloat16";
            }
        }
    }
    const YamlField experiment = child(root, "experiment");
    if (!experiment.present()) fail(experiment, "missing: the base run configuration");
    session.base = readRunConfig(experiment);
    if (auto f = child(root, "sweep"); f.present() && !f.isNull()) readSweep(f, session);
    if (auto f = child(root, "search"); f.present() && !f.isNull()) {
        session.search = readSearchSpec(f);
        for (const auto &axis : session.axes) {
            if (axis.name == session.search->axis)
                fail(child(child(root, "sweep"), axis.name),
                     "'" + axis.name +
                         "' is the searched axis (search.axis): the search chooses its values; "
                         "take it out of the sweep");
            if (axis.name == "seed")
                fail(child(child(root, "sweep"), axis.name),
                     "a search gives its runs their seeds (search.replicates); take seed out of "
                     "the sweep");
        }
        if (const std::string tooLarge = checkSweepSize(session); !tooLarge.empty())
            fail(child(f, "probes"), tooLarge);
        for (const auto &combination : session.combinations)
            if (combination.count(session.search->axis) || combination.count("seed"))
                fail(child(child(root, "sweep"), "combinations"),
                     "a combination sets '" + session.search->axis +
                         "' or seed, which the search chooses");
        // A search's runs take the seeds experiment.seed + 0, 1, …: a configuration's runs at
        // most its budget of them, and the stored probes' own. Past 2^64 − 1 they would wrap to
        // 0, 1, … (seeds another search of the same session may have used): refused here.
        const SearchSpec &search = *session.search;
        uint64_t lastIndex = static_cast<uint64_t>(search.budget - 1);
        for (const auto &probe : search.probes)
            lastIndex = std::max(
                lastIndex, static_cast<uint64_t>(probe.firstReplicate + probe.replicates - 1));
        if (session.base.initSeed > std::numeric_limits<uint64_t>::max() - lastIndex)
            fail(child(experiment, "seed"),
                 "this search gives its runs the seeds " + std::to_string(session.base.initSeed) +
                     " + 0 … " + std::to_string(lastIndex) +
                     ", past 18446744073709551615 (2^64 - 1), where they would wrap to 0; "
                     "use a seed at most " +
                     std::to_string(std::numeric_limits<uint64_t>::max() - lastIndex));
    }
    if (auto f = child(root, "results"); f.present()) {
        session.resultsDir = readString(f);
        if (session.resultsDir.empty() || session.resultsDir.front() == '/' ||
            session.resultsDir.find("..") != std::string::npos)
            fail(f, "expected the name of the results folder beside the session file, e.g. "
                    "session.results");
    }
    if (auto f = child(root, "runs"); f.present() && !f.isNull()) {
        for (const auto &r : items(f)) {
            if (child(r, "file").present()) {
                // An index entry of the stored layout: the result is in its own file.
                checkKeys(r, recordKeys("index_entry"));
                if (session.resultsDir.empty())
                    fail(child(r, "file"), "a run stored in a file needs the session's "
                                           "'results:' folder");
                const std::string name = readString(child(r, "file"));
                if (name.rfind("runs/", 0) != 0 || name.find('/', 5) != std::string::npos ||
                    name.find("..") != std::string::npos)
                    fail(child(r, "file"), "expected runs/NAME.yaml inside the results folder");
                session.indexedRunFiles.push_back(name.substr(5));
                if (auto status = child(r, "status"); status.present() && !status.isNull())
                    if (isFinished(readStatus(status)))
                        session.indexedFinishedRunFiles.insert(name.substr(5));
                continue;
            }
            session.runs.push_back(readRun(r));
        }
    }
    if (auto f = child(root, "skipped"); f.present() && !f.isNull()) {
        for (const auto &s : items(f)) {
            checkKeys(s, recordKeys("skipped_record"));
            session.skipped.push_back(
                {readTextMap(child(s, "labels")), readString(child(s, "reason"))});
        }
    }
    if (auto f = child(root, "view"); f.present() && !f.isNull())
        for (const auto &[key, value] : entries(f)) session.view[key] = readString(value);
    return session;
}

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

void writeSweep(YAML::Emitter &out, const Session &session);

// schema_version, name, description, experiment and sweep: the part a user edits.
void writeDefinition(YAML::Emitter &out, const Session &session)
{
    out << YAML::Key << "schema_version" << YAML::Value << Session::kSchemaVersion;
    out << YAML::Key << "name" << YAML::Value;
    writeText(out, session.name);
    out << YAML::Key << "description" << YAML::Value;
    writeText(out, session.description);
    writeAnnotation(out, session.annotation);
    if (!session.runAnnotations.empty()) { // by run_id, each run's note and tags
        out << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
        for (const auto &[id, a] : session.runAnnotations) {
            if (a.empty()) continue;
            out << YAML::Key << YAML::DoubleQuoted << id << YAML::Value << YAML::Flow
                << YAML::BeginMap;
            writeAnnotation(out, a);
            out << YAML::EndMap;
        }
        out << YAML::EndMap;
    }
    out << YAML::Key << "learned_rule" << YAML::Value << toString(session.learnedRule);
    if (!session.replicateAxes.empty()) {
        out << YAML::Key << "replicate_axes" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto &axis : session.replicateAxes) out << axis;
        out << YAML::EndSeq;
    }
    if (!(session.checkpoints == CheckpointPolicy{})) {
        const CheckpointPolicy &c = session.checkpoints;
        out << YAML::Key << "checkpoints" << YAML::Value << YAML::Flow << YAML::BeginMap
            << YAML::Key << "every" << YAML::Value << c.every << YAML::Key << "keep" << YAML::Value
            << c.keep << YAML::Key << "plateaus" << YAML::Value << c.plateaus << YAML::Key
            << "enabled" << YAML::Value << c.enabled;
        if (!c.resumeStateNewestOnly) out << YAML::Key << "resume_state" << YAML::Value << "every";
        if (c.budgetMb > 0)
            out << YAML::Key << "budget_mb" << YAML::Value << formatNumber(c.budgetMb);
        if (c.keptWeightsBf16) out << YAML::Key << "kept_weights" << YAML::Value << "bfloat16";
        out << YAML::EndMap;
    }
    out << YAML::Key << "experiment" << YAML::Value;
    writeRunConfig(out, session.base);

    if (!session.axes.empty() || !session.combinations.empty()) {
        out << YAML::Key << "sweep" << YAML::Value;
        writeSweep(out, session);
    }
    if (session.search) {
        out << YAML::Key << "search" << YAML::Value;
        writeSearchSpec(out, *session.search);
    }
}

// The session's sweep: its axes, then its combinations (as the session and a search report's
// definition write it).
void writeSweep(YAML::Emitter &out, const Session &session)
{
    out << YAML::BeginMap;
    DimensionLookup rowOf; // each axis's row found once per write, not once per value
    for (const auto &axis : session.axes) {
        out << YAML::Key << axis.name << YAML::Value;
        const auto &row = rowOf(axis.name);
        if (auto form = row ? axisFormHolds(*row, axis) : std::nullopt) {
            out << YAML::Flow << *form;
            continue;
        }
        out << YAML::Flow << YAML::BeginSeq;
        for (const auto &value : axis.values) writeAxisValue(out, row, value);
        out << YAML::EndSeq;
    }
    if (!session.combinations.empty()) {
        out << YAML::Key << "combinations" << YAML::Value << YAML::BeginSeq;
        for (const auto &combination : session.combinations) {
            out << YAML::Flow << YAML::BeginMap;
            for (const auto &[name, value] : combination) {
                out << YAML::Key << name << YAML::Value;
                writeAxisValue(out, rowOf(name), value);
            }
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    out << YAML::EndMap;
}

// Curves are most of a session's text, and yaml-cpp's emitter checks every scalar it writes
// against its regular expressions: a 2,000-run session took 8 s to write. The emitter writes a
// placeholder per curve instead, and the curve's one-line flow mapping (curveText, the form
// parseDocument reads back without yaml-cpp) replaces it afterwards.
class CurveSplicer {
public:
    void write(YAML::Emitter &out, const Curve &curve)
    {
        out << kToken + std::to_string(m_curves.size());
        m_curves.push_back(&curve);
    }
    std::string splice(const std::string &text) const
    {
        if (m_curves.empty()) return text;
        std::string result;
        result.reserve(text.size() + m_curves.size() * 64);
        size_t copied = 0;
        for (size_t i = 0; i < m_curves.size(); ++i) {
            const std::string token = kToken + std::to_string(i);
            size_t at = text.find(token, copied);
            // The next character must end the token: "...CURVE1" is not "...CURVE12".
            while (at != std::string::npos && at + token.size() < text.size() &&
                   std::isdigit(static_cast<unsigned char>(text[at + token.size()])))
                at = text.find(token, at + 1);
            if (at == std::string::npos) throw std::logic_error("curve placeholder not found");
            result.append(text, copied, at - copied);
            result += curveText(*m_curves[i]);
            copied = at + token.size();
        }
        result.append(text, copied, std::string::npos);
        return result;
    }

private:
    // Plain text the emitter writes as it is; no label or message of a session holds it.
    static inline const std::string kToken = "HEADLAB_CURVE_PLACEHOLDER_5f3a9c_";
    std::vector<const Curve *> m_curves;
};

// The keys of one run record, inside a mapping the caller opened. With `headCurvesFile`, the
// per-head curves are not written here but named: they are in that file (SessionStore.h).
void writeRunRecord(YAML::Emitter &out, const SessionRun &run, CurveSplicer &curves,
                    const std::string &headCurvesFile = {}, bool withRunId = false)
{
    const RunResult &r = run.result;
    // A run's stable identity: its file's name in the stored layout, written out where no file
    // name carries it (a self-contained export).
    // Quoted: 16 hex digits can read as a number ("3001346238331926", "12e4...") in plain YAML.
    if (withRunId)
        out << YAML::Key << "run_id" << YAML::Value << YAML::DoubleQuoted << runId(run.config);
    out << YAML::Key << "labels" << YAML::Value;
    writeTextMap(out, run.labels);
    out << YAML::Key << "status" << YAML::Value << toString(r.status);
    out << YAML::Key << "steps_done" << YAML::Value << r.stepsDone;
    out << YAML::Key << "diverged_at_step" << YAML::Value << r.divergedAtStep;
    out << YAML::Key << "wall_seconds" << YAML::Value << formatNumber(r.wallSeconds);
    out << YAML::Key << "device" << YAML::Value;
    writeText(out, r.device);
    out << YAML::Key << "message" << YAML::Value;
    writeText(out, r.message);
    out << YAML::Key << "phase_starts" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (auto s : r.phaseStarts) out << s;
    out << YAML::EndSeq;
    out << YAML::Key << "metrics" << YAML::Value << YAML::BeginMap;
    for (const auto &[key, value] : r.metrics)
        out << YAML::Key << key << YAML::Value << formatNumber(value);
    out << YAML::EndMap;
    if (!r.samples.empty()) {
        out << YAML::Key << "samples" << YAML::Value << YAML::BeginSeq;
        for (const auto &sample : r.samples) writeText(out, sample);
        out << YAML::EndSeq;
    }
    if (!r.provenance.empty()) {
        out << YAML::Key << "provenance" << YAML::Value << YAML::BeginMap;
        for (const auto &[key, value] : r.provenance) {
            out << YAML::Key << key << YAML::Value;
            writeText(out, value);
        }
        out << YAML::EndMap;
    }
    if (!r.origin.empty()) {
        out << YAML::Key << "origin" << YAML::Value << YAML::BeginMap;
        for (const auto &row : kOriginFields) {
            const std::string &value = r.origin.*row.member;
            if (value.empty()) continue;
            out << YAML::Key << row.key << YAML::Value;
            writeText(out, value);
        }
        out << YAML::EndMap;
    }
    if (!r.checkpoints.empty()) {
        out << YAML::Key << "checkpoints" << YAML::Value << YAML::BeginSeq;
        for (const auto &c : r.checkpoints) {
            out << YAML::Flow << YAML::BeginMap << YAML::Key << "step" << YAML::Value << c.step
                << YAML::Key << "file" << YAML::Value << c.file << YAML::Key << "reason"
                << YAML::Value << c.reason;
            if (c.keep) out << YAML::Key << "keep" << YAML::Value << true;
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    if (!headCurvesFile.empty()) {
        const auto count = std::count_if(r.extra.begin(), r.extra.end(),
                                         [](const auto &e) { return isHeadCurve(e.first); });
        out << YAML::Key << "head_curves" << YAML::Value << YAML::Flow << YAML::BeginMap
            << YAML::Key << "file" << YAML::Value << headCurvesFile << YAML::Key << "curves"
            << YAML::Value << count << YAML::EndMap;
    }
    out << YAML::Key << "curves" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "train" << YAML::Value;
    curves.write(out, r.train);
    out << YAML::Key << "test" << YAML::Value;
    curves.write(out, r.test);
    for (const auto &[key, curve] : r.extra) {
        if (!headCurvesFile.empty() && isHeadCurve(key)) continue;
        out << YAML::Key << key << YAML::Value;
        curves.write(out, curve);
    }
    out << YAML::EndMap;
    out << YAML::Key << "config" << YAML::Value;
    writeRunConfig(out, run.config);
}

// skipped and view: the part after the runs.
void writeSkippedAndView(YAML::Emitter &out, const Session &session)
{
    out << YAML::Key << "skipped" << YAML::Value << YAML::BeginSeq;
    for (const auto &s : session.skipped) {
        out << YAML::BeginMap;
        out << YAML::Key << "labels" << YAML::Value;
        writeTextMap(out, s.labels);
        out << YAML::Key << "reason" << YAML::Value;
        writeText(out, s.reason);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;

    out << YAML::Key << "view" << YAML::Value << YAML::BeginMap;
    for (const auto &[key, value] : session.view) {
        out << YAML::Key << key << YAML::Value;
        writeText(out, value);
    }
    out << YAML::EndMap;
}

// What searchReport reads of a session and nothing more: every member but the runs, and each run
// without its curves (but the test curve's last point, the verdict of a run saved before the
// metrics existed), samples, per-head curves and checkpoints. Expanding the sweep over a full copy
// took 0.5 s of a 7 s save of the 644-run campaign.
Session searchInputOf(const Session &session)
{
    Session copy;
    copy.schemaVersion = session.schemaVersion;
    copy.name = session.name;
    copy.description = session.description;
    copy.base = session.base;
    copy.axes = session.axes;
    copy.combinations = session.combinations;
    copy.search = session.search;
    copy.skipped = session.skipped;
    copy.learnedRule = session.learnedRule;
    copy.replicateAxes = session.replicateAxes;
    copy.checkpoints = session.checkpoints;
    copy.resultsDir = session.resultsDir;
    copy.missingRunFiles = session.missingRunFiles;
    copy.runs.reserve(session.runs.size());
    for (const auto &run : session.runs) {
        SessionRun light;
        light.labels = run.labels;
        light.config = run.config;
        light.result.status = run.result.status;
        light.result.metrics = run.result.metrics;
        light.result.message = run.result.message;
        if (!run.result.test.empty()) light.result.test.push_back(run.result.test.back());
        copy.runs.push_back(std::move(light));
    }
    return copy;
}

// A search's report (search/SearchReport.h), derived from the runs each time the session is written, for readers
// without the C++; never read back (the runs are the truth). A report that cannot be made (a
// session in the middle of an edit) is left out rather than stopping the save.
void writeSearchReportOf(YAML::Emitter &out, const Session &session)
{
    if (!session.search) return;
    // As `summary` reports it: over the sweep expanded to every planned probe, those not yet
    // started among them (a run the session has not listed yet is still to train).
    SearchReport report;
    try {
        Session expanded = searchInputOf(session);
        expandSweep(expanded);
        report = searchReport(expanded, "", {}, true);
    } catch (const std::exception &) {
        return;
    }
    // Which finished runs it was made from (how many, and FNV-1a of their ids, sorted, one a
    // line: a reader that holds as many but others knows it is stale), and the definition it was
    // made under, written as the session writes it (its search without the probes, which each
    // round adds to): the learned rule, the search, the sweep.
    std::vector<std::string> ids;
    for (const auto &run : session.runs)
        if (isFinished(run.result.status)) ids.push_back(runId(run.config));
    std::sort(ids.begin(), ids.end());
    std::string joined;
    for (const auto &id : ids) joined += (joined.empty() ? "" : "\n") + id;
    out << YAML::Key << "search_report" << YAML::Value;
    writeSearchReport(out, report, ids.size(), [&](YAML::Emitter &definition) {
        definition << YAML::Key << "finished_runs_digest" << YAML::Value << YAML::DoubleQuoted
                   << hex16(fnv1a(joined)) << YAML::Key << "definition" << YAML::Value;
        SearchSpec search = *session.search;
        search.probes.clear();
        definition << YAML::BeginMap << YAML::Key << "learned_rule" << YAML::Value
                   << toString(session.learnedRule) << YAML::Key << "search" << YAML::Value;
        writeSearchSpec(definition, search);
        definition << YAML::Key << "sweep" << YAML::Value;
        writeSweep(definition, session);
        definition << YAML::EndMap;
    });
}

std::string finish(const YAML::Emitter &out, const CurveSplicer &curves = {})
{
    if (!out.good())
        throw SessionError("<session>", 0, 0, "", "cannot write YAML: " + out.GetLastError());
    return curves.splice(std::string(out.c_str()) + "\n");
}

} // namespace

std::string sessionToYaml(const Session &session)
{
    YAML::Emitter out;
    out << YAML::BeginMap;
    writeDefinition(out, session);
    out << YAML::Key << "runs" << YAML::Value << YAML::BeginSeq;
    CurveSplicer curves;
    for (const auto &run : session.runs) {
        out << YAML::BeginMap;
        writeRunRecord(out, run, curves, {}, /*withRunId=*/true);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    writeSkippedAndView(out, session);
    writeSearchReportOf(out, session);
    out << YAML::EndMap;
    return finish(out, curves);
}

std::string sessionIndexToYaml(const Session &session, const std::string &resultsDirName)
{
    YAML::Emitter out;
    out << YAML::BeginMap;
    writeDefinition(out, session);
    out << YAML::Key << "results" << YAML::Value;
    writeText(out, resultsDirName);
    out << YAML::Key << "runs" << YAML::Value << YAML::BeginSeq;
    for (const auto &run : session.runs) {
        if (!hasResult(run)) continue;
        out << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "file" << YAML::Value << "runs/" + runFileName(run.config);
        out << YAML::Key << "status" << YAML::Value << toString(run.result.status);
        out << YAML::Key << "labels" << YAML::Value;
        writeTextMap(out, run.labels);
        if (auto it = run.result.metrics.find(metric::kFinalTestLoss);
            it != run.result.metrics.end())
            out << YAML::Key << metric::kFinalTestLoss << YAML::Value << formatNumber(it->second);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    writeSkippedAndView(out, session);
    writeSearchReportOf(out, session);
    out << YAML::EndMap;
    return finish(out);
}

std::string runToYaml(const SessionRun &run)
{
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "schema_version" << YAML::Value << Session::kSchemaVersion;
    CurveSplicer curves;
    writeRunRecord(out, run, curves);
    out << YAML::EndMap;
    return finish(out, curves);
}

StoredRunFiles storedRunFiles(const SessionRun &run)
{
    StoredRunFiles files;
    std::string stem = runFileName(run.config);
    stem.resize(stem.size() - std::string(".yaml").size());
    files.headCurves = headCurvesBytes(run.result);
    if (!files.headCurves.empty())
        files.headCurvesName = headCurvesFileName(stem, files.headCurves);
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "schema_version" << YAML::Value << Session::kSchemaVersion;
    CurveSplicer curves;
    writeRunRecord(out, run, curves, files.headCurvesName);
    out << YAML::EndMap;
    files.yaml = finish(out, curves);
    return files;
}

std::string liveRunsToYaml(const LiveRuns &live)
{
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "schema_version" << YAML::Value << Session::kSchemaVersion;
    out << YAML::Key << "trainer" << YAML::Value;
    writeText(out, live.trainer);
    out << YAML::Key << "host" << YAML::Value;
    writeText(out, live.host);
    out << YAML::Key << "pid" << YAML::Value << live.pid;
    out << YAML::Key << "updated_at" << YAML::Value;
    writeText(out, live.updatedAt);
    out << YAML::Key << "runs" << YAML::Value << YAML::BeginSeq;
    CurveSplicer curves;
    for (const auto &run : live.runs) { // as liveRecord builds them: no curves
        out << YAML::BeginMap;
        writeRunRecord(out, run, curves, {}, /*withRunId=*/true);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::EndMap;
    return finish(out, curves);
}

LiveRuns liveRunsFromYaml(const std::string &text, const std::string &file)
{
    const YamlField root = parseDocument(text, file);
    checkKeys(root, recordKeys("live_file"));
    LiveRuns live;
    if (auto f = child(root, "trainer"); f.present()) live.trainer = readString(f);
    if (auto f = child(root, "host"); f.present()) live.host = readString(f);
    if (auto f = child(root, "pid"); f.present()) live.pid = readIntAtLeast(f, 0);
    if (auto f = child(root, "updated_at"); f.present()) live.updatedAt = readString(f);
    if (auto f = child(root, "runs"); f.present() && !f.isNull())
        for (const auto &item : items(f)) live.runs.push_back(readRun(item));
    return live;
}

SessionRun runFromYaml(const std::string &text, const std::string &file)
{
    const YamlField root = parseDocument(text, file);
    if (!root.node.IsDefined() || root.node.IsNull()) fail(root, "empty run file");
    requireMap(root);
    const YamlField version = child(root, "schema_version");
    if (!version.present()) fail(version, "missing (this HeadLab writes 2)");
    if (readIntAtLeast(version, 2) > Session::kSchemaVersion)
        fail(version, "schema version " + version.node.Scalar() +
                          " is newer than this HeadLab reads (" +
                          std::to_string(Session::kSchemaVersion) + ")");
    return readRun(root, true);
}

std::string withLeadingComments(const std::string &path, std::string text)
{
    // A regular file only (a link followed): opening a FIFO would wait here for a writer, before
    // writeFileAtomic refuses it. Each line's first character is looked at before the line is
    // read, so that what is read is the comment block and no more.
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return text;
    std::ifstream in(path, std::ios::binary);
    std::string line, block, pending;
    for (int c = in.peek(); c != std::ifstream::traits_type::eof(); c = in.peek()) {
        std::string indent;
        for (; c == ' ' || c == '\t'; c = in.peek()) indent += static_cast<char>(in.get());
        if (c != '#' && c != '\n' && c != '\r') break; // a key, or the end of the file
        std::getline(in, line);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) {
            pending += "\n"; // a blank line: kept where a comment follows it
            continue;
        }
        block += pending + indent + line + "\n";
        pending.clear();
    }
    return block.empty() ? text : block + text;
}

void saveSessionAtomic(const Session &session, const std::string &path)
{
    writeFileAtomic(path, withLeadingComments(path, sessionToYaml(session)));
}

} // namespace headlab
