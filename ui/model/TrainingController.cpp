// TrainingController.cpp — see TrainingController.h.
#include "ui/model/TrainingController.h"

#include "core/model/Device.h"
#include "ui/model/Metatypes.h"

#include <QStringList>

namespace headlab::ui {

TrainingController::TrainingController(QObject *parent)
    : QObject(parent)
    , m_mailbox(new Mailbox(this))
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
    auto gen = m_generation;
    auto letters = m_mailbox->letters();

    // These run on the training thread. They only copy values into the mailbox; the calls posted
    // run on the GUI thread (Mailbox::deliver), and not at all once this object is gone.
    headlab::SweepCallbacks callbacks;
    callbacks.onProgress = [this, letters, gen, generation](const headlab::RunProgress &p) {
        if (*gen != generation) return;
        letters->post([this, p] { Q_EMIT progress(p); });
    };
    callbacks.onRunFinished = [this, letters, gen, generation](int runIndex,
                                                               const headlab::RunResult &r) {
        if (*gen != generation) return;
        letters->post([this, runIndex, r] { Q_EMIT runFinished(runIndex, r); });
    };
    callbacks.onAttention = [this, letters, gen, generation](int runIndex,
                                                             const headlab::AttentionMaps &maps) {
        if (*gen != generation) return;
        letters->post([this, runIndex, maps] { Q_EMIT attentionMaps(runIndex, maps); });
    };
    callbacks.onSweepFinished = [this, letters, gen, generation] {
        if (*gen != generation) return;
        letters->post([this, generation] {
            if (*m_generation != generation) return;
            m_mailbox->stopAfterThis(); // before the signal: a handler may start the next sweep
            m_running = false;
            m_paused = false;
            Q_EMIT sweepFinished();
            Q_EMIT stateChanged();
        });
    };
    m_runner->setAttentionWanted(m_attentionRun, m_attentionInput.toStdString());
    if (!m_runner->start(std::move(jobs), options, std::move(callbacks))) return false;
    m_mailbox->open();
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

void TrainingController::deliverPosted()
{
    m_mailbox->deliver();
}

QStringList TrainingController::availableDevices()
{
    QStringList out;
    for (const auto &d : headlab::availableDevices()) out << QString::fromStdString(d);
    return out;
}

} // namespace headlab::ui
