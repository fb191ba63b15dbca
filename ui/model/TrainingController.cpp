// TrainingController.cpp — see TrainingController.h.
#include "ui/model/TrainingController.h"

#include "core/model/Device.h"
#include "ui/model/Metatypes.h"

#include <QPointer>
#include <QStringList>

namespace headlab::ui {

TrainingController::TrainingController(QObject *parent)
    : QObject(parent)
{
    registerMetatypes();
}

TrainingController::~TrainingController()
{
    if (m_runner) {
        m_runner->stop();
        m_runner->wait();
        m_runner.reset(); // joins
    }
}

bool TrainingController::start(std::vector<headlab::SweepJob> jobs,
                               const headlab::SweepOptions &options)
{
    if (m_running || jobs.empty()) return false;
    // A fresh runner per sweep: the old one's destructor joins its finished thread.
    m_runner = std::make_unique<headlab::SweepRunner>();
    const int generation = ++*m_generation;
    QPointer<TrainingController> self(this);
    auto gen = m_generation;

    // These run on the training thread. They only copy values and post them to this object's
    // thread; the lambdas posted run on the GUI thread, and are dropped if `this` is gone.
    headlab::SweepCallbacks callbacks;
    callbacks.onProgress = [self, gen, generation](const headlab::RunProgress &p) {
        if (*gen != generation) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, p] {
                if (self) Q_EMIT self->progress(p);
            },
            Qt::QueuedConnection);
    };
    callbacks.onRunFinished = [self, gen, generation](int runIndex, const headlab::RunResult &r) {
        if (*gen != generation) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, runIndex, r] {
                if (self) Q_EMIT self->runFinished(runIndex, r);
            },
            Qt::QueuedConnection);
    };
    callbacks.onAttention = [self, gen, generation](int runIndex,
                                                    const headlab::AttentionMaps &maps) {
        if (*gen != generation) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, runIndex, maps] {
                if (self) Q_EMIT self->attentionMaps(runIndex, maps);
            },
            Qt::QueuedConnection);
    };
    callbacks.onSweepFinished = [self, gen, generation] {
        if (*gen != generation) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, generation] {
                if (!self || *self->m_generation != generation) return;
                self->m_running = false;
                self->m_paused = false;
                Q_EMIT self->sweepFinished();
                Q_EMIT self->stateChanged();
            },
            Qt::QueuedConnection);
    };
    m_runner->setAttentionWanted(m_attentionRun, m_attentionInput.toStdString());
    if (!m_runner->start(std::move(jobs), options, std::move(callbacks))) return false;
    m_running = true;
    m_paused = false;
    Q_EMIT stateChanged();
    return true;
}

void TrainingController::setAttentionWanted(int runIndex, const QString &input)
{
    m_attentionRun = runIndex;
    m_attentionInput = input;
    if (m_runner) m_runner->setAttentionWanted(runIndex, input.toStdString());
}

void TrainingController::pause()
{
    if (!m_running || !m_runner) return;
    m_runner->pause();
    m_paused = true;
    Q_EMIT stateChanged();
}

void TrainingController::resume()
{
    if (!m_running || !m_runner) return;
    m_runner->resume();
    m_paused = false;
    Q_EMIT stateChanged();
}

void TrainingController::stop()
{
    if (m_runner) m_runner->stop();
}

void TrainingController::stopRun(int runIndex)
{
    if (m_runner && m_running) m_runner->stopRun(runIndex);
}

void TrainingController::pauseRun(int runIndex)
{
    if (m_runner && m_running) m_runner->pauseRun(runIndex);
}

void TrainingController::resumeRun(int runIndex)
{
    if (m_runner) m_runner->resumeRun(runIndex);
}

bool TrainingController::isRunPaused(int runIndex) const
{
    return m_runner && m_running && m_runner->isRunPaused(runIndex);
}

void TrainingController::waitForFinished()
{
    if (m_runner) m_runner->wait();
}

QStringList TrainingController::availableDevices()
{
    QStringList out;
    for (const auto &d : headlab::availableDevices()) out << QString::fromStdString(d);
    return out;
}

} // namespace headlab::ui
