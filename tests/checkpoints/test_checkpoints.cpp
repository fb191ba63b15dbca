// test_checkpoints.cpp — checkpoints are written as the policy says, resume bit for bit on the CPU,
// and damaged ones are named and skipped.
#include "core/config/Safetensors.h"
#include "core/lab/SweepSession.h"
#include "core/session/Presets.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"
#include "core/train/Checkpoint.h"
#include "core/train/CheckpointFormat.h"
#include "core/train/HeadInspector.h"
#include "core/train/Trainer.h"
#include "tests/TinyRuns.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>

using namespace headlab;

namespace {

// Two phases (next-token warm-up, then the answer under warmup-cosine), a training-loss window of
// 7 steps that checkpoints every 10 steps cut part way, evaluations every 10.
RunConfig twoPhaseRun(uint64_t seed, double lr)
{
    RunConfig c = testing::tinyAdditionRun(16, {2}, 90, lr);
    PhaseConfig warm = c.phases.front();
    warm.name = "warmup";
    warm.objective = Objective::NextToken;
    warm.steps = 30;
    warm.batchSize = 8;
    warm.useScannedLr = false;
    warm.lr = 5e-4;
    c.phases.front().schedule.kind = ScheduleKind::WarmupCosine;
    c.phases.insert(c.phases.begin(), warm);
    c.logEvery = 7;
    c.evalEvery = 10;
    c.initSeed = seed;
    c.dataSeed = seed;
    return c;
}

// Two runs of one weight shape that can share an ensemble: 1 and 2 heads, seeds `a` and `b`.
std::pair<RunConfig, RunConfig> oneShapeTwoHeadCounts(uint64_t a, uint64_t b)
{
    RunConfig one = twoPhaseRun(a, 1e-3), two = twoPhaseRun(b, 1e-3);
    one.model.heads = {1};
    two.model.heads = {2};
    return {one, two};
}

struct Training {
    std::vector<RunResult> results;
};

std::vector<RunResult> train(const std::vector<RunConfig> &configs,
                             const std::vector<std::string> &dirs,
                             const std::vector<std::string> &resume = {},
                             CheckpointPolicy policy = {},
                             std::function<bool(size_t)> stopMember = {})
{
    TrainerControl control;
    control.threads = 1;
    control.checkpoints = policy;
    control.checkpointDirs = dirs;
    control.resumeFrom = resume;
    control.memberStopRequested = std::move(stopMember);
    return trainMembers(configs, control);
}

void compareCurves(const Curve &a, const Curve &b, const char *what)
{
    QVERIFY2(a.size() == b.size(), what);
    for (size_t i = 0; i < a.size(); ++i) {
        QCOMPARE(a[i].step, b[i].step);
        if (a[i].value != b[i].value) // bit for bit, not approximately
            QFAIL(qPrintable(QStringLiteral("%1 differs at step %2: %3 vs %4")
                                 .arg(what)
                                 .arg(a[i].step)
                                 .arg(a[i].value, 0, 'g', 17)
                                 .arg(b[i].value, 0, 'g', 17)));
    }
}

void compareResults(const RunResult &a, const RunResult &b)
{
    QVERIFY2(a.status == b.status,
             qPrintable(QStringLiteral("%1 (%2) vs %3 (%4)")
                            .arg(toString(a.status), QString::fromStdString(a.message),
                                 toString(b.status), QString::fromStdString(b.message))));
    QCOMPARE(a.stepsDone, b.stepsDone);
    QCOMPARE(a.phaseStarts, b.phaseStarts);
    compareCurves(a.train, b.train, "train");
    compareCurves(a.test, b.test, "test");
    QCOMPARE(a.extra.size(), b.extra.size());
    for (const auto &[name, curve] : a.extra) compareCurves(curve, b.extra.at(name), name.c_str());
    for (const auto &[name, value] : a.metrics)
        if (name != "steps_per_second") QCOMPARE(value, b.metrics.at(name));
}

std::string dirOf(const QTemporaryDir &tmp, const std::string &name)
{
    return tmp.path().toStdString() + "/" + name;
}

std::string fileAt(const std::string &dir, int64_t step)
{
    return dir + "/" + checkpointFileName(step);
}

std::string readAll(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void writeAll(const std::string &path, const std::string &bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
}

QString cliPath()
{
    return QStringLiteral(HEADLAB_CLI_PATH);
}

// Rewrites a checkpoint through `edit`, with its checksum made right again: a file that is
// intact as bytes but says something false.
void rewrite(const std::string &path, const std::function<void(safetensors::Contents &)> &edit)
{
    safetensors::Contents c = safetensors::read(path);
    edit(c);
    detail::stampChecksum(c);
    safetensors::write(path, c);
}

// (Qt's file functions: the torch wheel's libtorch.so exports std::filesystem::remove_all and copy
// of another ABI, and calling them crashes.)
void copyFolder(const std::string &from, const std::string &to)
{
    QDir(QString::fromStdString(to)).removeRecursively();
    QDir().mkpath(QString::fromStdString(to));
    for (const QString &name : QDir(QString::fromStdString(from)).entryList(QDir::Files))
        QFile::copy(QString::fromStdString(from) + "/" + name,
                    QString::fromStdString(to) + "/" + name);
}

// A session of one run (twoPhaseRun(seed)) at `sessionPath` that trained until it was stopped at
// step 70, keeping checkpoints by `policy` in the folder the session gives the run.
struct StoppedRun {
    Session session;
    std::string dir; // the run's checkpoint folder
};

StoppedRun stoppedAtStep70(const std::string &sessionPath, uint64_t seed,
                           const CheckpointPolicy &policy)
{
    StoppedRun out;
    out.session.base = twoPhaseRun(seed, 1e-3);
    expandSweep(out.session);
    std::vector<SweepJob> jobs = pendingJobs(out.session);
    attachCheckpoints(jobs, out.session, sessionPath);
    out.dir = jobs.front().checkpointDir;
    int polls = 0;
    train({out.session.base}, {out.dir}, {}, policy, [&](size_t) { return ++polls > 70; });
    return out;
}

} // namespace

class TestCheckpoints : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void resumedRunsEqualUninterruptedRuns_data();
    void resumedRunsEqualUninterruptedRuns();
    void aStoppedRunResumesFromItsStopCheckpoint();
    void keepsTheNewestAndEveryPlateauCheckpoint();
    void olderCheckpointsKeepTheirWeightsAlone();
    void pruneFreesFinishedRunsCheckpoints();
    void aCheckpointBudgetPrunesFinishedRuns();
    void checkpointsHoldWhatTheDocsSay();
    void damagedCheckpointsAreNamedAndTheOneBeforeIsUsed();
    void theChecksumIsCrc32AndVersionOneFilesStillLoad();
    void foreignFilesAreRefusedWithAMessage();
    void aCheckpointThatDoesNotFitFallsBackAndTheRunStillTrains_data();
    void aCheckpointThatDoesNotFitFallsBackAndTheRunStillTrains();
    void anEnsembleResumesFromTheNewestStepAllItsRunsHave();
    void ensemblesOfOneShapeResumeEachFromItsOwnStep();
    void aCheckpointNamingTheKernelsPathResumes();
    void aRunThatFailedOnACheckpointTrainsAgain();
    void resumingPrunesEarlierCheckpointsAndSweepsLeftovers();
    void hostileCheckpointHeadersAreRefusedByName();
    void sessionPolicyReadsAndWrites();
    void cliResumesAfterKillDashNine();
    void pythonSnippetReproducesTheLoggedTestLoss();
};

void TestCheckpoints::resumedRunsEqualUninterruptedRuns_data()
{
    QTest::addColumn<int>("members");
    QTest::addColumn<int>("resumeStep");
    QTest::addColumn<bool>("stabilized");
    // In the warm-up, at the phase boundary, in the answer phase, and at the last step.
    for (int members : {1, 2})
        for (int step : {10, 30, 70, 120})
            QTest::addRow("%s, step %d", members == 1 ? "alone" : "ensemble of 2", step)
                << members << step << false;
    // Every stabilizer on: σReparam's power-iteration vectors resume with the weights.
    for (int step : {30, 70})
        QTest::addRow("stabilized ensemble of 2, step %d", step) << 2 << step << true;
}

void TestCheckpoints::resumedRunsEqualUninterruptedRuns()
{
    QFETCH(int, members);
    QFETCH(int, resumeStep);
    QFETCH(bool, stabilized);
    std::vector<RunConfig> configs = {twoPhaseRun(3, 2e-3)};
    if (members == 2) configs.push_back(twoPhaseRun(4, 1e-3));
    if (stabilized)
        for (auto &c : configs) {
            c.model.zeroInitOutputs = false;
            c.stabilizers = {QkNorm::Gain, 2.0, 1e-3, SigmaReparam::All, 1e-3};
        }
    QTemporaryDir tmp;
    std::vector<std::string> dirs;
    for (int i = 0; i < members; ++i) dirs.push_back(dirOf(tmp, "run" + std::to_string(i)));
    CheckpointPolicy policy;
    policy.every = 10;
    policy.keep = 100;
    policy.resumeStateNewestOnly = false; // resumed from every step below, not only the newest
    const auto whole = train(configs, dirs, {}, policy);
    for (const auto &r : whole) QCOMPARE(toString(r.status), "done");

    std::vector<std::string> resume, dirs2;
    for (int i = 0; i < members; ++i) {
        resume.push_back(fileAt(dirs[size_t(i)], resumeStep));
        QVERIFY2(QFile::exists(QString::fromStdString(resume.back())), resume.back().c_str());
        dirs2.push_back(dirOf(tmp, "again" + std::to_string(i)));
    }
    const auto resumed = train(configs, dirs2, resume, policy);
    QCOMPARE(resumed.size(), whole.size());
    for (size_t i = 0; i < whole.size(); ++i) compareResults(whole[i], resumed[i]);
    // The resumed run's final weights are the uninterrupted run's, byte for byte (resumed from the
    // final checkpoint, it trains no step and writes none).
    for (int i = 0; i < members && resumeStep < 120; ++i) {
        const auto a = safetensors::read(fileAt(dirs[size_t(i)], 120)),
                   b = safetensors::read(fileAt(dirs2[size_t(i)], 120));
        QVERIFY(a.find("layers.0.wq") && b.find("layers.0.wq"));
        for (const auto &t : a.tensors)
            if (t.name.rfind("curve.", 0) != 0)
                QVERIFY2(b.find(t.name) && b.find(t.name)->data == t.data, t.name.c_str());
    }
}

void TestCheckpoints::aStoppedRunResumesFromItsStopCheckpoint()
{
    // Both runs of an ensemble stopped at step 37 (mid-window, mid-phase), then resumed.
    const std::vector<RunConfig> configs = {twoPhaseRun(5, 2e-3), twoPhaseRun(6, 2e-3)};
    QTemporaryDir tmp;
    const std::vector<std::string> dirs = {dirOf(tmp, "a"), dirOf(tmp, "b")};
    CheckpointPolicy policy;
    policy.every = 50;
    const auto whole = train(configs, {dirOf(tmp, "wa"), dirOf(tmp, "wb")}, {}, policy);
    int polls = 0;
    const auto stopped = train(configs, dirs, {}, policy, [&](size_t member) {
        return member == 0 ? ++polls > 37 : polls > 37;
    });
    for (const auto &r : stopped) {
        QCOMPARE(toString(r.status), "stopped");
        QCOMPARE(r.stepsDone, int64_t(37));
        QVERIFY(!r.checkpoints.empty());
        QCOMPARE(r.checkpoints.back().reason, std::string("stop"));
        QCOMPARE(r.checkpoints.back().step, int64_t(37));
    }
    const auto resumed = train(configs, dirs, {fileAt(dirs[0], 37), fileAt(dirs[1], 37)}, policy);
    for (size_t i = 0; i < whole.size(); ++i) compareResults(whole[i], resumed[i]);
}

void TestCheckpoints::keepsTheNewestAndEveryPlateauCheckpoint()
{
    // A run that leaves ln 10 (a wide model at a good rate): plateau checkpoints are kept.
    RunConfig c = testing::tinyAdditionRun(24, {2}, 600, 3e-3);
    c.evalEvery = 20;
    QTemporaryDir tmp;
    const std::string dir = dirOf(tmp, "run");
    CheckpointPolicy policy;
    policy.every = 50;
    policy.keep = 2;
    const auto r = train({c}, {dir}, {}, policy).front();
    int plateau = 0, others = 0;
    for (const auto &k : r.checkpoints) (k.reason.rfind("plateau", 0) == 0 ? plateau : others) += 1;
    QCOMPARE(others, 2);
    QVERIFY2(plateau >= 1, "a run that enters the ln 10 plateau keeps that checkpoint");
    QCOMPARE(r.checkpoints.back().reason, std::string("final"));
    QCOMPARE(r.checkpoints.back().step, int64_t(600));
    // What the result lists is what is on disk, nothing more.
    std::set<std::string> listed, onDisk;
    for (const auto &k : r.checkpoints) listed.insert(k.file);
    for (const auto &e : std::filesystem::directory_iterator(dir))
        onDisk.insert(e.path().filename().string());
    QCOMPARE(listed, onDisk);
    // A plateau checkpoint is at an evaluation step whose test loss the plateau analysis named.
    for (const auto &k : r.checkpoints)
        if (k.reason.rfind("plateau", 0) == 0) QCOMPARE(k.step % c.evalEvery, int64_t(0));
    // Disabled: nothing written.
    QTemporaryDir tmp2;
    CheckpointPolicy off;
    off.enabled = false;
    QVERIFY(train({c}, {dirOf(tmp2, "run")}, {}, off).front().checkpoints.empty());
    QVERIFY(!std::filesystem::exists(dirOf(tmp2, "run")));
}

// The default policy: a run's newest checkpoint holds what resuming needs, the older ones their
// weights alone (a third of the bytes with Adam's two moments); resuming is still bit for bit,
// and never from a weights-only file.
void TestCheckpoints::olderCheckpointsKeepTheirWeightsAlone()
{
    try {
        RunConfig c = testing::tinyAdditionRun(24, {2}, 600, 3e-3);
        c.evalEvery = 20;
        CheckpointPolicy policy;
        policy.every = 50;
        policy.keep = 2;
        QVERIFY(policy.resumeStateNewestOnly); // the default
        QTemporaryDir tmp;
        const std::string dir = dirOf(tmp, "slim"), fullDir = dirOf(tmp, "full");
        const auto r = train({c}, {dir}, {}, policy).front();
        CheckpointPolicy every = policy;
        every.resumeStateNewestOnly = false;
        const auto full = train({c}, {fullDir}, {}, every).front();
        compareResults(r, full); // slimming changes no number
        QCOMPARE(r.checkpoints.size(), full.checkpoints.size());
        QVERIFY(r.checkpoints.size() >= 3);
        uint64_t slimBytes = 0, fullBytes = 0;
        for (size_t k = 0; k < r.checkpoints.size(); ++k) {
            const auto info = inspectCheckpoint(dir + "/" + r.checkpoints[k].file, true);
            const auto same = inspectCheckpoint(fullDir + "/" + full.checkpoints[k].file, true);
            const bool newest = k + 1 == r.checkpoints.size();
            QCOMPARE(info.weightsOnly, !newest);
            QVERIFY(!same.weightsOnly);
            if (!newest)
                QVERIFY2(info.bytes * 2 < same.bytes, qPrintable(QString::number(info.bytes)));
            slimBytes += info.bytes;
            fullBytes += same.bytes;
            // The weights are the same bytes as the full checkpoint's.
            const auto a = safetensors::read(dir + "/" + r.checkpoints[k].file);
            const auto b = safetensors::read(fullDir + "/" + full.checkpoints[k].file);
            for (const auto &t : a.tensors) {
                QVERIFY2(t.name.rfind("optimizer.", 0) != 0 || newest, t.name.c_str());
                QVERIFY(b.find(t.name) && b.find(t.name)->data == t.data);
            }
        }
        QVERIFY2(double(fullBytes) / double(slimBytes) > 1.8,
                 qPrintable(QStringLiteral("%1 vs %2 bytes").arg(slimBytes).arg(fullBytes)));

        // Stopped at step 130: 100 and the stop checkpoint hold the state, 50 its weights. Resumed, it
        // ends as the uninterrupted run, bit for bit.
        const std::string stopDir = dirOf(tmp, "stopped");
        int polls = 0;
        policy.keep = 3;
        const auto stopped =
            train({c}, {stopDir}, {}, policy, [&](size_t) { return ++polls > 130; }).front();
        QCOMPARE(stopped.status, RunStatus::Stopped);
        QVERIFY(inspectCheckpoint(fileAt(stopDir, 50)).weightsOnly);
        QVERIFY(!inspectCheckpoint(fileAt(stopDir, 100)).weightsOnly);
        const std::string slim50 = dirOf(tmp, "slim-50.safetensors");
        std::filesystem::copy_file(fileAt(stopDir, 50), slim50);
        const auto resumed =
            train({c}, {stopDir}, {stopDir + "/" + stopped.checkpoints.back().file}, policy)
                .front();
        compareResults(resumed, r);
        // With only a weights-only checkpoint left, a run starts again at 0: the file is not taken
        // for a resume, nor set aside as unusable.
        Session session;
        session.base = c;
        expandSweep(session);
        const std::string sessionPath = dirOf(tmp, "s.yaml");
        std::vector<SweepJob> jobs = pendingJobs(session);
        attachCheckpoints(jobs, session, sessionPath);
        const std::string runDir = jobs.front().checkpointDir;
        std::filesystem::create_directories(runDir);
        std::filesystem::copy_file(slim50, fileAt(runDir, 50));
        jobs = pendingJobs(session);
        attachCheckpoints(jobs, session, sessionPath);
        QVERIFY(jobs.front().resumeFrom.empty());
        QVERIFY(std::filesystem::exists(fileAt(runDir, 50)));
        // kept_weights: bfloat16: the weights-only checkpoints hold bfloat16 weights (about half
        // the bytes again), and inspecting one gives what the float32 one gives, to bfloat16's
        // precision.
        CheckpointPolicy half = policy;
        half.keep = 2;
        half.keptWeightsBf16 = true;
        const std::string halfDir = dirOf(tmp, "half");
        const auto h = train({c}, {halfDir}, {}, half).front();
        compareResults(h, r); // what is kept changes no number of the run
        int compared = 0;
        for (size_t k = 0; k + 1 < h.checkpoints.size(); ++k) {
            const std::string a = halfDir + "/" + h.checkpoints[k].file,
                              b = dir + "/" + h.checkpoints[k].file;
            QVERIFY(inspectCheckpoint(a).weightsOnly);
            const auto file = safetensors::read(a);
            QVERIFY(file.find("layers.0.wq")->dtype == safetensors::DType::BF16);
            QCOMPARE(file.metadata.at("kept_weights"), std::string("bfloat16"));
            if (!std::filesystem::exists(b)) continue;
            // The weights take half the bytes; the curves the file carries are the same in both
            // (so the file as a whole shrinks by less the more statistics a run logs).
            const auto full = safetensors::read(b);
            size_t halfBytes = 0, fullBytes = 0;
            for (const auto &t : file.tensors)
                if (t.dtype == safetensors::DType::BF16) {
                    halfBytes += t.data.size();
                    fullBytes += full.find(t.name)->data.size();
                }
            QVERIFY(halfBytes > 0);
            QCOMPARE(halfBytes * 2, fullBytes);
            QVERIFY2(std::filesystem::file_size(a) < std::filesystem::file_size(b), a.c_str());
            const AttentionMaps x = HeadInspector(a).attention("123 + 456, digit 0"),
                                y = HeadInspector(b).attention("123 + 456, digit 0");
            QCOMPARE(x.prediction, y.prediction);
            QVERIFY2(std::abs(x.probability - y.probability) < 0.02,
                     qPrintable(QStringLiteral("%1 vs %2").arg(x.probability).arg(y.probability)));
            ++compared;
        }
        QVERIFY(compared > 0);
        // The newest keeps float32 weights and the moments: the run resumes from it as before.
        QVERIFY(safetensors::read(halfDir + "/" + h.checkpoints.back().file)
                    .find("layers.0.wq")
                    ->dtype == safetensors::DType::F32);

        // The policy is read and written: resume_state every.
        const std::string base =
            "schema_version: 2\nexperiment: {task: {kind: addition}, phases: [{steps: 10}]}\n";
        Session s = sessionFromYaml(
            base + "checkpoints: {resume_state: every, kept_weights: bfloat16}\n", "s.yaml");
        QVERIFY(!s.checkpoints.resumeStateNewestOnly);
        QVERIFY(s.checkpoints.keptWeightsBf16);
        QVERIFY(sessionFromYaml(sessionToYaml(s), "b.yaml").checkpoints == s.checkpoints);
        try {
            sessionFromYaml(base + "checkpoints: {resume_state: all}\n", "s.yaml");
            QFAIL("resume_state: all was accepted");
        } catch (const SessionError &e) {
            QVERIFY2(QString(e.what()).contains("checkpoints.resume_state"), e.what());
        }
    } catch (const std::exception &e) {
        QFAIL(e.what());
    }
}

// headlab-cli prune removes finished runs' checkpoints but the final and plateau ones (or what
// --keep says), updates the run files, and leaves unfinished runs alone; status shows the disk.
void TestCheckpoints::pruneFreesFinishedRunsCheckpoints()
{
    const std::string text =
        "schema_version: 2\nname: p\ncheckpoints: {every: 50, keep: 3}\n"
        "experiment:\n"
        "  task: {kind: addition, train_pairs: 64, test_pairs: 8}\n"
        "  model: {d_model: 8, heads: 2, layers: 1}\n"
        "  phases:\n    - {name: answer, objective: answer, steps: 300, batch_size: 4}\n"
        "  eval_every: 50\n  log_every: 10\n  device: cpu\n"
        "sweep:\n  seed: [0, 1]\n";
    QTemporaryDir tmp;
    const QString path = tmp.filePath("p.yaml");
    writeAll(path.toStdString(), text);
    QProcess run;
    run.start(cliPath(), {"run", path, "--threads", "1"});
    QVERIFY(run.waitForFinished(180000));
    QCOMPARE(run.exitCode(), 0);
    auto files = [&] {
        int n = 0;
        for (const auto &e : std::filesystem::recursive_directory_iterator(
                 tmp.filePath("p.results/checkpoints").toStdString()))
            n += e.is_regular_file();
        return n;
    };
    QCOMPARE(files(), 6); // 200, 250 and the final 300 of each run
    QProcess status;
    status.start(cliPath(), {"status", path});
    QVERIFY(status.waitForFinished(60000));
    QVERIFY2(status.readAllStandardOutput().contains("disk: "), "status shows the disk used");
    QProcess dry;
    dry.start(cliPath(), {"prune", path, "--dry-run"});
    QVERIFY(dry.waitForFinished(60000));
    const QString said = QString::fromUtf8(dry.readAllStandardOutput());
    QVERIFY2(dry.exitCode() == 0 && said.contains("would remove 4 checkpoint files of 2"),
             qPrintable(said));
    QCOMPARE(files(), 6);
    auto cli = [&](const QStringList &args, QString *err = nullptr) {
        QProcess p;
        p.start(cliPath(), args);
        p.waitForFinished(60000);
        if (err) *err = QString::fromUtf8(p.readAllStandardError());
        return p.exitCode();
    };
    // The user marks run 0's periodic checkpoint at step 200: every prune keeps it.
    QString err;
    QCOMPARE(cli({"keep", path, "--run", "0", "--step", "200"}, &err), 0);
    QCOMPARE(cli({"keep", path, "--run", "0", "--step", "7"}, &err), 2);
    QVERIFY2(err.contains("run 0 has no checkpoint at step 7; it has steps 200, 250, 300"),
             qPrintable(err));
    QCOMPARE(cli({"keep", path, "--run", "9", "--step", "200"}, &err), 2);
    QVERIFY2(err.contains("--run 9: the session has runs 0 to 1"), qPrintable(err));
    QProcess prune;
    prune.start(cliPath(), {"prune", path});
    QVERIFY(prune.waitForFinished(60000));
    QVERIFY2(prune.exitCode() == 0, prune.readAllStandardError().constData());
    QVERIFY2(prune.readAllStandardOutput().contains("1 marked to keep"), "prune names the mark");
    QCOMPARE(files(), 3);
    const Session after = loadSession(path.toStdString());
    for (size_t i = 0; i < after.runs.size(); ++i) {
        const auto &r = after.runs[i];
        QCOMPARE(r.result.checkpoints.size(), size_t(i == 0 ? 2 : 1));
        QCOMPARE(r.result.checkpoints.back().reason, std::string("final"));
        QCOMPARE(r.result.checkpoints.front().keep, i == 0);
        for (const auto &c : r.result.checkpoints)
            QVERIFY(std::filesystem::exists(checkpointDirFor(path.toStdString(), r.config) + "/" +
                                            c.file));
    }
    QCOMPARE(after.runs[0].result.checkpoints.front().step, int64_t(200));
    QProcess none;
    none.start(cliPath(), {"prune", path, "--keep", "none"});
    QVERIFY(none.waitForFinished(60000));
    QCOMPARE(files(), 1); // the mark outlives even --keep none
    QCOMPARE(cli({"keep", path, "--run", "0", "--step", "200", "--off"}), 0);
    QVERIFY(!loadSession(path.toStdString()).runs[0].result.checkpoints.front().keep);
    QCOMPARE(cli({"prune", path, "--keep", "none"}), 0);
    QCOMPARE(files(), 0);
    QProcess bad;
    bad.start(cliPath(), {"prune", path, "--keep", "finals"});
    QVERIFY(bad.waitForFinished(60000));
    QCOMPARE(bad.exitCode(), 2);
    QVERIFY(bad.readAllStandardError().contains("'finals' is not a checkpoint reason"));
}

// checkpoints: {budget_mb: N}: over it, finished runs' checkpoints are pruned as each run ends,
// down to their final ones at most; a budget that fits removes nothing.
void TestCheckpoints::aCheckpointBudgetPrunesFinishedRuns()
{
    auto text = [](const char *budget) {
        return std::string("schema_version: 2\nname: b\ncheckpoints: {every: 50, keep: 3, "
                           "budget_mb: ") +
               budget +
               "}\n"
               "experiment:\n"
               "  task: {kind: addition, train_pairs: 64, test_pairs: 8}\n"
               "  model: {d_model: 8, heads: 2, layers: 1}\n"
               "  phases:\n    - {name: answer, objective: answer, steps: 300, batch_size: 4}\n"
               "  eval_every: 50\n  log_every: 10\n  device: cpu\n"
               "sweep:\n  seed: [0, 1, 2]\n";
    };
    QTemporaryDir tmp;
    auto runWith = [&](const char *budget, const QString &name) {
        const QString path = tmp.filePath(name);
        writeAll(path.toStdString(), text(budget));
        QProcess run;
        run.start(cliPath(), {"run", path, "--threads", "1"});
        run.waitForFinished(180000);
        return std::make_pair(path, QString::fromUtf8(run.readAllStandardError()));
    };
    const auto [tight, said] = runWith("0.001", "tight.yaml");
    QVERIFY2(said.contains("over the session's budget of 0.0 MB") &&
                 said.contains("their final ones kept") &&
                 said.contains("finished runs' final checkpoints are kept"),
             qPrintable(said));
    const Session after = loadSession(tight.toStdString());
    QCOMPARE(after.checkpoints.budgetMb, 0.001);
    QCOMPARE(after.runs.size(), size_t(3));
    for (const auto &r : after.runs) {
        QCOMPARE(r.result.status, RunStatus::Done);
        QCOMPARE(r.result.checkpoints.size(), size_t(1));
        QCOMPARE(r.result.checkpoints.front().reason, std::string("final"));
        int onDisk = 0;
        for (const auto &e :
             std::filesystem::directory_iterator(checkpointDirFor(tight.toStdString(), r.config)))
            onDisk += e.is_regular_file();
        QCOMPARE(onDisk, 1);
    }
    const auto [roomy, quiet] = runWith("1000", "roomy.yaml");
    QVERIFY2(!quiet.contains("budget"), qPrintable(quiet));
    for (const auto &r : loadSession(roomy.toStdString()).runs)
        QCOMPARE(r.result.checkpoints.size(), size_t(3));
    try {
        sessionFromYaml(text("-1"), "s.yaml");
        QFAIL("a negative budget was accepted");
    } catch (const SessionError &e) {
        QVERIFY2(QString(e.what()).contains("checkpoints.budget_mb"), e.what());
    }
}

void TestCheckpoints::checkpointsHoldWhatTheDocsSay()
{
    RunConfig c = twoPhaseRun(1, 1e-3);
    QTemporaryDir tmp;
    const std::string dir = dirOf(tmp, "run");
    CheckpointPolicy policy;
    policy.every = 40;
    policy.resumeStateNewestOnly = false; // step 40's keeps its moments (the default slims it)
    const auto r = train({c}, {dir}, {}, policy).front();
    const auto file = safetensors::read(fileAt(dir, 40));
    // docs/CHECKPOINTS.md: weights by name in x·W layout, the optimizer's moments, the curves.
    const auto *wq = file.find("layers.0.wq");
    QVERIFY(wq);
    QCOMPARE(wq->shape, (std::vector<int64_t>{16, 16}));
    QVERIFY(file.find("embedding") && file.find("positions") && file.find("unembedding"));
    QVERIFY(file.find("optimizer.exp_avg.layers.0.wq") &&
            file.find("optimizer.exp_avg_sq.layers.0.wq"));
    QVERIFY(file.find("curve.test") && file.find("curve.train") &&
            file.find("curve.extra.test_digit_0"));
    for (const char *key :
         {"format", "format_version", "step", "phase", "phase_step", "config", "config_yaml",
          "model", "reason", "status", "data_crc32", "libtorch", "headlab"})
        QVERIFY2(file.metadata.count(key), key);
    QCOMPARE(file.metadata.at("step"), std::string("40"));
    QCOMPARE(file.metadata.at("phase"), std::string("1"));
    QCOMPARE(file.metadata.at("phase_step"), std::string("10"));
    // The checkpoint's test curve ends with the logged test loss at its step.
    const auto loaded = loadCheckpoint(fileAt(dir, 40), &c);
    QCOMPARE(loaded.partial.test.back().step, int64_t(40));
    for (const auto &p : r.test)
        if (p.step == 40) QCOMPARE(loaded.partial.test.back().value, p.value);
    // Written for another config: refused by name.
    RunConfig other = c;
    other.lr = 5e-3;
    try {
        loadCheckpoint(fileAt(dir, 40), &other);
        QFAIL("a checkpoint of another config was accepted");
    } catch (const SessionError &e) {
        QVERIFY2(QString(e.what()).contains("another configuration"), e.what());
    }
}

void TestCheckpoints::theChecksumIsCrc32AndVersionOneFilesStillLoad()
{
    // CRC-32's check value (the CRC of "123456789", as every implementation lists it).
    safetensors::Tensor nine; // the checksum reads the bytes alone
    nine.data = "123456789";
    QCOMPARE(detail::dataCrc32({nine}), std::string("cbf43926"));
    // Split across tensors, the CRC runs on over the file's data in order.
    safetensors::Tensor first = nine, second = nine;
    first.data = "1234";
    second.data = "56789";
    QCOMPARE(detail::dataCrc32({first, second}), std::string("cbf43926"));

    RunConfig c = twoPhaseRun(1, 1e-3);
    QTemporaryDir tmp;
    const std::string dir = dirOf(tmp, "run");
    CheckpointPolicy policy;
    policy.every = 40;
    train({c}, {dir}, {}, policy);
    const std::string path = fileAt(dir, 40);
    auto file = safetensors::read(path);
    QCOMPARE(file.metadata.at("format_version"), std::to_string(kCheckpointVersion));
    QCOMPARE(file.metadata.at("data_crc32"), detail::dataCrc32(file.tensors));
    QVERIFY(!file.metadata.count("data_fnv1a64"));

    // A file of format version 1 (FNV-1a) is read, and its checksum still checked.
    file.metadata.erase("data_crc32");
    file.metadata["format_version"] = "1";
    file.metadata["data_fnv1a64"] = detail::hex(detail::dataHash(file.tensors));
    const std::string old = dirOf(tmp, "old.safetensors");
    safetensors::write(old, file);
    QCOMPARE(loadCheckpoint(old, &c).position.step, int64_t(40));
    std::string bytes = readAll(old);
    bytes[bytes.size() - 100] ^= 0x10;
    writeAll(old, bytes);
    try {
        loadCheckpoint(old, &c);
        QFAIL("a damaged version 1 checkpoint was accepted");
    } catch (const SessionError &e) {
        QVERIFY2(QString(e.what()).contains("does not match its checksum"), e.what());
    }
}

void TestCheckpoints::damagedCheckpointsAreNamedAndTheOneBeforeIsUsed()
{
    // A session whose one run stopped at step 70 with checkpoints at 20, 40, 60 and 70.
    QTemporaryDir tmp;
    const std::string sessionPath = dirOf(tmp, "s.yaml");
    Session session;
    session.base = twoPhaseRun(2, 1e-3);
    expandSweep(session);
    QCOMPARE(session.runs.size(), size_t(1));
    std::vector<SweepJob> jobs = pendingJobs(session);
    attachCheckpoints(jobs, session, sessionPath);
    const std::string dir = jobs.front().checkpointDir;
    QVERIFY(jobs.front().resumeFrom.empty());
    CheckpointPolicy policy;
    policy.every = 20;
    policy.keep = 10;
    policy.resumeStateNewestOnly = false; // every one can resume: the fallback chain below
    int polls = 0;
    train({session.base}, {dir}, {}, policy, [&](size_t) { return ++polls > 70; });

    auto attach = [&](std::vector<std::string> *notes) {
        std::vector<SweepJob> j = pendingJobs(session);
        *notes = attachCheckpoints(j, session, sessionPath);
        return j.front();
    };
    std::vector<std::string> notes;
    QCOMPARE(attach(&notes).resumeStep, int64_t(70));
    QVERIFY(notes.empty());

    // Truncated (a crash mid-copy, a full disk): named, and the one before it is used.
    const std::string s70 = fileAt(dir, 70), s60 = fileAt(dir, 60), s40 = fileAt(dir, 40);
    const std::string bytes = readAll(s70);
    writeAll(s70, bytes.substr(0, bytes.size() / 2));
    SweepJob job = attach(&notes);
    QCOMPARE(job.resumeStep, int64_t(60));
    QCOMPARE(notes.size(), size_t(1));
    QVERIFY2(QString::fromStdString(notes[0]).contains(QString::fromStdString(s70)),
             notes[0].c_str());
    QVERIFY2(notes[0].find("truncated") != std::string::npos, notes[0].c_str());
    QVERIFY2(notes[0].find("resumes from step 60 instead") != std::string::npos, notes[0].c_str());

    // A flipped bit in the data: the checksum says so.
    std::string flipped = readAll(s60);
    flipped[flipped.size() - 100] ^= 0x10;
    writeAll(s60, flipped);
    job = attach(&notes);
    QCOMPARE(job.resumeStep, int64_t(40));
    bool checksum = false;
    for (const auto &n : notes)
        checksum = checksum || n.find("does not match its checksum") != std::string::npos;
    QVERIFY2(checksum, notes.front().c_str());

    // Emptied, or garbage: named too.
    writeAll(s40, "");
    job = attach(&notes);
    QCOMPARE(job.resumeStep, int64_t(20));
    bool empty = false;
    for (const auto &n : notes)
        empty = empty || (n.find(s40) != std::string::npos &&
                          n.find("shorter than the 8-byte header") != std::string::npos);
    QVERIFY(empty);

    // And the run resumed from step 20 still ends as the uninterrupted one.
    const auto whole = train({session.base}, {dirOf(tmp, "whole")}, {}, policy).front();
    const auto resumed = train({session.base}, {dir}, {job.resumeFrom}, policy).front();
    compareResults(whole, resumed);

    // A finished run trained again starts at step 0; its old checkpoints are moved aside.
    session.runs.front().result = resumed;
    std::vector<SweepJob> again = {{0, session.base}};
    notes = attachCheckpoints(again, session, sessionPath);
    QVERIFY(again.front().resumeFrom.empty());
    QCOMPARE(notes.size(), size_t(1));
    QVERIFY2(notes[0].find("moved to") != std::string::npos, notes[0].c_str());
    QVERIFY(!std::filesystem::exists(dir));
}

void TestCheckpoints::foreignFilesAreRefusedWithAMessage()
{
    QTemporaryDir tmp;
    const std::string path = dirOf(tmp, "step-000000010.safetensors");
    auto refuses = [&](const std::string &bytes, const char *expected) {
        writeAll(path, bytes);
        try {
            inspectCheckpoint(path);
            QFAIL(qPrintable(QStringLiteral("accepted: ") + expected));
        } catch (const SessionError &e) {
            const QString m = e.what();
            QVERIFY2(m.contains(QString::fromStdString(path)) && m.contains(expected), e.what());
        }
    };
    refuses("not a checkpoint at all, but long enough", "header claims");
    refuses(std::string("\x05\0\0\0\0\0\0\0{\"a\":", 13), "not JSON");
    safetensors::Contents plain;
    plain.tensors.push_back({"w", safetensors::DType::F32, {2}, std::string(8, '\0')});
    refuses(safetensors::serialize(plain), "not a HeadLab checkpoint");
    std::string gap = safetensors::serialize(plain);
    gap += "xx"; // bytes after the last tensor
    refuses(gap, "after the last tensor");
    // A good file round-trips, and Python's layout rules hold: 8-byte aligned data.
    const std::string good = safetensors::serialize(plain);
    uint64_t n = 0;
    std::memcpy(&n, good.data(), 8);
    QCOMPARE(n % 8, uint64_t(0));
    QCOMPARE(safetensors::parse(good, path).tensors.front().data, std::string(8, '\0'));
}

void TestCheckpoints::sessionPolicyReadsAndWrites()
{
    const std::string base =
        "schema_version: 2\nexperiment: {task: {kind: addition}, phases: [{steps: 10}]}\n";
    Session s =
        sessionFromYaml(base + "checkpoints: {every: 250, keep: 5, plateaus: false}\n", "s.yaml");
    QCOMPARE(s.checkpoints.every, int64_t(250));
    QCOMPARE(s.checkpoints.keep, 5);
    QVERIFY(!s.checkpoints.plateaus);
    const Session back = sessionFromYaml(sessionToYaml(s), "back.yaml");
    QVERIFY(back.checkpoints == s.checkpoints);
    QVERIFY(!sessionFromYaml(base + "checkpoints: false\n", "s.yaml").checkpoints.enabled);
    QVERIFY(sessionFromYaml(base, "s.yaml").checkpoints == CheckpointPolicy{});
    auto refuses = [&](const std::string &extra, const char *expected) {
        try {
            sessionFromYaml(base + extra, "s.yaml");
            QFAIL(expected);
        } catch (const SessionError &e) {
            QVERIFY2(QString(e.what()).contains(expected), e.what());
        }
    };
    refuses("checkpoints: {keep: 0}\n", "s.yaml:3");
    refuses("checkpoints: {keep: 0}\n", "checkpoints.keep");
    refuses("checkpoints: {evry: 10}\n", "did you mean 'every'");
    refuses("checkpoints: {every: -5}\n", "checkpoints.every");
}

void TestCheckpoints::cliResumesAfterKillDashNine()
{
    // One run of 4,000 steps with a checkpoint every 250: kill -9 once it has passed 1,000, run again.
    const std::string text =
        "schema_version: 2\nname: k\ncheckpoints: {every: 250, keep: 2}\n"
        "experiment:\n"
        "  task: {kind: addition, train_pairs: 64, test_pairs: 8}\n"
        "  model: {d_model: 8, heads: 2, layers: 1}\n"
        "  phases:\n    - {name: answer, objective: answer, steps: 4000, batch_size: 4}\n"
        "  eval_every: 50\n  log_every: 10\n  device: cpu\n";
    QTemporaryDir tmp;
    const QString killed = tmp.filePath("killed.yaml"), whole = tmp.filePath("whole.yaml");
    writeAll(killed.toStdString(), text);
    writeAll(whole.toStdString(), text);
    QProcess process;
    process.start(cliPath(), {"run", killed, "--threads", "1"});
    QVERIFY(process.waitForStarted());
    Session expanded = sessionFromYaml(text, "k.yaml");
    expandSweep(expanded);
    const std::string dir = checkpointDirFor(killed.toStdString(), expanded.runs.front().config);
    bool past = false;
    for (int i = 0; i < 1200 && !past; ++i) {
        QTest::qWait(50);
        past = std::filesystem::exists(fileAt(dir, 1000));
    }
    QVERIFY2(past, "no checkpoint at step 1000 within a minute");
    ::kill(pid_t(process.processId()), SIGKILL);
    QVERIFY(process.waitForFinished(10000));
    std::vector<std::string> problems;
    const auto left = listCheckpoints(dir, &problems);
    QVERIFY(problems.empty());
    QVERIFY(!left.empty());
    const int64_t at = left.front().step;
    QVERIFY(at >= 1000 && at < 4000);

    QProcess again;
    again.start(cliPath(), {"run", killed, "--threads", "1"});
    QVERIFY(again.waitForFinished(180000));
    const QString err = QString::fromUtf8(again.readAllStandardError());
    QVERIFY2(again.exitCode() == 0, qPrintable(err));
    // What was found is said before it is checked, what was resumed after (issue 49: the count
    // was printed before the checks and was wrong after a fallback).
    QVERIFY2(
        err.contains(
            QStringLiteral("found checkpoints to resume 1 run from (%1 of their steps)").arg(at)),
        qPrintable(err));
    QVERIFY2(
        err.contains(
            QStringLiteral("resumed 1 run from checkpoints (%1 of their steps were already done)")
                .arg(at)),
        qPrintable(err));
    QProcess reference;
    reference.start(cliPath(), {"run", whole, "--threads", "1"});
    QVERIFY(reference.waitForFinished(180000));
    QCOMPARE(reference.exitCode(), 0);
    const Session a = loadSession(killed.toStdString()), b = loadSession(whole.toStdString());
    compareResults(a.runs.front().result, b.runs.front().result);
    // The run lists its kept checkpoints in its result file.
    QVERIFY(!a.runs.front().result.checkpoints.empty());
    QCOMPARE(a.runs.front().result.checkpoints.back().reason, std::string("final"));
}

void TestCheckpoints::pythonSnippetReproducesTheLoggedTestLoss()
{
    const QString python = QStringLiteral(HEADLAB_SOURCE_DIR "/.venv/bin/python");
    if (!QFile::exists(python)) QSKIP("no .venv (scripts/setup.sh makes it)");
    QProcess probe;
    probe.start(python, {"-c", "import safetensors, torch, numpy"});
    probe.waitForFinished(120000);
    if (probe.exitCode() != 0)
        QSKIP("the .venv has no safetensors (pip install safetensors==0.8.0)");
    RunConfig c = testing::tinyAdditionRun(24, {2, 3}, 200, 3e-3);
    c.model.heads = {2, 3};
    c.model.dModel = 24;
    c.evalEvery = 50;
    c.task.testPairs = 40;
    QTemporaryDir tmp;
    const std::string dir = dirOf(tmp, "run");
    CheckpointPolicy policy;
    policy.every = 100;
    const auto r = train({c}, {dir}, {}, policy).front();
    // The snippet of docs/CHECKPOINTS.md, run as the docs show it.
    QProcess snippet;
    snippet.setWorkingDirectory(QStringLiteral(HEADLAB_SOURCE_DIR "/python"));
    snippet.start(python, {"-m", "headlab.checkpoint", QString::fromStdString(fileAt(dir, 100))});
    QVERIFY(snippet.waitForFinished(180000));
    const QString out = QString::fromUtf8(snippet.readAllStandardOutput());
    QVERIFY2(snippet.exitCode() == 0, qPrintable(out + snippet.readAllStandardError()));
    // "test loss 2.2961 (logged 2.2961)": recomputed by an independent PyTorch model.
    const auto match =
        QRegularExpression(QStringLiteral("test loss ([0-9.eE+-]+) \\(logged ([0-9.eE+-]+)\\)"))
            .match(out);
    QVERIFY2(match.hasMatch(), qPrintable(out));
    double logged = 0;
    for (const auto &p : r.test)
        if (p.step == 100) logged = p.value;
    QVERIFY(std::abs(match.captured(2).toDouble() - logged) < 1e-9 * std::max(1.0, logged) + 1e-12);
    QVERIFY2(std::abs(match.captured(1).toDouble() - logged) < 1e-5, qPrintable(out));
}

// A checkpoint that lists (its header and checksum are fine) but does not fit its run is never the
// run's end: the trainer names it, sets it aside (NAME.unusable), falls back to the checkpoint
// before it, and the run ends exactly as the uninterrupted one.
void TestCheckpoints::aCheckpointThatDoesNotFitFallsBackAndTheRunStillTrains_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("said");
    QTest::newRow("another configuration's file") << "foreign"
                                                  << "another configuration";
    QTest::newRow("a transposed tensor") << "transposed"
                                         << "another shape or dtype";
    QTest::newRow("a missing tensor") << "missing"
                                      << "has no tensor";
    QTest::newRow("a wrong dtype") << "dtype"
                                   << "another shape or dtype";
    QTest::newRow("a step beyond the protocol") << "step"
                                                << "outside the run's protocol";
    QTest::newRow("done with steps to go") << "done"
                                           << "calls the run done after 70 steps";
    QTest::newRow("diverged after its own step") << "diverged"
                                                 << "calls the run diverged at step 500";
    QTest::newRow("other task data") << "data"
                                     << "the run's data changed";
}

void TestCheckpoints::aCheckpointThatDoesNotFitFallsBackAndTheRunStillTrains()
{
    QFETCH(QString, kind);
    QFETCH(QString, said);
    QTemporaryDir tmp;
    const RunConfig config = twoPhaseRun(3, 1e-3);
    CheckpointPolicy policy;
    policy.every = 20;
    policy.keep = 10;
    const std::string pristine = dirOf(tmp, "pristine"), dir = dirOf(tmp, "run");
    int polls = 0;
    train({config}, {pristine}, {}, policy, [&](size_t) { return ++polls > 70; });
    QVERIFY(std::filesystem::exists(fileAt(pristine, 70)) &&
            std::filesystem::exists(fileAt(pristine, 60)));
    const auto whole = train({config}, {dirOf(tmp, "whole")}, {}, policy).front();

    copyFolder(pristine, dir);
    const std::string s70 = fileAt(dir, 70);
    if (kind == "foreign") {
        const std::string other = dirOf(tmp, "other");
        polls = 0;
        train({twoPhaseRun(4, 1e-3)}, {other}, {}, policy, [&](size_t) { return ++polls > 70; });
        QFile::remove(QString::fromStdString(s70));
        QVERIFY(
            QFile::copy(QString::fromStdString(fileAt(other, 70)), QString::fromStdString(s70)));
    } else {
        rewrite(s70, [&](safetensors::Contents &c) {
            safetensors::Tensor *weight = nullptr;
            for (auto &t : c.tensors)
                if (t.shape.size() == 2 && t.shape[0] != t.shape[1] &&
                    t.name.rfind("curve", 0) != 0 && !weight)
                    weight = &t;
            if (kind == "transposed")
                std::swap(weight->shape[0], weight->shape[1]);
            else if (kind == "missing")
                weight->name = "not." + weight->name;
            else if (kind == "dtype") {
                weight->dtype = safetensors::DType::F64;
                weight->data += weight->data;
            } else if (kind == "step")
                c.metadata["step"] = "99999999";
            else if (kind == "done")
                c.metadata["status"] = "done";
            else if (kind == "diverged") {
                c.metadata["status"] = "diverged";
                c.metadata["diverged_at_step"] = "500";
            } else if (kind == "data")
                c.metadata["task_data"] = R"J({"file":"examples.csv (fnv1a64 0123456789abcdef)"})J";
        });
    }
    const auto resumed = train({config}, {dir}, {s70}, policy).front();
    QVERIFY2(resumed.status == RunStatus::Done, resumed.message.c_str());
    QVERIFY2(QString::fromStdString(resumed.message).contains(said), resumed.message.c_str());
    QVERIFY2(QString::fromStdString(resumed.message).contains("resumed from step 60 instead"),
             resumed.message.c_str());
    QVERIFY(std::filesystem::exists(s70 + ".unusable")); // kept, and never offered again
    compareResults(whole, resumed);
}

// Runs of different head counts at one width train as one ensemble, and compute other bits there
// than alone. A kill between the members' checkpoint writes leaves one a step ahead: both resume
// from the newest step they both have, as one ensemble, and end as the uninterrupted ensemble.
void TestCheckpoints::anEnsembleResumesFromTheNewestStepAllItsRunsHave()
{
    QTemporaryDir tmp;
    const std::string sessionPath = dirOf(tmp, "s.yaml");
    const auto [one, two] = oneShapeTwoHeadCounts(5, 5);
    QCOMPARE(ensembleKey(one), ensembleKey(two));
    Session session;
    session.base = one;
    std::vector<SweepJob> jobs = {{0, one}, {1, two}};
    QVERIFY(attachCheckpoints(jobs, session, sessionPath).empty());
    CheckpointPolicy policy;
    policy.every = 20;
    policy.keep = 10;
    int polls = 0;
    train({one, two}, {jobs[0].checkpointDir, jobs[1].checkpointDir}, {}, policy,
          [&](size_t) { return ++polls > 140; });
    const auto whole = train({one, two}, {dirOf(tmp, "w1"), dirOf(tmp, "w2")}, {}, policy);

    // Each names both runs as its ensemble.
    QCOMPARE(inspectCheckpoint(fileAt(jobs[1].checkpointDir, 70)).ensemble,
             ensembleMembers({jobs[0].checkpointDir, jobs[1].checkpointDir}));
    // The second run's step-70 checkpoint was never written (killed between the two writes).
    std::error_code error;
    QVERIFY(std::filesystem::remove(fileAt(jobs[1].checkpointDir, 70), error));
    std::vector<SweepJob> again = {{0, one}, {1, two}};
    const auto notes = attachCheckpoints(again, session, sessionPath);
    QCOMPARE(again[0].resumeStep, int64_t(60));
    QCOMPARE(again[1].resumeStep, int64_t(60));
    QVERIFY2(!notes.empty() && notes.front().find("newest step every run of its ensemble has") !=
                                   std::string::npos,
             notes.empty() ? "no note" : notes.front().c_str());
    const auto resumed = train({one, two}, {again[0].checkpointDir, again[1].checkpointDir},
                               {again[0].resumeFrom, again[1].resumeFrom}, policy);
    compareResults(whole[0], resumed[0]);
    compareResults(whole[1], resumed[1]);

    // A run with no checkpoint at all: the ensemble starts over together.
    QDir(QString::fromStdString(again[1].checkpointDir)).removeRecursively();
    std::vector<SweepJob> fresh = {{0, one}, {1, two}};
    attachCheckpoints(fresh, session, sessionPath);
    QVERIFY(fresh[0].resumeFrom.empty() && fresh[1].resumeFrom.empty());
}

// Runs of one shape can train in several ensembles (--max-ensemble, the card's memory, several
// devices), which stop at different steps. Each ensemble resumes from its own newest step: before
// the checkpoints named their ensemble, such runs were grouped by shape, had no step in common
// (older checkpoints keep their weights alone) and all started again at step 0.
void TestCheckpoints::ensemblesOfOneShapeResumeEachFromItsOwnStep()
{
    QTemporaryDir tmp;
    const std::string sessionPath = dirOf(tmp, "s.yaml");
    const auto [one, two] = oneShapeTwoHeadCounts(5, 6);
    QCOMPARE(ensembleKey(one), ensembleKey(two));
    Session session;
    session.base = one;
    std::vector<SweepJob> jobs = {{0, one}, {1, two}};
    QVERIFY(attachCheckpoints(jobs, session, sessionPath).empty());
    CheckpointPolicy policy; // the default: older checkpoints keep their weights alone
    policy.every = 20;
    policy.keep = 3;
    int polls = 0;
    const auto stoppedOne = train({one}, {jobs[0].checkpointDir}, {}, policy, [&](size_t) {
                                return ++polls > 70;
                            }).front();
    polls = 0;
    const auto stoppedTwo = train({two}, {jobs[1].checkpointDir}, {}, policy, [&](size_t) {
                                return ++polls > 50;
                            }).front();
    QCOMPARE(stoppedOne.stepsDone, int64_t(70));
    QCOMPARE(stoppedTwo.stepsDone, int64_t(50));
    const auto first = inspectCheckpoint(fileAt(jobs[0].checkpointDir, 70));
    const auto second = inspectCheckpoint(fileAt(jobs[1].checkpointDir, 50));
    QCOMPARE(first.ensemble, ensembleMembers({jobs[0].checkpointDir}));
    QCOMPARE(second.ensemble, ensembleMembers({jobs[1].checkpointDir}));

    std::vector<SweepJob> again = {{0, one}, {1, two}};
    const auto notes = attachCheckpoints(again, session, sessionPath);
    QVERIFY2(notes.empty(), notes.empty() ? "" : notes.front().c_str());
    QCOMPARE(again[0].resumeStep, int64_t(70));
    QCOMPARE(again[1].resumeStep, int64_t(50));
    QVERIFY(again[0].resumeEnsemble != again[1].resumeEnsemble); // the scheduler keeps them apart
    // Each resumed alone, as it trained, ends as it would have uninterrupted.
    const auto wholeOne = train({one}, {dirOf(tmp, "w1")}, {}, policy).front();
    const auto wholeTwo = train({two}, {dirOf(tmp, "w2")}, {}, policy).front();
    compareResults(wholeOne,
                   train({one}, {again[0].checkpointDir}, {again[0].resumeFrom}, policy).front());
    compareResults(wholeTwo,
                   train({two}, {again[1].checkpointDir}, {again[1].resumeFrom}, policy).front());
}

// The nearest-neighbour task's checkpoints written on the GPU before Task::paths() carry
// task_data {"fused_points": "on"}: which kernel made the points, not what they are. Such a file
// resumes (it was refused, and its run trained again from step 0), and the run ends as the
// uninterrupted one.
void TestCheckpoints::aCheckpointNamingTheKernelsPathResumes()
{
    QTemporaryDir tmp;
    RunConfig c = loadPreset("nn-classroom").base;
    c.model.heads = {2};
    c.phases.resize(1);
    c.phases[0].steps = 40;
    c.phases[0].batchSize = 16;
    c.evalEvery = 20;
    c.logEvery = 5;
    c.device = "cpu";
    CheckpointPolicy policy;
    policy.every = 10;
    const std::string dir = dirOf(tmp, "run");
    int polls = 0;
    const auto stopped =
        train({c}, {dir}, {}, policy, [&](size_t) { return ++polls > 25; }).front();
    QCOMPARE(stopped.status, RunStatus::Stopped);
    const std::string path = dir + "/" + stopped.checkpoints.back().file;
    auto contents = safetensors::read(path);
    contents.metadata["task_data"] = R"({"fused_points":"on"})"; // as the GPU path wrote it
    safetensors::write(path, contents);
    QCOMPARE(loadCheckpoint(path, &c).taskData.at("fused_points"), std::string("on"));
    const auto resumed = train({c}, {dir}, {path}, policy).front();
    QVERIFY2(resumed.message.find("not a usable") == std::string::npos, resumed.message.c_str());
    compareResults(train({c}, {dirOf(tmp, "whole")}, {}, policy).front(), resumed);
}

// The previous release marked a run (and its ensemble) failed for good when a checkpoint did not
// load. Such a run failed for a file, not for its training: it is pending again, and resumes
// from its checkpoints rather than having them moved aside as a finished run's would be.
void TestCheckpoints::aRunThatFailedOnACheckpointTrainsAgain()
{
    QTemporaryDir tmp;
    const std::string sessionPath = dirOf(tmp, "s.yaml");
    CheckpointPolicy policy;
    policy.every = 20;
    auto [session, dir] = stoppedAtStep70(sessionPath, 7, policy);
    RunResult &stored = session.runs.front().result;
    stored.status = RunStatus::Failed;
    stored.message = dir +
                     "/step-000000070.safetensors: is not a usable checkpoint: it was written "
                     "for another configuration than this run's";
    QVERIFY(failedOnACheckpoint(stored));
    QCOMPARE(pendingRuns(session), std::vector<int>{0});
    std::vector<SweepJob> again = pendingJobs(session);
    QVERIFY(attachCheckpoints(again, session, sessionPath).empty());
    QCOMPARE(again.front().resumeStep, int64_t(70));
    // A run that failed in training stays failed.
    stored.message = "CUDA out of memory";
    QVERIFY(!failedOnACheckpoint(stored));
    QVERIFY(pendingRuns(session).empty());
}

// An interrupted run left 8-20 checkpoints where `keep` asks for a few: the resumed run listed
// only the one it resumed from, so the earlier ones were never pruned. And a checkpoint being
// written when the process died left a temporary file that nothing removed.
void TestCheckpoints::resumingPrunesEarlierCheckpointsAndSweepsLeftovers()
{
    QTemporaryDir tmp;
    const std::string sessionPath = dirOf(tmp, "s.yaml");
    CheckpointPolicy many;
    many.every = 10;
    many.keep = 20;
    many.plateaus = false;
    auto [session, dir] = stoppedAtStep70(sessionPath, 8, many);
    QCOMPARE(listCheckpoints(dir).size(), size_t(7)); // steps 10 ... 70
    writeAll(dir + "/.step-000000080.safetensors.tmp-4242", "half a checkpoint");

    std::vector<SweepJob> again = pendingJobs(session);
    attachCheckpoints(again, session, sessionPath);
    QVERIFY(
        !QFileInfo::exists(QString::fromStdString(dir + "/.step-000000080.safetensors.tmp-4242")));
    CheckpointPolicy few = many;
    few.keep = 2;
    const auto resumed = train({session.base}, {dir}, {again.front().resumeFrom}, few).front();
    QCOMPARE(resumed.status, RunStatus::Done);
    const auto left = listCheckpoints(dir);
    QCOMPARE(left.size(), size_t(2)); // the final one and the one before it; 10 ... 70 pruned
    QCOMPARE(left.front().step, int64_t(120));
    QCOMPARE(resumed.checkpoints.size(), size_t(2));
}

// Headers that broke the reader: a number beyond double range, nesting 50,000 deep, a shape whose
// size overflows, and a curve step beyond int64. Each is refused with the file named.
void TestCheckpoints::hostileCheckpointHeadersAreRefusedByName()
{
    QTemporaryDir tmp;
    auto header = [](const std::string &json) {
        std::string h = json;
        h.append((8 - h.size() % 8) % 8, ' ');
        std::string out(8, '\0');
        const uint64_t n = h.size();
        std::memcpy(out.data(), &n, 8);
        return out + h;
    };
    const std::vector<std::pair<std::string, std::string>> cases = {
        {header(R"({"x":1e999})"), "not JSON HeadLab can read"},
        {header(R"({"t":{"dtype":"F32","shape":)" + std::string(50000, '[') +
                std::string(50000, ']') + R"(,"data_offsets":[0,0]}})"),
         "nests deeper than 8 levels"},
        {header(
             R"({"t":{"dtype":"F32","shape":[1099511627776,1099511627776,16],"data_offsets":[0,0]}})"),
         "is too large"}};
    for (const auto &[bytes, said] : cases) {
        const std::string path = dirOf(tmp, "step-000000010.safetensors");
        writeAll(path, bytes);
        for (bool whole : {false, true}) {
            try {
                inspectCheckpoint(path, whole);
                QFAIL("a hostile header was accepted");
            } catch (const SessionError &e) {
                QVERIFY2(
                    QString::fromStdString(e.what()).contains(QString::fromStdString(path)) &&
                        QString::fromStdString(e.what()).contains(QString::fromStdString(said)),
                    e.what());
            }
        }
        std::vector<std::string> problems;
        QVERIFY(listCheckpoints(tmp.path().toStdString(), &problems).empty());
        QCOMPARE(problems.size(), size_t(1));
    }

    // A curve step of 7e29 (UBSan: a cast beyond int64): refused, not cast.
    const std::string dir = dirOf(tmp, "run");
    CheckpointPolicy policy;
    policy.every = 20;
    train({twoPhaseRun(6, 1e-3)}, {dir}, {}, policy);
    const std::string file = fileAt(dir, 120);
    rewrite(file, [](safetensors::Contents &c) {
        for (auto &t : c.tensors)
            if (t.name == "curve.train") {
                const double big = 7e29;
                std::memcpy(t.data.data(), &big, sizeof big);
            }
    });
    // The device is where a run trained, not what it is: a checkpoint written on the CPU (or on
    // "cuda:0" for a session's "auto", which inspect refused on the GPU machine) fits the run.
    RunConfig elsewhere = twoPhaseRun(6, 1e-3);
    elsewhere.device = "auto";
    QCOMPARE(loadCheckpoint(fileAt(dir, 100), &elsewhere).position.step, int64_t(100));
    try {
        loadCheckpoint(file);
        QFAIL("a curve step of 7e29 was accepted");
    } catch (const SessionError &e) {
        QVERIFY2(QString::fromStdString(e.what()).contains("not a whole number of steps"),
                 e.what());
    }
}

QTEST_GUILESS_MAIN(TestCheckpoints)
#include "test_checkpoints.moc"
