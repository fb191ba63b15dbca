// StopSignalWatcher.h — SIGTERM and SIGHUP delivered to the GUI thread as a Qt signal.
//
// A logout, a closing terminal or a scheduler sends these; without a handler the process dies and
// the runs in progress are lost. The handler only writes the signal number to a pipe (the one
// thing a handler may safely do); a QSocketNotifier reads it on the GUI thread and emits
// `received`, where MainWindow stops the sweep and saves. A second signal of the same kind ends
// the process at once (SA_RESETHAND). One instance per process.
#pragma once

#include <QObject>

class QSocketNotifier;

namespace headlab::ui {

class StopSignalWatcher : public QObject {
    Q_OBJECT
public:
    explicit StopSignalWatcher(QObject *parent = nullptr);
    ~StopSignalWatcher() override;

Q_SIGNALS:
    void received(int signal);

private:
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace headlab::ui
