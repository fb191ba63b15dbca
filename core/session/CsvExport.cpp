// CsvExport.cpp — writes runs.csv and curves.csv for a session.
#include "core/session/CsvExport.h"

#include "core/session/RunFiles.h"

#include "core/metrics/Metrics.h"
#include "core/metrics/RunValues.h"

#include "core/config/Files.h"
#include "core/config/Yaml.h"
#include "core/schema/RunConfigFields.h"
#include "core/session/Replicates.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

namespace headlab {

namespace {

void writeCurveRows(std::ostringstream &out, size_t run, const std::string &name,
                    const Curve &curve, size_t &points)
{
    for (const auto &point : curve) {
        out << run << ',' << csvField(name) << ',' << point.step << ','
            << yaml::formatNumber(point.value) << '\n';
        ++points;
    }
}

// Hands what `out` holds to `sink` once it passes a few MiB (and at the end, `force`), so that an
// export of any size is written atomically without holding it whole.
void drain(std::ostringstream &out, const TextSink &sink, bool force)
{
    if (!force && out.tellp() < std::streampos(4 << 20)) return;
    sink(out.view());
    out.str({});
}

} // namespace

CsvExportSummary exportSessionCsv(const Session &session, const std::string &directory,
                                  const CsvExportOptions &options)
{
    auto written = [&](size_t i) { return options.runs.empty() || options.runs.at(i); };
    std::error_code error;
    std::filesystem::create_directories(directory, error);
    if (error)
        throw SessionError(directory, 0, 0, "", "cannot create the directory: " + error.message());

    CsvExportSummary summary;
    summary.runsPath = (std::filesystem::path(directory) / "runs.csv").string();
    summary.curvesPath = (std::filesystem::path(directory) / "curves.csv").string();

    std::set<std::string> labelNames, metricNames, provenanceNames;
    for (const auto &run : session.runs) {
        for (const auto &[key, value] : run.labels) labelNames.insert(key);
        for (const auto &[key, value] : run.result.provenance) provenanceNames.insert(key);
        for (const auto &[key, value] : run.result.metrics) metricNames.insert(key);
    }
    // "learned" is the session's rule (LearnedRule.h), the same verdict the app and the CLI give;
    // the trainer's metric of that name (the paper's rule) is final_test_loss < ln 10.
    metricNames.erase(metric::kLearned);
    // Which runs are replicates of one configuration: the one definition (Replicates.h).
    const std::vector<std::string> configurations = configurationKeys(session);

    // Each file atomically (a full disk or a kill leaves the previous export, never a cut one).
    writeFileAtomic(summary.runsPath, [&](const TextSink &sink) {
        std::ostringstream out;
        out << "run,run_id";
        for (const auto &name : labelNames) out << ',' << csvField("label_" + name);
        out << ",configuration";
        for (const auto &column : runCsvColumns()) out << ',' << csvField(column.name);
        out << ",status,steps_done,diverged_at_step,wall_seconds,device";
        for (const auto &row : kOriginFields) out << ',' << row.key;
        out << ",learned,learned_rule";
        for (const auto &name : metricNames) out << ',' << csvField(name);
        for (const auto &key : options.values) out << ',' << csvField(key);
        for (const auto &name : provenanceNames) out << ',' << csvField("provenance_" + name);
        out << ",message,tags,note\n";
        for (size_t i = 0; i < session.runs.size(); ++i) {
            if (!written(i)) continue;
            ++summary.runs;
            const SessionRun &run = session.runs[i];
            const RunConfig &c = run.config;
            const RunResult &r = run.result;
            out << i << ',' << runId(c);
            for (const auto &name : labelNames) {
                const auto it = run.labels.find(name);
                out << ',' << csvField(it == run.labels.end() ? "" : it->second);
            }
            out << ',' << csvField(configurations[i]);
            for (const auto &column : runCsvColumns()) out << ',' << csvField(column.value(c));
            out << ',' << toString(r.status) << ',' << r.stepsDone << ',' << r.divergedAtStep << ','
                << yaml::formatNumber(r.wallSeconds) << ',' << csvField(r.device);
            for (const auto &row : kOriginFields) out << ',' << csvField(r.origin.*row.member);
            const auto verdict = runLearned(session, r);
            out << ',' << (verdict ? (*verdict ? "1" : "0") : "") << ','
                << toString(session.learnedRule);
            for (const auto &name : metricNames) {
                const auto it = r.metrics.find(name);
                out << ',' << (it == r.metrics.end() ? "" : yaml::formatNumber(it->second));
            }
            for (const auto &key : options.values) {
                const auto value = runValue(r, key);
                out << ',' << (value ? yaml::formatNumber(*value) : "");
            }
            for (const auto &name : provenanceNames) {
                const auto it = r.provenance.find(name);
                out << ',' << csvField(it == r.provenance.end() ? "" : it->second);
            }
            out << ',' << csvField(r.message);
            const Annotation &a = runAnnotation(session, i);
            std::string tags;
            for (const auto &tag : a.tags) tags += (tags.empty() ? "" : " ") + tag;
            out << ',' << csvField(tags) << ',' << csvField(a.note) << '\n';
            drain(out, sink, false);
        }
        drain(out, sink, true);
    });

    writeFileAtomic(summary.curvesPath, [&](const TextSink &sink) {
        std::ostringstream out;
        out << "run,curve,step,value\n";
        for (size_t i = 0; i < session.runs.size(); ++i) {
            if (!written(i)) continue;
            const RunResult &r = session.runs[i].result;
            writeCurveRows(out, i, "train", r.train, summary.points);
            writeCurveRows(out, i, "test", r.test, summary.points);
            for (const auto &[name, curve] : r.extra)
                writeCurveRows(out, i, name, curve, summary.points);
            drain(out, sink, false);
        }
        drain(out, sink, true);
    });
    return summary;
}

} // namespace headlab
