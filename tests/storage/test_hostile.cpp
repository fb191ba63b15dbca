// test_hostile.cpp — issue 49, round three of hostile input, as headlab-cli meets it: nothing is
// deleted or written outside a run's own checkpoint files (prune, the disk budget and the trainer
// against foreign files and links out of the results folder), no hang on a FIFO named like a lock,
// no second shard layout, no export over a session being trained, atomic CSV exports, bounded
// probes, a session whose results folder is missing, and the messages users met. Each case failed
// before its fix.
#include "core/lab/SweepSession.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace headlab;
namespace fs = std::filesystem;

namespace {

void writeFile(const std::string &path, const std::string &text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

std::string readFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

struct CliResult {
    int exitCode = -1; // -1: did not finish in time, or crashed
    QString out, err;
};

CliResult cli(const QStringList &args, int timeoutMs = 120000)
{
    QProcess p;
    p.start(QStringLiteral(HEADLAB_CLI_PATH), args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

// Four tiny runs (heads 1, 2 × seeds 0, 1) that keep checkpoints every 10 steps.
std::string tinySession(const std::string &checkpoints = "{every: 10, keep: 5}")
{
    return "schema_version: 2\n"
           "name: hostile\n"
           "checkpoints: " +
           checkpoints +
           "\n"
           "experiment:\n"
           "  task: {kind: addition, train_pairs: 64, test_pairs: 8}\n"
           "  model: {d_model: 8, layers: 1}\n"
           "  phases:\n"
           "    - {name: answer, objective: answer, steps: 30, batch_size: 4}\n"
           "  eval_every: 10\n"
           "  log_every: 5\n"
           "  device: cpu\n"
           "sweep:\n"
           "  heads: [1, 2]\n"
           "  seed: [0, 1]\n";
}

// Holds `path` locked as a HeadLab writer would (flock, its holder text) until destroyed.
class HeldLock {
public:
    explicit HeldLock(const std::string &path)
    {
        fs::create_directories(fs::path(path).parent_path());
        m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (m_fd >= 0 && ::flock(m_fd, LOCK_EX | LOCK_NB) == 0) {
            const std::string holder = "PID " + std::to_string(::getpid()) + " on test since now\n";
            const ssize_t written = ::write(m_fd, holder.data(), holder.size());
            (void)written; // the text is only what messages quote
        }
    }
    ~HeldLock()
    {
        if (m_fd >= 0) ::close(m_fd);
    }
    bool held() const { return m_fd >= 0; }

private:
    int m_fd = -1;
};

} // namespace

class TestHostile : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    // A session trained once by the CLI (every run done, with checkpoints), copied per test.
    std::string m_trained;

    // (cp -a and POSIX calls: some std::filesystem calls resolve into libtorch's copy and crash.)
    std::string copyTrained(const QString &name)
    {
        const QString to = m_dir.filePath(name);
        QDir().mkpath(to);
        QProcess cp;
        cp.start("cp", {"-a", QString::fromStdString(m_trained),
                        QString::fromStdString(resultsDirFor(m_trained)), to});
        cp.waitForFinished();
        return (to + "/s.yaml").toStdString();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trained = m_dir.filePath("trained/s.yaml").toStdString();
        fs::create_directories(fs::path(m_trained).parent_path());
        writeFile(m_trained, tinySession());
        const CliResult r = cli({"run", QString::fromStdString(m_trained), "--threads", "1"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    }

    void pruneRemovesOnlyCheckpointFilesInsideTheResults()
    {
        // A session handed over as a tarball: one run's checkpoint folder links to a home folder,
        // another holds the user's notes and a link named like a checkpoint.
        const std::string session = copyTrained("prune");
        Session s = loadSession(session);
        expandSweep(s);
        const std::string home = m_dir.filePath("prune-home").toStdString();
        fs::create_directories(home);
        writeFile(home + "/notes.txt", "my notes");
        writeFile(home + "/thesis.tex", "my thesis");
        writeFile(home + "/step-000000010.safetensors", "not HeadLab's");
        const std::string linked = checkpointDirFor(session, s.runs[0].config);
        QVERIFY(QDir(QString::fromStdString(linked)).removeRecursively());
        QCOMPARE(::symlink(home.c_str(), linked.c_str()), 0);
        const std::string real = checkpointDirFor(session, s.runs[1].config);
        writeFile(real + "/notes.txt", "notes beside the checkpoints");
        const std::string outside = m_dir.filePath("prune-outside.safetensors").toStdString();
        writeFile(outside, "a file the link points to");
        QCOMPARE(::symlink(outside.c_str(), (real + "/step-000000005.safetensors").c_str()), 0);

        const CliResult r = cli({"prune", QString::fromStdString(session), "--keep", "none"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        for (const char *name : {"notes.txt", "thesis.tex", "step-000000010.safetensors"})
            QVERIFY2(fs::exists(home + "/" + name), name);
        QVERIFY(QFileInfo(QString::fromStdString(linked)).isSymLink());
        QCOMPARE(readFile(real + "/notes.txt"), std::string("notes beside the checkpoints"));
        QVERIFY(
            QFileInfo(QString::fromStdString(real + "/step-000000005.safetensors")).isSymLink());
        QCOMPARE(readFile(outside), std::string("a file the link points to"));
        // Its own checkpoints are gone, and prune names what it left and why.
        QVERIFY(!fs::exists(real + "/step-000000030.safetensors"));
        QVERIFY2(r.err.contains("is a symbolic link") && r.err.contains("notes.txt: left alone"),
                 qPrintable(r.err));
        QVERIFY(!r.err.contains("thesis.tex"));
    }

    void theTrainerAndTheBudgetNeverWriteThroughALink()
    {
        // A session whose run folder links out before it trains, and a budget that prunes.
        QTemporaryDir dir;
        const std::string session = dir.filePath("s.yaml").toStdString();
        writeFile(session, tinySession("{every: 10, keep: 5, budget_mb: 0.000001}"));
        Session s = loadSession(session);
        expandSweep(s);
        const std::string home = dir.filePath("home").toStdString();
        fs::create_directories(home);
        writeFile(home + "/thesis.tex", "my thesis");
        const std::string linked = checkpointDirFor(session, s.runs[2].config);
        fs::create_directories(fs::path(linked).parent_path());
        QCOMPARE(::symlink(home.c_str(), linked.c_str()), 0);
        const CliResult r = cli({"run", QString::fromStdString(session), "--threads", "1"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("is a symbolic link") &&
                     r.err.contains("trains without checkpoints"),
                 qPrintable(r.err));
        // Nothing was written into or removed from the linked folder.
        QCOMPARE(std::distance(fs::directory_iterator(home), fs::directory_iterator()), 1L);
        QCOMPARE(readFile(home + "/thesis.tex"), std::string("my thesis"));
        // The run itself trained to the end.
        const Session after = loadSession(session);
        for (const auto &run : after.runs) QCOMPARE(run.result.status, RunStatus::Done);
    }

    void aFifoNamedLikeALockBlocksNothing_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("lock") << "lock";
        QTest::newRow("shard lock") << "lock.shard-1-of-2";
    }

    void aFifoNamedLikeALockBlocksNothing()
    {
        QFETCH(QString, name);
        const std::string session = copyTrained("fifo-" + QString(name).replace('.', '-'));
        const std::string fifo = resultsDirFor(session) + "/" + name.toStdString();
        fs::remove(fifo);
        QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
        const QString s = QString::fromStdString(session);
        for (const QStringList &args :
             {QStringList{"status", s}, QStringList{"validate", s}, QStringList{"merge", s},
              QStringList{"prune", s, "--dry-run"},
              QStringList{"export-csv", s, "-o", m_dir.filePath("fifo-csv")}}) {
            const CliResult r = cli(args, 30000);
            QVERIFY2(r.exitCode >= 0, qPrintable("blocked: " + args.join(' ')));
        }
        // A writer refuses a lock that is not a regular file, and says which.
        const CliResult run = cli({"run", s, "--threads", "1"}, 30000);
        if (name == "lock") {
            QCOMPARE(run.exitCode, 2);
            QVERIFY2(run.err.contains("is not a regular file"), qPrintable(run.err));
        } else {
            QVERIFY2(run.exitCode == 0, qPrintable(run.err)); // nothing to train; not blocked
        }
    }

    void aShardOfAnotherCountIsRefused()
    {
        QTemporaryDir dir;
        const std::string session = dir.filePath("s.yaml").toStdString();
        writeFile(session, tinySession());
        HeldLock shard(resultsDirFor(session) + "/lock.shard-1-of-2");
        QVERIFY(shard.held());
        const CliResult r =
            cli({"run", QString::fromStdString(session), "--shard", "1/3", "--threads", "1"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("shards of another count") && r.err.contains("shard 1/2"),
                 qPrintable(r.err));
        // The same layout is still allowed (shard 2 of 2 beside shard 1 of 2).
        const CliResult same =
            cli({"run", QString::fromStdString(session), "--shard", "2/2", "--threads", "1"});
        QVERIFY2(same.exitCode == 0, qPrintable(same.err));
    }

    void exportYamlWillNotOverwriteASessionBeingTrained()
    {
        const std::string session = copyTrained("export-locked");
        const std::string before = readFile(session);
        HeldLock lock(resultsDirFor(session) + "/lock");
        QVERIFY(lock.held());
        const QString s = QString::fromStdString(session);
        const CliResult r = cli({"export-yaml", s, "-o", s});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("is being trained now"), qPrintable(r.err));
        QCOMPARE(readFile(session), before);
    }

    void exportCsvIsAtomic()
    {
        // The export is written whole, then a second export fails half way (a file-size limit
        // stands in for a full disk): the first export's files are still whole.
        const std::string session = copyTrained("csv");
        const QString out = m_dir.filePath("csv-out");
        QCOMPARE(cli({"export-csv", QString::fromStdString(session), "-o", out}).exitCode, 0);
        const std::string runs = readFile((out + "/runs.csv").toStdString());
        const std::string curves = readFile((out + "/curves.csv").toStdString());
        QVERIFY(curves.size() > 2048);
        QProcess p;
        p.start("bash", {"-c", "trap '' XFSZ; ulimit -f 1; exec \"$0\" export-csv \"$1\" -o \"$2\"",
                         QStringLiteral(HEADLAB_CLI_PATH), QString::fromStdString(session), out});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() != 0, "the export under a 1 KiB file limit cannot succeed");
        QCOMPARE(readFile((out + "/runs.csv").toStdString()), runs);
        QCOMPARE(readFile((out + "/curves.csv").toStdString()), curves);
        for (const auto &e : fs::directory_iterator(out.toStdString()))
            QVERIFY2(e.path().filename().string().find(".tmp-") == std::string::npos,
                     "a temporary file was left");
    }

    void probesBeyondTheBudgetAreRefused()
    {
        QTemporaryDir dir;
        const std::string session = dir.filePath("s.yaml").toStdString();
        std::string text = "schema_version: 2\n"
                           "experiment:\n"
                           "  task: {kind: addition, train_pairs: 64, test_pairs: 8}\n"
                           "  model: {d_model: 8, heads: 1, layers: 1}\n"
                           "  phases: [{name: answer, objective: answer, steps: 30, batch_size: "
                           "4}]\n"
                           "search:\n"
                           "  axis: lr\n"
                           "  range: [0.0001, 0.1]\n"
                           "  replicates: 2\n"
                           "  initial_points: 3\n"
                           "  budget: 8\n"
                           "  probes:\n";
        for (int i = 0; i < 5; ++i)
            text += "    - {round: 0, value: 0.00" + std::to_string(i + 1) + ", replicates: 2}\n";
        writeFile(session, text);
        const CliResult r = cli({"validate", QString::fromStdString(session)});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("search.probes[4].replicates") &&
                     r.err.contains("more than the search's budget of 8"),
                 qPrintable(r.err));
    }

    void keepNamesABadStepInWords()
    {
        const std::string session = copyTrained("keep");
        const CliResult r =
            cli({"keep", QString::fromStdString(session), "--run", "0", "--step", "-1"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("a checkpoint's step is 0 or more, got -1"), qPrintable(r.err));
        QVERIFY2(!r.err.contains("1797693"), qPrintable(r.err));
    }

    void slurmLogsKeepAPercentInTheSessionsPath()
    {
        // sbatch reads "%x" in --output as the job's name: a folder "100%x" must stay a folder.
        QTemporaryDir dir;
        const QString folder = dir.filePath("100%x");
        QVERIFY(QDir().mkpath(folder));
        writeFile((folder + "/s.yaml").toStdString(), tinySession());
        const CliResult r = cli({"slurm", folder + "/s.yaml", "--array", "2", "--dry-run"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("100%%x/s.results/slurm/%A_%a.log"), qPrintable(r.out));
        QVERIFY2(!r.out.contains("100%x/s.results/slurm"), qPrintable(r.out));
    }

    void anExamplesFileMustBeNamedAsOne()
    {
        QTemporaryDir dir;
        const std::string session = dir.filePath("s.yaml").toStdString();
        writeFile(session,
                  "schema_version: 2\n"
                  "experiment:\n"
                  "  task: {kind: sequence_file, path: /etc/passwd}\n"
                  "  model: {d_model: 8, heads: 1, layers: 1}\n"
                  "  phases: [{name: answer, objective: answer, steps: 5, batch_size: 4}]\n"
                  "  device: cpu\n");
        const CliResult r = cli({"run", QString::fromStdString(session), "--threads", "1"});
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains("/etc/passwd") && r.err.contains("not named as an examples file"),
                 qPrintable(r.err));
        QVERIFY2(!r.err.contains("root:"), qPrintable(r.err));
    }

    void aMissingResultsFolderIsReportedAndNeverRetrained()
    {
        const std::string session = copyTrained("missing");
        const std::string index = readFile(session);
        fs::rename(resultsDirFor(session), resultsDirFor(session) + ".elsewhere");
        const QString s = QString::fromStdString(session);
        const CliResult v = cli({"validate", s});
        QCOMPARE(v.exitCode, 0);
        QVERIFY2(v.out.contains("0 finished, 0 to run, 4 finished but missing"), qPrintable(v.out));
        QVERIFY2(v.err.contains("lists 4 finished runs whose result files are not in"),
                 qPrintable(v.err));
        const CliResult r = cli({"run", s, "--threads", "1"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("nothing was trained"), qPrintable(r.err));
        QCOMPARE(readFile(session), index);
        QVERIFY(!fs::exists(resultsDirFor(session)));
        // The store never writes an index that would forget them.
        Session loaded = loadSession(session);
        QCOMPARE(loaded.missingRunFiles.size(), size_t(4));
        expandSweep(loaded);
        QVERIFY(pendingRuns(loaded).empty());
        try {
            SessionStore store(session);
            store.saveSession(loaded);
            QFAIL("an index without its results was written");
        } catch (const SessionError &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains("not saved"), e.what());
        }
        QCOMPARE(readFile(session), index);
    }

    // A link to a session is that session (issue 74): its lock and results folder are the
    // target's, so `export-yaml s.yaml -o alias.yaml` and `run s.yaml -o alias.yaml` are refused
    // while s.yaml is being written, as they are through its own name, and a writer through the
    // link writes the target, leaving the link a link.
    void aLinkToASessionSharesItsLock()
    {
        const std::string dir = m_dir.filePath("linked").toStdString();
        fs::create_directories(dir);
        const std::string session = dir + "/s.yaml", alias = dir + "/alias.yaml";
        writeFile(session, tinySession());
        fs::create_symlink("s.yaml", alias);
        QCOMPARE(sessionFileOf(alias), session);
        QCOMPARE(resultsDirFor(alias), resultsDirFor(session));
        {
            SessionStore writer(session);
            try {
                SessionStore second(alias);
                QFAIL("a second writer came in through a link");
            } catch (const SessionError &e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains("is being written by another"),
                         e.what());
            }
            const QString s = QString::fromStdString(session), a = QString::fromStdString(alias);
            for (const QStringList &args : {QStringList{"export-yaml", s, "-o", a},
                                            QStringList{"run", s, "-o", a, "--threads", "1"}}) {
                const CliResult r = cli(args);
                QVERIFY2(r.exitCode == 2, qPrintable(args.join(' ') + ": " + r.err));
                QVERIFY2(r.err.contains("being"), qPrintable(r.err));
            }
            QVERIFY(fs::is_symlink(alias));
            QVERIFY(!fs::exists(dir + "/alias.results"));
            // --overwrite moved the trained session's results folder aside behind its writer's
            // back; now it is refused, through the link as through the name, and nothing moves.
            const std::string other = dir + "/other.yaml";
            writeFile(other, tinySession());
            const QString o = QString::fromStdString(other);
            for (const QString &target : {s, a}) {
                const CliResult r = cli({"run", o, "-o", target, "--overwrite", "--threads", "1"});
                QVERIFY2(r.exitCode == 2, qPrintable(target + ": " + r.err));
                QVERIFY2(r.err.contains("does not move its results aside while it trains"),
                         qPrintable(r.err));
            }
            QVERIFY(fs::exists(resultsDirFor(session) + "/lock"));
            for (const auto &entry : fs::directory_iterator(dir))
                QVERIFY2(entry.path().filename().string().find(".replaced-") == std::string::npos,
                         entry.path().c_str());
        }
        SessionStore throughTheLink(alias);
        QCOMPARE(QString::fromStdString(throughTheLink.sessionPath()),
                 QString::fromStdString(session));
    }

    // A FIFO among the run files is named as what it stands in for (issue 74: the message said
    // "expected a session file"), and does not block the load.
    void aFifoAmongTheRunFilesIsNamedAsOne()
    {
        const std::string dir = m_dir.filePath("fifo").toStdString();
        fs::create_directories(dir);
        fs::copy(fs::path(m_trained).parent_path(), dir, fs::copy_options::recursive);
        const std::string session = dir + "/s.yaml", fifo = dir + "/s.results/runs/zz.yaml";
        QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
        const Session loaded = loadSession(session);
        std::string said;
        for (const auto &problem : loaded.unreadableRunFiles) said += problem + "\n";
        QVERIFY2(said.find("zz.yaml: is not a regular file (a device, FIFO or socket); expected a "
                           "run file") != std::string::npos,
                 said.c_str());
    }
};

QTEST_GUILESS_MAIN(TestHostile)
#include "test_hostile.moc"
