// HtmlReport.cpp — see HtmlReport.h.
#include "core/report/HtmlReport.h"

#include "core/config/Files.h"
#include "core/config/Yaml.h"
#include "core/metrics/CurveDecimation.h"
#include "core/metrics/Logistic.h"
#include "core/metrics/RunValues.h"
#include "core/report/ReportAssets.h"
#include "core/schema/Dimensions.h"
#include "core/schema/TaskSpec.h"
#include "core/session/HtmlEmbed.h"
#include "core/session/Replicates.h"
#include "core/session/RunFiles.h"
#include "core/session/RunFilter.h"
#include "core/session/SessionYaml.h"
#include "core/session/search/SearchReport.h"
#include "core/session/search/SearchSummary.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

namespace headlab {

namespace {
using nlohmann::json;

// A curve's point as JSON holds it: NaN and ±inf (which JSON has not) as null, a gap in the line.
json number(double v)
{
    return std::isfinite(v) ? json(v) : json(nullptr);
}

// A run value as JSON holds it: NaN and ±inf as the text JavaScript's Number() reads back, so that
// the page's filter compares them as headlab-cli does (a diverged run's loss of inf is > 1).
json value(double v)
{
    if (std::isfinite(v)) return v;
    return std::isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity");
}

bool hasAxis(const Session &session, const std::string &name)
{
    return std::any_of(session.axes.begin(), session.axes.end(),
                       [&](const SweepAxis &a) { return a.name == name; });
}

std::string joinedLabels(const std::map<std::string, std::string> &labels,
                         const std::vector<std::string> &order, const std::set<std::string> &skip)
{
    std::string out;
    for (const auto &axis : order) {
        if (skip.count(axis)) continue;
        auto it = labels.find(axis);
        if (it == labels.end()) continue;
        out += (out.empty() ? "" : " ") + axis + "=" + it->second;
    }
    return out;
}

// The dimensions the explorer offers on x: those a search runs along and those a law is fitted
// against (Dimensions.h), each once, in the table's order.
std::vector<std::string> xDimensions()
{
    std::vector<std::string> out = searchableDimensions();
    for (const auto &name : lawDimensions())
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    return out;
}
constexpr const char *kCollapseX = "eta_sqrt_head_dim";

json runsJson(const Session &session, const HtmlReportOptions &options,
              const std::vector<std::string> &curveNames, HtmlReportSummary *summary)
{
    const auto labels = configurationLabels(session);
    const auto axes = configurationAxes(session);
    const auto dimensions = xDimensions();
    // Each run's configuration: its replicates (the seeds) share the group, which the explorer's
    // points pool (median, with a whisker over min–max).
    std::vector<int> groupOf(session.runs.size(), -1);
    const auto groups = groupReplicates(session);
    for (size_t g = 0; g < groups.size(); ++g)
        for (int i : groups[g].runs) groupOf[size_t(i)] = int(g);
    json runs = json::array();
    for (size_t i = 0; i < session.runs.size(); ++i) {
        const auto &run = session.runs[i];
        const RunResult &r = run.result;
        json row;
        row["index"] = i;
        row["id"] = runId(run.config);
        row["name"] = joinedLabels(labels[i], axes, {});
        row["labels"] = labels[i];
        row["group"] = groupOf[i];
        // The run's value on each dimension a search or a law reads (the dimension table's rows:
        // η, d_model, heads, head_dim, total_heads, ...), and η·√m_H, the collapse's coordinate:
        // what the explorer puts on x beside the swept axes.
        json derived = json::object();
        for (const auto &name : dimensions) {
            const double v = dimensionNumber(run.config, name);
            if (std::isfinite(v)) derived[name] = v;
        }
        derived[kCollapseX] = run.config.lr * std::sqrt(dimensionNumber(run.config, "head_dim"));
        row["derived"] = derived;
        row["status"] = toString(r.status);
        const auto learned = runLearned(session, r);
        row["learned"] = learned ? json(*learned) : json(nullptr);
        const Annotation &annotation = runAnnotation(session, i);
        row["tags"] = annotation.tags;
        row["note"] = annotation.note;
        json metrics = json::object();
        for (const auto &[key, v] : r.metrics) metrics[key] = value(v);
        row["metrics"] = metrics;
        // Every STAT(CURVE) of every curve, as the run filter reads it (RunValues.h): the page's
        // filter compares these, so that it selects what headlab-cli selects.
        json values = json::object();
        for (const auto &curve : curveNames)
            for (const auto &stat : curveStatisticTable()) {
                const std::string key = std::string(stat.name) + "(" + curve + ")";
                if (const auto v = runValue(r, key)) values[key] = value(*v);
            }
        row["values"] = values;
        json curves = json::object();
        for (const auto &curve : curveNames) {
            const Curve *c = runCurve(r, curve);
            if (!c || c->empty()) continue;
            DecimationView view;
            view.buckets = options.curveBuckets;
            const Curve kept = decimateCurve(*c, view);
            json steps = json::array(), ys = json::array();
            for (const auto &p : kept) {
                steps.push_back(p.step);
                ys.push_back(number(p.value));
            }
            curves[curve] = {steps, ys};
            if (summary) {
                summary->points += c->size();
                summary->drawnPoints += kept.size();
            }
        }
        row["curves"] = curves;
        runs.push_back(row);
    }
    return runs;
}

// Trainability over width × heads: each configuration's learned fraction with its Wilson
// interval, one panel per value of the other axes (the learning rate, a stabilizer).
json heatmapJson(const Session &session)
{
    if (!hasAxis(session, "d_model") || !hasAxis(session, "heads")) return nullptr;
    const auto axes = configurationAxes(session);
    json cells = json::array();
    for (const auto &g : groupReplicates(session)) {
        if (g.verdicts == 0) continue;
        const auto [low, high] = wilsonInterval(g.learned, g.verdicts);
        cells.push_back({{"x", g.labels.at("d_model")},
                         {"y", g.labels.at("heads")},
                         {"panel", joinedLabels(g.labels, axes, {"d_model", "heads"})},
                         {"learned", g.learned},
                         {"n", g.verdicts},
                         {"low", low},
                         {"high", high},
                         {"runs", g.runs}});
    }
    if (cells.empty()) return nullptr;
    return {{"x", "d_model"}, {"y", "heads"}, {"cells", cells}};
}

// The learned fraction against η·√m_H (EXPERIMENTS.md's collapse), one series per configuration
// but its learning rate, a point per η (a sweep's lr axis, or a search's probes).
json collapseJson(const Session &session)
{
    const auto axes = configurationAxes(session);
    json out = json::array();
    for (const auto &g : groupByConfigurationWithoutLr(session)) {
        std::map<double, std::pair<int, int>> byLr; // η -> learned, verdicts
        double headDim = 0;
        for (int i : g.runs) {
            const auto &run = session.runs[size_t(i)];
            const auto learned = runLearned(session, run.result);
            if (!learned) continue;
            auto &[yes, n] = byLr[run.config.lr];
            yes += *learned ? 1 : 0;
            ++n;
            headDim = double(run.config.model.headDimOfLayer(0));
        }
        if (byLr.size() < 2) continue; // one η: nothing to collapse
        json points = json::array();
        for (const auto &[lr, counts] : byLr) {
            const auto [low, high] = wilsonInterval(counts.first, counts.second);
            points.push_back({{"x", lr * std::sqrt(headDim)},
                              {"lr", lr},
                              {"learned", counts.first},
                              {"n", counts.second},
                              {"low", low},
                              {"high", high}});
        }
        const std::string name = joinedLabels(g.labels, axes, {"lr"});
        out.push_back({{"name", name.empty() ? "all runs" : name}, {"points", points}});
    }
    if (out.empty()) return nullptr;
    return {{"series", out}};
}

// A search's summary (as headlab-cli summary prints it), its crossings against the law's axis,
// and the law's line over them.
json searchJson(const Session &session)
{
    if (!session.search) return nullptr;
    const SearchReport report = searchReport(session, "", {}, true);
    json out;
    out["axis"] = report.axis;
    out["symbol"] = crossingSymbol(report.axis);
    out["text"] = searchSummaryText(report);
    out["csv"] = searchSummaryCsv(report);
    const std::string lawX = report.law.x.empty() ? "head_dim" : report.law.x;
    out["x"] = lawX;
    json points = json::array();
    const auto axes = configurationAxes(session);
    for (const auto &c : report.configurations) {
        const auto logX = log10LawAxes(c.config, {lawX});
        if (logX.empty() || !std::isfinite(logX[0])) continue;
        auto value = [&](double v) { return report.logScale ? std::pow(10.0, v) : v; };
        json p = {{"name", joinedLabels(c.configuration, axes, {})},
                  {"x", std::pow(10.0, logX[0])},
                  {"state", toString(c.state)},
                  {"runs", c.runs}};
        if (c.interval.ok) {
            p["estimate"] = value(c.interval.estimate);
            p["low"] = value(c.interval.low);
            p["high"] = value(c.interval.high);
            p["low_open"] = c.interval.lowOpen;
            p["high_open"] = c.interval.highOpen;
        }
        points.push_back(p);
    }
    out["points"] = points;
    // The law's line (and the bent law's, where the test chose it) over the crossings' span: the
    // estimate `headlab-cli predict` makes, which a law through as many crossings as it has
    // coefficients (no scatter to predict with) has too.
    if (report.law.ok && report.law.also.empty() && !points.empty()) {
        double lo = INFINITY, hi = -INFINITY;
        for (const auto &p : points) {
            lo = std::min(lo, std::log10(p["x"].get<double>()));
            hi = std::max(hi, std::log10(p["x"].get<double>()));
        }
        json power = json::array(), bent = json::array();
        for (int k = 0; k <= 40; ++k) {
            const double u = lo + (hi - lo) * k / 40.0;
            auto value = [&](double v) { return report.logScale ? std::pow(10.0, v) : v; };
            power.push_back({{"x", std::pow(10.0, u)}, {"y", value(report.law.log10At({u}))}});
            if (report.bend.ok && report.bend.chosen)
                bent.push_back({{"x", std::pow(10.0, u)}, {"y", value(report.bend.log10At({u}))}});
        }
        out["law"] = {{"alpha", report.law.alpha},
                      {"alpha_low", report.law.alphaLow},
                      {"alpha_high", report.law.alphaHigh},
                      {"c", std::pow(10.0, report.law.log10C)},
                      {"line", power}};
        if (!bent.empty()) out["bend"] = {{"gamma", report.bend.gamma}, {"line", bent}};
    }
    return out;
}

json plateausJson(const Session &session)
{
    json out = json::array();
    const TaskSpec &spec = taskSpec(session.base.task);
    if (spec.plateaus)
        for (const auto &line : spec.plateaus(session.base.task))
            out.push_back({{"loss", line.loss}, {"label", line.label}});
    return out;
}

// The page: the template with each {{NAME}} replaced by its text, in one pass over the template
// (a placeholder's name inside a note stays text).
std::string filled(const std::string &page, const std::map<std::string, std::string> &parts)
{
    std::string out;
    size_t at = 0;
    while (true) {
        const size_t open = page.find("{{", at);
        const size_t close = open == std::string::npos ? open : page.find("}}", open);
        if (close == std::string::npos) break;
        auto it = parts.find(page.substr(open + 2, close - open - 2));
        out.append(page, at, (it == parts.end() ? close + 2 : open) - at);
        if (it != parts.end()) out += it->second;
        at = close + 2;
    }
    out.append(page, at);
    return out;
}

// Text inside <script>: "</" cannot end the element early written as "<\/" (JSON and JavaScript
// read both alike).
std::string scriptSafe(std::string text)
{
    for (size_t at = 0; (at = text.find("</", at)) != std::string::npos; at += 3)
        text.replace(at, 2, "<\\/");
    return text;
}

std::string htmlEscaped(const std::string &text)
{
    std::string out;
    for (char c : text) switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    return out;
}
} // namespace

std::string sessionFileText(const Session &session, const std::string &path)
{
    if (path.empty()) return {};
    try {
        std::string text = readSessionText(path);
        if (sessionToYaml(sessionFromYaml(text, path)) == sessionToYaml(session)) return text;
    } catch (const SessionError &) {
        // unreadable now: the report carries the session as it is held
    }
    return {};
}

std::string findD3Script(const std::string &given)
{
    if (!given.empty()) return given;
    if (const char *env = std::getenv("HEADLAB_D3_JS"); env && *env) return env;
    for (const char *path :
         {"/usr/share/nodejs/d3/dist/d3.min.js", "/usr/share/javascript/d3/d3.min.js"})
        if (pathKindAt(path) == PathKind::Regular) return path;
    return {};
}

std::string htmlReport(const Session &session, const HtmlReportOptions &options,
                       HtmlReportSummary *summary)
{
    const std::string d3Path = findD3Script(options.d3Path);
    if (d3Path.empty())
        throw SessionError("d3.min.js", 0, 0, "",
                           "is not installed: a report draws its figures with D3 (apt-get install "
                           "node-d3, or set HEADLAB_D3_JS to a d3.min.js of version 5 or later)");
    const std::string d3 = readFileLimited(d3Path, 16u << 20, "D3's script");

    std::vector<const RunResult *> results;
    for (const auto &run : session.runs) results.push_back(&run.result);
    const std::vector<std::string> curveNames = runCurveNames(results);

    HtmlReportSummary local;
    HtmlReportSummary &s = summary ? *summary : local;
    s.runs = session.runs.size();
    json data;
    data["name"] = session.name;
    data["description"] = session.description;
    data["note"] = session.annotation.note;
    data["tags"] = session.annotation.tags;
    auto lesson = session.view.find("lesson");
    data["lesson"] = lesson != session.view.end() && lesson->second == "true";
    data["task"] = session.base.task.kind;
    data["plateaus"] = plateausJson(session);
    data["axes"] = configurationAxes(session);
    data["replicate_axes"] = replicateAxes(session);
    json dimensions = json::array();
    for (const auto &name : xDimensions())
        dimensions.push_back({{"name", name}, {"title", dimensionTitle(name)}});
    dimensions.push_back({{"name", kCollapseX}, {"title", "η·√m_H"}});
    data["dimensions"] = dimensions;
    data["curves"] = curveNames;
    data["statuses"] = runStatusNames();
    json statistics = json::array();
    for (const auto &stat : curveStatisticTable()) statistics.push_back(stat.name);
    data["statistics"] = statistics;
    data["rank_key"] = kRunFilterRankKey;
    data["filter_help"] = runFilterHelp();
    data["runs"] = runsJson(session, options, curveNames, &s);
    // Which way is better for each key best:K, worst:K and !outliers may rank by (RunValues.h's
    // lowerIsBetter: every stored metric and STAT(CURVE) the runs have).
    json lower = json::object();
    for (const auto &run : data["runs"])
        for (const char *part : {"metrics", "values"})
            for (const auto &[key, v] : run[part].items())
                if (!lower.contains(key)) lower[key] = lowerIsBetter(key);
    data["lower_is_better"] = lower;
    data["heatmap"] = heatmapJson(session);
    data["collapse"] = collapseJson(session);
    data["search"] = searchJson(session);
    s.figures = {"Loss curves", "Any run value against any axis"};
    if (!data["heatmap"].is_null()) s.figures.push_back("Trainability over width × heads");
    if (!data["collapse"].is_null()) s.figures.push_back("Learned fraction against η·√m_H");
    if (!data["search"].is_null() && !data["search"]["points"].empty())
        s.figures.push_back("The search's crossings and law");

    const std::string sessionText =
        options.sessionText.empty() ? sessionToYaml(session) : options.sessionText;
    s.sessionBytes = sessionText.size();

    const std::string page =
        filled(std::string(detail::kReportHtml, detail::kReportHtml_size),
               {{"TITLE", htmlEscaped(session.name.empty() ? "HeadLab session" : session.name)},
                {"STYLE", std::string(detail::kReportCss, detail::kReportCss_size)},
                {"D3", scriptSafe(d3)},
                {"DATA", scriptSafe(data.dump(-1, ' ', false, json::error_handler_t::replace))},
                {"SCRIPT", scriptSafe(std::string(detail::kReportJs, detail::kReportJs_size))},
                {"SESSION", sessionElement(sessionText)}});
    s.bytes = page.size();
    return page;
}

HtmlReportSummary writeHtmlReport(const Session &session, const std::string &path,
                                  const HtmlReportOptions &options)
{
    HtmlReportSummary summary;
    const std::string page = htmlReport(session, options, &summary);
    writeFileAtomic(path, page);
    summary.path = path;
    return summary;
}

} // namespace headlab
