// test_ui_training.cpp — the desktop app against the real core, tiny CPU runs: starting a sweep
// fills the run table and the heatmap while the event loop stays responsive; stop leaves a
// consistent session; save then open gives the same chart data; a reopened session resumes only
// its missing runs.
#include "UiTestSessions.h"
#include "UiTestWindows.h"

#include "ui/app/ExperimentForm.h"
#include "ui/app/LessonStrip.h"
#include "ui/app/MainWindow.h"
#include "ui/app/window/SessionFiles.h"

#include "core/metrics/Metrics.h"
#include "core/schema/RunConfigFields.h"
#include "core/session/RunFiles.h"
#include "core/session/search/SearchReport.h"
#include "core/session/search/SearchSummary.h"
#include "ui/app/SamplesView.h"
#include "ui/figures/FigureExporter.h"
#include "ui/figures/HeatmapView.h"
#include "ui/figures/InsideHeadsView.h"
#include "ui/figures/LossChartView.h"
#include "ui/model/ColourTable.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/RunTableModel.h"
#include "ui/model/SessionModel.h"
#include "ui/model/TrainingController.h"

#include "core/lab/SweepSession.h"
#include "core/session/SessionStore.h"
#include "core/train/SweepRunner.h"
#include "core/train/Trainer.h"

#include <filesystem>

#include <QAction>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QProcess>
#include <QPushButton>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <random>

#include <QAbstractSeries>
#include <QChart>

#include <fstream>

#include <algorithm>
#include <csignal>

#include <unistd.h>

using namespace headlab;
using namespace headlab::ui;

namespace {
// Measures how late a 5 ms timer fires on the GUI thread: the event-loop latency a user feels.
class LatencyProbe : public QObject {
public:
    LatencyProbe()
    {
        m_timer.setInterval(5);
        m_timer.setTimerType(Qt::PreciseTimer);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            const double now = double(m_clock.nsecsElapsed()) / 1e6;
            if (m_last >= 0) m_gaps.push_back(now - m_last - 5.0);
            m_last = now;
        });
        m_clock.start();
        m_timer.start();
    }
    double maxMs() const
    {
        return m_gaps.empty() ? 0 : *std::max_element(m_gaps.begin(), m_gaps.end());
    }
    double percentileMs(double q) const
    {
        if (m_gaps.empty()) return 0;
        auto g = m_gaps;
        std::sort(g.begin(), g.end());
        return g[size_t(q * double(g.size() - 1))];
    }
    size_t samples() const { return m_gaps.size(); }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    double m_last = -1;
    std::vector<double> m_gaps;
};

QString saveTemp(const QTemporaryDir &dir, const Session &s, const QString &name)
{
    const QString path = dir.filePath(name);
    saveSessionAtomic(s, path.toStdString());
    return path;
}

// `s` expanded, saved in `dir` and opened in `window` (shown, asking nothing) with the lesson
// strip on: the strip, or nullptr when the session did not open.
LessonStrip *openLesson(MainWindow &window, const QTemporaryDir &dir, Session s,
                        const QString &name)
{
    expandSweep(s);
    const QString path = saveTemp(dir, s, name);
    window.setInteractive(false);
    window.show();
    if (!window.openSession(path)) return nullptr;
    window.lessonAction()->trigger();
    return window.lessonStrip();
}

QMap<QString, QString> chartData(SessionModel *model)
{
    QMap<QString, QString> out;
    for (const auto &spec : FigureExporter::allFigures()) {
        ViewState state = model->session().view;
        for (const auto &[k, v] : spec.overrides) state[k] = v;
        auto fig = FigureExporter::offscreenCopy(model, spec.figureId, state, {}, QSize(800, 500));
        out[spec.fileStem] = fig->csv();
    }
    return out;
}
} // namespace

class TestUiTraining : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sweepFillsTableAndHeatmap();
    void stopLeavesConsistentSessionAndResumeRunsOnlyMissing();
    void samplesDockShowsSelectedTextRuns();
    void fileTaskTrainsInTheAppWithItsFigures();
    void presetsOpenOnTheirFigure();
    void aSweepWrittenElsewhereShowsUpLive();
    void insideTheHeadsShowsLiveMapsAndScrubsCheckpoints();
    void insideTheHeadsPrunesAStoredRun();
    void appStopsAndSavesOnSigterm_data();
    void appStopsAndSavesOnSigterm();
    void aSignalLeavesAnUneditedSessionAlone_data();
    void aSignalLeavesAnUneditedSessionAlone();
    void aHeatmapCellClickSelectsItsRunsOnAStoredSession();
    void secondWriterOfASessionIsRefused();
    void notesWrittenByTheCliWhileOpenAreKept();
    void anUntitledSessionNeverReusesAnothersResults();
    void aBoundarySearchRunsRoundByRoundInTheApp();
    void theLessonStripStartsTheNewRunsAndKeepsTheOldFaintly();
    void aLessonPressOnTheClassroomTrainsAtOnce();
    void theLessonStripKeepsWhatIsDoneThroughAnyPresses();
    void aLessonPressThatCannotStartIsUndoneOnScreen();
    void presenterModeHidesPanelsWithNothingToShow();
    void aCrashedSessionIsOfferedAtTheNextStart();
    void theEtaCountsRunsEndingEarly();
    void theRunTableReadsAsOneTable();
};

// Start on a search session trains round 0, then plans and trains each next round by itself until
// every configuration has stopped; the session file holds the rounds, and the Boundary figure the
// crossing. The task: tests/search/fixtures' copy task.
// The lesson strip: a teacher presses a learning rate mid-run. The running sweep stops, its runs
// stay on the loss curves faintly, and the new η's runs start at once for the same head counts;
// pressing a head count adds its runs.
// Issue 52, item 4: the run table writes every η in one style ("3e-5" beside "1.69e-4", not
// "3e-05"), says a run that stopped early did so, and gives a finished run its own steps/s.
void TestUiTraining::theRunTableReadsAsOneTable()
{
    Session s = uitest::tinySession(100);
    s.axes.back() = SweepAxis{"lr", {uitest::num(3e-5), uitest::num(0.000169)}};
    expandSweep(s);
    QCOMPARE(s.runs.size(), size_t(8));        // heads 3 divides neither width
    s.runs[0].result.status = RunStatus::Done; // all its steps, timed by its run file
    s.runs[0].result.stepsDone = int64_t(s.runs[0].config.totalSteps());
    s.runs[0].result.metrics[metric::kStepsPerSecond] = 412.4;
    s.runs[1].result.status = RunStatus::Done; // stopped early by stop_after_learned
    s.runs[1].result.stepsDone = 30;
    s.runs[1].result.wallSeconds = 2.0;
    SessionModel model;
    model.setSession(s);
    RunTableModel table(&model);
    const int lrColumn = 2; // d_model, heads, lr
    QCOMPARE(table.headerData(lrColumn, Qt::Horizontal).toString(), QStringLiteral("lr"));
    QStringList shown;
    for (int i = 0; i < table.rowCount(); ++i)
        shown << table.data(table.index(i, lrColumn)).toString();
    QVERIFY2(shown.contains("3e-5") && shown.contains("1.69e-4"), qPrintable(shown.join(" ")));
    for (const QString &text : shown) QVERIFY2(!text.contains("e-0"), qPrintable(text));
    const int progress = table.progressColumn();
    const int speed =
        table.columnCount() - RunTableModel::FixedCount + RunTableModel::StepsPerSecond;
    QCOMPARE(table.data(table.index(0, progress)).toString(), QStringLiteral("100 / 100"));
    QCOMPARE(table.data(table.index(1, progress)).toString(),
             QStringLiteral("30 of 100, stopped early"));
    QCOMPARE(table.data(table.index(0, speed)).toString(), QStringLiteral("412"));
    QCOMPARE(table.data(table.index(1, speed)).toString(), QStringLiteral("15"));
    QCOMPARE(table.data(table.index(2, speed)).toString(), QString()); // queued: nothing yet
}

// Issue 79, item 4: on the classroom preset itself (its model, batch and four runs, as a teacher
// opens it) a press on an η of the strip that the preset did not run trains the pressed runs at
// once: each has reported its first steps within seconds. bench/lesson_press_time.sh runs this case
// idle and beside a busy process and keeps the times it prints (docs/data/issue79/lesson-press.jsonl).
void TestUiTraining::aLessonPressOnTheClassroomTrainsAtOnce()
{
    MainWindow window;
    window.setInteractive(false);
    QVERIFY(window.openPreset(QStringLiteral("classroom")));
    window.show();
    LessonStrip *strip = window.lessonStrip();
    QVERIFY(strip && strip->isVisibleTo(&window));
    const QList<double> rates = strip->learningRates();
    QCOMPARE(rates.size(), 2); // the contrast's η and the smaller one
    QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), 3000);
    QVERIFY(window.startSweep());
    QTRY_VERIFY_WITH_TIMEOUT(window.model()->run(0).result.stepsDone > 20, 60000);

    // An η the preset did not run, so that the pressed runs are new ones, not runs in progress.
    double chosen = 0;
    for (double lr : strip->learningRateButtons())
        if (!rates.contains(lr)) chosen = lr;
    QVERIFY(chosen > 0);
    QElapsedTimer pressed;
    pressed.start();
    strip->chooseLearningRate(chosen);
    auto pressedRuns = [&] {
        std::vector<int64_t> steps;
        for (int i = 0; i < window.model()->runCount(); ++i)
            if (window.model()->run(i).config.lr == chosen)
                steps.push_back(window.model()->run(i).result.stepsDone);
        return steps;
    };
    // The pressed runs that train side by side: both on two cores or more; on one (ctest's parallel
    // tests set OMP_NUM_THREADS=1) the second waits its turn, and only the first is bound.
    const size_t together = std::min<size_t>(2, usableCores());
    auto started = [&] {
        const auto steps = pressedRuns();
        if (window.model()->runCount() != 2 || steps.size() != 2) return size_t(0);
        return size_t(std::count_if(steps.begin(), steps.end(), [](int64_t s) { return s > 0; }));
    };
    qint64 first = -1;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            const size_t n = started();
            if (n > 0 && first < 0) first = pressed.elapsed();
            return n >= together;
        }(),
        30000);
    const qint64 all = pressed.elapsed();
    // At once: a class waits for nothing but the runs' first report (the bound leaves room for a
    // busy CI machine; the bench keeps what two idle cores take).
    QVERIFY2(first < 5000 && all < 5000,
             qPrintable(QStringLiteral("%1 ms, %2 ms").arg(first).arg(all)));
    if (together == 2)
        qInfo("classroom lesson press: the pressed runs' first steps on screen after %lld ms (the "
              "first run) and %lld ms (both)",
              static_cast<long long>(first), static_cast<long long>(all));
    else
        qInfo("classroom lesson press, one core: the first pressed run's first steps on screen "
              "after %lld ms",
              static_cast<long long>(first));
    QSignalSpy finished(window.controller(), &TrainingController::sweepFinished);
    window.stopSweep();
    QVERIFY(finished.wait(30000));
}

void TestUiTraining::theLessonStripStartsTheNewRunsAndKeepsTheOldFaintly()
{
    // A session of two η (the classroom preset's) lights both; a press lights the one pressed
    // and the lesson sweeps it alone; the buttons stay where they were.
    {
        LessonStrip alone;
        Session two = uitest::tinySession();
        two.axes = {SweepAxis{"heads", {uitest::num(1), uitest::num(2)}},
                    SweepAxis{"lr", {uitest::num(1.5e-3), uitest::num(7e-3)}}};
        alone.setSession(two);
        QCOMPARE(alone.learningRates(), (QList<double>{1.5e-3, 7e-3}));
        QVERIFY(std::isnan(alone.learningRate()));
        const QList<double> buttons = alone.learningRateButtons();
        alone.chooseLearningRate(7e-3);
        QCOMPARE(alone.learningRates(), QList<double>{7e-3});
        const Session lesson = alone.lesson(two);
        alone.setSession(lesson);
        QCOMPARE(alone.learningRateButtons(), buttons);
        QCOMPARE(alone.learningRates(), QList<double>{7e-3});
        QCOMPARE(alone.heads(), (QList<int64_t>{1, 2}));
    }

    QTemporaryDir dir;
    Session s = uitest::tinySession(4000);
    s.axes = {SweepAxis{"heads", {uitest::num(1), uitest::num(2)}},
              SweepAxis{"lr", {uitest::num(1e-3)}}};
    MainWindow window;
    LessonStrip *strip = openLesson(window, dir, s, "lesson.yaml");
    QVERIFY(strip);
    QVERIFY(strip->isVisibleTo(&window));
    QCOMPARE(strip->heads(), (QList<int64_t>{1, 2}));
    QCOMPARE(strip->learningRate(), 1e-3);
    QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), 3000);
    QVERIFY(window.startSweep());
    QTRY_VERIFY_WITH_TIMEOUT(window.model()->run(0).result.stepsDone > 100, 60000);

    const QList<double> buttons = strip->learningRateButtons();
    QElapsedTimer pressed;
    pressed.start();
    strip->chooseLearningRate(2e-3);
    auto lrOf = [&] {
        for (const auto &axis : window.model()->session().axes)
            if (axis.name == "lr") return axis.values.front().number;
        return 0.0;
    };
    QTRY_VERIFY_WITH_TIMEOUT(lrOf() == 2e-3 && window.controller()->isRunning(), 30000);
    // At once: the running sweep stops at its next step and the pressed runs start (issue 79;
    // a class waits for nothing else; the bound leaves room for a busy CI machine).
    QVERIFY2(pressed.elapsed() < 5000, qPrintable(QString::number(pressed.elapsed()) + " ms"));
    qInfo("lesson press to the new runs training: %lld ms",
          static_cast<long long>(pressed.elapsed()));
    QCOMPARE(window.model()->runCount(), 2);
    for (int i = 0; i < 2; ++i) QCOMPARE(window.model()->run(i).config.lr, 2e-3);
    // The strip shows the new state with the same buttons: the pressed η alone is lit.
    QTRY_COMPARE(strip->learningRates(), QList<double>{2e-3});
    QCOMPARE(strip->learningRateButtons(), buttons);
    auto *loss = qobject_cast<LossChartView *>(window.figure("loss"));
    QVERIFY(loss);
    QVERIFY(loss->ghostCount() >= 1); // the η = 1e-3 runs, faintly
    loss->refresh();
    int faint = 0;
    bool named = false;
    for (auto *series : loss->chart()->series())
        if (auto *line = qobject_cast<QLineSeries *>(series);
            line && line->pen().color().alphaF() < 0.5 && line->count() > 0) {
            ++faint;
            named = named || line->name() == QStringLiteral("earlier, η = 0.001 (faint)");
        }
    QCOMPARE(faint, loss->ghostCount());
    QVERIFY(named); // one legend entry for them all, with the η they had

    // A head count pressed: its runs join at the chosen η.
    QTRY_VERIFY_WITH_TIMEOUT(window.model()->run(0).result.stepsDone > 50, 60000);
    strip->toggleHeads(4);
    QTRY_VERIFY_WITH_TIMEOUT(window.model()->runCount() == 3 && window.controller()->isRunning(),
                             30000);
    QCOMPARE(window.model()->run(2).config.model.heads.front(), int64_t(4));
    QCOMPARE(window.model()->run(2).config.lr, 2e-3);
    QSignalSpy finished(window.controller(), &TrainingController::sweepFinished);
    window.stopSweep();
    QVERIFY(finished.wait(30000));
}

void TestUiTraining::aBoundarySearchRunsRoundByRoundInTheApp()
{
    QTemporaryDir dir;
    const QString fixtures = QStringLiteral(HEADLAB_SOURCE_DIR "/tests/search/fixtures/");
    QVERIFY(QFile::copy(fixtures + "copy.txt", dir.filePath("copy.txt")));
    // The fixture's search with a budget of 14 runs: round 0's five, then three a round.
    QFile fixture(fixtures + "copy-search.yaml");
    QVERIFY(fixture.open(QIODevice::ReadOnly));
    const QString path = dir.filePath("search.yaml");
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(fixture.readAll().replace("  range: [3.0e-5, 3.0e-2]\n",
                                             "  range: [3.0e-5, 3.0e-2]\n  budget: 14\n"));
    }
    MainWindow window;
    window.setInteractive(false);
    window.show();
    QVERIFY(window.openSession(path));
    QVERIFY(window.figure("boundary")->applies());
    QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), 3000);
    QSignalSpy rounds(window.controller(), &TrainingController::sweepFinished);
    QVERIFY(window.startSweep());
    // Rounds follow each other until the search stops: five runs, then three a round (budget 14).
    QTRY_VERIFY_WITH_TIMEOUT(!window.controller()->isRunning() && rounds.count() >= 1 &&
                                 pendingRuns(window.model()->session()).empty() &&
                                 searchReport(window.model()->session()).finished,
                             120000);
    const SearchReport report = searchReport(window.model()->session());
    QVERIFY2(report.rounds >= 2, searchSummaryText(report).c_str());
    QCOMPARE(rounds.count(), report.rounds);
    QCOMPARE(report.configurations.size(), size_t(1));
    QVERIFY(report.configurations.front().interval.ok);
    window.figure("boundary")->refresh();
    QVERIFY2(window.figure("boundary")->title().contains("η*"),
             qPrintable(window.figure("boundary")->title()));
    // The file on disk holds every round and every run's result: reopened, nothing is pending.
    Session reopened = loadSession(path.toStdString());
    expandSweep(reopened);
    QVERIFY(reopened.search->probes == window.model()->session().search->probes);
    QVERIFY(pendingRuns(reopened).empty());
    QCOMPARE(int(reopened.runs.size()), report.runs);
}

void TestUiTraining::appStopsAndSavesOnSigterm_data()
{
    QTest::addColumn<int>("signal");
    QTest::newRow("SIGTERM") << int(SIGTERM);
    QTest::newRow("SIGHUP") << int(SIGHUP);
}

void TestUiTraining::appStopsAndSavesOnSigterm()
{
    // The real `headlab` training a long sweep: SIGTERM (a logout) or SIGHUP (a closed terminal)
    // stops it, saves the runs in progress as stopped, and exits 128 + the signal.
    QFETCH(int, signal);
    QTemporaryDir dir;
    const QString path = saveTemp(dir, uitest::tinySession(10'000'000), "long.yaml");
    QProcess app;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    app.setProcessEnvironment(env);
    app.start(HEADLAB_APP, {"--session", path, "--start"});
    QVERIFY(app.waitForStarted());
    // The app takes the session's lock when the sweep starts.
    QTRY_VERIFY_WITH_TIMEOUT(!SessionStore::lockHolder(path.toStdString()).empty(), 30000);
    QTest::qWait(2500);
    ::kill(pid_t(app.processId()), signal);
    QVERIFY(app.waitForFinished(60000));
    const QByteArray err = app.readAllStandardError();
    QCOMPARE(app.exitStatus(), QProcess::NormalExit);
    QVERIFY2(app.exitCode() == 128 + signal, err.constData());
    QVERIFY2(err.contains("stopped and saved"), err.constData());
    // Runs that never started have no file (they stay queued); the sweep still has all four.
    Session saved = loadSession(path.toStdString());
    expandSweep(saved);
    QCOMPARE(saved.runs.size(), size_t(4));
    int stopped = 0;
    for (const auto &run : saved.runs) {
        stopped += run.result.status == RunStatus::Stopped;
        QVERIFY(run.result.status != RunStatus::Running);
    }
    QVERIFY(stopped > 0);
}

void TestUiTraining::aSignalLeavesAnUneditedSessionAlone_data()
{
    QTest::addColumn<bool>("resultsMissing");
    QTest::newRow("a previous release's file") << false;
    QTest::newRow("an index whose results folder is missing") << true;
}

void TestUiTraining::aSignalLeavesAnUneditedSessionAlone()
{
    // Issue 49: a logout's SIGTERM rewrote a self-contained file of the previous release as an
    // index and a new results folder, and with its results folder missing emptied an index of 75
    // finished runs. The real `headlab`, opened on the file and nothing edited: SIGTERM leaves the
    // file byte for byte and makes no results folder. A missing results folder is said at once.
    QFETCH(bool, resultsMissing);
    QTemporaryDir dir;
    QString path;
    if (resultsMissing) {
        path = saveTemp(dir, uitest::tinySession(5), "s.yaml");
        QProcess cli;
        cli.start(HEADLAB_CLI, {"run", path, "--threads", "1"});
        QVERIFY(cli.waitForFinished(120000));
        QCOMPARE(cli.exitCode(), 0);
        QVERIFY(QDir().rename(QString::fromStdString(resultsDirFor(path.toStdString())),
                              dir.filePath("moved.results")));
    } else {
        path = dir.filePath("previous.yaml");
        QVERIFY(QFile::copy(
            QStringLiteral(HEADLAB_SOURCE_DIR "/tests/storage/fixtures/previous-release.yaml"),
            path));
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray before = file.readAll();
    file.close();
    QProcess app;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    app.setProcessEnvironment(env);
    app.start(HEADLAB_APP, {"--session", path});
    QVERIFY(app.waitForStarted());
    QTest::qWait(4000); // opened and shown
    ::kill(pid_t(app.processId()), SIGTERM);
    QVERIFY(app.waitForFinished(60000));
    const QByteArray err = app.readAllStandardError();
    QCOMPARE(app.exitCode(), 128 + SIGTERM);
    QVERIFY2(err.contains("nothing had changed"), err.constData());
    if (resultsMissing)
        QVERIFY2(err.contains("4 finished runs whose result files are not in"), err.constData());
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), before);
    QVERIFY(!QFileInfo::exists(QString::fromStdString(resultsDirFor(path.toStdString()))));
}

void TestUiTraining::aHeatmapCellClickSelectsItsRunsOnAStoredSession()
{
    // Issue 50: the first click on a heatmap cell of a session in the stored layout crashed the
    // window (the cell's run list was freed by the redraw its selection caused). Every cell of a
    // CLI-trained session: the click selects exactly the cell's runs in the run table.
    QTemporaryDir dir;
    const QString path = saveTemp(dir, uitest::tinySession(5), "s.yaml");
    QProcess cli;
    cli.start(HEADLAB_CLI, {"run", path, "--threads", "1"});
    QVERIFY(cli.waitForFinished(120000));
    QCOMPARE(cli.exitCode(), 0);
    MainWindow window;
    window.setInteractive(false);
    window.resize(1280, 720);
    QVERIFY(window.openSession(path));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto *heatmap = window.findChild<HeatmapView *>();
    auto *tabs = window.findChild<QTabWidget *>();
    QVERIFY(heatmap && tabs);
    tabs->setCurrentWidget(heatmap);
    heatmap->refresh();
    QTest::qWait(100);
    auto *table = window.findChild<QTableView *>(QStringLiteral("runTable"));
    QVERIFY(table);
    // Run ID and start time are columns on request: hidden until the header's menu shows them.
    const int columns = table->model()->columnCount();
    QVERIFY(table->isColumnHidden(columns - RunTableModel::FixedCount + RunTableModel::RunId));
    QVERIFY(table->isColumnHidden(columns - RunTableModel::FixedCount + RunTableModel::Started));
    QVERIFY(!table->isColumnHidden(columns - RunTableModel::FixedCount + RunTableModel::Status));
    int clicked = 0;
    for (int row = 0; row < heatmap->panelData(0).rows(); ++row)
        for (int column = 0; column < heatmap->panelData(0).columns(); ++column) {
            const QList<int> runs = heatmap->panelData(0).cell(row, column).runs;
            if (runs.isEmpty()) continue;
            QSignalSpy activated(heatmap, &FigureView::runsActivated);
            QTest::mouseClick(heatmap->canvas(), Qt::LeftButton, {},
                              heatmap->cellRect(row, column).center());
            QTest::qWait(20);
            QCOMPARE(activated.count(), 1);
            QCOMPARE(activated.first().first().value<QList<int>>(), runs);
            QCOMPARE(int(table->selectionModel()->selectedRows().size()), int(runs.size()));
            ++clicked;
        }
    QVERIFY(clicked >= 2);
}

void TestUiTraining::secondWriterOfASessionIsRefused()
{
    // The window writes a session (holds its lock); saving the same file from another writer is
    // refused with a message naming this process.
    QTemporaryDir dir;
    const QString path = saveTemp(dir, uitest::tinySession(5), "s.yaml");
    MainWindow window;
    window.setInteractive(false);
    QVERIFY(window.openSession(path));
    QVERIFY(window.saveSession());
    try {
        SessionStore other(path.toStdString());
        QFAIL("a second writer was allowed");
    } catch (const SessionError &e) {
        QVERIFY2(
            QString::fromStdString(e.what()).contains(QStringLiteral("PID %1").arg(::getpid())),
            e.what());
    }
}

void TestUiTraining::notesWrittenByTheCliWhileOpenAreKept()
{
    // The app holds a session's lock only from its first save: `headlab-cli note` may write the
    // file while the app has it open. The app shows those notes and tags within its watch, and its
    // own edits and theirs both reach the file at the next save, even when the save comes first.
    QTemporaryDir dir;
    Session tiny = uitest::tinySession(5);
    expandSweep(tiny);
    const QString path = saveTemp(dir, tiny, "s.yaml");
    const std::string id1 = runId(tiny.runs[1].config);
    MainWindow window;
    window.setInteractive(false);
    QVERIFY(window.openSession(path));
    SessionModel *model = window.findChild<SessionModel *>();
    QVERIFY(model);
    auto note = [&](const QStringList &args) {
        QProcess cli;
        cli.start(HEADLAB_CLI, QStringList{"note", path} + args);
        QVERIFY(cli.waitForFinished(60'000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    };
    // Edited here, not saved; the CLI tags run 1 and the session meanwhile.
    QVERIFY(model->setRunAnnotation(0, Annotation{"ours: slow start", {"check"}}));
    QSignalSpy changed(model, &SessionModel::runChanged);
    note({"--run", "1", "--tag", "outlier", "--text", "theirs: diverged at 3k"});
    note({"--tag", "lesson"});
    QVERIFY(QTest::qWaitFor([&] { return runAnnotation(model->session(), 1).hasTag("outlier"); },
                            10'000));
    QVERIFY(QTest::qWaitFor([&] { return !model->session().annotation.tags.empty(); }, 10'000));
    QCOMPARE(model->session().annotation.tags, std::vector<std::string>{"lesson"});
    // Only the run whose note the CLI changed is redrawn.
    QVERIFY(!changed.isEmpty());
    for (const auto &signal : changed) QCOMPARE(signal.at(0).toInt(), 1);
    QCOMPARE(runAnnotation(model->session(), 0).note, std::string("ours: slow start"));
    // The CLI writes again and the app saves before its watch looks: still merged.
    QVERIFY(model->setSessionAnnotation(Annotation{"ours", {"lesson"}}));
    note({"--run", "1", "--untag", "outlier", "--tag", "late"});
    note({"--text", "theirs"});
    QVERIFY(window.saveSession());
    const Session saved = loadSession(path.toStdString());
    QCOMPARE(saved.annotation.note, std::string("ours\n\ntheirs"));
    QCOMPARE(saved.annotation.tags, std::vector<std::string>{"lesson"});
    QCOMPARE(saved.runAnnotations.at(runId(tiny.runs[0].config)).note,
             std::string("ours: slow start"));
    QCOMPARE(saved.runAnnotations.at(id1).note, std::string("theirs: diverged at 3k"));
    QCOMPARE(saved.runAnnotations.at(id1).tags, std::vector<std::string>{"late"});
    // From the first save the app holds the lock: the CLI is refused, naming who writes.
    QProcess refused;
    refused.start(HEADLAB_CLI, {"note", path, "--tag", "x"});
    QVERIFY(refused.waitForFinished(60'000));
    QCOMPARE(refused.exitCode(), 2);
    QVERIFY(refused.readAllStandardError().contains("is being written by"));
}

void TestUiTraining::aSweepWrittenElsewhereShowsUpLive()
{
    // A session whose runs other processes train (Slurm shards): the app shows each run's newest
    // checkpoint while it trains, its result file once it is written, and who is writing.
    QTemporaryDir dir;
    const QString path = saveTemp(dir, uitest::tinySession(400), QStringLiteral("s.yaml"));
    MainWindow window;
    QVERIFY(window.openSession(path));
    SessionModel *model = window.findChild<SessionModel *>();
    QVERIFY(model);
    QCOMPARE(model->runCount(), 4);
    QCOMPARE(model->refreshFromDisk(), 0);

    // "Elsewhere": shard 1 of 2 holds its lock and trains run 0, stopping it at step 200.
    SessionStore shard(path.toStdString(), StoreShard{0, 2});
    const RunConfig config0 = model->run(0).config;
    TrainerControl control;
    control.threads = 1;
    control.checkpoints.every = 100;
    control.checkpointDirs = {checkpointDirFor(path.toStdString(), config0)};
    int polls = 0;
    control.memberStopRequested = [&](size_t) { return ++polls > 200; };
    RunResult partial = trainMembers({config0}, control).front();
    QCOMPARE(model->refreshFromDisk(), 1);
    QCOMPARE(model->run(0).result.stepsDone, int64_t(200));
    QVERIFY(!model->run(0).result.test.empty());
    QCOMPARE(model->refreshFromDisk(), 0); // nothing new

    // The shard finishes run 1 and writes its result file.
    SessionRun run1 = model->run(1);
    run1.result = trainMembers({run1.config}, TrainerControl{}).front();
    shard.saveRun(run1);
    QCOMPARE(model->refreshFromDisk(), 1);
    QCOMPARE(model->run(1).result.status, RunStatus::Done);
    QCOMPARE(model->run(1).result.test.back().value, run1.result.test.back().value);

    // The status bar names the shard that is writing, within the watch's 2 s.
    QVERIFY(QTest::qWaitFor(
        [&] {
            for (auto *label : window.findChildren<QLabel *>())
                if (label->text().contains(QStringLiteral("shard 1/2 running elsewhere")))
                    return true;
            return false;
        },
        6000));
    (void)partial;
}

void TestUiTraining::insideTheHeadsPrunesAStoredRun()
{
    // A real trained run's pruning curves as the app draws them, to be looked at:
    // HEADLAB_PRUNING_SESSION=S.yaml (its run 0 with a final checkpoint) and HEADLAB_SCREENSHOTS=DIR
    // write inside-pruning-1280.png and -1920.png (docs/FINDINGS.md's figures were made so).
    const QString path = qEnvironmentVariable("HEADLAB_PRUNING_SESSION");
    if (path.isEmpty()) QSKIP("HEADLAB_PRUNING_SESSION names no session");
    MainWindow window;
    QVERIFY(window.openSession(path));
    QString why;
    InsideHeadsView *view = uitest::insideAtNewestCheckpoint(window, 0, &why);
    QVERIFY2(view, qPrintable(why));
    view->runAblation();
    view->waitForAblation();
    QCOMPARE(int(view->pruning().size()), int(pruningOrderTable().size()) + 2);
    // Trained: removing every head but one per layer costs more than removing none.
    for (const auto &c : view->pruning())
        QVERIFY(c.steps.back().testLoss > c.steps.front().testLoss);
    if (const QString keep = qEnvironmentVariable("HEADLAB_SCREENSHOTS"); !keep.isEmpty())
        for (const QSize size : {QSize(1280, 720), QSize(1920, 1080)})
            QVERIFY(FigureExporter::writePng(
                view,
                QDir(keep).filePath(QStringLiteral("inside-pruning-%1.png").arg(size.width())),
                size, nullptr));
}

void TestUiTraining::insideTheHeadsShowsLiveMapsAndScrubsCheckpoints()
{
    // The default session's kind of run, short: the view follows the selected run live while it
    // trains, then scrubs its checkpoints, ablates at one and exports like every figure.
    QTemporaryDir dir;
    Session s = uitest::tinySession(300);
    s.checkpoints.every = 100;
    const QString path = saveTemp(dir, s, QStringLiteral("s.yaml"));
    MainWindow window;
    QVERIFY(window.openSession(path));
    window.showFigure(QStringLiteral("inside"));
    auto *view = window.findChild<InsideHeadsView *>();
    QVERIFY(view);
    SessionModel *model = window.findChild<SessionModel *>();
    view->setSelectedRuns({1});
    QCOMPARE(view->shownRun(), 1);
    // Its own run box (presenter mode hides the run table): it lists every run, shows the run
    // shown, and a choice selects that run in the window, as the table does.
    QCOMPARE(view->runPicker()->count(), model->runCount());
    QCOMPARE(view->runPicker()->currentIndex(), 1);
    window.setPresenterMode(true);
    QVERIFY(!view->runPicker()->isHidden()); // presenter mode keeps the figure's controls
    view->runPicker()->setCurrentIndex(2);
    Q_EMIT view->runPicker()->activated(2);
    QCoreApplication::processEvents();
    QCOMPARE(view->shownRun(), 2);
    QCOMPARE(view->selectedRuns(), QList<int>{2});
    window.setPresenterMode(false);
    view->setSelectedRuns({1});
    QCOMPARE(view->shownRun(), 1);
    QVERIFY(window.startSweep());
    // Live: the run's maps arrive at its evaluations, for the input typed.
    QVERIFY(QTest::qWaitFor([&] { return model->liveAttention(1) != nullptr; }, 60000));
    QCOMPARE(model->attentionRequestRun(), 1);
    QVERIFY2(QString::fromStdString(model->liveAttention(1)->description)
                 .contains(QStringLiteral("digit 0")),
             model->liveAttention(1)->description.c_str());
    auto *controller = window.findChild<TrainingController *>();
    QVERIFY(QTest::qWaitFor([&] { return !controller->isRunning(); }, 120000));
    QTest::qWait(100);
    view->refresh();
    // Scrubbing: every checkpoint the run kept, oldest first.
    QVERIFY2(view->checkpoints().size() >= 2, qPrintable(view->message()));
    bool disk = false; // the disk the checkpoints use is shown
    for (auto *label : view->findChildren<QLabel *>())
        disk = disk || (label->text().contains(QStringLiteral("checkpoints,")) &&
                        label->text().contains(QStringLiteral("MB · session")));
    QVERIFY(disk);
    view->setPosition(0);
    QVERIFY2(view->maps(), qPrintable(view->message()));
    QCOMPARE(view->maps()->step, view->checkpoints().front().step);
    view->setPosition(int(view->checkpoints().size()) - 1);
    QCOMPARE(view->maps()->step, int64_t(300));
    view->setInput(QStringLiteral("1 + 2, digit 1"));
    QVERIFY(QString::fromStdString(view->maps()->description)
                .startsWith(QStringLiteral("001 + 002, digit 1")));
    // Hovering a map names the run, the step, the layer and head, query and key, and the weight
    // (issue 52 item 2).
    view->canvas()->resize(1000, 700);
    (void)view->canvas()->grab(); // paints: the maps' boxes
    QStringList said;
    for (int x = 0; x < 1000; x += 7)
        for (int y = 0; y < 700; y += 7)
            if (const QString t = view->hoverText(QPointF(x, y)); !t.isEmpty()) said << t;
    QVERIFY(!said.isEmpty());
    QVERIFY2(said.front().startsWith(QStringLiteral("run 2, step 300: layer ")) &&
                 said.front().contains(QStringLiteral("→ key")) &&
                 said.front().contains(QStringLiteral("weight")),
             qPrintable(said.front()));
    QVERIFY(view->hoverText(QPointF(2, 2)).isEmpty()); // the title: no map
    view->setInput(QStringLiteral("not a sum"));
    QVERIFY(!view->maps());
    QVERIFY(view->message().contains(QStringLiteral("expected two numbers")));
    view->setInput(QStringLiteral("123 + 456"));
    view->runAblation(); // on a worker thread
    view->waitForAblation();
    QVERIFY(!view->ablationRunning());
    const int heads = int(model->run(1).config.model.heads[0] * 2);
    QCOMPARE(int(view->ablation().size()), heads);
    // A curve per order, three random ones; each removes heads until one is left per layer.
    const int layers = int(model->run(1).config.model.heads.size());
    QCOMPARE(int(view->pruning().size()), int(pruningOrderTable().size()) + 2);
    for (const auto &c : view->pruning()) QCOMPARE(int(c.steps.size()), heads - layers + 1);
    // With retraining: the gradient curve fine-tuned, its control, and L0 gates, after them.
    view->setRetraining(true);
    view->runAblation();
    view->waitForAblation();
    view->setRetraining(false);
    QCOMPARE(int(view->pruning().size()), int(pruningOrderTable().size()) + 2 + 3);
    QCOMPARE(view->pruning()[6].method, PruningMethod::FineTune);
    QCOMPARE(view->pruning()[7].method, PruningMethod::Scratch);
    QCOMPARE(view->pruning()[8].method, PruningMethod::L0Gates);
    const QString done = view->csv();
    for (const char *table :
         {"pruning_gradient,", "pruning_greedy,", "pruning_random_2,",
          "pruning_fine-tune_gradient,", "pruning_scratch_gradient,", "pruning_l0_,"})
        QVERIFY2(done.contains(QLatin1String(table)), table);
    // HEADLAB_SCREENSHOTS=DIR keeps the figure with its pruning curves at both screen sizes.
    if (const QString keep = qEnvironmentVariable("HEADLAB_SCREENSHOTS"); !keep.isEmpty())
        for (const QSize size : {QSize(1280, 720), QSize(1920, 1080)})
            QVERIFY(FigureExporter::writePng(
                view, QDir(keep).filePath(QStringLiteral("inside-%1.png").arg(size.width())), size,
                nullptr));
    // The button cancels a running ablation: the pruning stops where it was.
    view->runAblation();
    view->runAblation();
    view->waitForAblation();
    QVERIFY(int(view->pruning().size()) <= int(pruningOrderTable().size()) + 2);
    const QString csv = view->csv();
    for (const char *table : {"attention,", "logit_rms,", "ablation_delta,"})
        QVERIFY2(csv.contains(QLatin1String(table)), table);
    QString error;
    QVERIFY2(FigureExporter::writePng(view, dir.filePath("inside.png"), QSize(1200, 800), &error),
             qPrintable(error));
    QVERIFY2(FigureExporter::writeSvg(view, dir.filePath("inside.svg"), QSize(1200, 800), &error),
             qPrintable(error));
    QVERIFY(QFileInfo(dir.filePath("inside.png")).size() > 10000);

    // The model's answer is shown beside the input, with its probability and the right answer.
    QVERIFY(view->maps() && view->maps()->probability > 0 && view->maps()->probability <= 1);
    QVERIFY2(view->predictionText().contains(QStringLiteral("predicts ")) &&
                 view->predictionText().contains(QStringLiteral("(p = ")) &&
                 view->predictionText().contains(QStringLiteral("answer 9")),
             qPrintable(view->predictionText()));
    bool shown = false;
    for (auto *label : view->findChildren<QLabel *>())
        shown = shown || label->text() == view->predictionText();
    QVERIFY(shown);
    // Each head of a layer has its own colour.
    const int perLayer = int(model->run(1).config.model.heads[0]);
    QVERIFY(perLayer >= 2);
    for (int a = 0; a < perLayer; ++a)
        for (int b = a + 1; b < perLayer; ++b) QVERIFY(view->headColor(a) != view->headColor(b));

    // Ablation belongs to its step: scrubbing away clears it, and coming back does not bring
    // back numbers of another step.
    view->setPosition(int(view->checkpoints().size()) - 1);
    view->runAblation();
    view->waitForAblation();
    QCOMPARE(view->ablationStep(), view->checkpoints().back().step);
    QVERIFY(!view->ablation().empty());
    view->setPosition(0);
    QVERIFY(view->ablation().empty() && view->pruning().empty());
    QCOMPARE(view->ablationStep(), int64_t(-1));
    view->setPosition(int(view->checkpoints().size()) - 1);
    QVERIFY(view->ablation().empty());
    // One still running when the slider moves is cancelled, and its numbers are not shown.
    view->runAblation();
    view->setPosition(0);
    view->waitForAblation();
    QVERIFY(view->ablation().empty() && view->pruning().empty());
    QCOMPARE(view->ablationStep(), int64_t(-1));

    // File ▸ Prune checkpoints (the model's call behind it): finished runs keep their final and
    // plateau checkpoints, on disk and in their run files; the older ones are gone.
    // A checkpoint the user marks with the view's Keep box survives it, whatever its reason.
    QCOMPARE(view->shownRun(), 1);
    view->setPosition(0);
    const int64_t markedStep = view->checkpoints().front().step;
    QCheckBox *keep = nullptr;
    for (auto *box : view->findChildren<QCheckBox *>())
        if (box->text() == QStringLiteral("Keep")) keep = box;
    QVERIFY(keep && keep->isEnabled() && !keep->isChecked());
    keep->click();
    QVERIFY(keep->isChecked());
    QVERIFY(loadSession(path.toStdString()).runs[1].result.checkpoints.front().keep);
    const std::string runDir = checkpointDirFor(path.toStdString(), model->run(1).config);
    const auto before = std::distance(std::filesystem::directory_iterator(runDir), {});
    const PruneSummary pruned = model->pruneCheckpoints({"final", "plateau_entry", "plateau_exit"});
    QVERIFY(pruned.removed > 0 && pruned.problems.empty());
    QCOMPARE(pruned.marked, 1);
    const auto after = std::distance(std::filesystem::directory_iterator(runDir), {});
    QVERIFY2(after < before && after >= 2,
             qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(after)));
    for (const auto &c : model->run(1).result.checkpoints)
        QVERIFY2(c.keep || c.reason == "final" || c.reason.rfind("plateau", 0) == 0,
                 c.reason.c_str());
    QCOMPARE(model->run(1).result.checkpoints.front().step, markedStep);
    const Session reread = loadSession(path.toStdString());
    QCOMPARE(reread.runs[1].result.checkpoints.size(), model->run(1).result.checkpoints.size());
    QVERIFY(reread.runs[1].result.checkpoints.front().keep);
    view->setPosition(0);
    QVERIFY(keep->isChecked()); // the box shows the mark read back
    keep->click();              // and takes it away
    QVERIFY(!loadSession(path.toStdString()).runs[1].result.checkpoints.front().keep);
}

void TestUiTraining::presetsOpenOnTheirFigure()
{
    MainWindow window;
    window.setInteractive(false);
    window.show();
    const QList<QPair<QString, QString>> expected = {{"qk-rule-addition-grid", "heatmap"},
                                                     {"quick-demo", "loss"},
                                                     {"addition-fig4-lr-scan", "lr"},
                                                     {"head-progression", "heads"},
                                                     {"qk-rule-addition-grid", "heatmap"}};
    for (const auto &[preset, figure] : expected) {
        QVERIFY2(window.openPreset(preset), qPrintable(preset));
        QVERIFY(window.currentFigure());
        QCOMPARE(window.currentFigure()->figureId(), figure);
    }
    // The QK preset's heatmap shows the rule off and on side by side.
    ViewState state;
    window.currentFigure()->saveViewState(state);
    QCOMPARE(QString::fromStdString(state["heatmap.side_by_side"]), QStringLiteral("qk_rule"));
}

void TestUiTraining::samplesDockShowsSelectedTextRuns()
{
    QTemporaryDir dir;
    // A text session of four runs (d_model × heads), two with samples stored.
    Session text = uitest::tinySession();
    text.base.task.kind = "text";
    text.base.task.contextLength = 16;
    text.base.task.samplePrompt = "Once upon a time";
    text.base.task.sampleTemperature = 0.8;
    for (auto &phase : text.base.phases) phase.objective = Objective::NextToken;
    expandSweep(text);
    QCOMPARE(int(text.runs.size()), 4);
    text.runs[1].result.status = RunStatus::Done;
    text.runs[1].result.samples = {"Once upon a time, a fox found a red kite. The end.",
                                   "Once upon a time, Émile sang."};
    text.runs[0].result.status = RunStatus::Done;
    const QString textPath = saveTemp(dir, text, "text.yaml");
    const QString additionPath = saveTemp(dir, uitest::tinySession(), "addition.yaml");

    MainWindow window;
    window.setInteractive(false);
    window.show();
    QVERIFY(window.openSession(textPath));
    QVERIFY(window.samplesDock()->isVisibleTo(&window));
    QVERIFY(window.samplesView()->text().contains("Select runs"));
    window.runTable()->selectRow(1);
    const QString shown = window.samplesView()->text();
    QVERIFY2(shown.contains("a fox found a red kite"), qPrintable(shown));
    QVERIFY(
        shown.contains(QString::fromUtf8("Émile sang"))); // UTF-8 survives the save and the panel
    QVERIFY(shown.contains("sample 2"));
    QVERIFY(shown.contains("d_model = 8"));
    QVERIFY(shown.contains("Prompt \"Once upon a time\", temperature 0.8"));
    window.runTable()->selectRow(0); // finished, but with no samples stored
    QVERIFY(window.samplesView()->text().contains("no samples stored"));

    // An addition session has no samples: the dock goes away, and comes back for text.
    QVERIFY(window.openSession(additionPath));
    QVERIFY(!window.samplesDock()->isVisibleTo(&window));
    QVERIFY(window.openSession(textPath));
    QVERIFY(window.samplesDock()->isVisibleTo(&window));
}

void TestUiTraining::sweepFillsTableAndHeatmap()
{
    QTemporaryDir dir;
    const QString path = saveTemp(dir, uitest::tinySession(500), "tiny.yaml");
    MainWindow window;
    window.setInteractive(false);
    window.show();
    QVERIFY(window.openSession(path));
    window.showFigure("loss"); // the busiest figure: every run's curves, redrawn live
    auto *table = window.runTable();
    QCOMPARE(table->model()->rowCount(), 4);
    QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), 3000);

    QSignalSpy finished(window.controller(), &TrainingController::sweepFinished);
    QSignalSpy progress(window.controller(), &TrainingController::progress);
    LatencyProbe probe;
    QElapsedTimer clock;
    clock.start();
    QVERIFY(window.startSweep());
    QVERIFY(window.controller()->isRunning());
    QVERIFY(!window.startAction()->isEnabled()); // no second sweep while one runs
    QVERIFY(finished.wait(60000));
    const double seconds = clock.elapsed() / 1000.0;
    qInfo(
        "sweep of 4 runs: %.1f s, %lld progress batches; event-loop latency of a 5 ms timer during "
        "training: p50 %.2f ms, p99 %.2f ms, max %.2f ms over %zu samples",
        seconds, qlonglong(progress.count()), probe.percentileMs(0.5), probe.percentileMs(0.99),
        probe.maxMs(), probe.samples());
    const auto &redraw = window.redrawStats();
    qInfo("frame-timer redraws of the loss chart: %d frames, mean %.2f ms, max %.2f ms",
          redraw.frames, redraw.frames ? redraw.totalMs / redraw.frames : 0.0, redraw.maxMs);
    // Counts of work, not wall-clock bounds (the latency itself is bench/ui_latency.sh's): the
    // training thread's progress arrives in batches, and the GUI redraws at most once per batch.
    QVERIFY(progress.count() > 0);
    QVERIFY2(redraw.frames <= progress.count(),
             qPrintable(QStringLiteral("%1 redraws for %2 progress batches")
                            .arg(redraw.frames)
                            .arg(progress.count())));

    // The table: every run done, with a final loss.
    for (int row = 0; row < table->model()->rowCount(); ++row) {
        const auto &r = window.model()->run(row).result;
        QCOMPARE(QString(toString(r.status)), QString("done"));
        QVERIFY(!r.train.empty());
        QVERIFY(!r.test.empty());
    }
    bool sawDone = false, sawLoss = false;
    for (int row = 0; row < table->model()->rowCount(); ++row)
        for (int col = 0; col < table->model()->columnCount(); ++col) {
            const QString text = table->model()->index(row, col).data().toString();
            sawDone = sawDone || text == "done";
            sawLoss = sawLoss || QRegularExpression("^\\d\\.\\d{3}").match(text).hasMatch();
        }
    QVERIFY(sawDone);
    QVERIFY(sawLoss);

    // The heatmap: a value in each of the four runnable cells, the two skipped ones styled so.
    window.showFigure("heatmap");
    auto *heatmap = static_cast<HeatmapView *>(window.figure("heatmap"));
    QTRY_COMPARE_WITH_TIMEOUT(heatmap->data().filledCount(), 4, 2000);
    QCOMPARE(int(heatmap->data().cell(2, 0).state), int(HeatmapCell::State::Skipped));

    // Save then open gives the same chart data.
    const auto before = chartData(window.model());
    const QString saved = dir.filePath("saved.yaml");
    QVERIFY(window.saveSessionAs(saved));
    QVERIFY(!window.isWindowModified());
    MainWindow reopened;
    reopened.setInteractive(false);
    QVERIFY(reopened.openSession(saved));
    const auto after = chartData(reopened.model());
    QCOMPARE(after.keys(), before.keys());
    // Inside the heads shows the live maps of the sweep before, a checkpoint's after: not compared.
    for (const auto &key : before.keys())
        if (key != QLatin1String("heads_inside")) QCOMPARE(after[key], before[key]);
    QVERIFY(before["fig1_loss_curves"].count('\n') > 20);

    // Rerun a finished run with another seed: a new run beside it, trained, the original kept.
    const RunResult original = window.model()->run(0).result;
    window.runTable()->selectRow(0);
    QAction *rerunSeed = nullptr;
    for (auto *a : window.findChildren<QAction *>())
        if (a->text().startsWith("Rerun with another seed")) rerunSeed = a;
    QVERIFY(rerunSeed && rerunSeed->isEnabled());
    QSignalSpy rerunDone(window.controller(), &TrainingController::sweepFinished);
    rerunSeed->trigger();
    QVERIFY(rerunDone.wait(60000));
    QCOMPARE(window.model()->runCount(), 5);
    const auto &added = window.model()->run(4);
    QCOMPARE(QString(toString(added.result.status)), QString("done"));
    QVERIFY(added.labels.count("seed"));
    QCOMPARE(uint64_t(std::stoull(added.labels.at("seed"))), added.config.initSeed);
    QCOMPARE(added.config.model.dModel, window.model()->run(0).config.model.dModel);
    QCOMPARE(window.model()->run(0).result.wallSeconds, original.wallSeconds);
}

void TestUiTraining::stopLeavesConsistentSessionAndResumeRunsOnlyMissing()
{
    QTemporaryDir dir;
    Session s = uitest::tinySession(40);
    // One long run beside three short ones, so that stop finds some finished and some not.
    s.axes[1].values.pop_back(); // heads {1, 2}
    expandSweep(s);
    const QString path = saveTemp(dir, s, "stop.yaml");
    MainWindow window;
    window.setInteractive(false);
    QVERIFY(window.openSession(path));
    // Make the last run long: 20,000 steps.
    {
        Session edited = window.model()->session();
        edited.runs.back().config.phases[0].steps = 20000;
        window.model()->setSession(edited, path);
        window.form()->setPendingRuns(4);
    }
    QSignalSpy finished(window.controller(), &TrainingController::sweepFinished);
    QSignalSpy runDone(window.controller(), &TrainingController::runFinished);
    QVERIFY(window.startSweep());
    // Wait until the long run is training and at least one short run has finished.
    QTRY_VERIFY_WITH_TIMEOUT(window.model()->run(3).result.stepsDone > 200 && runDone.count() >= 1,
                             60000);
    // Readers outside the app see the long run in training (S.results/live/, issue 55), with its
    // start time; the table shows the same start.
    const std::string longRun = runId(window.model()->run(3).config);
    auto listedAsTraining = [&] {
        for (const auto &live : SessionStore::readLiveRuns(path.toStdString()))
            for (const auto &run : live.runs)
                if (runId(run.config) == longRun && run.result.status == RunStatus::Running &&
                    run.result.stepsDone > 0 && !run.result.origin.startedAt.empty())
                    return true;
        return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(listedAsTraining(), 15000);
    QVERIFY(!window.model()->run(3).result.origin.startedAt.empty());
    window.stopSweep();
    QVERIFY(finished.wait(30000));
    QVERIFY(SessionStore::readLiveRuns(path.toStdString()).empty()); // gone with the training

    // No run is left Running or Paused; the long one is Stopped.
    int done = 0;
    for (int i = 0; i < window.model()->runCount(); ++i) {
        const auto status = window.model()->run(i).result.status;
        QVERIFY2(status != RunStatus::Running && status != RunStatus::Paused, toString(status));
        done += status == RunStatus::Done;
    }
    QCOMPARE(QString(toString(window.model()->run(3).result.status)), QString("stopped"));
    QVERIFY(done >= 1);

    // Autosave wrote the session file after each run; it loads and agrees.
    const Session onDisk = loadSession(path.toStdString());
    QCOMPARE(int(onDisk.runs.size()), 4);
    for (const auto &run : onDisk.runs) QVERIFY(run.result.status != RunStatus::Running);
    const auto pending = pendingRuns(onDisk);
    QCOMPARE(int(pending.size()), 4 - done);

    // Reopen and resume: only the missing runs train; finished results are kept as they were.
    std::map<int, double> wallBefore;
    for (int i = 0; i < int(onDisk.runs.size()); ++i)
        if (isFinished(onDisk.runs[size_t(i)].result.status))
            wallBefore[i] = onDisk.runs[size_t(i)].result.wallSeconds;
    // The first window lets go of the file, as closing it would: one writer at a time.
    window.newSession();
    MainWindow again;
    again.setInteractive(false);
    QVERIFY(again.openSession(path));
    {
        // Shorten the long run so that the resumed sweep finishes quickly.
        Session edited = again.model()->session();
        edited.runs.back().config.phases[0].steps = 40;
        again.model()->setSession(edited, path);
        again.form()->setPendingRuns(int(pendingRuns(edited).size()));
    }
    QSignalSpy resumedRuns(again.controller(), &TrainingController::runFinished);
    QSignalSpy resumedEnd(again.controller(), &TrainingController::sweepFinished);
    QVERIFY(again.startSweep());
    QVERIFY(resumedEnd.wait(60000));
    QCOMPARE(int(resumedRuns.count()), int(pending.size()));
    for (const auto &args : resumedRuns) QVERIFY(!wallBefore.count(args.at(0).toInt()));
    for (const auto &[i, wall] : wallBefore)
        QCOMPARE(again.model()->run(i).result.wallSeconds, wall);
    for (int i = 0; i < again.model()->runCount(); ++i)
        QCOMPARE(QString(toString(again.model()->run(i).result.status)), QString("done"));
}

// A task defined in a file (the sequence-file task) in the app: its options in the form (a page
// of its field rows), a sweep trained in the window, the per-group loss view with the task's
// group names and plateau lines k/G · ln K, and every figure exported.
void TestUiTraining::fileTaskTrainsInTheAppWithItsFigures()
{
    QTemporaryDir dir;
    {
        std::ofstream examples(dir.filePath("mod5.txt").toStdString());
        for (int a = 0; a < 5; ++a)
            for (int b = 0; b < 5; ++b)
                examples << a << " + " << b << " =\t" << (a + b) % 5 << '\t'
                         << (a + b >= 5 ? "wraps" : "no wrap") << '\n';
    }
    Session s = uitest::tinySession(60);
    s.base.task.kind = "sequence_file";
    s.base.task.options = {{"path", "mod5.txt"}, {"tokens", "words"}, {"plateau_lines", "true"}};
    s.axes = {SweepAxis{"heads", {uitest::num(1), uitest::num(2)}}};
    s.base.model.heads = {1};
    s.base.task.baseDirectory = dir.path().toStdString(); // as loading from that folder sets it
    s.runs.clear();
    expandSweep(s);
    QCOMPARE(int(s.runs.size()), 2);
    const QString path = saveTemp(dir, s, "file-task.yaml");

    MainWindow window;
    window.setInteractive(false);
    window.show();
    QVERIFY(window.openSession(path));
    // The form shows the task's own options, and building from it gives the same experiment.
    Session built;
    QStringList errors;
    QVERIFY2(window.form()->buildDefinition(built, &errors), qPrintable(errors.join('\n')));
    QCOMPARE(built.base.task.kind, std::string("sequence_file"));
    QCOMPARE(built.base.task.options.at("path"), std::string("mod5.txt"));
    QCOMPARE(built.base.task.options.at("tokens"), std::string("words"));
    QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), 3000);

    QSignalSpy finished(window.controller(), &TrainingController::sweepFinished);
    QVERIFY(window.startSweep());
    QVERIFY(finished.wait(60000));
    for (int row = 0; row < window.model()->runCount(); ++row) {
        const auto &r = window.model()->run(row).result;
        QCOMPARE(QString(toString(r.status)), QString("done"));
        QVERIFY(r.extra.count("test_group_1"));
    }
    auto *loss = static_cast<LossChartView *>(window.figure("loss"));
    window.showFigure("loss");
    loss->setDigitView(true);
    window.runTable()->selectRow(0);
    loss->refresh();
    QVERIFY2(loss->title().contains("per group"), qPrintable(loss->title()));
    const QString csv = loss->csv();
    QVERIFY(csv.contains("test_group_0") && csv.contains("test_group_1"));
    QStringList names;
    for (auto *series : loss->chart()->series()) names << series->name();
    QVERIFY2(names.contains("no wrap") && names.contains("wraps"), qPrintable(names.join(", ")));
    QVERIFY2(names.contains("ln 5") && names.contains("1/2 ln 5"), qPrintable(names.join(", ")));
    const QStringList files = FigureExporter::exportAll(
        window.model(), dir.filePath("figures"), QSize(800, 500), window.model()->session().view);
    QVERIFY(files.contains(dir.filePath("figures/fig2_heatmap.png")));
    QVERIFY(files.contains(dir.filePath("figures/fig1_loss_per_digit.svg")));
}

// An untitled session reused a previous class's autosaved results: "2 resumed from checkpoints",
// with no live training. Each untitled session has an autosave of its own, removed when the
// session is discarded (replaced, or the window closed without saving it).
void TestUiTraining::anUntitledSessionNeverReusesAnothersResults()
{
    QStandardPaths::setTestModeEnabled(true); // autosaves under ~/.qttest, not the user's
    MainWindow window;
    window.setInteractive(false);
    Session s = uitest::tinySession(40);
    s.checkpoints.every = 10;
    window.model()->setSession(s);
    window.form()->loadFrom(window.model()->session());
    window.form()->setPendingRuns(4);
    QSignalSpy finished(window.controller(), &TrainingController::sweepFinished);
    QVERIFY(window.startSweep());
    QVERIFY(finished.wait(120000));
    const QString first = window.untitledAutosavePath();
    QVERIFY(!first.isEmpty());
    const QString firstResults = QString::fromStdString(resultsDirFor(first.toStdString()));
    QVERIFY(QDir(firstResults + "/checkpoints").exists());

    // The next class: a new untitled session with the same runs trains them from step 0.
    window.newSession();
    QVERIFY(!QFileInfo::exists(first) &&
            !QDir(firstResults).exists()); // discarded with its session
    window.model()->setSession(s);
    window.form()->loadFrom(window.model()->session());
    window.form()->setPendingRuns(4);
    QVERIFY(window.startSweep());
    QVERIFY(finished.wait(120000));
    const QString second = window.untitledAutosavePath();
    QVERIFY(!second.isEmpty() && second != first);
    for (const auto &run : window.model()->session().runs) {
        QCOMPARE(run.result.status, RunStatus::Done);
        QVERIFY2(run.result.message.find("resum") == std::string::npos, run.result.message.c_str());
        QCOMPARE(run.result.train.front().step, int64_t(2)); // trained from its first step here
    }
    // Closing the window without saving removes it too.
    const QString secondResults = QString::fromStdString(resultsDirFor(second.toStdString()));
    window.close();
    QVERIFY(!QFileInfo::exists(second) && !QDir(secondResults).exists());
}

QTEST_MAIN(TestUiTraining)
#include "test_ui_training.moc"

// Issue 75, items 2 and 10: a teacher presses the strip's buttons in any order, mid-run and
// between runs, and now and then clears the faint curves. After every press: a finished run is
// never trained again (its result is the one it finished with); the runs that stay keep their
// order (the contrast a preset puts first stays first); a head count keeps its colour for the
// whole lesson; every earlier run not in the sweep now is one faint curve until cleared.
void TestUiTraining::theLessonStripKeepsWhatIsDoneThroughAnyPresses()
{
    QTemporaryDir dir;
    Session s = uitest::tinySession(60);
    s.base.model.dModel = 12; // heads 1, 2, 3, 4, 6, 12 all divide it
    s.axes = {SweepAxis{"lr", {uitest::num(7e-3), uitest::num(1.5e-3)}},
              SweepAxis{"heads", {uitest::num(12), uitest::num(1)}}};
    MainWindow window;
    LessonStrip *strip = openLesson(window, dir, s, "presses.yaml");
    QVERIFY(strip);
    auto *loss = qobject_cast<LossChartView *>(window.figure("loss"));
    QVERIFY(loss);
    QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), 3000);
    QVERIFY(window.startSweep());

    const QList<int64_t> headButtons = [&] {
        QList<int64_t> out;
        for (const QString &v : strip->headColours().split(',')) out << v.toLongLong();
        return out;
    }();
    QVERIFY2(headButtons.size() >= 4, qPrintable(strip->headColours()));
    const QList<double> lrButtons = strip->learningRateButtons();
    auto keyOf = [](const SessionRun &run) { return yaml::canonicalYaml(run.config); };
    auto axisSet = [&](const char *name) {
        std::set<double> out;
        for (const auto &axis : window.model()->session().axes)
            if (axis.name == name)
                for (const auto &v : axis.values) out.insert(v.number);
        return out;
    };
    std::map<std::string, std::pair<int64_t, size_t>> finished; // key → steps, test points
    std::set<std::string> earlier;   // runs shown since the last clear, with a test curve
    std::set<std::string> everShown; // every run shown since the last clear
    for (const auto &run : window.model()->session().runs) everShown.insert(keyOf(run));
    std::mt19937 rng(75);
    int presses = 0, mid = 0;
    for (int action = 0; action < 40; ++action) {
        QTest::qWait(rng() % 4 == 0 ? 0 : int(rng() % 250));
        const Session before = window.model()->session();
        std::vector<std::string> order;
        for (const auto &run : before.runs) {
            order.push_back(keyOf(run));
            if (!run.result.test.empty()) earlier.insert(keyOf(run));
            if (isFinished(run.result.status))
                finished.emplace(keyOf(run),
                                 std::pair{run.result.stepsDone, run.result.test.size()});
        }
        mid += window.controller()->isRunning();
        const unsigned what = rng() % 10;
        if (what == 0) {
            strip->findChild<QPushButton *>("clearEarlier")->click();
            QCOMPARE(loss->ghostCount(), 0);
            earlier.clear();
            everShown.clear();
            for (const auto &run : before.runs) everShown.insert(keyOf(run));
            continue;
        }
        if (what < 6) {
            strip->toggleHeads(headButtons[int(rng() % headButtons.size())]);
        } else if (what == 6) { // two presses at once: the second waits with the first
            strip->toggleHeads(headButtons[int(rng() % headButtons.size())]);
            // (the first applies at once where nothing trained: its runs were shown)
            for (const auto &run : window.model()->session().runs) everShown.insert(keyOf(run));
            strip->toggleHeads(headButtons[int(rng() % headButtons.size())]);
        } else
            strip->chooseLearningRate(lrButtons[int(rng() % lrButtons.size())]);
        ++presses;
        std::set<double> heads, lrs;
        for (int64_t h : strip->heads()) heads.insert(double(h));
        for (double lr : strip->learningRates()) lrs.insert(lr);
        auto said = [&] {
            QStringList out;
            for (const char *name : {"heads", "lr"}) {
                QStringList values;
                for (double v : axisSet(name)) values << QString::number(v);
                out << QString("%1 {%2}").arg(name, values.join(','));
            }
            QStringList pressed;
            for (double v : heads) pressed << QString::number(v);
            for (double v : lrs) pressed << QString::number(v);
            return out.join("; ") + " pressed " + pressed.join(',') + " running " +
                   QString::number(window.controller()->isRunning()) + " refusal " +
                   strip->refusal();
        };
        QTRY_VERIFY2_WITH_TIMEOUT(axisSet("heads") == heads && axisSet("lr") == lrs,
                                  qPrintable(said()), 30000);
        const Session &now = window.model()->session();
        QVERIFY(strip->refusal().isEmpty());
        // What finished stays finished, with the result it finished with.
        std::set<std::string> current;
        std::vector<std::string> stayed;
        for (const auto &run : now.runs) {
            const std::string key = keyOf(run);
            current.insert(key);
            if (std::find(order.begin(), order.end(), key) != order.end()) stayed.push_back(key);
            if (const auto f = finished.find(key); f != finished.end()) {
                QVERIFY2(isFinished(run.result.status),
                         qPrintable(runLabel(now, run) +
                                    " trained again: " + toString(run.result.status)));
                QCOMPARE(run.result.stepsDone, f->second.first);
                QCOMPARE(run.result.test.size(), f->second.second);
            }
        }
        // The runs that stayed keep their order.
        std::vector<std::string> wasOrder;
        for (const auto &key : order)
            if (current.count(key)) wasOrder.push_back(key);
        QVERIFY2(stayed == wasOrder, "the runs that stayed changed places");
        // One colour per head count for the whole lesson: its button's place.
        const ColourTable colours = colourTable(now);
        for (int i = 0; i < int(now.runs.size()); ++i) {
            const int button = int(headButtons.indexOf(now.runs[size_t(i)].config.model.heads[0]));
            QCOMPARE(colours.indexOf(now.runs[size_t(i)]), button);
            QCOMPARE(loss->colourIndexOfRun(i), button); // as the loss curves draw it
        }
        // The earlier runs not in the sweep now: one faint curve each (a run may have drawn its
        // first points while the press stopped the sweep, so those seen before are the least).
        const std::set<std::string> ghosts = loss->ghostKeys();
        QCOMPARE(loss->ghostCount(), int(ghosts.size()));
        for (const auto &key : earlier)
            QVERIFY2(current.count(key) || ghosts.count(key), "an earlier run lost its curve");
        for (const auto &key : ghosts) {
            QVERIFY2(!current.count(key), "a run drawn faintly beside itself");
            QVERIFY2(everShown.count(key), "a faint curve of a run never shown since the clear");
        }
        everShown.insert(current.begin(), current.end());
    }
    QVERIFY2(presses >= 30 && mid >= 3,
             qPrintable(QString("%1 presses, %2 mid-run").arg(presses).arg(mid)));
    QSignalSpy stopped(window.controller(), &TrainingController::sweepFinished);
    if (window.controller()->isRunning()) {
        window.stopSweep();
        QVERIFY(stopped.wait(30000));
    }
}

// Issue 75, item 10: on the head-progression classroom preset (head schedules swept) a head
// button cannot make the session unstartable: the press is undone, the strip says why on screen,
// and the session still starts.
void TestUiTraining::aLessonPressThatCannotStartIsUndoneOnScreen()
{
    MainWindow window;
    window.setInteractive(false);
    window.show();
    QVERIFY(window.openPreset("head-progression-classroom"));
    window.lessonAction()->trigger();
    LessonStrip *strip = window.lessonStrip();
    QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), 3000);
    const std::string before = sessionToYaml(window.model()->session());
    const QList<int64_t> heads = strip->heads();
    int64_t other = 0;
    for (const QString &v : strip->headColours().split(','))
        if (!heads.contains(v.toLongLong())) other = v.toLongLong();
    QVERIFY(other > 0);
    strip->toggleHeads(other);
    QVERIFY2(strip->refusal().startsWith("That choice was undone: "), qPrintable(strip->refusal()));
    QVERIFY(strip->findChild<QLabel *>("refusal")->isVisibleTo(&window));
    QCOMPARE(strip->heads(), heads);
    QCOMPARE(sessionToYaml(window.model()->session()), before);
    QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), 3000);
    QVERIFY(!window.controller()->isRunning());
}

// Issue 75, item 5: presenter mode gives the projector to the figure. On the head-progression
// classroom preset the Samples panel had nothing to show ("Select runs…") and took a third of
// the screen; it steps aside with the form and the run table, and comes back at the desk.
void TestUiTraining::presenterModeHidesPanelsWithNothingToShow()
{
    MainWindow window;
    window.setInteractive(false);
    window.show();
    QVERIFY(window.openPreset("head-progression-classroom"));
    auto *samples = window.findChild<QDockWidget *>("samplesDock");
    QVERIFY(samples);
    QTRY_VERIFY(samples->isVisible());
    window.setPresenterMode(true);
    QVERIFY(!samples->isVisible());
    for (auto *dock : window.findChildren<QDockWidget *>())
        QVERIFY2(!dock->isVisible(), qPrintable(dock->objectName()));
    window.setPresenterMode(false);
    QVERIFY(samples->isVisible());
}

// Issue 75, item 11: after a crash the restarted app said nothing of the crashed session, its
// autosave stayed on disk and Open recent was empty. The real `headlab` training a session is
// killed (SIGKILL: no handler runs, as in a crash); the next start, in its data folder, finds the
// session, puts it in Open recent and reopens it with the runs that finished.
void TestUiTraining::aCrashedSessionIsOfferedAtTheNextStart()
{
    QTemporaryDir home, dir;
    const QByteArray oldData = qgetenv("XDG_DATA_HOME");
    const QString oldOrg = QCoreApplication::organizationName(),
                  oldApp = QCoreApplication::applicationName();
    const bool testMode = QStandardPaths::isTestModeEnabled(); // another case may have set it
    QStandardPaths::setTestModeEnabled(false);                 // the data folder the app uses
    qputenv("XDG_DATA_HOME", home.filePath("data").toUtf8());
    QCoreApplication::setOrganizationName(QStringLiteral("HeadLab")); // as the app names itself
    QCoreApplication::setApplicationName(QStringLiteral("HeadLab"));
    auto restore = qScopeGuard([&] {
        qputenv("XDG_DATA_HOME", oldData);
        QCoreApplication::setOrganizationName(oldOrg);
        QCoreApplication::setApplicationName(oldApp);
        QStandardPaths::setTestModeEnabled(testMode);
    });
    QVERIFY(SessionFiles::crashedSessions().isEmpty());

    Session s = uitest::tinySession(20);
    s.axes.back() = SweepAxis{"lr", {uitest::num(1e-3)}};
    s.axes.push_back(SweepAxis{"seed", {}});
    for (uint64_t seed : {0, 1}) {
        AxisValue v;
        v.kind = AxisValue::Kind::Unsigned;
        v.unsignedValue = seed;
        s.axes.back().values.push_back(v);
    }
    s.runs.clear();
    expandSweep(s);
    const QString path = saveTemp(dir, s, "crashed.yaml");
    int finished = 0; // runs stored as done when the app is killed
    {
        QProcess app;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.insert("XDG_DATA_HOME", home.filePath("data"));
        env.insert("XDG_CONFIG_HOME", home.filePath("config"));
        app.setProcessEnvironment(env);
        app.start(HEADLAB_APP, {"--session", path, "--start"});
        QVERIFY(app.waitForStarted());
        // Some runs finished and stored; then the crash.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                try {
                    const Session now = loadSession(path.toStdString());
                    finished = 0;
                    for (const auto &run : now.runs)
                        finished += run.result.status == RunStatus::Done;
                    return finished >= 2;
                } catch (const std::exception &) {
                    return false;
                }
            }(),
            120000);
        ::kill(pid_t(app.processId()), SIGKILL);
        QVERIFY(app.waitForFinished(30000));
    }
    QCOMPARE(SessionFiles::crashedSessions(), QStringList{QFileInfo(path).absoluteFilePath()});
    MainWindow window;
    window.setInteractive(false);
    QCOMPARE(window.offerRecovery(), QFileInfo(path).absoluteFilePath());
    QCOMPARE(window.model()->filePath(), QFileInfo(path).absoluteFilePath());
    QVERIFY(SessionFiles::recentFiles().contains(QFileInfo(path).absoluteFilePath()));
    int done = 0;
    for (int i = 0; i < window.model()->runCount(); ++i)
        done += window.model()->run(i).result.status == RunStatus::Done;
    QVERIFY2(done >= finished, qPrintable(QString("%1 of %2").arg(done).arg(finished)));
    // Offered once: recovered, it is no longer a crashed session.
    QVERIFY(SessionFiles::crashedSessions().isEmpty());
}

// Issue 75, item 10: the sweep's ETA sat near 5 minutes while the classroom's runs ended early. A
// run whose test loss went below the learned level counts to where stop_after_learned ends it,
// and while a run may still end early the ETA says it is an upper bound.
void TestUiTraining::theEtaCountsRunsEndingEarly()
{
    Session s = uitest::tinySession(1000);
    s.base.stopAfterLearned = 100;
    s.axes = {SweepAxis{"heads", {uitest::num(1), uitest::num(2)}}};
    s.runs.clear();
    expandSweep(s);
    SessionModel model;
    model.setSession(s);
    model.markStarting({0, 1});
    auto progress = [&](int run, int64_t step, int64_t end, bool mayEndEarly) {
        RunProgress p;
        p.runIndex = run;
        p.step = step;
        p.totalSteps = 1000;
        p.stepsPerSecond = 100;
        p.expectedEnd = end;
        p.mayEndEarly = mayEndEarly;
        model.applyProgress(p);
    };
    progress(0, 200, 1000, true); // not below the level yet
    progress(1, 200, 1000, true);
    QCOMPARE(model.sweepEtaSeconds(), (800.0 + 800.0) / 200.0);
    QVERIFY(model.sweepEtaIsAtMost());
    progress(0, 300, 350, false);  // went below at 250: ends at 350
    progress(1, 300, 1000, false); // ... or not (a run without the setting would say so)
    QCOMPARE(model.sweepEtaSeconds(), (50.0 + 700.0) / 200.0);
    QVERIFY(!model.sweepEtaIsAtMost());
}
