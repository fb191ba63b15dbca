// TrainingController.h — the GUI's handle on core's SweepRunner.
//
// As in Qt's mandelbrot example, the worker owns its computation on its own thread and the GUI
// only posts requests and receives value types. SweepRunner calls back on the training thread;
// this class posts every callback, as copies of RunProgress / RunResult, to its Mailbox and
// re-emits it as a signal on the GUI thread. The destructor stops the sweep and waits for the
// thread.
#pragma once

#include "core/train/SweepRunner.h"
#include "ui/model/Mailbox.h"

#include <QObject>

#include <atomic>
#include <memory>

namespace headlab::ui {

class TrainingController : public QObject {
    Q_OBJECT
public:
    explicit TrainingController(QObject *parent = nullptr);
    ~TrainingController() override;

    // Starts a sweep; false (and nothing changes) if one is already running or jobs is empty.
    bool start(std::vector<headlab::SweepJob> jobs, const headlab::SweepOptions &options);
    void pause();
    void resume();
    void stop();
    void stopRun(int runIndex);
    // Pauses one run; runs trained with it in one ensemble hold too (see SweepRunner::pauseRun).
    void pauseRun(int runIndex);
    void resumeRun(int runIndex);
    bool isRunPaused(int runIndex) const;
    // Live attention maps of one run (SweepRunner::setAttentionWanted); kept across sweeps.
    void setAttentionWanted(int runIndex, const QString &input);
    // Blocks until the training thread has ended (tests, shutdown).
    void waitForFinished();
    // Emits now what the training thread has posted so far (after waitForFinished: the results
    // of the runs a stop ended).
    void deliverPosted();

    bool isRunning() const { return m_running; }
    bool isPaused() const { return m_paused; }

    static QStringList availableDevices();

Q_SIGNALS:
    void progress(const headlab::RunProgress &progress);
    void runFinished(int runIndex, const headlab::RunResult &result);
    void sweepFinished();
    void attentionMaps(int runIndex, const headlab::AttentionMaps &maps);
    void stateChanged(); // running / paused changed

private:
    Mailbox *m_mailbox; // a child: its calls need this object
    std::unique_ptr<headlab::SweepRunner> m_runner;
    bool m_running = false; // GUI-thread view of the sweep; set on start, cleared on sweepFinished
    bool m_paused = false;
    int m_attentionRun = -1;
    QString m_attentionInput;
    // Bumped per sweep so that a late callback of an earlier sweep is recognised and dropped.
    std::shared_ptr<std::atomic_int> m_generation = std::make_shared<std::atomic_int>(0);
};

} // namespace headlab::ui
