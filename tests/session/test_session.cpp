// test_session.cpp — sessions as a user relies on them: YAML that round-trips exactly, located
// errors for every kind of bad input, saves that never lose the previous file, sweeps that skip
// what cannot run and keep finished results, the embedded presets, and headlab-cli's exit codes.
#include "core/config/Files.h"
#include "core/config/HeadSchedule.h"
#include "core/metrics/Metrics.h"
#include "core/metrics/RunValues.h"
#include "core/schema/Dimensions.h"
#include "core/schema/RunConfigFields.h"
#include "core/session/CsvExport.h"
#include "core/session/HtmlEmbed.h"
#include "core/session/Presets.h"
#include "core/session/Replicates.h"
#include "core/session/RunFiles.h"
#include "core/session/RunFilter.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"
#include "core/session/SessionYaml.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "tests/TinyRuns.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>

#include <signal.h>
#include <sys/resource.h>

using namespace headlab;

namespace {

// Doubles compared bit for bit (so nan == nan, and -0 != 0).
bool sameBits(double a, double b)
{
    return std::memcmp(&a, &b, sizeof a) == 0;
}

void compareCurves(const Curve &a, const Curve &b, const char *name)
{
    QVERIFY2(a.size() == b.size(), name);
    for (size_t i = 0; i < a.size(); ++i) {
        QCOMPARE(a[i].step, b[i].step);
        QVERIFY2(sameBits(a[i].value, b[i].value), qPrintable(QString("%1[%2]: %3 vs %4")
                                                                  .arg(name)
                                                                  .arg(i)
                                                                  .arg(a[i].value, 0, 'g', 17)
                                                                  .arg(b[i].value, 0, 'g', 17)));
    }
}

void compareConfigs(const RunConfig &a, const RunConfig &b)
{
    QCOMPARE(a.task.kind, b.task.kind);
    if (a.task.kind == "addition") {
        QCOMPARE(a.task.trainPairs, b.task.trainPairs);
        QCOMPARE(a.task.testPairs, b.task.testPairs);
        QCOMPARE(a.task.testPairBase, b.task.testPairBase);
    } else if (a.task.kind == "nearest_neighbour") {
        QCOMPARE(a.task.pointDim, b.task.pointDim);
        QCOMPARE(a.task.numPoints, b.task.numPoints);
    } else {
        QCOMPARE(a.task.textPath, b.task.textPath);
        QCOMPARE(a.task.contextLength, b.task.contextLength);
        QVERIFY(sameBits(a.task.validationFraction, b.task.validationFraction));
        QCOMPARE(a.task.corpusBytes, b.task.corpusBytes);
        QCOMPARE(a.task.samplePrompt, b.task.samplePrompt);
        QCOMPARE(a.task.sampleLength, b.task.sampleLength);
        QCOMPARE(a.task.sampleCount, b.task.sampleCount);
        QVERIFY(sameBits(a.task.sampleTemperature, b.task.sampleTemperature));
        QCOMPARE(a.task.sampleSeed, b.task.sampleSeed);
    }
    QCOMPARE(a.model.dModel, b.model.dModel);
    QCOMPARE(a.model.heads, b.model.heads);
    QCOMPARE(a.model.headDim, b.model.headDim);
    QCOMPARE(a.model.ffnWidth, b.model.ffnWidth);
    QCOMPARE(a.model.activation, b.model.activation);
    QCOMPARE(a.model.norm, b.model.norm);
    QCOMPARE(a.model.placement, b.model.placement);
    QCOMPARE(a.model.finalNorm, b.model.finalNorm);
    QCOMPARE(a.model.causal, b.model.causal);
    QCOMPARE(a.model.bias, b.model.bias);
    QCOMPARE(a.model.zeroInitOutputs, b.model.zeroInitOutputs);
    QCOMPARE(a.model.logitScale, b.model.logitScale);
    QCOMPARE(a.model.widthMultiplier, b.model.widthMultiplier);
    QCOMPARE(a.phases.size(), b.phases.size());
    for (size_t i = 0; i < a.phases.size(); ++i) {
        const PhaseConfig &p = a.phases[i], &q = b.phases[i];
        QCOMPARE(p.name, q.name);
        QCOMPARE(p.objective, q.objective);
        QCOMPARE(p.steps, q.steps);
        QCOMPARE(p.batchSize, q.batchSize);
        QCOMPARE(p.useScannedLr, q.useScannedLr);
        if (!p.useScannedLr) QVERIFY(sameBits(p.lr, q.lr));
        QCOMPARE(p.optimizer.kind, q.optimizer.kind);
        QVERIFY(sameBits(p.optimizer.beta1, q.optimizer.beta1));
        QVERIFY(sameBits(p.optimizer.beta2, q.optimizer.beta2));
        QVERIFY(sameBits(p.optimizer.eps, q.optimizer.eps));
        QVERIFY(sameBits(p.optimizer.weightDecay, q.optimizer.weightDecay));
        QCOMPARE(p.schedule.kind, q.schedule.kind);
        QVERIFY(sameBits(p.schedule.warmupFraction, q.schedule.warmupFraction));
    }
    QVERIFY(sameBits(a.lr, b.lr));
    QCOMPARE(a.qkRule.enabled, b.qkRule.enabled);
    QVERIFY(sameBits(a.qkRule.referenceHeadDim, b.qkRule.referenceHeadDim));
    QCOMPARE(a.evalEvery, b.evalEvery);
    QCOMPARE(a.logEvery, b.logEvery);
    QCOMPARE(a.evalBatches, b.evalBatches);
    QCOMPARE(a.initSeed, b.initSeed);
    QCOMPARE(a.dataSeed, b.dataSeed);
    QCOMPARE(a.device, b.device);
    QCOMPARE(a.tf32, b.tf32);
}

void compareAxisValues(const AxisValue &a, const AxisValue &b)
{
    QCOMPARE(a.kind, b.kind);
    QVERIFY(sameBits(a.number, b.number));
    QCOMPARE(a.unsignedValue, b.unsignedValue);
    QCOMPARE(a.ints, b.ints);
    QCOMPARE(a.text, b.text);
}

void compareSessions(const Session &a, const Session &b)
{
    QCOMPARE(a.schemaVersion, b.schemaVersion);
    QCOMPARE(a.name, b.name);
    QCOMPARE(a.description, b.description);
    compareConfigs(a.base, b.base);
    QCOMPARE(a.axes.size(), b.axes.size());
    for (size_t i = 0; i < a.axes.size(); ++i) {
        QCOMPARE(a.axes[i].name, b.axes[i].name);
        QCOMPARE(a.axes[i].values.size(), b.axes[i].values.size());
        for (size_t j = 0; j < a.axes[i].values.size(); ++j)
            compareAxisValues(a.axes[i].values[j], b.axes[i].values[j]);
    }
    QCOMPARE(a.combinations.size(), b.combinations.size());
    for (size_t i = 0; i < a.combinations.size(); ++i) {
        QCOMPARE(a.combinations[i].size(), b.combinations[i].size());
        for (const auto &[name, value] : a.combinations[i]) {
            QVERIFY(b.combinations[i].count(name));
            compareAxisValues(value, b.combinations[i].at(name));
        }
    }
    QCOMPARE(a.runs.size(), b.runs.size());
    for (size_t i = 0; i < a.runs.size(); ++i) {
        const SessionRun &r = a.runs[i], &s = b.runs[i];
        QCOMPARE(r.labels, s.labels);
        compareConfigs(r.config, s.config);
        QCOMPARE(r.result.status, s.result.status);
        compareCurves(r.result.train, s.result.train, "train");
        compareCurves(r.result.test, s.result.test, "test");
        QCOMPARE(r.result.extra.size(), s.result.extra.size());
        for (const auto &[name, curve] : r.result.extra) {
            QVERIFY(s.result.extra.count(name));
            compareCurves(curve, s.result.extra.at(name), name.c_str());
        }
        QCOMPARE(r.result.metrics.size(), s.result.metrics.size());
        for (const auto &[name, value] : r.result.metrics) {
            QVERIFY(s.result.metrics.count(name));
            QVERIFY2(sameBits(value, s.result.metrics.at(name)), name.c_str());
        }
        QCOMPARE(r.result.phaseStarts, s.result.phaseStarts);
        QCOMPARE(r.result.stepsDone, s.result.stepsDone);
        QCOMPARE(r.result.divergedAtStep, s.result.divergedAtStep);
        QVERIFY(sameBits(r.result.wallSeconds, s.result.wallSeconds));
        QCOMPARE(r.result.device, s.result.device);
        QCOMPARE(r.result.message, s.result.message);
        QCOMPARE(r.result.samples, s.result.samples);
    }
    QCOMPARE(a.skipped.size(), b.skipped.size());
    for (size_t i = 0; i < a.skipped.size(); ++i) {
        QCOMPARE(a.skipped[i].labels, b.skipped[i].labels);
        QCOMPARE(a.skipped[i].reason, b.skipped[i].reason);
    }
    QCOMPARE(a.view, b.view);
}

AxisValue number(double v)
{
    AxisValue a;
    a.kind = AxisValue::Kind::Number;
    a.number = v;
    return a;
}

AxisValue seed(uint64_t v)
{
    AxisValue a;
    a.kind = AxisValue::Kind::Unsigned;
    a.unsignedValue = v;
    return a;
}

AxisValue intList(std::vector<int64_t> ints)
{
    AxisValue a;
    a.kind = AxisValue::Kind::IntList;
    a.ints = std::move(ints);
    return a;
}

// A short addition run, valid for headlab::validate.
RunConfig smallConfig()
{
    RunConfig c;
    c.model.dModel = 24;
    c.model.heads = {1, 1};
    PhaseConfig warmup;
    warmup.name = "warmup";
    warmup.objective = Objective::NextToken;
    warmup.steps = 5;
    warmup.batchSize = 4;
    warmup.useScannedLr = false;
    warmup.lr = 5e-4;
    PhaseConfig answer;
    answer.name = "answer";
    answer.steps = 10;
    answer.batchSize = 4;
    c.phases = {warmup, answer};
    c.evalEvery = 5;
    c.logEvery = 1;
    return c;
}

// A session with every field set to something other than its default.
Session fullSession()
{
    Session s;
    s.name = "round trip: all fields";
    s.description = "line one\nline two with \"quotes\", a colon: and a # hash";
    s.base = smallConfig();
    RunConfig &b = s.base;
    b.task.trainPairs = 1000;
    b.task.testPairs = 7;
    b.task.testPairBase = 5000;
    b.model.heads = {2, 3, 6};
    b.model.headDim = 16;
    b.model.ffnWidth = 50;
    b.model.activation = Activation::Relu;
    b.model.norm = NormKind::UnitScale;
    b.model.placement = NormPlacement::PostNorm;
    b.model.finalNorm = false;
    b.model.causal = false;
    b.model.bias = true;
    b.model.zeroInitOutputs = false;
    b.model.logitScale = LogitScale::InvHeadDim;
    b.model.widthMultiplier = 8;
    b.phases[1].optimizer = {OptimizerKind::AdamW, 0.85, 0.95, 1e-7, 0.01};
    b.phases[1].schedule = {ScheduleKind::WarmupCosine, 0.1};
    b.lr = 1.0 / 3.0 * 1e-3;
    b.qkRule = {true, 12.5};
    b.evalEvery = 7;
    b.logEvery = 3;
    b.evalBatches = 2;
    b.initSeed = 18446744073709551615ull; // the largest seed
    b.dataSeed = 42;
    b.device = "cuda:1";
    b.tf32 = true;

    s.axes.push_back({"d_model", {number(24), number(48)}});
    s.axes.push_back({"heads", {number(1), intList({1, 3})}});
    s.axes.push_back(
        {"lr", {number(3e-5), number(std::exp(std::log(3e-5) + std::log(100.0) / 9.0))}});
    s.combinations.push_back({{"seed", seed(1)}, {"head_dim", number(8)}});

    SessionRun addition;
    addition.labels = {{"d_model", "24"}, {"heads", "[1,3]"}, {"lr", "3e-05"}};
    addition.config = b;
    RunResult &r = addition.result;
    r.status = RunStatus::Diverged;
    r.train = {{0, std::log(22.0)}, {3, 1.0 / 3.0}, {6, std::numeric_limits<double>::denorm_min()},
               {9, -0.0},           {12, 1e300},    {15, std::numeric_limits<double>::quiet_NaN()}};
    r.test = {{0, std::log(10.0)},
              {7, std::numeric_limits<double>::infinity()},
              {14, -std::numeric_limits<double>::infinity()}};
    r.extra["test_digit_0"] = {{0, 0.1}, {7, 0.2}};
    r.extra["test_digit_1"] = {};
    r.metrics = {
        {"final_test_loss", 0.123456789012345678}, {"learned", 0}, {"nan_metric", std::nan("")}};
    r.phaseStarts = {0, 5};
    r.stepsDone = 15;
    r.divergedAtStep = 15;
    r.wallSeconds = 12.345678901234567;
    r.device = "cuda:1";
    r.message = "loss became nan: at step 15";
    s.runs.push_back(addition);

    SessionRun neighbours;
    neighbours.labels = {{"d_model", "48"}};
    neighbours.config = smallConfig();
    neighbours.config.task.kind = "nearest_neighbour";
    neighbours.config.task.pointDim = 48;
    neighbours.config.task.numPoints = 9;
    neighbours.config.phases = {neighbours.config.phases[1]};
    neighbours.config.phases[0].objective = Objective::Regression;
    neighbours.result.status = RunStatus::Done;
    s.runs.push_back(neighbours);

    SessionRun text;
    text.config = smallConfig();
    text.config.task.kind = "text";
    text.config.task.textPath = "/data/stories: a corpus.txt";
    text.config.task.contextLength = 64;
    text.config.task.validationFraction = 0.2;
    text.config.task.corpusBytes = 12345;
    text.config.task.samplePrompt = "Once upon a time: ";
    text.config.task.sampleLength = 80;
    text.config.task.sampleCount = 2;
    text.config.task.sampleTemperature = 0.7;
    text.config.task.sampleSeed = 99;
    // A generated sample can hold any byte: DEL and C0 controls beside UTF-8.
    text.result.samples = {"Once upon a time: a cat\nsat.\n", "  \"quoted\", é, tab\tend",
                           "del \x7f, bell \x07, é"};
    text.result.status = RunStatus::Stopped;
    text.result.message = "true"; // text that YAML would read as a bool must stay text
    s.runs.push_back(text);

    s.skipped.push_back({{{"d_model", "24"}, {"heads", "5"}},
                         "model.heads[0]: 5 heads do not divide d_model 24 (layer 0)"});
    s.view = {{"chart", "heatmap"}, {"log_x", "true"}, {"heatmap_lr", "0.001"}, {"empty", ""}};
    return s;
}

std::string readFile(const QString &path)
{
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void writeFile(const QString &path, const std::string &text)
{
    std::ofstream out(path.toStdString(), std::ios::binary | std::ios::trunc);
    out << text;
}

// The minimal valid session text used by the bad-input rows: lines 1..4.
const char *kValidHead = "schema_version: 1\n"
                         "experiment:\n"
                         "  phases:\n"
                         "    - {name: answer, steps: 10, batch_size: 4}\n";

// The runs a filter selects, as "1 3 7", or "error: " and why the text is not a filter.
QString selectedBy(const Session &s, const std::string &text)
{
    const RunFilter f = RunFilter::parse(text, s);
    if (!f.error.empty()) return QString::fromStdString("error: " + f.error);
    const std::vector<bool> in = f.select(s);
    QStringList runs;
    for (size_t i = 0; i < in.size(); ++i)
        if (in[i]) runs << QString::number(i);
    return runs.join(' ');
}

struct CliResult {
    int exitCode = -1;
    QString out;
    QString err;
};

CliResult runCli(const QStringList &args)
{
    QProcess process;
    process.start(QStringLiteral(HEADLAB_CLI_PATH), args);
    if (!process.waitForFinished(60000)) return {};
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAllStandardOutput()),
            QString::fromUtf8(process.readAllStandardError())};
}

} // namespace

class TestSession : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyNamedAxisIsOneRow();
    void roundTripKeepsEveryFieldExactly();
    void roundTripThroughAFile();
    void aSessionSavedOverKeepsItsLeadingComments();
    void numbersAreWrittenShortAndExact();

    void badInputGivesLocatedMessage_data();
    void badInputGivesLocatedMessage();
    void missingFileIsAClearError();
    void nestedAliasesAreRefusedNotExpanded();

    void failedSaveLeavesOldFileIntact();
    void saveIntoMissingDirectoryFails();

    void expandSweepIsTheCartesianProduct();
    void expandSweepSkipsNonDivisibleHeadCounts();
    void expandSweepNamesEveryBadLayerOfASchedule();
    void expandSweepKeepsResultsOfUnchangedRuns();
    void expandSweepSeedAxisSetsBothSeeds();
    void expandSweepCombinationsAndLogspace();
    void stabilizersAndModelFieldsAreSweepAxes();
    void headScheduleGenerators();
    void pendingRunsSkipsFinishedRuns();

    void everyPresetParsesAndExpands();
    void paperPresetsFollowTheProtocol();
    void unknownPresetSuggestsANearName();

    void exportCsvWritesRunsAndCurves();
    void exportedCellsAreNeverFormulas();
    void integerOptionsReadDecimal();
    void aFullStreamIsAFailure();
    void theRunFilterIsExact();
    void theRunFilterRanksAndFencesRuns();
    void notesAndTagsAreKeptAndSelectBy();
    void notesAndTagsWrittenByTwoMergeWithoutLoss();
    void aReportCarriesItsSessionByteForByte();
    void learnedHasOneDefinition();
    void aTaskWithoutTheLn10PlateauIsJudgedByItsOwn();
    void cliValidateExitCodes();
    void cliPresetsAndHelp();
    void cliRunSavesAndResumes();
    void cliRunExitsNonZeroWhenARunFails();
    void cliRunStopsCleanlyOnSigint();

    void storedSessionsOfThisReleaseLoadUnchanged_data();
    void storedSessionsOfThisReleaseLoadUnchanged();
    void presetRunFilesKeepTheirNames();
    void replicateStatisticsOfKnownValues();
    void lrSensitivityOfKnownValues();
    void runIdentityAndTimeTravel();
};

void TestSession::roundTripKeepsEveryFieldExactly()
{
    const Session original = fullSession();
    const std::string text = sessionToYaml(original);
    const Session loaded = sessionFromYaml(text, "round-trip.yaml");
    compareSessions(original, loaded);
    // Writing what was read gives the same text: nothing drifts on a second save.
    QCOMPARE(sessionToYaml(loaded), text);
    // Every character is one YAML lets a file hold (PyYAML refused a raw DEL that yaml-cpp wrote).
    for (const char c : text)
        QVERIFY2(
            c == '\n' || c == '\t' || (static_cast<unsigned char>(c) >= 0x20 && c != '\x7f'),
            qPrintable(
                QString("byte 0x%1 in the text").arg(int(static_cast<unsigned char>(c)), 2, 16)));
}

// Issue 55: a run's origin (when, where, by what) is kept through its run file and an export, the
// export names each run's run_id (its file's stem, the config's hash), runs.csv lists both, and a
// misspelt origin key is refused where it is.
void TestSession::runIdentityAndTimeTravel()
{
    Session s = fullSession();
    QVERIFY(!s.runs.empty());
    RunOrigin &o = s.runs[0].result.origin;
    o.startedAt = "2026-12-02T03:42:17Z";
    o.finishedAt = "2026-12-02T03:44:01Z";
    o.host = "gpu-07";
    o.commit = "e00d16f24d30f887defcf27529fe61590048f031+dirty";
    o.command = "headlab-cli run 'my grid.yaml' -o out.yaml";
    const std::string id = runId(s.runs[0].config);
    QCOMPARE(runFileName(s.runs[0].config), id + ".yaml");
    QCOMPARE(id.size(), size_t(16));
    const std::string text = sessionToYaml(s);
    QVERIFY2(text.find("run_id: \"" + id + "\"") != std::string::npos, text.c_str());
    const Session loaded = sessionFromYaml(text, "origin.yaml");
    QVERIFY(loaded.runs[0].result.origin == o);
    QVERIFY(loaded.runs[1].result.origin.empty()); // nothing invented for a run without one
    QCOMPARE(sessionToYaml(loaded), text);
    const SessionRun run = runFromYaml(runToYaml(s.runs[0]), "r.yaml");
    QVERIFY(run.result.origin == o);
    QTemporaryDir dir;
    const auto csv = exportSessionCsv(loaded, dir.filePath("csv").toStdString());
    std::ifstream in(csv.runsPath);
    std::string header, first;
    std::getline(in, header);
    std::getline(in, first);
    QVERIFY2(header.rfind("run,run_id,", 0) == 0, header.c_str());
    QVERIFY2(header.find(",device,started_at,finished_at,host,commit,command,") !=
                 std::string::npos,
             header.c_str());
    QVERIFY2(first.rfind("0," + id + ",", 0) == 0, first.c_str());
    QVERIFY2(first.find(",2026-12-02T03:42:17Z,2026-12-02T03:44:01Z,gpu-07,"
                        "e00d16f24d30f887defcf27529fe61590048f031+dirty,"
                        "headlab-cli run 'my grid.yaml' -o out.yaml,") != std::string::npos,
             first.c_str());
    std::string bad = text;
    bad.replace(bad.find("host: gpu-07"), 12, "hots: gpu-07");
    try {
        sessionFromYaml(bad, "bad.yaml");
        QFAIL("a misspelt origin key was accepted");
    } catch (const SessionError &e) {
        QVERIFY2(std::string(e.what()).find("hots") != std::string::npos &&
                     std::string(e.what()).find("did you mean 'host'") != std::string::npos,
                 e.what());
    }
}

void TestSession::roundTripThroughAFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("session.yaml").toStdString();
    const Session original = fullSession();
    saveSessionAtomic(original, path);
    compareSessions(original, loadSession(path));
}

// What a person wrote above a session's keys (how the file was made, what it is for) survives
// the app, `predict --into` and `note` saving over it; a file without such a block gains none, and
// saving twice does not repeat it.
void TestSession::aSessionSavedOverKeepsItsLeadingComments()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("session.yaml").toStdString();
    const std::string header =
        "# Made by hand for the lesson of 12 May.\n#\n\n# Run: headlab-cli run this.yaml\n";
    Session original = fullSession();
    writeFileAtomic(path, header + "\n" + sessionToYaml(original));
    original.description = "edited in the app";
    saveSessionAtomic(original, path);
    saveSessionAtomic(original, path);
    const std::string text = readFile(QString::fromStdString(path));
    QVERIFY2(text.rfind(header, 0) == 0, text.substr(0, 200).c_str());
    QCOMPARE(text.substr(header.size()), sessionToYaml(original));
    compareSessions(original, loadSession(path));

    const std::string plain = dir.filePath("plain.yaml").toStdString();
    saveSessionAtomic(original, plain);
    saveSessionAtomic(original, plain);
    QCOMPARE(readFile(QString::fromStdString(plain)), sessionToYaml(original));

    // A FIFO at the path is refused as before, at once: looking for its comments must not wait
    // for a writer.
    const std::string fifo = dir.filePath("fifo.yaml").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
    try {
        saveSessionAtomic(original, fifo);
        QFAIL("a FIFO was written over");
    } catch (const SessionError &e) {
        QVERIFY2(std::string(e.what()).find("is not a regular file") != std::string::npos,
                 e.what());
    }
}

void TestSession::numbersAreWrittenShortAndExact()
{
    Session s;
    s.base = smallConfig();
    s.base.lr = 1e-3;
    s.base.phases[0].lr = 5e-4;
    const std::string text = sessionToYaml(s);
    // Short, and readable as floats by YAML 1.1 readers too (a '.' before the exponent).
    QVERIFY2(text.find("lr: 0.001\n") != std::string::npos, text.c_str());
    QVERIFY2(text.find("lr: 5.0e-04\n") != std::string::npos, text.c_str());
    QCOMPARE(number(3e-5).label(), std::string("3e-05"));
    QCOMPARE(intList({12, 24, 48, 96}).label(), std::string("[12,24,48,96]"));
}

void TestSession::badInputGivesLocatedMessage_data()
{
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("keyPath");
    QTest::addColumn<QString>("message");

    const QString head = QString::fromUtf8(kValidHead);
    QTest::newRow("unknown key, with suggestion")
        << head + "  model:\n    d_modle: 48\n"
        << 6 << 5 << "experiment.model.d_modle"
        << "unknown key 'd_modle'; did you mean 'd_model'?";
    QTest::newRow("unknown top-level key") << head + "sweeep:\n  d_model: [24]\n"
                                           << 5 << 1 << "sweeep"
                                           << "unknown key 'sweeep'; did you mean 'sweep'?";
    QTest::newRow("unknown sweep axis") << head + "sweep:\n  dmodel: [24, 48]\n"
                                        << 6 << 3 << "sweep.dmodel"
                                        << "unknown key 'dmodel'; did you mean 'd_model'?";
    QTest::newRow("a stabilizer axis value the row refuses")
        << head + "sweep:\n  qk_norm: [off, gian]\n"
        << 6 << 18 << "sweep.qk_norm[1]"
        << "unknown value 'gian'; did you mean 'gain'? (expected one of off, on, gain)";
    QTest::newRow("a negative softcap") << head + "  stabilizers: {softcap: -2}\n"
                                        << 5 << 26 << "experiment.stabilizers.softcap"
                                        << "must be 0 (off) or a positive number, got -2";
    QTest::newRow("an unknown stabilizer") << head + "  stabilizers: {qk_nrom: on}\n"
                                           << 5 << 17 << "experiment.stabilizers.qk_nrom"
                                           << "unknown key 'qk_nrom'; did you mean 'qk_norm'?";
    QTest::newRow("unknown enum value")
        << head + "  model:\n    activation: gleu\n"
        << 6 << 17 << "experiment.model.activation"
        << "unknown value 'gleu'; did you mean 'gelu'? (expected one of gelu, relu)";
    QTest::newRow("a list where head_dim is a number") << head + "  model:\n    head_dim: [8]\n"
                                                       << 6 << 15 << "experiment.model.head_dim"
                                                       << "expected an integer or auto, got a list";
    QTest::newRow("wrong type in a head list") << head + "  model:\n    heads: [1, x]\n"
                                               << 6 << 16 << "experiment.model.heads[1]"
                                               << "expected an integer, got 'x'";
    QTest::newRow("wrong type: a number where a mapping belongs")
        << head + "  model: 48\n"
        << 5 << 10 << "experiment.model"
        << "expected a mapping (key: value lines), got '48'";
    QTest::newRow("wrong type: a fraction where an integer belongs")
        << head + "  eval_every: 2.5\n"
        << 5 << 15 << "experiment.eval_every"
        << "expected an integer, got 2.5";
    QTest::newRow("negative steps")
        << "schema_version: 1\nexperiment:\n  phases:\n    - {name: answer, steps: -5}\n"
        << 4 << 29 << "experiment.phases[0].steps"
        << "must be at least 0, got -5";
    QTest::newRow("learning rate zero") << head + "  lr: 0\n"
                                        << 5 << 7 << "experiment.lr"
                                        << "must be a finite number > 0, got 0";
    QTest::newRow("beta1 of one") << "schema_version: 1\nexperiment:\n  phases:\n    - steps: 10\n "
                                     "     optimizer: {beta1: 1.0}\n"
                                  << 5 << 26 << "experiment.phases[0].optimizer.beta1"
                                  << "must be in [0, 1), got 1";
    QTest::newRow("empty value") << head + "  lr:\n"
                                 << 5 << 3 << "experiment.lr"
                                 << "expected a number, got nothing";
    QTest::newRow("sweep lr not positive") << head + "sweep:\n  lr: [1.0e-3, -1]\n"
                                           << 6 << 16 << "sweep.lr[1]"
                                           << "must be a finite number > 0, got -1";
    QTest::newRow("malformed YAML") << "schema_version: 1\nexperiment: a: b\n"
                                    << 2 << 14 << ""
                                    << "malformed YAML: illegal map value";
    QTest::newRow("missing experiment") << "schema_version: 1\nname: x\n"
                                        << 1 << 1 << "experiment"
                                        << "missing: the base run configuration";
    QTest::newRow("newer schema") << "schema_version: 3\nexperiment: {phases: [{steps: 1}]}\n"
                                  << 1 << 17 << "schema_version"
                                  << "schema version 3 is newer than this HeadLab reads (2)";
    QTest::newRow("curve lengths differ")
        << head + "runs:\n  - config: {phases: [{steps: 1}]}\n    curves:\n      train: {steps: "
                  "[0, 1], values: [3.0]}\n"
        << 8 << 38 << "runs[0].curves.train.values"
        << "1 values for 2 steps";
    QTest::newRow("misspelt status")
        << head + "runs:\n  - config: {phases: [{steps: 1}]}\n    status: doen\n"
        << 7 << 13 << "runs[0].status"
        << "unknown status 'doen'; did you mean 'done'? (expected one of queued, running, paused, "
           "done, diverged, "
           "failed, stopped)";
    QTest::newRow("option of another task")
        << head + "  task: {kind: addition, point_dim: 8}\n"
        << 5 << 37 << "experiment.task.point_dim"
        << "is an option of task kind nearest_neighbour, not addition";
}

// A kilobyte of nested YAML aliases ("billion laughs": 9^12 nodes) hung validate and the app
// while the structure check visited every expansion. Refused now, at the alias, after a budget of
// visits proportional to the text (without it this test does not end).
void TestSession::nestedAliasesAreRefusedNotExpanded()
{
    std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i <= 12; ++i) {
        text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
        for (int k = 0; k < 9; ++k) text += (k ? ", *a" : "*a") + std::to_string(i - 1);
        text += "]\n";
    }
    text += "schema_version: 1\nname: *a12\n";
    QVERIFY(text.size() < 1500);
    try {
        sessionFromYaml(text, "bomb.yaml");
        QFAIL("no error");
    } catch (const SessionError &e) {
        QCOMPARE(QString::fromStdString(e.file()), QString("bomb.yaml"));
        QVERIFY(e.line() > 0);
        QVERIFY2(QString::fromStdString(e.message()).contains("aliases"), e.what());
    }
    // A few aliases used a few times stay fine.
    const std::string reuse = std::string(kValidHead) + "sweep:\n  heads: &h [1, 2]\n  seed: *h\n";
    QCOMPARE(sessionFromYaml(reuse, "reuse.yaml").axes.size(), size_t(2));
}

void TestSession::badInputGivesLocatedMessage()
{
    QFETCH(QString, yaml);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, keyPath);
    QFETCH(QString, message);
    try {
        sessionFromYaml(yaml.toStdString(), "bad.yaml");
        QFAIL("no error");
    } catch (const SessionError &e) {
        QCOMPARE(QString::fromStdString(e.file()), QString("bad.yaml"));
        QCOMPARE(e.line(), line);
        QCOMPARE(e.column(), column);
        QCOMPARE(QString::fromStdString(e.keyPath()), keyPath);
        QCOMPARE(QString::fromStdString(e.message()), message);
        const QString expected =
            keyPath.isEmpty()
                ? QString("bad.yaml:%1:%2: %3").arg(line).arg(column).arg(message)
                : QString("bad.yaml:%1:%2: %3: %4").arg(line).arg(column).arg(keyPath, message);
        QCOMPARE(QString::fromUtf8(e.what()), expected);
    }
}

void TestSession::missingFileIsAClearError()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("no-such-session.yaml").toStdString();
    try {
        loadSession(path);
        QFAIL("no error");
    } catch (const SessionError &e) {
        QCOMPARE(e.file(), path);
        QCOMPARE(e.line(), 0);
        QCOMPARE(QString::fromUtf8(e.what()),
                 QString::fromStdString(path + ": cannot open: No such file or directory"));
    }
}

void TestSession::failedSaveLeavesOldFileIntact()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("session.yaml");
    Session old;
    old.name = "the previous save";
    old.base = smallConfig();
    saveSessionAtomic(old, path.toStdString());
    const std::string before = readFile(path);
    QVERIFY(before.size() < 4096);

    // A disk that fills up: the file-size limit makes write() fail with EFBIG past 4 KiB, for
    // any user (root included). SIGXFSZ would kill the process, so it is ignored meanwhile.
    Session big = fullSession();
    for (int i = 0; i < 2000; ++i) big.runs[0].result.train.push_back({i, 1.0 / (i + 3)});
    rlimit saved{};
    QVERIFY(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    const auto previousHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = saved;
    small.rlim_cur = 4096;
    QVERIFY(setrlimit(RLIMIT_FSIZE, &small) == 0);
    bool threw = false;
    std::string what;
    try {
        saveSessionAtomic(big, path.toStdString());
    } catch (const SessionError &e) {
        threw = true;
        what = e.what();
        QCOMPARE(e.file(), path.toStdString());
    }
    setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, previousHandler);
    QVERIFY(threw);
    QVERIFY2(what.find("File too large") != std::string::npos, what.c_str());
    QCOMPARE(readFile(path), before);
    QCOMPARE(loadSession(path.toStdString()).name, std::string("the previous save"));
    // No temporary file is left behind.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"session.yaml"});
}

void TestSession::saveIntoMissingDirectoryFails()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("missing/dir/session.yaml").toStdString();
    Session s;
    s.base = smallConfig();
    try {
        saveSessionAtomic(s, path);
        QFAIL("no error");
    } catch (const SessionError &e) {
        QCOMPARE(e.file(), path);
        QVERIFY2(std::string(e.what()).find("No such file or directory") != std::string::npos,
                 e.what());
    }
}

void TestSession::expandSweepIsTheCartesianProduct()
{
    Session s;
    s.base = smallConfig();
    s.axes.push_back({"d_model", {number(24), number(48), number(96)}});
    s.axes.push_back({"heads", {number(1), number(2)}});
    s.axes.push_back({"lr", {number(1e-4), number(1e-3)}});
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(12));
    QVERIFY(s.skipped.empty());
    // The first axis varies slowest, the last fastest.
    QCOMPARE(s.runs[0].labels, (std::map<std::string, std::string>{
                                   {"d_model", "24"}, {"heads", "1"}, {"lr", "0.0001"}}));
    QCOMPARE(s.runs[1].labels.at("lr"), std::string("0.001"));
    const SessionRun &last = s.runs.back();
    QCOMPARE(last.config.model.dModel, int64_t(96));
    QCOMPARE(last.config.model.heads, (std::vector<int64_t>{2, 2}));
    QCOMPARE(last.config.lr, 1e-3);
    QCOMPARE(last.config.phases.size(), size_t(2)); // the rest comes from the base
}

void TestSession::expandSweepSkipsNonDivisibleHeadCounts()
{
    Session s;
    s.base = smallConfig();
    s.axes.push_back({"d_model", {number(24), number(40)}});
    s.axes.push_back({"heads", {number(3), number(5)}});
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(2)); // 24/3 and 40/5
    QCOMPARE(s.skipped.size(), size_t(2));
    QCOMPARE(s.skipped[0].labels,
             (std::map<std::string, std::string>{{"d_model", "24"}, {"heads", "5"}}));
    QCOMPARE(s.skipped[0].reason,
             std::string("model.heads[0]: 5 heads do not divide d_model 24 (layer 0); "
                         "model.heads[1]: 5 heads do not divide d_model 24 (layer 1)"));
    QCOMPARE(s.skipped[1].labels.at("d_model"), std::string("40"));
    QCOMPARE(s.skipped[1].labels.at("heads"), std::string("3"));

    // An explicit head dimension lifts the rule.
    s.axes.push_back({"head_dim", {number(8)}});
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(4));
    QVERIFY(s.skipped.empty());
}

void TestSession::expandSweepNamesEveryBadLayerOfASchedule()
{
    Session s;
    s.base = smallConfig();
    s.base.model.dModel = 24;
    s.axes.push_back({"heads", {intList({2, 5, 6, 7})}});
    expandSweep(s);
    QVERIFY(s.runs.empty());
    QCOMPARE(s.skipped.size(), size_t(1));
    QCOMPARE(s.skipped[0].labels.at("heads"), std::string("[2,5,6,7]"));
    QCOMPARE(s.skipped[0].reason,
             std::string("model.heads[1]: 5 heads do not divide d_model 24 (layer 1); "
                         "model.heads[3]: 7 heads do not divide d_model 24 (layer 3)"));
}

void TestSession::expandSweepKeepsResultsOfUnchangedRuns()
{
    Session s;
    s.base = smallConfig();
    s.axes.push_back({"heads", {number(1), number(2)}});
    s.axes.push_back({"lr", {number(1e-3)}});
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(2));
    s.runs[1].result.status = RunStatus::Done;
    s.runs[1].result.test = {{100, 0.5}};
    s.runs[1].result.metrics["final_test_loss"] = 0.5;

    // A user adds a learning rate and a head count: the finished run is kept, not rerun.
    s.axes[0].values.insert(s.axes[0].values.begin(), number(3));
    s.axes[1].values.push_back(number(3e-3));
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(6));
    int kept = 0;
    for (const auto &run : s.runs) {
        if (run.labels.at("heads") == "2" && run.labels.at("lr") == "0.001") {
            QCOMPARE(run.result.status, RunStatus::Done);
            QCOMPARE(run.result.metrics.at("final_test_loss"), 0.5);
            ++kept;
        } else {
            QCOMPARE(run.result.status, RunStatus::Queued);
        }
    }
    QCOMPARE(kept, 1);
    QCOMPARE(pendingRuns(s).size(), size_t(5));

    // Changing the base (every run's config) keeps nothing.
    s.base.evalEvery = 10;
    expandSweep(s);
    QCOMPARE(pendingRuns(s).size(), size_t(6));
}

void TestSession::expandSweepSeedAxisSetsBothSeeds()
{
    Session s;
    s.base = smallConfig();
    s.base.initSeed = 1;
    s.base.dataSeed = 2;
    s.axes.push_back({"seed", {seed(7), seed(8)}});
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(2));
    QCOMPARE(s.runs[1].config.initSeed, uint64_t(8));
    QCOMPARE(s.runs[1].config.dataSeed, uint64_t(8));
}

// A stabilizer (by its key) or a one-key model row (model.KEY) is a sweep axis: its values are
// read by the field's own row and set on each run; left off, nothing of a run's text changes.
void TestSession::stabilizersAndModelFieldsAreSweepAxes()
{
    const std::string yaml = std::string(kValidHead) +
                             "  model: {d_model: 16, heads: 2, layers: 1}\n"
                             "  stabilizers: {z_loss: 1e-4}\n"
                             "sweep:\n"
                             "  qk_norm: [off, gain]\n"
                             "  stabilizers.softcap: [0, 30]\n"
                             "  model.bias: [false, true]\n";
    Session s = sessionFromYaml(yaml, "stab.yaml");
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(8));
    std::set<std::string> seen;
    for (const auto &run : s.runs) {
        const auto &st = run.config.stabilizers;
        QCOMPARE(st.zLoss, 1e-4);
        QCOMPARE(run.labels.at("qk_norm"), std::string(toString(st.qkNorm)));
        QCOMPARE(run.labels.at("stabilizers.softcap"), std::string(st.softcap > 0 ? "30" : "0"));
        QCOMPARE(run.labels.at("model.bias"),
                 std::string(run.config.model.bias ? "true" : "false"));
        seen.insert(yaml::canonicalYaml(run.config));
    }
    QCOMPARE(seen.size(), size_t(8));
    // Written and read back, the axes and the runs are the same.
    Session again = sessionFromYaml(sessionToYaml(s), "again.yaml");
    expandSweep(again);
    QCOMPARE(again.runs.size(), s.runs.size());
    for (size_t i = 0; i < s.runs.size(); ++i)
        QCOMPARE(yaml::canonicalYaml(again.runs[i].config), yaml::canonicalYaml(s.runs[i].config));
    // All off: the block is not written, so a run's text (and its file name) is as before.
    RunConfig plain = smallConfig();
    QVERIFY(yaml::canonicalYaml(plain).find("stabilizers") == std::string::npos);
    plain.stabilizers.qkNorm = QkNorm::On;
    QVERIFY(yaml::canonicalYaml(plain).find("stabilizers: {qk_norm: on") != std::string::npos);
    // The reasons a combination cannot be built.
    RunConfig bad = smallConfig();
    bad.stabilizers.sigmaReparam = SigmaReparam::All;
    QVERIFY(validate(bad).find("model.zero_init_outputs") != std::string::npos);
}

void TestSession::expandSweepCombinationsAndLogspace()
{
    const std::string yaml = std::string(kValidHead) +
                             "  model: {d_model: 96, heads: 1, layers: 2}\n"
                             "sweep:\n"
                             "  lr: {logspace: {from: 3.0e-5, to: 3.0e-3, count: 5}}\n"
                             "  combinations:\n"
                             "    - {heads: 12, d_model: 384}\n"
                             "    - {heads: 2, d_model: 24}\n"
                             "    - {heads: 5, d_model: 24}\n"
                             "    - {heads: 2, d_model: 24}\n";
    Session s = sessionFromYaml(yaml, "combinations.yaml");
    QCOMPARE(s.axes.size(), size_t(1));
    const auto &lrs = s.axes[0].values;
    QCOMPARE(lrs.size(), size_t(5));
    QCOMPARE(lrs.front().number, 3e-5);
    QCOMPARE(lrs.back().number, 3e-3);
    QVERIFY(std::abs(lrs[2].number - 3e-4) < 1e-15);
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(10));
    QCOMPARE(s.runs[0].labels, (std::map<std::string, std::string>{
                                   {"d_model", "384"}, {"heads", "12"}, {"lr", "3e-05"}}));
    QCOMPARE(s.runs[0].config.model.heads, (std::vector<int64_t>{12, 12}));
    // The non-divisible combination and the repeated one are skipped with why.
    QCOMPARE(s.skipped.size(), size_t(10));
    QVERIFY(s.skipped[0].reason.find("5 heads do not divide d_model 24") != std::string::npos);
    QCOMPARE(s.skipped[5].reason, std::string("the same configuration as run 5"));
    // The combinations survive a save.
    compareSessions(s, sessionFromYaml(sessionToYaml(s), "again.yaml"));
    // The generator survives a save as the generator, as it was written (issue 52 item 7); a list
    // edited since is saved as the list.
    const std::string saved = sessionToYaml(s);
    QVERIFY2(saved.find("lr: {logspace: {from: 3.0e-5, to: 3.0e-3, count: 5}}") !=
                 std::string::npos,
             saved.c_str());
    QCOMPARE(sessionFromYaml(saved, "again.yaml").axes[0].form, s.axes[0].form);
    s.axes[0].values[1].number = 1e-4;
    const std::string edited = sessionToYaml(s);
    QVERIFY2(edited.find("logspace") == std::string::npos, edited.c_str());
    QVERIFY2(edited.find("lr: [3.0e-05, 1.0e-04, ") != std::string::npos, edited.c_str());
}

void TestSession::headScheduleGenerators()
{
    QCOMPARE(headSchedule(HeadScheme::Ascending, 180, 4, 768),
             (std::vector<int64_t>{12, 24, 48, 96}));
    QCOMPARE(headSchedule(HeadScheme::Descending, 180, 4, 768),
             (std::vector<int64_t>{96, 48, 24, 12}));
    QCOMPARE(headSchedule(HeadScheme::Constant, 180, 4, 768),
             (std::vector<int64_t>{48, 48, 48, 48}));
    QCOMPARE(headSchedule(HeadScheme::Ascending, 45, 4, 768), (std::vector<int64_t>{3, 6, 12, 24}));
    QCOMPARE(headSchedule(HeadScheme::Constant, 90, 4, 768),
             (std::vector<int64_t>{24, 24, 24, 24}));
    QCOMPARE(headSchedule(HeadScheme::Constant, 90, 4, 0), (std::vector<int64_t>{23, 23, 23, 23}));

    const std::string yaml =
        std::string(kValidHead) +
        "  model: {d_model: 768, heads: 1, layers: 4}\n"
        "sweep:\n"
        "  head_schedule: {scheme: [ascending, constant, descending], total: [45, 180]}\n";
    Session s = sessionFromYaml(yaml, "schedules.yaml");
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(6));
    QCOMPARE(s.runs[1].labels.at("head_schedule"), std::string("ascending:180"));
    QCOMPARE(s.runs[1].config.model.heads, (std::vector<int64_t>{12, 24, 48, 96}));
    QCOMPARE(s.runs[5].config.model.heads, (std::vector<int64_t>{96, 48, 24, 12}));
    compareSessions(s, sessionFromYaml(sessionToYaml(s), "again.yaml"));
    // Saved as the generator it was given as, not as its six schedules.
    QVERIFY2(sessionToYaml(s).find(
                 "head_schedule: {scheme: [ascending, constant, descending], total: [45, 180]}") !=
                 std::string::npos,
             sessionToYaml(s).c_str());
}

void TestSession::pendingRunsSkipsFinishedRuns()
{
    Session s;
    s.base = smallConfig();
    const RunStatus statuses[] = {RunStatus::Done,    RunStatus::Queued, RunStatus::Diverged,
                                  RunStatus::Running, RunStatus::Failed, RunStatus::Paused,
                                  RunStatus::Stopped};
    for (RunStatus status : statuses) {
        SessionRun run;
        run.config = s.base;
        run.result.status = status;
        s.runs.push_back(run);
    }
    QCOMPARE(pendingRuns(s), (std::vector<int>{1, 3, 5, 6}));
    // Resuming from a saved file gives the same answer.
    QCOMPARE(pendingRuns(sessionFromYaml(sessionToYaml(s), "resume.yaml")),
             (std::vector<int>{1, 3, 5, 6}));
}

void TestSession::everyPresetParsesAndExpands()
{
    const auto presets = builtinPresets();
    QStringList names;
    for (const auto &preset : presets) {
        names << QString::fromStdString(preset.name);
        Session s = loadPreset(preset.name);
        QCOMPARE(s.name, preset.name);
        QVERIFY2(!preset.description.empty() &&
                     preset.description.find("broken") == std::string::npos,
                 preset.description.c_str());
        // A boundary search has runs once its round 0 is planned: every configuration × the
        // initial points × the replicates.
        if (s.search) {
            QVERIFY2(s.search->probes.empty(), preset.name.c_str());
            const int planned = planSearchRound(s);
            QCOMPARE(planned, int(sweepConfigurations(s).size()) * s.search->initialPoints *
                                  s.search->replicates);
        }
        expandSweep(s);
        QVERIFY2(!s.runs.empty(), preset.name.c_str());
        QVERIFY2(s.skipped.empty(), preset.name.c_str());
        QCOMPARE(pendingRuns(s).size(), s.runs.size());
    }
    for (const char *required :
         {"addition-fig2-grid", "addition-fig4-lr-scan", "quick-demo", kDefaultPreset})
        QVERIFY2(names.contains(required), required);
}

void TestSession::paperPresetsFollowTheProtocol()
{
    Session grid = loadPreset("addition-fig2-grid");
    expandSweep(grid);
    QCOMPARE(grid.runs.size(), size_t(25));
    for (const auto &run : grid.runs) {
        const RunConfig &c = run.config;
        QCOMPARE(c.lr, 1e-3);
        QCOMPARE(c.evalEvery, int64_t(100));
        QCOMPARE(c.model.layers(), int64_t(2));
        QCOMPARE(c.phases.size(), size_t(2));
        QCOMPARE(c.phases[0].objective, Objective::NextToken);
        QCOMPARE(c.phases[0].steps, int64_t(500));
        QCOMPARE(c.phases[0].batchSize, int64_t(32));
        QVERIFY(!c.phases[0].useScannedLr);
        QCOMPARE(c.phases[0].lr, 5e-4);
        QCOMPARE(c.phases[1].objective, Objective::Answer);
        QCOMPARE(c.phases[1].steps, int64_t(30000));
        QCOMPARE(c.phases[1].batchSize, int64_t(64));
        QVERIFY(c.phases[1].useScannedLr);
        QCOMPARE(c.phases[1].optimizer.kind, OptimizerKind::Adam);
        QCOMPARE(c.phases[1].optimizer.weightDecay, 0.0);
        QCOMPARE(c.phases[1].schedule.kind, ScheduleKind::Constant);
    }
    Session scan = loadPreset("addition-fig4-lr-scan");
    expandSweep(scan);
    QCOMPARE(scan.runs.size(), size_t(60));
    std::set<std::pair<int64_t, int64_t>> configs;
    std::set<double> lrs;
    for (const auto &run : scan.runs) {
        configs.insert({run.config.model.heads[0], run.config.model.dModel});
        lrs.insert(run.config.lr);
    }
    QCOMPARE(configs, (std::set<std::pair<int64_t, int64_t>>{
                          {12, 384}, {12, 24}, {12, 96}, {2, 384}, {6, 384}, {2, 24}}));
    QCOMPARE(lrs.size(), size_t(10));
    QCOMPARE(*lrs.begin(), 3e-5);
    QCOMPARE(*lrs.rbegin(), 3e-3);
}

void TestSession::unknownPresetSuggestsANearName()
{
    try {
        loadPreset("quick-dem");
        QFAIL("no error");
    } catch (const SessionError &e) {
        QVERIFY2(std::string(e.what()).find("did you mean 'quick-demo'?") != std::string::npos,
                 e.what());
    }
}

void TestSession::exportCsvWritesRunsAndCurves()
{
    QTemporaryDir dir;
    const Session s = fullSession();
    const CsvExportSummary summary = exportSessionCsv(s, dir.filePath("csv").toStdString());
    QCOMPARE(summary.runs, size_t(3));
    QCOMPARE(summary.points, size_t(6 + 3 + 2));
    const std::string runs = readFile(QString::fromStdString(summary.runsPath));
    const std::string curves = readFile(QString::fromStdString(summary.curvesPath));
    QCOMPARE(std::count(runs.begin(), runs.end(), '\n'), 4L);
    QCOMPARE(std::count(curves.begin(), curves.end(), '\n'), 12L);
    QVERIFY(runs.rfind("run,run_id,label_d_model,label_heads,label_lr,configuration,task,", 0) ==
            0);
    QVERIFY2(runs.find("\"[1,3]\"") != std::string::npos,
             runs.c_str()); // labels with commas are quoted
    QVERIFY(curves.find("0,train,3,0.3333333333333333\n") != std::string::npos);
    QVERIFY(curves.find("0,test_digit_0,7,0.2\n") != std::string::npos);
}

// No cell of an export is a formula (issue 74): a shared session's labels, device, host,
// command, provenance, messages and metric names reach runs.csv and curves.csv, and a spreadsheet
// evaluates a cell that starts with =, +, -, @, a tab or a carriage return. Such a text gets a
// leading apostrophe (OWASP); numbers, negative ones too, stay as they are.
void TestSession::exportedCellsAreNeverFormulas()
{
    QCOMPARE(csvField("=HYPERLINK(\"http://x/?leak=\"&A1,\"Click\")"),
             std::string("\"'=HYPERLINK(\"\"http://x/?leak=\"\"&A1,\"\"Click\"\")\""));
    QCOMPARE(csvField("+cmd|' /C calc'!A0"), std::string("\"'+cmd|' /C calc'!A0\""));
    QCOMPARE(csvField("@SUM(A1)"), std::string("\"'@SUM(A1)\""));
    QCOMPARE(csvField("-2+3"), std::string("\"'-2+3\""));
    QCOMPARE(csvField("\tx"), std::string("\"'\tx\""));
    QCOMPARE(csvField("\r=1"), std::string("\"'\r=1\""));
    for (const char *number : {"-1", "-0.5", "+3", "-1e-3", "-inf", "12"})
        QCOMPARE(csvField(number), std::string(number));
    QCOMPARE(csvField("a=b"), std::string("a=b")); // only the first character starts a formula

    QTemporaryDir dir;
    Session s = fullSession();
    s.runs[0].labels["d_model"] = "=1+1";
    s.runs[0].result.device = "+cmd|' /C calc'!A0";
    s.runs[0].result.message = "@evil";
    s.runs[0].result.provenance["-x"] = "=2";
    s.runs[0].result.extra["=metric"] = {{1, 0.5}};
    const CsvExportSummary summary = exportSessionCsv(s, dir.filePath("csv").toStdString());
    const std::string runs = readFile(QString::fromStdString(summary.runsPath));
    const std::string curves = readFile(QString::fromStdString(summary.curvesPath));
    for (const std::string &text : {runs, curves}) {
        std::istringstream lines(text);
        std::string line;
        while (std::getline(lines, line)) {
            // Every cell (split at commas outside quotes; a quoted cell's text starts after its
            // quote) starts otherwise than a formula does.
            bool quoted = false;
            for (size_t i = 0; i < line.size(); ++i) {
                if (i == 0 || (line[i - 1] == ',' && !quoted)) {
                    const size_t first = line[i] == '"' ? i + 1 : i;
                    QVERIFY2(first >= line.size() || std::string_view("=+@").find(line[first]) ==
                                                         std::string_view::npos,
                             line.c_str());
                }
                if (line[i] == '"') quoted = !quoted;
            }
        }
    }
    QVERIFY2(runs.find("\"'=1+1\"") != std::string::npos, runs.c_str());
    QVERIFY2(runs.find("\"'+cmd|' /C calc'!A0\"") != std::string::npos, runs.c_str());
    QVERIFY2(runs.find("\"'@evil\"") != std::string::npos, runs.c_str());
    QVERIFY2(runs.find("\"'=2\"") != std::string::npos, runs.c_str());
    QVERIFY2(curves.find("\"'=metric\"") != std::string::npos, curves.c_str());
}

// Integer options read decimal, as users type them (issue 74): CLI11 alone read "010" as 8 and
// "0x10" as 16, so `keep --step 000000020` (a checkpoint file's digits) marked step 16 and `prune`
// then deleted step 20; a value beyond 64 bits was clamped. A bounded option is refused in the
// same words whichever CLI11 the build found (CLI::Range said "not in range 1 to 64" with Debian's,
// "[1 - 64]" with the GPU machine's).
void TestSession::integerOptionsReadDecimal()
{
    QTemporaryDir dir;
    const QString session = dir.filePath("s.yaml");
    for (const auto &preset : builtinPresets())
        if (preset.name == "quick-demo") writeFile(session, preset.yaml);
    CliResult result = runCli({"validate", session, "--plan", "010"});
    QCOMPARE(result.exitCode, 0);
    QVERIFY2(result.out.contains("plan on 10 GPUs"), qPrintable(result.out));
    result = runCli({"validate", session, "--plan", "0004"});
    QVERIFY2(result.out.contains("plan on 4 GPUs"), qPrintable(result.out));
    for (const char *typed : {"0x10", "0b11", "3abc", "1e3", ""}) {
        result = runCli({"validate", session, "--plan", typed});
        QCOMPARE(result.exitCode, 2);
        QVERIFY2(result.err.contains(QString("--plan: expected a whole number in decimal digits, "
                                             "got '%1'")
                                         .arg(typed)),
                 qPrintable(result.err));
    }
    result = runCli({"keep", session, "--run", "0", "--step", "000000020,99999999999999999999"});
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.contains("--step: 99999999999999999999 is out of range: from "
                                 "-9223372036854775808 to 9223372036854775807"),
             qPrintable(result.err));
    result = runCli({"validate", session, "--plan", "65"});
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.contains("--plan: 65 is out of range: from 1 to 64"),
             qPrintable(result.err));
    result = runCli({"run", session, "--progress-every", "0.01"});
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.contains("--progress-every: 0.01 is out of range: from 0.05 to 86400"),
             qPrintable(result.err));
}

// A command whose output cannot be written fails (issue 74): `schema > /dev/full` exited 0 with
// an empty file, as did summary and validate.
void TestSession::aFullStreamIsAFailure()
{
    if (!QFileInfo::exists("/dev/full")) QSKIP("no /dev/full on this system");
    QTemporaryDir dir;
    const QString session = dir.filePath("s.yaml");
    for (const auto &preset : builtinPresets())
        if (preset.name == "quick-demo") writeFile(session, preset.yaml);
    for (const QStringList &args : {QStringList{"schema"}, QStringList{"validate", session},
                                    QStringList{"summary", session}, QStringList{"presets"}}) {
        QProcess process;
        process.setStandardOutputFile("/dev/full");
        process.start(QStringLiteral(HEADLAB_CLI_PATH), args);
        QVERIFY(process.waitForFinished(60000));
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QVERIFY2(process.exitCode() != 0, qPrintable(args.join(' ')));
        QVERIFY2(err.contains("could not write the output (No space left on device)"),
                 qPrintable(args.join(' ') + ": " + err));
    }
}

// The run filter is exact (issue 74): whole numbers compare as integers (five 64-bit seeds that
// are one double all matched seed=18446744073709551610, and seed!=… matched none), == is =, a
// number matches its other spellings, and a value no run has is said, not shown as 0 runs.
void TestSession::theRunFilterIsExact()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("seeds.yaml");
    writeFile(path, std::string(kValidHead) +
                        "  lr: 1.0e-3\n"
                        "sweep:\n  heads: [1, 3]\n  seed: [18446744073709551610, "
                        "18446744073709551611, 18446744073709551612, 18446744073709551613, "
                        "18446744073709551614]\n");
    Session s = loadSession(path.toStdString());
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(10));
    const auto labels = configurationLabels(s);
    auto shown = [&](const std::string &text) {
        const RunFilter f = RunFilter::parse(text, s);
        if (!f.error.empty()) return -1;
        int n = 0;
        for (size_t i = 0; i < s.runs.size(); ++i) n += f.accepts(s, i, labels[i]) ? 1 : 0;
        return n;
    };
    QCOMPARE(shown("seed=18446744073709551610"), 2);
    QCOMPARE(shown("seed!=18446744073709551610"), 8);
    QCOMPARE(shown("seed>18446744073709551612"), 4);
    QCOMPARE(shown("heads==1"), 5);
    QCOMPARE(shown("heads=01"), 5);
    QCOMPARE(shown("heads=1.0"), 5);
    const RunFilter none = RunFilter::parse("heads=7", s);
    QVERIFY(none.error.empty());
    QCOMPARE(QString::fromStdString(none.note),
             QString("no run has heads = '7' (its values: 1, 3)"));
    QVERIFY(RunFilter::parse("heads=3", s).note.empty());
}

// Issue 78 item 3: a crowded sweep made readable. Ten runs with known test curves: best:K and
// worst:K by the final test loss or any STAT(CURVE), after the per-run terms and in the order
// typed; !outliers drops a blown-up run and a NaN one but keeps a run without a curve; a curve
// where higher is better (test_accuracy) ranks the other way; mistakes are said.
void TestSession::theRunFilterRanksAndFencesRuns()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("ten.yaml");
    writeFile(path, std::string(kValidHead) +
                        "  lr: 1.0e-3\nsweep:\n  heads: [1, 3]\n  seed: [0, 1, 2, 3, 4]\n");
    Session s = loadSession(path.toStdString());
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(10));
    // Run i: its test loss falls from 3 to final[i] over 20 evaluations; its lowest is reached
    // half-way for the odd runs, which rise again by 0.5; accuracy 1 − final / 4.
    const double finals[10] = {0.9, 0.1, 0.5, 0.3, 50.0, 0.7, NAN, 0.2, 0.4, 0.6};
    for (size_t i = 0; i < 10; ++i) {
        RunResult &r = s.runs[i].result;
        r.status = RunStatus::Done;
        if (i == 9) continue; // no curve at all: queued, say
        for (int k = 0; k < 20; ++k) {
            double v = 3 + (finals[i] - 3) * std::min(1.0, k / 9.5);
            if (i % 2 == 1 && k >= 10 && std::isfinite(finals[i])) v += 0.5 * (k - 10) / 9.0;
            if (k == 19) v = finals[i] + (i % 2 == 1 ? 0.5 : 0.0);
            r.test.push_back({100 * k, v});
            r.extra["test_accuracy"].push_back({100 * k, 1 - v / 4});
        }
        r.metrics["final_test_loss"] = r.test.back().value;
    }
    auto chosen = [&](const std::string &filterText) { return selectedBy(s, filterText); };
    // final test loss: 8 0.4, 2 0.5, 1 0.6, 7 0.7, 3 0.8, 0 0.9, 5 1.2, 4 50 (the odd runs +0.5),
    // 6 NaN (no rank), 9 none
    QCOMPARE(chosen("best:3"), QString("1 2 8"));
    QCOMPARE(chosen("best:3:final(test_loss)"), chosen("best:3"));
    QCOMPARE(chosen("best:3:final_test_loss"), chosen("best:3"));
    QCOMPARE(chosen("worst:2"), QString("4 5"));
    // the lowest over each curve: the odd runs reach their final less 0.5 before rising
    QCOMPARE(chosen("best:3:min(test_loss)"), QString("1 3 7"));
    QCOMPARE(chosen("min(test_loss)<0.35"), QString("1 3 7"));
    // heads is the first axis: runs 0-4 have heads 1; per-run terms first, wherever typed
    QCOMPARE(chosen("heads=1 best:2"), QString("1 2"));
    QCOMPARE(chosen("best:2 heads=1"), QString("1 2"));
    QCOMPARE(chosen("best:3 best:1"), QString("8"));
    // accuracy: higher is better, so best is the highest; best(...) of it its highest value
    QCOMPARE(chosen("best:2:final(test_accuracy)"), QString("2 8"));
    QCOMPARE(chosen("worst:1:best(test_accuracy)"), QString("4"));
    QCOMPARE(chosen("best:1:best(test_accuracy)"), QString("1"));
    // mean over the last tenth (2 of 20 points): run 1's last two are 0.544 and 0.6
    const auto value = runValue(s.runs[1].result, "mean_last(test_loss)");
    QVERIFY(value && std::fabs(*value - (s.runs[1].result.test[18].value + 0.6) / 2) < 1e-12);
    QVERIFY(!runValue(s.runs[9].result, "final(test_loss)"));
    // outliers: run 4 (50) beyond the far fence, run 6 (NaN) not a number; run 9 has no value
    QCOMPARE(chosen("!outliers"), QString("0 1 2 3 5 7 8 9"));
    QCOMPARE(chosen("!outliers best:20"), QString("0 1 2 3 5 7 8"));
    QCOMPARE(chosen("!outliers:final(test_accuracy)"), QString("0 1 2 3 5 7 8 9"));
    // mistakes, said with the term
    QVERIFY(chosen("best:0").contains("'best:0': expected best:K or best:K:KEY"));
    QVERIFY(chosen("worst:many").contains("expected worst:K"));
    QVERIFY2(chosen("best:2:mode(test_loss)")
                 .contains("no statistic 'mode' (final, min, max, best, "
                           "mean_last)"),
             qPrintable(chosen("best:2:mode(test_loss)")));
    QVERIFY(chosen("!outliers:").contains("expected !outliers or !outliers:KEY"));
    QVERIFY(chosen("best:2:loss").contains("no axis or metric 'loss'"));
    // the statistics' table is every reader's: each name parses
    for (const auto &row : curveStatisticTable())
        QVERIFY(!chosen(std::string("best:1:") + row.name + "(test_loss)").startsWith("error"));
}

// Two writers of one session's notes and tags (the app, and `headlab-cli note` or the Python
// package while the app has the file open): a three-way merge from what both last agreed on keeps
// every edit of either.
void TestSession::notesAndTagsWrittenByTwoMergeWithoutLoss()
{
    const Annotation base{"first look", {"lesson", "cpu"}};
    // One side changed it: that side's.
    QCOMPARE(mergeAnnotation(base, base, Annotation{"second look", {"lesson", "cpu"}}),
             (Annotation{"second look", {"lesson", "cpu"}}));
    QCOMPARE(mergeAnnotation(base, Annotation{"", {"cpu"}}, base), (Annotation{"", {"cpu"}}));
    // Tags: each side's additions stay, each side's removals hold, ours in order first.
    QCOMPARE(mergeAnnotation(base, Annotation{"first look", {"lesson", "cpu", "outlier"}},
                             Annotation{"first look", {"cpu", "check"}}),
             (Annotation{"first look", {"cpu", "outlier", "check"}}));
    // A note both changed: both kept, ours first; one side cleared it: the other's edit stays.
    QCOMPARE(
        mergeAnnotation(base, Annotation{"ours", base.tags}, Annotation{"theirs", base.tags}).note,
        std::string("ours\n\ntheirs"));
    QCOMPARE(mergeAnnotation(base, Annotation{"", base.tags}, Annotation{"theirs", base.tags}).note,
             std::string("theirs"));
    QCOMPARE(mergeAnnotation(base, Annotation{"same", {}}, Annotation{"same", {}}),
             (Annotation{"same", {}}));
    // Over runs by run_id: one only either side annotated is kept, one both emptied is dropped.
    const Annotations before{base, {{"aaaa", {"slow", {}}}, {"bbbb", {"", {"check"}}}}};
    Annotations ours = before, theirs = before;
    ours.runs["cccc"] = {"ours alone", {}};
    ours.runs.erase("bbbb");
    theirs.runs["dddd"] = {"", {"late"}};
    theirs.runs.erase("bbbb");
    theirs.session.tags.push_back("shared");
    const Annotations merged = mergeAnnotations(before, ours, theirs);
    QCOMPARE(merged.session, (Annotation{"first look", {"lesson", "cpu", "shared"}}));
    QCOMPARE(merged.runs.size(), size_t(3));
    QCOMPARE(merged.runs.at("aaaa").note, std::string("slow"));
    QCOMPARE(merged.runs.at("cccc").note, std::string("ours alone"));
    QCOMPARE(merged.runs.at("dddd").tags, (std::vector<std::string>{"late"}));
    QVERIFY(!merged.runs.count("bbbb"));
}

// Issue 78 item 2: a session's and its runs' notes and tags. They load (an older file without
// them too), are written back unchanged, follow a run by its run_id, select runs in the filter
// (tag=T, tag!=T), are columns of runs.csv, are edited by `headlab-cli note` on a stored session
// and an export; a tag that is not one word and an annotation of no run_id are located errors.
void TestSession::notesAndTagsAreKeptAndSelectBy()
{
    QTemporaryDir dir;
    const std::string base = std::string(kValidHead) + "  lr: 1.0e-3\n";
    const std::string sweep = "sweep:\n  heads: [1, 3]\n  seed: [0, 1]\n";
    // Without them, as every earlier file: nothing.
    Session plain = sessionFromYaml(base + sweep, "plain.yaml");
    expandSweep(plain);
    QVERIFY(plain.annotation.empty() && plain.runAnnotations.empty());
    QVERIFY(sessionToYaml(plain).find("annotations") == std::string::npos);
    const std::string id1 = runId(plain.runs[1].config), id3 = runId(plain.runs[3].config);
    const std::string text = base.substr(0, base.find("experiment:")) +
                             "note: \"the contrast: 12 heads learn at 7e-3\"\n"
                             "tags: [lesson, cpu, lesson]\n"
                             "annotations:\n"
                             "  \"" +
                             id1 +
                             "\": {note: slow start, tags: [check]}\n"
                             "  \"" +
                             id3 +
                             "\": {tags: [check, outlier]}\n"
                             "  \"0123456789abcdef\": {note: a run to come}\n" +
                             base.substr(base.find("experiment:")) + sweep;
    Session s = sessionFromYaml(text, "annotated.yaml");
    expandSweep(s);
    QCOMPARE(s.annotation.note, std::string("the contrast: 12 heads learn at 7e-3"));
    QCOMPARE(s.annotation.tags, (std::vector<std::string>{"lesson", "cpu"})); // each once
    QCOMPARE(runAnnotation(s, 1).note, std::string("slow start"));
    QVERIFY(runAnnotation(s, 3).hasTag("outlier") && runAnnotation(s, 0).empty());
    QCOMPARE(s.runAnnotations.size(), size_t(3)); // the one of no run yet is kept
    // Written back and read again: the same.
    Session again = sessionFromYaml(sessionToYaml(s), "again.yaml");
    QCOMPARE(sessionToYaml(again), sessionToYaml(s));
    QCOMPARE(again.runAnnotations.at("0123456789abcdef").note, std::string("a run to come"));
    // The run filter selects by tag.
    auto chosen = [&](const std::string &filterText) { return selectedBy(s, filterText); };
    QCOMPARE(chosen("tag=check"), QString("1 3"));
    QCOMPARE(chosen("tag!=outlier"), QString("0 1 2"));
    QCOMPARE(chosen("tag=check heads=3"), QString("3"));
    QVERIFY(chosen("tag<3").contains("tag=T or tag!=T"));
    QVERIFY(chosen("tag=a,b").contains("tag=T or tag!=T"));
    // runs.csv: the tags (space-separated) and the note, last.
    const CsvExportSummary csv = exportSessionCsv(s, dir.filePath("csv").toStdString());
    QFile runs(QString::fromStdString(csv.runsPath));
    QVERIFY(runs.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(runs.readAll()).trimmed().split('\n');
    QVERIFY2(lines[0].endsWith(",message,tags,note"), qPrintable(lines[0]));
    QVERIFY2(lines[2].endsWith(",check,slow start"), qPrintable(lines[2]));
    QVERIFY2(lines[4].endsWith(",check outlier,"), qPrintable(lines[4]));
    // Located errors.
    for (const auto &[bad, where] :
         {std::pair{std::string("tags: [lesson, \"two words\"]\n"), std::string(":2:")},
          std::pair{std::string("annotations:\n  \"zz\": {note: x}\n"), std::string(":3:")},
          std::pair{std::string("annotations:\n  \"0123456789abcdef\": {notes: x}\n"),
                    std::string("unknown key 'notes'")}}) {
        try {
            sessionFromYaml("schema_version: 1\n" + bad + base.substr(base.find("experiment:")),
                            "bad.yaml");
            QFAIL(bad.c_str());
        } catch (const SessionError &e) {
            QVERIFY2(std::string(e.what()).find("bad.yaml") != std::string::npos &&
                         std::string(e.what()).find(where) != std::string::npos,
                     e.what());
        }
    }
    // headlab-cli note: a stored session's run and the session itself, then shown.
    const QString stored = dir.filePath("stored.yaml");
    writeFile(stored, base + sweep);
    QCOMPARE(runCli({"run", stored, "--threads", "1"}).exitCode, 0);
    CliResult r = runCli(
        {"note", stored, "--run", "2", "--tag", "outlier,check", "--text", "diverged at step 3"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    r = runCli({"note", stored, "--tag", "lesson", "--text", "classroom"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    r = runCli({"note", stored, "--run", "2", "--untag", "check"});
    QVERIFY2(r.out.contains("tags: outlier") && r.out.contains("note: diverged at step 3"),
             qPrintable(r.out));
    Session loaded = loadSession(stored.toStdString());
    expandSweep(loaded);
    QCOMPARE(runAnnotation(loaded, 2).tags, std::vector<std::string>{"outlier"});
    QCOMPARE(loaded.annotation.note, std::string("classroom"));
    QCOMPARE(int(loaded.runs.size()), 4);
    for (const auto &run : loaded.runs) QCOMPARE(run.result.status, RunStatus::Done); // kept
    r = runCli({"note", stored, "--run", "2", "--tag", "two words"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("'two words': a tag is one word"), qPrintable(r.err));
    r = runCli({"note", stored, "--run", "99"});
    QCOMPARE(r.exitCode, 2);
    r = runCli({"export-csv", stored, "-o", dir.filePath("f"), "--filter", "tag=outlier"});
    QVERIFY2(r.exitCode == 0 && r.out.contains("(1 runs of 4 by the filter)"), qPrintable(r.out));
    // An export (runs inline) is written whole.
    const QString exported = dir.filePath("export.yaml");
    QCOMPARE(runCli({"export-yaml", stored, "-o", exported}).exitCode, 0);
    QCOMPARE(runCli({"note", exported, "--run", "0", "--tag", "first"}).exitCode, 0);
    Session inline_ = loadSession(exported.toStdString());
    expandSweep(inline_);
    QVERIFY(runAnnotation(inline_, 0).hasTag("first") &&
            runAnnotation(inline_, 2).hasTag("outlier"));
    QCOMPARE(inline_.annotation.note, std::string("classroom"));
}

void TestSession::cliValidateExitCodes()
{
    QTemporaryDir dir;
    const QString good = dir.filePath("good.yaml");
    writeFile(good, builtinPresets().front().yaml);
    CliResult result = runCli({"validate", good});
    QCOMPARE(result.exitCode, 0);
    QVERIFY2(result.out.contains("valid session"), qPrintable(result.out));

    const QString bad = dir.filePath("bad.yaml");
    writeFile(bad, std::string(kValidHead) + "  model:\n    d_modle: 48\n");
    result = runCli({"validate", bad});
    QCOMPARE(result.exitCode, 2);
    QCOMPARE(result.err.trimmed(),
             bad +
                 ":6:5: experiment.model.d_modle: unknown key 'd_modle'; did you mean 'd_model'?");

    result = runCli({"validate", dir.filePath("missing.yaml")});
    QCOMPARE(result.exitCode, 2);
    QVERIFY(result.err.contains("cannot open"));

    result = runCli({"validate"});
    QCOMPARE(result.exitCode, 2);

    // A sweep with combinations that cannot run is valid; validate lists them.
    const QString skipping = dir.filePath("skipping.yaml");
    writeFile(skipping, std::string(kValidHead) + "sweep:\n  d_model: [24]\n  heads: [1, 5]\n");
    result = runCli({"validate", skipping});
    QCOMPARE(result.exitCode, 0);
    QVERIFY2(result.out.contains("1 runs") && result.out.contains("1 skipped") &&
                 result.out.contains("5 heads do not divide d_model 24"),
             qPrintable(result.out));

    // --plan N: how run --device all would train the grid on four GPUs, without them. The five
    // 384-wide runs train one an ensemble; a step costs at least the per-step floor, so the three
    // narrowest ensembles of five runs share one GPU, the busiest: 27.1 % of the work.
    const QString grid = dir.filePath("grid.yaml");
    for (const auto &preset : builtinPresets())
        if (preset.name == "addition-fig2-grid") writeFile(grid, preset.yaml);
    result = runCli({"validate", grid, "--plan", "4"});
    QCOMPARE(result.exitCode, 0);
    QVERIFY2(result.out.contains("plan on 4 GPUs: 25 runs in 9 ensembles") &&
                 result.out.contains("the busiest GPU has 27.1 % of the work (3.69x one GPU") &&
                 result.out.contains("cuda:1, 27.1 %: 5 runs of d_model 96, heads 1, 2, 3, 6, 12 "
                                     "(9.2 %); 5 runs of d_model 48"),
             qPrintable(result.out));
    result = runCli({"validate", grid, "--plan", "0"});
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.contains("--plan"), qPrintable(result.err));
}

void TestSession::cliPresetsAndHelp()
{
    CliResult result = runCli({"presets"});
    QCOMPARE(result.exitCode, 0);
    for (const auto &preset : builtinPresets())
        QVERIFY(result.out.contains(QString::fromStdString(preset.name)));
    for (const char *command : {"run", "validate", "presets", "export-csv"}) {
        result = runCli({command, "--help"});
        QCOMPARE(result.exitCode, 0);
        QVERIFY2(result.out.contains("Usage: headlab-cli " + QString(command)),
                 qPrintable(result.out));
    }
    result = runCli({"frobnicate"});
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.contains("unknown command 'frobnicate'"), qPrintable(result.err));
    // Usage and help come from the same definitions: every option of run is in its help,
    // and a bad value names the option.
    result = runCli({"run", "--help"});
    for (const char *option : {"--output", "--overwrite", "--preset", "--device", "--threads",
                               "--concurrent", "--max-ensemble"})
        QVERIFY2(result.out.contains(option), option);
    result = runCli({"run", "x.yaml", "--concurrent", "0"});
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.contains("--concurrent") &&
                 result.err.contains("0 is out of range: from 1 to 4096"),
             qPrintable(result.err));
    result = runCli({"run", "x.yaml", "--device", "gpu"});
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.contains("unknown device 'gpu'"), qPrintable(result.err));
    QCOMPARE(runCli({"run", "--preset", "no-such-preset"}).exitCode, 2);
}

namespace {

// Two tiny addition runs on the CPU: a few seconds with the real trainer.
std::string tinySession(int64_t steps)
{
    return "schema_version: 1\n"
           "name: tiny\n"
           "experiment:\n"
           "  model: {d_model: 8, heads: 1, layers: 1}\n"
           "  phases:\n"
           "    - {name: answer, objective: answer, steps: " +
           std::to_string(steps) +
           ", batch_size: 4}\n"
           "  eval_every: 10\n"
           "  log_every: 5\n"
           "  eval_batches: 1\n"
           "  device: cpu\n"
           "sweep:\n"
           "  heads: [1, 2]\n";
}

} // namespace

namespace {

// runs.csv's learned and learned_rule columns and runLearned give `expected` ("1", "0" or "" for
// no verdict) for each run of `s` under its rule.
void checkVerdicts(const Session &s, const std::vector<std::string> &expected)
{
    QTemporaryDir dir;
    exportSessionCsv(s, dir.path().toStdString());
    QFile csv(dir.filePath("runs.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QStringList header = QString::fromUtf8(csv.readLine()).trimmed().split(',');
    const int learnedColumn = int(header.indexOf("learned"));
    const int ruleColumn = int(header.indexOf("learned_rule"));
    QVERIFY(learnedColumn > 0 && ruleColumn > 0);
    QCOMPARE(header.count("learned"), 1); // the trainer's metric of that name is not repeated
    for (size_t i = 0; i < s.runs.size(); ++i) {
        const QStringList row = QString::fromUtf8(csv.readLine()).trimmed().split(',');
        QCOMPARE(row[learnedColumn].toStdString(), expected[i]);
        QCOMPARE(row[ruleColumn].toStdString(), std::string(toString(s.learnedRule)));
        const auto verdict = runLearned(s, s.runs[i].result);
        QCOMPARE(verdict ? (*verdict ? "1" : "0") : "", expected[i].c_str());
    }
}

// A run of s.base with the next seed, its status and metrics.
void addSeedRun(Session &s, RunStatus status, std::map<std::string, double> metrics)
{
    SessionRun r;
    r.config = s.base;
    r.config.initSeed = s.runs.size();
    r.labels = {{"seed", std::to_string(s.runs.size())}};
    r.result.status = status;
    r.result.metrics = std::move(metrics);
    s.runs.push_back(r);
}

} // namespace

void TestSession::learnedHasOneDefinition()
{
    // Runs near both thresholds: on the plateau (2.3025, under ln 10 but not below 5/6 ln 10),
    // well below, a session saved before the metrics (only the final loss), a diverged run and
    // a queued one. runs.csv, learned() and the session file agree for each rule.
    Session s;
    s.base = smallConfig();
    auto run = [&](RunStatus status, std::map<std::string, double> metrics) {
        addSeedRun(s, status, std::move(metrics));
    };
    run(RunStatus::Done, {{"final_test_loss", 2.3025}, {"learned", 1}, {"left_ln10_plateau", 0}});
    run(RunStatus::Done, {{"final_test_loss", 1.2}, {"learned", 1}, {"left_ln10_plateau", 1}});
    run(RunStatus::Done, {{"final_test_loss", 2.0}});
    run(RunStatus::Done, {{"final_test_loss", 2.31}});
    run(RunStatus::Diverged, {{"final_test_loss", 3.09}, {"learned", 0}});
    run(RunStatus::Queued, {});
    const std::vector<std::string> plateau = {"0", "1", "1", "0", "0", ""};
    const std::vector<std::string> paper = {"1", "1", "1", "0", "0", ""};
    // left_chance_plateau on runs saved before its metric: the paper's rule, as the ln 10 one.
    for (LearnedRule rule : {LearnedRule::LeftLn10Plateau, LearnedRule::FinalBelowLn10,
                             LearnedRule::LeftChancePlateau}) {
        s.learnedRule = rule;
        const auto &expected = rule == LearnedRule::LeftLn10Plateau ? plateau : paper;
        checkVerdicts(s, expected);
        if (QTest::currentTestFailed()) return;
        for (size_t i = 0; i < s.runs.size();
             ++i) { // core's one definition, as runLearned reads it
            const auto verdict = learned(s.runs[i].result, rule);
            QCOMPARE(verdict ? (*verdict ? "1" : "0") : "", expected[i].c_str());
        }
        // The summary counts the same verdicts (the seeds are replicates of one configuration).
        const auto groups = groupReplicates(s);
        QCOMPARE(groups.size(), size_t(1));
        QCOMPARE(groups[0].learned, int(std::count(expected.begin(), expected.end(), "1")));
        QCOMPARE(groups[0].verdicts, 5);
        // The session says which rule it follows, and keeps it.
        const std::string text = sessionToYaml(s);
        QVERIFY(text.find(std::string("learned_rule: ") + toString(rule)) != std::string::npos);
        QCOMPARE(sessionFromYaml(text, "rule.yaml").learnedRule, rule);
    }
    // Sessions that do not say follow the default, the plateau rule; a misspelt rule is refused.
    QCOMPARE(sessionFromYaml(kValidHead, "default.yaml").learnedRule, LearnedRule::LeftLn10Plateau);
    try {
        sessionFromYaml(std::string(kValidHead) + "learned_rule: final_below\n", "bad.yaml");
        QFAIL("no error");
    } catch (const SessionError &e) {
        QCOMPARE(e.line(), 5);
        QVERIFY(std::string(e.what()).find(
                    "expected left_ln10_plateau, final_below_ln10 or left_chance_plateau") !=
                std::string::npos);
    }
}

void TestSession::aTaskWithoutTheLn10PlateauIsJudgedByItsOwn()
{
    // Nearest-neighbour runs: one saved before its task had a verdict (no metric: none), one that
    // sat at the zero predictor's plateau (0.9: under 1, not under 5/6), one that left it, and a
    // diverged one. The default rule, the chance rule, the paper's; runs.csv agrees with each.
    Session s;
    s.base = smallConfig();
    s.base.task.kind = "nearest_neighbour";
    auto run = [&](RunStatus status, std::map<std::string, double> metrics) {
        addSeedRun(s, status, std::move(metrics));
    };
    run(RunStatus::Done, {{"final_test_loss", 0.2}});
    run(RunStatus::Done, {{"final_test_loss", 0.9}, {"learned", 1}, {"left_chance_plateau", 0}});
    run(RunStatus::Done, {{"final_test_loss", 0.3}, {"learned", 1}, {"left_chance_plateau", 1}});
    run(RunStatus::Diverged, {{"learned", 0}, {"left_chance_plateau", 0}});
    const std::vector<std::string> plateau = {"", "0", "1", "0"};
    const std::vector<std::string> paper = {"", "1", "1", "0"};
    for (LearnedRule rule : {LearnedRule::LeftLn10Plateau, LearnedRule::LeftChancePlateau,
                             LearnedRule::FinalBelowLn10}) {
        s.learnedRule = rule;
        checkVerdicts(s, rule == LearnedRule::FinalBelowLn10 ? paper : plateau);
        if (QTest::currentTestFailed()) return;
    }
    // The schema tells the Python package the same (tests/python mirrors these verdicts).
    const QJsonObject schema =
        QJsonDocument::fromJson(QByteArray::fromStdString(sessionSchemaJson())).object();
    const QJsonObject tasks = schema["tasks"].toObject();
    QCOMPARE(tasks["nearest_neighbour"].toObject()["chance_plateau"].toBool(), true);
    QCOMPARE(tasks["text"].toObject()["chance_plateau"].toBool(), true);
    QCOMPARE(tasks["addition"].toObject()["chance_plateau"].toBool(), false);
    QCOMPARE(schema["chance_plateau_metric"].toString(), QStringLiteral("left_chance_plateau"));
}

void TestSession::cliRunSavesAndResumes()
{
    QTemporaryDir dir;
    const QString input = dir.filePath("tiny.yaml");
    const QString output = dir.filePath("out.yaml");
    writeFile(input, tinySession(30));
    CliResult result = runCli({"run", input, "-o", output, "--threads", "1"});
    QVERIFY2(result.exitCode == 0, qPrintable(result.err));
    QCOMPARE(readFile(input), tinySession(30)); // -o leaves the input alone
    Session saved = loadSession(output.toStdString());
    QCOMPARE(saved.runs.size(), size_t(2));
    for (const auto &run : saved.runs) {
        QCOMPARE(run.result.status, RunStatus::Done);
        QCOMPARE(run.result.stepsDone, int64_t(30));
        QVERIFY(!run.result.test.empty());
    }
    QVERIFY(pendingRuns(saved).empty());

    // Running the saved session again trains nothing and keeps the results.
    const std::string before = readFile(output);
    result = runCli({"run", output});
    QCOMPARE(result.exitCode, 0);
    QVERIFY2(result.err.contains("2 already finished, 0 to train"), qPrintable(result.err));
    QCOMPARE(readFile(output), before);

    // CSV export of the result.
    result = runCli({"export-csv", output, "-o", dir.filePath("csv")});
    QCOMPARE(result.exitCode, 0);
    QVERIFY(QFile::exists(dir.filePath("csv/runs.csv")) &&
            QFile::exists(dir.filePath("csv/curves.csv")));
}

void TestSession::cliRunExitsNonZeroWhenARunFails()
{
    QTemporaryDir dir;
    const QString input = dir.filePath("failing.yaml");
    writeFile(input, "schema_version: 1\n"
                     "experiment:\n"
                     "  task: {kind: text, text_path: " +
                         dir.filePath("no-corpus.txt").toStdString() +
                         ", context_length: 16}\n"
                         "  model: {d_model: 8, heads: 1, layers: 1}\n"
                         "  phases:\n"
                         "    - {name: lm, objective: next_token, steps: 5, batch_size: 2}\n"
                         "  device: cpu\n");
    const CliResult result = runCli({"run", input});
    QCOMPARE(result.exitCode, 1);
    const Session saved = loadSession(input.toStdString());
    QCOMPARE(saved.runs.size(), size_t(1));
    QCOMPARE(saved.runs[0].result.status, RunStatus::Failed);
    QVERIFY(!saved.runs[0].result.message.empty());
}

void TestSession::cliRunStopsCleanlyOnSigint()
{
    QTemporaryDir dir;
    const QString input = dir.filePath("long.yaml");
    writeFile(input, tinySession(10'000'000));
    QProcess process;
    process.start(QStringLiteral(HEADLAB_CLI_PATH), {"run", input, "--threads", "1"});
    QVERIFY(process.waitForStarted());
    // The session is saved with its queued runs before training starts; wait for training.
    QByteArray err;
    QTRY_VERIFY_WITH_TIMEOUT((err += process.readAllStandardError()).contains("to train"), 30000);
    QTest::qWait(1500);
    ::kill(static_cast<pid_t>(process.processId()), SIGINT);
    QVERIFY(process.waitForFinished(60000));
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 130);
    Session saved = loadSession(input.toStdString());
    expandSweep(saved); // the stored runs, and the sweep's runs that never started
    QCOMPARE(saved.runs.size(), size_t(2));
    // On the CPU the two head counts train one after the other: the first is stopped mid-run,
    // the second never started (no file, still queued).
    QCOMPARE(saved.runs[0].result.status, RunStatus::Stopped);
    for (const auto &run : saved.runs)
        QVERIFY(run.result.status == RunStatus::Stopped || run.result.status == RunStatus::Queued);
    QCOMPARE(pendingRuns(saved).size(), size_t(2)); // they run again on resume
}

void TestSession::storedSessionsOfThisReleaseLoadUnchanged_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("addition") << "v2-addition";
    QTest::newRow("nearest neighbour") << "v2-nn";
    QTest::newRow("text") << "v2-text";
}

// Stored sessions with results, saved by the release that introduced the stored layout (commit
// 64ddf52; the commands are in each fixture's -input.yaml). They load, export to one YAML file and
// to CSV byte for byte as that release did, so a refactor of the config tables changes nothing.
// One deliberate change since: runs.csv's `learned` column is empty for the nearest-neighbour and
// text tasks, which define no learned verdict (that release wrote addition's ln 10 verdict there;
// the expected files were re-exported by `headlab-cli export-csv` and differ in that column only).
// And runs.csv gained the `configuration` column (issue 50; re-exported the same way, every other
// column unchanged). And issue 55's identity and time: the export writes each run's `run_id`, and
// runs.csv gained run_id, started_at, finished_at, host, commit and command (empty for these runs
// of an earlier release); both re-exported the same way, every other line and column unchanged.
// The run_id is quoted since (16 hex digits can be all digits, which YAML reads as a number): the
// exports' run_id lines re-exported so, nothing else changed. And runs.csv gained its last two
// columns, tags and note (issue 78; empty here), re-exported the same way.
void TestSession::storedSessionsOfThisReleaseLoadUnchanged()
{
    QFETCH(QString, name);
    const std::string dir = std::string(HEADLAB_SOURCE_DIR) + "/tests/session/fixtures/";
    auto slurp = [](const std::string &path) {
        std::ifstream in(path, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    // Loaded from a copy, so that the lock file the store leaves is not in the source tree.
    QTemporaryDir tmp;
    const std::string copy = tmp.filePath(name + ".yaml").toStdString();
    std::filesystem::copy_file(dir + name.toStdString() + ".yaml", copy);
    std::filesystem::copy(dir + name.toStdString() + ".results",
                          tmp.filePath(name + ".results").toStdString(),
                          std::filesystem::copy_options::recursive);
    const Session s = loadSession(copy);
    QVERIFY(!s.runs.empty());
    for (const auto &run : s.runs) QCOMPARE(run.result.status, RunStatus::Done);
    QCOMPARE(sessionToYaml(s), slurp(dir + name.toStdString() + ".export.yaml"));
    const auto csv = exportSessionCsv(s, tmp.filePath("csv").toStdString());
    QCOMPARE(slurp(csv.runsPath), slurp(dir + name.toStdString() + ".csv/runs.csv"));
    QCOMPARE(slurp(csv.curvesPath), slurp(dir + name.toStdString() + ".csv/curves.csv"));
    // Each run keeps the file name its config hashed to, so resuming writes beside, not anew.
    for (const auto &run : s.runs)
        QVERIFY2(std::filesystem::exists(dir + name.toStdString() + ".results/runs/" +
                                         runFileName(run.config)),
                 runFileName(run.config).c_str());
}

// The file name of every run of every preset: a hash of its canonical config (SessionStore.h). A
// change to how configs are written would orphan every stored result. The golden list was made at
// commit 64ddf52 with `HEADLAB_WRITE_GOLDEN=1 tests/session/test_session presetRunFilesKeepTheirNames`;
// the nn presets' lines were remade when they took the reference code's per-epoch schedule and
// initialisation (new configs, so new names), and addition-fig2-grid-seeds' lines were added then.
void TestSession::presetRunFilesKeepTheirNames()
{
    std::map<std::string, std::string> listing; // preset -> its run files, one line each
    for (const auto &preset : builtinPresets()) {
        Session s = loadPreset(preset.name);
        expandSweep(s);
        for (const auto &run : s.runs)
            listing[preset.name] += preset.name + ' ' + runFileName(run.config) + '\n';
    }
    const std::string golden =
        std::string(HEADLAB_SOURCE_DIR) + "/tests/session/fixtures/preset-run-files.txt";
    if (qEnvironmentVariableIsSet("HEADLAB_WRITE_GOLDEN")) {
        std::ofstream out(golden, std::ios::binary);
        for (const auto &[name, lines] : listing) out << lines;
        QSKIP("wrote the golden list");
    }
    // Every preset of the golden list names its runs' files as it did; presets added since are
    // not in it.
    std::ifstream in(golden, std::ios::binary);
    std::map<std::string, std::string> expected;
    for (std::string line; std::getline(in, line);)
        expected[line.substr(0, line.find(' '))] += line + '\n';
    QVERIFY(!expected.empty());
    for (const auto &[name, lines] : expected) {
        QVERIFY2(listing.count(name), name.c_str());
        QCOMPARE(listing.at(name), lines);
    }
}

// Seeds as replicates: a session with known final losses gives the expected median, mean,
// standard deviation, standard error, quartiles and fraction learned, in the groups, the CSV and
// `headlab-cli summary`. Reference values from Python's statistics module (an independent
// implementation): statistics.stdev([2.29, 0.17, 1.71]) = 1.095627673984187; the quartiles by
// linear interpolation (numpy's default) are 0.94 and 2.0.
// Learning-rate sensitivity by its definition (Wortsman et al. 2023, §2.2), per seed over three
// η: mean of min(ℓ(η), ℓ0) − ℓ*, a diverged run at ℓ0; a seed with a run still to train is out.
void TestSession::lrSensitivityOfKnownValues()
{
    Session session;
    session.base = testing::tinyAdditionRun(8, {1}, 20, 1e-3);
    AxisValue a, b, c;
    a.number = 1e-3;
    b.number = 1e-2;
    c.number = 1e-1;
    std::vector<AxisValue> seeds(3);
    for (uint64_t i = 0; i < 3; ++i) {
        seeds[i].kind = AxisValue::Kind::Unsigned;
        seeds[i].unsignedValue = i;
    }
    session.axes = {SweepAxis{"lr", {a, b, c}}, SweepAxis{"seed", seeds}};
    expandSweep(session);
    QCOMPARE(session.runs.size(), size_t(9));
    // seed → η → final loss (NaN: diverged; -1: still queued); every run starts at 3.
    const std::map<uint64_t, std::vector<double>> finals = {
        {0, {1.0, 2.0, NAN}}, {1, {0.5, 0.5, 4.0}}, {2, {0.2, -1, 0.3}}};
    for (auto &run : session.runs) {
        const size_t k = run.config.lr == 1e-3 ? 0 : run.config.lr == 1e-2 ? 1 : 2;
        const double v = finals.at(run.config.initSeed)[k];
        RunResult &r = run.result;
        if (v == -1) continue; // queued
        r.status = std::isnan(v) ? RunStatus::Diverged : RunStatus::Done;
        r.test = {{0, 3.0}};
        if (!std::isnan(v)) {
            r.test.push_back({20, v});
            r.metrics[metric::kFinalTestLoss] = v;
        }
    }
    std::vector<int> all;
    for (int i = 0; i < 9; ++i) all.push_back(i);
    const LrSensitivity sens = lrSensitivity(session, all);
    QCOMPARE(sens.stats.count, 2); // seed 2 is not finished
    QCOMPARE(sens.lrValues, 3);
    const double seed0 = (0.0 + 1.0 + 2.0) / 3, seed1 = (0.0 + 0.0 + 2.5) / 3;
    QVERIFY(std::abs(sens.stats.min - std::min(seed0, seed1)) < 1e-12);
    QVERIFY(std::abs(sens.stats.max - std::max(seed0, seed1)) < 1e-12);
    QVERIFY(std::abs(sens.stats.median - (seed0 + seed1) / 2) < 1e-12);
    const auto groups = groupByConfigurationWithoutLr(session);
    QCOMPARE(groups.size(), size_t(1));
    QCOMPARE(groups.front().runs.size(), size_t(9));
}

void TestSession::replicateStatisticsOfKnownValues()
{
    const SampleStats s = sampleStats({2.29, 0.17, 1.71, std::nan("")}); // m 192, n_H 6 of issue 13
    QCOMPARE(s.count, 3);
    QVERIFY(std::abs(s.median - 1.71) < 1e-12);
    QVERIFY(std::abs(s.mean - 1.39) < 1e-12);
    QVERIFY(std::abs(s.sd - 1.095627673984187) < 1e-12);
    QVERIFY(std::abs(s.se - 0.6325609325063739) < 1e-12);
    QVERIFY(std::abs(s.q1 - 0.94) < 1e-12); // np.percentile(..., 25)
    QVERIFY(std::abs(s.q3 - 2.0) < 1e-12);
    QCOMPARE(s.min, 0.17);
    QCOMPARE(s.max, 2.29);
    QCOMPARE(sampleStats({}).count, 0);
    QCOMPARE(sampleStats({5.0}).sd, 0.0);

    // Two configurations × three seeds, losses on both sides of the ln 10 plateau's exit.
    Session session;
    session.name = "replicates";
    session.base = testing::tinyAdditionRun(8, {1}, 20, 1e-3);
    auto num = [](double v) {
        AxisValue a;
        a.kind = AxisValue::Kind::Number;
        a.number = v;
        return a;
    };
    auto seed = [](uint64_t v) {
        AxisValue a;
        a.kind = AxisValue::Kind::Unsigned;
        a.unsignedValue = v;
        return a;
    };
    session.axes = {SweepAxis{"heads", {num(1), num(2)}},
                    SweepAxis{"seed", {seed(0), seed(1), seed(2)}}};
    expandSweep(session);
    QCOMPARE(session.runs.size(), size_t(6));
    const double losses[6] = {0.96, 0.003, 0.92,
                              2.29, 0.17,  1.71}; // heads 1: seeds 0..2, heads 2: seeds 0..2
    for (size_t i = 0; i < 6; ++i) {
        RunResult &r = session.runs[i].result;
        r.status = RunStatus::Done;
        r.metrics["final_test_loss"] = losses[i];
        r.metrics["left_ln10_plateau"] = losses[i] < 5.0 / 6.0 * std::log(10.0) ? 1 : 0;
        r.test = {{20, losses[i]}};
    }
    const auto groups = groupReplicates(session);
    QCOMPARE(groups.size(), size_t(2));
    QCOMPARE(groups[0].labels, (std::map<std::string, std::string>{{"heads", "1"}}));
    QCOMPARE(groups[0].runs, (std::vector<int>{0, 1, 2}));
    QVERIFY(std::abs(groups[0].finalLoss.median - 0.92) < 1e-12);
    QCOMPARE(groups[0].learned, 3); // all below 5/6 ln 10
    QVERIFY(!groups[0].split());
    QCOMPARE(groups[1].learned, 2); // 2.29 sits on the ln 10 plateau
    QCOMPARE(groups[1].verdicts, 3);
    QVERIFY(groups[1].split());
    QVERIFY(std::abs(groups[1].learnedFraction() - 2.0 / 3.0) < 1e-12);
    // The paper's rule (final < ln 10) calls all three learned.
    session.learnedRule = LearnedRule::FinalBelowLn10;
    for (auto &run : session.runs)
        run.result.metrics["learned"] = run.result.metrics["final_test_loss"] < std::log(10.0);
    QCOMPARE(groupReplicates(session)[1].learned, 3);
    session.learnedRule = LearnedRule::LeftLn10Plateau;

    const std::string csv =
        replicateSummaryCsv(session, groups, {}, ReplicateStat::Median, ReplicateSpread::Sd);
    QVERIFY2(QString::fromStdString(csv).startsWith(
                 "heads,runs,finished,final_test_loss_median,spread_sd_low,spread_sd_high,"),
             csv.c_str());
    const QStringList rows = QString::fromStdString(csv).split('\n');
    const QStringList row = rows.value(2).split(',');
    QCOMPARE(row.mid(0, 4), (QStringList{"2", "3", "3", "1.71"})); // heads, runs, finished, median
    QVERIFY(std::abs(row[4].toDouble() - 0.29437232601581287) < 1e-12); // mean − sd
    QVERIFY(std::abs(row[5].toDouble() - 2.4856276739841867) < 1e-12);  // mean + sd
    QVERIFY2(QString::fromStdString(csv).contains(",2,3,0.6666666666666666,left_ln10_plateau\n"),
             csv.c_str());

    // The CLI prints and writes the same table.
    QTemporaryDir dir;
    const QString path = dir.filePath("r.yaml");
    saveSessionAtomic(session, path.toStdString());
    const CliResult result =
        runCli({"summary", path, "--spread", "sd", "-o", dir.filePath("summary.csv")});
    QVERIFY2(result.exitCode == 0, qPrintable(result.err));
    QVERIFY2(result.out.contains("2/3 split") && result.out.contains("3/3"),
             qPrintable(result.out));
    QFile written(dir.filePath("summary.csv"));
    QVERIFY(written.open(QIODevice::ReadOnly));
    QCOMPARE(written.readAll().toStdString(), csv);
    QCOMPARE(runCli({"summary", path, "--by", "lr"}).exitCode, 2); // not an axis of this sweep
    QCOMPARE(runCli({"summary", path, "--stat", "mode"}).exitCode, 2);
}

// The named sweep axes are rows of one table (core/schema/Dimensions.h): each, swept over two
// values, reads, expands into runs whose configs carry the values (its `resolved` text), writes
// back the same session text, and has a title. A row without a sample below fails by name.
void TestSession::everyNamedAxisIsOneRow()
{
    const std::map<std::string, std::pair<std::string, std::vector<std::string>>> samples = {
        // axis: (its YAML list, each run's resolved text)
        {"layers", {"[1, 3]", {"1", "3"}}},
        {"d_model", {"[16, 32]", {"16", "32"}}},
        {"head_dim", {"[4, 8]", {"4", "8"}}},
        {"width_multiplier", {"[1, 2]", {"1", "2"}}},
        {"logit_scale", {"[none, inv_head_dim]", {"none", "inv_head_dim"}}},
        {"qk_rule", {"[false, true]", {"off", "on"}}},
        {"heads", {"[1, [2, 4]]", {"1,1", "2,4"}}},
        {"head_schedule", {"[{scheme: constant, total: 4}]", {""}}},
        {"lr", {"[1.0e-3, 2.5e-3]", {"0.001", "0.0025"}}},
        {"seed", {"[3, 18446744073709551615]", {"3", "18446744073709551615"}}},
    };
    const auto swept = sweptDimensionNames();
    QCOMPARE(swept.size(), samples.size());
    for (const auto &row : dimensions()) {
        if (!row.swept()) {
            // A derived dimension (total_heads): never a sweep key, but read off every run, as a
            // number for the law and as text for tables.
            QVERIFY2(row.use.number && row.resolved, row.name.c_str());
            QVERIFY(!findDimension(row.name));
            RunConfig config;
            config.model.heads = {3, 5};
            if (row.name == "total_heads") QCOMPARE(dimensionNumber(config, row.name), 8.0);
            continue;
        }
        QVERIFY2(samples.count(row.name), ("no sample for the axis " + row.name).c_str());
        QVERIFY2(!row.title.empty() && row.read && row.write && row.apply && row.resolved,
                 row.name.c_str());
        const auto &[list, resolved] = samples.at(row.name);
        const std::string text = "schema_version: 2\n"
                                 "experiment:\n"
                                 "  task: {kind: addition, train_pairs: 64, test_pairs: 8}\n"
                                 "  model: {d_model: 16, heads: 1, layers: 2}\n"
                                 "  phases: [{steps: 1}]\n"
                                 "sweep:\n  " +
                                 row.name + ": " + list + "\n";
        Session s = sessionFromYaml(text, row.name + ".yaml");
        expandSweep(s);
        QVERIFY2(s.runs.size() == resolved.size(),
                 qPrintable(QString::fromStdString(row.name + ": " + std::to_string(s.runs.size()) +
                                                   " runs")));
        for (size_t i = 0; i < resolved.size(); ++i)
            if (!resolved[i].empty())
                QCOMPARE(QString::fromStdString(row.resolved(s.runs[i].config)),
                         QString::fromStdString(resolved[i]));
        const std::string written = sessionToYaml(s);
        Session again = sessionFromYaml(written, row.name + "-again.yaml");
        QCOMPARE(QString::fromStdString(sessionToYaml(again)), QString::fromStdString(written));
        QVERIFY(findDimension(row.name).has_value());
    }
    // A field-table axis (a stabilizer) is a row too, from its field's reader.
    const auto softcap = findDimension("softcap");
    QVERIFY(softcap && softcap->apply && softcap->read);
    QVERIFY(!findDimension("no_such_axis"));
}

// A report's session element (issue 78 item 1; core/session/HtmlEmbed.h): base64 of every byte
// value and every length's padding; the text back byte for byte through readSessionText, a note
// holding "</script>" included; damaged or missing elements refused with the file named.
void TestSession::aReportCarriesItsSessionByteForByte()
{
    std::string all;
    for (int i = 0; i < 256; ++i) all += char(i);
    for (size_t n = 0; n <= all.size(); n += (n < 8 ? 1 : 37)) {
        std::string back;
        QVERIFY(base64Decode(base64Encode(all.substr(0, n)), &back));
        QCOMPARE(back, all.substr(0, n));
    }
    QCOMPARE(base64Encode("Man"), std::string("TWFu"));
    QCOMPARE(base64Encode("Ma"), std::string("TWE="));
    std::string ignored;
    QVERIFY(!base64Decode("TWF", &ignored));
    QVERIFY(!base64Decode("TW!u", &ignored));

    QTemporaryDir dir;
    const std::string text = "schema_version: 2\nname: \"r</script>\"\n# \xce\xb7 \x01\n";
    const std::string page = "<html><body><p>x</p>" + sessionElement(text) + "</body></html>";
    const std::string path = dir.filePath("r.html").toStdString();
    writeFileAtomic(path, page);
    QVERIFY(page.find("r</script>") == std::string::npos);
    QCOMPARE(readSessionText(path), text);
    QVERIFY(isHtmlReportPath("R.HTML") && isReadOnlySessionPath("s.yaml.gz") &&
            !isReadOnlySessionPath("s.yaml"));
    auto refused = [&](const std::string &body, const char *why) {
        writeFileAtomic(path, body);
        try {
            readSessionText(path);
        } catch (const SessionError &e) {
            const std::string message = e.what();
            QVERIFY2(message.find(path) != std::string::npos &&
                         message.find(why) != std::string::npos,
                     message.c_str());
            return;
        }
        QFAIL(("accepted: " + body.substr(0, 80)).c_str());
    };
    refused("<html>nothing here</html>", "without a HeadLab session");
    std::string cut = page;
    cut.replace(cut.find("data-bytes=\"") + 12, 1, "9");
    refused(cut, "");
    std::string damaged = page;
    damaged.insert(damaged.find("\">", damaged.find("data-encoding")) + 2, "AAAA");
    refused(damaged, "");
    refused(page.substr(0, page.size() / 2), "cut short");
}

QTEST_GUILESS_MAIN(TestSession)

#include "test_session.moc"
