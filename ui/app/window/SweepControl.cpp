// SweepControl.cpp — see SweepControl.h.
#include "ui/app/window/SweepControl.h"

#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "ui/app/ExperimentForm.h"
#include "ui/app/window/SessionFiles.h"
#include "ui/model/SessionModel.h"
#include "ui/model/TrainingController.h"

#include <QCoreApplication>

#include <cstdio>
#include <cstring>

namespace headlab::ui {

SweepControl::SweepControl(SessionModel *model, TrainingController *controller,
                           ExperimentForm *form, SessionFiles *files, QObject *parent)
    : QObject(parent)
    , m_model(model)
    , m_controller(controller)
    , m_form(form)
    , m_files(files)
{
    connect(m_controller, &TrainingController::sweepFinished, this, &SweepControl::onSweepFinished);
}

void SweepControl::stopForSignal(int signal)
{
    // SIGTERM or SIGHUP (a logout, a closing terminal, a scheduler): stop, save, quit, no
    // questions.
    Q_EMIT message(tr("Signal %1: stopping and saving").arg(signal), 0);
    const bool wasRunning = m_controller->isRunning();
    if (wasRunning) {
        m_controller->stop();
        m_controller->waitForFinished();
        m_controller->deliverPosted(); // the Stopped results, stored one by one
        m_model->settleAfterSweep();
    }
    // Only a session that changed is written (issue 49: a SIGTERM rewrote an unedited file of the
    // previous release as an index and a new results folder); autosave() itself never writes an
    // index whose finished runs' files are missing (SessionStore::saveSession refuses).
    const bool changed = m_model->isModified() || wasRunning;
    if (changed && !m_files->autosave()) {
        std::fprintf(stderr, "headlab: %s: stopped; NOT saved: %s\n", strsignal(signal),
                     qPrintable(m_files->lastSaveError()));
    } else if (changed) {
        std::fprintf(stderr, "headlab: %s: stopped and saved%s\n", strsignal(signal),
                     m_model->filePath().isEmpty()
                         ? qPrintable(QStringLiteral(" to ") + m_files->autosavePath())
                         : qPrintable(QStringLiteral(" to ") + m_model->filePath()));
    } else {
        std::fprintf(
            stderr, "headlab: %s: nothing had changed; %s left as it was\n", strsignal(signal),
            m_model->filePath().isEmpty() ? "nothing saved" : qPrintable(m_model->filePath()));
    }
    m_model->setModified(false);
    m_files->keepMarkOnExit(); // the next start offers what was saved here
    // exit() ends the loops running now; the signal may come while a message box's loop runs
    // before the application's own loop has started (a session opened from the command line that
    // says its results are missing), so the exit is posted for that loop too.
    QCoreApplication::exit(128 + signal);
    QMetaObject::invokeMethod(
        qApp, [code = 128 + signal] { QCoreApplication::exit(code); }, Qt::QueuedConnection);
}

int SweepControl::runsToStart() const
{
    const Session &session = m_model->session();
    const int pending = int(pendingRuns(session).size());
    if (pending > 0 || !session.search) return pending;
    Session next = session; // a boundary search whose round is over: the next round's runs
    return planSearchRound(next);
}

bool SweepControl::startSweep()
{
    if (!m_form->canStart()) {
        Q_EMIT message(m_form->blockReason(), 8000);
        return false;
    }
    // A boundary search plans its round 0 (or the next, after a finished round) first, and saves
    // the plan before it trains.
    if (m_model->planSearchRound() > 0) m_files->autosave();
    return startRuns(pendingRuns(m_model->session()));
}

bool SweepControl::startRuns(const std::vector<int> &runIndices)
{
    if (m_controller->isRunning() || runIndices.empty()) return false;
    std::vector<SweepJob> jobs;
    for (int i : runIndices) {
        if (i < 0 || i >= m_model->runCount()) continue;
        jobs.push_back(SweepJob{i, m_model->run(i).config});
    }
    if (jobs.empty()) return false;
    try {
        m_model->openStore(
            m_files->autosavePath()); // refused here if another HeadLab writes the file
    } catch (const std::exception &e) {
        Q_EMIT failed(tr("Start"), QString::fromUtf8(e.what()));
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
        Q_EMIT failed(tr("Start"), tr("The sweep could not start."));
        return false;
    }
    m_form->setRunning(true);
    Q_EMIT stateChanged();
    QString said = tr("Training %n run(s) on a background thread", "", int(runIndices.size()));
    if (resumed > 0) said += tr("; %n resumed from checkpoints", "", resumed);
    if (!notes.empty()) said += QStringLiteral("; ") + QString::fromStdString(notes.front());
    Q_EMIT message(said, notes.empty() ? 4000 : 15000);
    return true;
}

void SweepControl::pauseOrResume()
{
    if (!m_controller->isRunning()) return;
    if (m_controller->isPaused())
        m_controller->resume();
    else
        m_controller->pause();
    Q_EMIT stateChanged();
}

void SweepControl::stop()
{
    m_controller->stop();
    Q_EMIT message(tr("Stopping…"), 3000);
}

// A sweep ended: settle the runs, then the lesson strip's next runs, a boundary search's next
// round, or the end.
void SweepControl::onSweepFinished()
{
    m_model->settleAfterSweep();
    m_files->autosave();
    if (m_afterStop) { // stopped for what was asked next (the lesson strip's choice): that now
        const auto next = std::move(m_afterStop);
        m_afterStop = nullptr;
        m_form->setRunning(false);
        next();
        return;
    }
    // A boundary search goes on with its next round, unless runs were stopped (then it waits,
    // as a sweep does, for Start).
    QString finished = tr("Sweep finished");
    if (m_model->session().search) {
        if (const int added = m_model->planSearchRound(); added > 0) {
            m_files->autosave();
            const auto held = m_model->searchReport(); // the model's, computed once per change
            const SearchReport &report = *held;
            if (startRuns(pendingRuns(m_model->session()))) {
                Q_EMIT message(
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
    Q_EMIT message(finished, 10000);
    Q_EMIT stateChanged();
}

void SweepControl::stopThen(std::function<void()> next)
{
    if (!m_controller->isRunning()) {
        next();
        return;
    }
    m_afterStop = std::move(next);
    m_controller->stop();
}

void SweepControl::rerun(const QList<int> &runs, const uint64_t *seed)
{
    if (runs.isEmpty() || m_controller->isRunning()) return;
    if (!seed) {
        startRuns(std::vector<int>(runs.begin(), runs.end()));
        return;
    }
    // A new seed makes a new run beside the original: the sweep's product does not contain it,
    // so it is kept as an extra run with its seed in its labels.
    std::vector<int> added;
    for (int i : runs) {
        SessionRun copy = m_model->run(i);
        copy.config.initSeed = copy.config.dataSeed = *seed;
        copy.labels["seed"] = std::to_string(*seed);
        copy.result = RunResult{};
        added.push_back(m_model->addRun(copy));
    }
    startRuns(added);
}

} // namespace headlab::ui
