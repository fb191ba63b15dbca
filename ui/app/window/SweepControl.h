// SweepControl.h — starting and stopping what trains: Start (every pending run; a boundary search
// plans its next round first and saves the plan), chosen runs, pause and resume, stop, rerun
// (with the same seed, or as new runs with another), the end of a sweep (a search's next round,
// or what was asked for once the sweep stopped), and a stop signal (stop, save, quit). The
// training itself runs on TrainingController's thread; finished runs are written by SessionFiles.
#pragma once

#include <QList>
#include <QObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <vector>

namespace headlab::ui {

class ExperimentForm;
class SessionFiles;
class SessionModel;
class TrainingController;

class SweepControl : public QObject {
    Q_OBJECT
public:
    SweepControl(SessionModel *model, TrainingController *controller, ExperimentForm *form,
                 SessionFiles *files, QObject *parent = nullptr);

    // Runs Start would train: the pending ones, or a boundary search's next round.
    int runsToStart() const;
    bool startSweep(); // every pending run (a boundary search: its next round first)
    bool startRuns(const std::vector<int> &runIndices);
    void pauseOrResume();
    void stop();
    // Stops what trains, then calls `next` once it has stopped (at once when nothing trains).
    void stopThen(std::function<void()> next);
    // Trains the runs again: the same runs, or copies of them with `seed` beside them.
    void rerun(const QList<int> &runs, const uint64_t *seed);
    // SIGTERM/SIGHUP: stop the sweep, save, and leave the event loop with 128 + signal.
    void stopForSignal(int signal);

Q_SIGNALS:
    void stateChanged(); // started, stopped or finished: the window's actions and status follow
    void message(const QString &text, int milliseconds);
    void failed(const QString &title, const QString &text);

private:
    void onSweepFinished();

    SessionModel *m_model;
    TrainingController *m_controller;
    ExperimentForm *m_form;
    SessionFiles *m_files;
    std::function<void()> m_afterStop; // asked for while a sweep stopped
};

} // namespace headlab::ui
