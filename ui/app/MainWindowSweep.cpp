// MainWindowSweep.cpp — the main window's sweep control: start (a search's next round first),
// pause, stop, rerun, the lesson strip's choices, and stop signals.
#include "ui/app/MainWindow.h"

#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "ui/app/ExperimentForm.h"
#include "ui/app/LessonStrip.h"
#include "ui/figures/LossChartView.h"
#include "ui/model/ColourTable.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"
#include "ui/model/TrainingController.h"

#include <QApplication>
#include <QInputDialog>
#include <QScrollArea>
#include <QScrollBar>
#include <QStatusBar>
#include <QTimer>

#include <cstdio>

#include <random>

namespace headlab::ui {

void MainWindow::stopForSignal(int signal)
{
    // SIGTERM or SIGHUP (a logout, a closing terminal, a scheduler): stop, save, quit, no
    // questions.
    statusBar()->showMessage(tr("Signal %1: stopping and saving").arg(signal));
    const bool wasRunning = m_controller->isRunning();
    if (wasRunning) {
        m_controller->stop();
        m_controller->waitForFinished();
        QCoreApplication::sendPostedEvents(m_controller); // the Stopped results, stored one by one
        m_model->settleAfterSweep();
    }
    // Only a session that changed is written (issue 49: a SIGTERM rewrote an unedited file of the
    // previous release as an index and a new results folder); autosave() itself never writes an
    // index whose finished runs' files are missing (SessionStore::saveSession refuses).
    const bool changed = m_model->isModified() || wasRunning;
    if (changed && !autosave()) {
        std::fprintf(stderr, "headlab: %s: stopped; NOT saved: %s\n", strsignal(signal),
                     qPrintable(m_lastSaveError));
    } else if (changed) {
        std::fprintf(stderr, "headlab: %s: stopped and saved%s\n", strsignal(signal),
                     m_model->filePath().isEmpty()
                         ? qPrintable(QStringLiteral(" to ") + autosavePath())
                         : qPrintable(QStringLiteral(" to ") + m_model->filePath()));
    } else {
        std::fprintf(
            stderr, "headlab: %s: nothing had changed; %s left as it was\n", strsignal(signal),
            m_model->filePath().isEmpty() ? "nothing saved" : qPrintable(m_model->filePath()));
    }
    m_model->setModified(false);
    // exit() ends the loops running now; the signal may come while a message box's loop runs
    // before the application's own loop has started (a session opened from the command line that
    // says its results are missing), so the exit is posted for that loop too.
    QCoreApplication::exit(128 + signal);
    QMetaObject::invokeMethod(
        qApp, [code = 128 + signal] { QCoreApplication::exit(code); }, Qt::QueuedConnection);
}

int MainWindow::runsToStart() const
{
    const Session &session = m_model->session();
    const int pending = int(pendingRuns(session).size());
    if (pending > 0 || !session.search) return pending;
    Session next = session; // a boundary search whose round is over: the next round's runs
    return planSearchRound(next);
}

bool MainWindow::startSweep()
{
    if (!m_form->canStart()) {
        statusBar()->showMessage(m_form->blockReason(), 8000);
        return false;
    }
    // A boundary search plans its round 0 (or the next, after a finished round) first, and saves
    // the plan before it trains.
    if (m_model->planSearchRound() > 0) autosave();
    return startRuns(pendingRuns(m_model->session()));
}

bool MainWindow::startRuns(const std::vector<int> &runIndices)
{
    if (m_controller->isRunning() || runIndices.empty()) return false;
    std::vector<SweepJob> jobs;
    for (int i : runIndices) {
        if (i < 0 || i >= m_model->runCount()) continue;
        jobs.push_back(SweepJob{i, m_model->run(i).config});
    }
    if (jobs.empty()) return false;
    try {
        m_model->openStore(autosavePath()); // refused here if another HeadLab writes the file
    } catch (const std::exception &e) {
        showError(tr("Start"), QString::fromUtf8(e.what()));
        return false;
    }
    // Unfinished runs go on from their newest usable checkpoint; a damaged one is named here.
    const auto notes =
        attachCheckpoints(jobs, m_model->session(), m_model->storePath().toStdString());
    for (const auto &note : notes) std::fprintf(stderr, "headlab: %s\n", note.c_str());
    int resumed = 0;
    for (const auto &job : jobs) resumed += !job.resumeFrom.empty();
    m_model->markStarting(runIndices);
    SweepOptions options = m_form->sweepOptions();
    options.checkpoints = m_model->session().checkpoints;
    if (!m_controller->start(std::move(jobs), options)) {
        showError(tr("Start"), tr("The sweep could not start."));
        return false;
    }
    m_form->setRunning(true);
    updateActions();
    updateStatus();
    QString message = tr("Training %n run(s) on a background thread", "", int(runIndices.size()));
    if (resumed > 0) message += tr("; %n resumed from checkpoints", "", resumed);
    if (!notes.empty()) message += QStringLiteral("; ") + QString::fromStdString(notes.front());
    statusBar()->showMessage(message, notes.empty() ? 4000 : 15000);
    return true;
}

void MainWindow::showLessonStrip()
{
    m_lessonStrip->setSession(m_model->session());
    // As tall as its buttons (which presenter mode enlarges) and its text need, and a scroll bar
    // where needed.
    m_lessonScroll->fit();
    // Again once the new type and the window's new size are laid out (presenter mode).
    QTimer::singleShot(0, m_lessonScroll, [area = m_lessonScroll] { area->fit(); });
}

void MainWindow::startLesson()
{
    // A running sweep stops first (its runs keep what they reached); the choice applies then.
    if (m_controller->isRunning()) {
        m_lessonPending = true;
        m_controller->stop();
        return;
    }
    // The runs shown now become the faint comparison, in their colours.
    const Session &shown = m_model->session();
    const ColourTable colours = colourTable(shown);
    std::vector<LossChartView::Ghost> ghosts;
    for (const auto &run : shown.runs)
        if (!run.result.test.empty())
            ghosts.push_back(
                {runLabel(shown, run), run.result.test, std::max(0, colours.indexOf(run)),
                 QStringLiteral("η = %1").arg(displayLabel(exactNumber(run.config.lr)))});
    Session lesson = m_lessonStrip->lesson(shown);
    m_model->setSweep(lesson);
    m_form->loadFrom(m_model->session());
    if (auto *loss = qobject_cast<LossChartView *>(figure("loss"))) loss->setGhosts(ghosts);
    updateTitle();
    if (startSweep()) showFigure(QStringLiteral("loss"));
}

void MainWindow::pauseOrResume()
{
    if (!m_controller->isRunning()) return;
    if (m_controller->isPaused())
        m_controller->resume();
    else
        m_controller->pause();
    updateStatus();
}

void MainWindow::stopSweep()
{
    m_controller->stop();
    statusBar()->showMessage(tr("Stopping…"), 3000);
}

void MainWindow::rerunSelected(bool newSeed)
{
    const QList<int> runs = selectedRuns();
    if (runs.isEmpty() || m_controller->isRunning()) return;
    if (!newSeed) {
        startRuns(std::vector<int>(runs.begin(), runs.end()));
        return;
    }
    // A new seed makes a new run beside the original: the sweep's product does not contain it,
    // so it is kept as an extra run with its seed in its labels.
    uint64_t seed = std::random_device{}() % 100000;
    if (m_interactive) {
        bool ok = false;
        seed = uint64_t(QInputDialog::getInt(this, tr("Rerun with another seed"), tr("Seed:"),
                                             int(seed), 0, 1 << 30, 1, &ok));
        if (!ok) return;
    }
    std::vector<int> added;
    for (int i : runs) {
        SessionRun copy = m_model->run(i);
        copy.config.initSeed = copy.config.dataSeed = seed;
        copy.labels["seed"] = std::to_string(seed);
        copy.result = RunResult{};
        added.push_back(m_model->addRun(copy));
    }
    startRuns(added);
}

// A sweep ended: settle the runs, then the lesson strip's next runs, a boundary search's next
// round, or the end.
void MainWindow::onSweepFinished()
{
    m_model->settleAfterSweep();
    autosave();
    if (m_lessonPending) { // stopped for the lesson strip's new choice: its runs now
        m_lessonPending = false;
        m_form->setRunning(false);
        startLesson();
        return;
    }
    // A boundary search goes on with its next round, unless runs were stopped (then it waits,
    // as a sweep does, for Start).
    QString finished = tr("Sweep finished");
    if (m_model->session().search) {
        if (const int added = m_model->planSearchRound(); added > 0) {
            autosave();
            const auto held = m_model->searchReport(); // the model's, computed once per change
            const SearchReport &report = *held;
            if (startRuns(pendingRuns(m_model->session()))) {
                statusBar()->showMessage(
                    tr("Boundary search: round %1, %n run(s)", "", added).arg(report.rounds - 1),
                    8000);
                return;
            }
        } else if (pendingRuns(m_model->session()).empty()) {
            finished = tr("Boundary search finished: the Boundary tab has η* per "
                          "configuration and the law");
        }
    }
    m_form->setRunning(false);
    m_form->setPendingRuns(runsToStart());
    statusBar()->showMessage(finished, 10000);
    updateActions();
    updateStatus();
}

} // namespace headlab::ui
