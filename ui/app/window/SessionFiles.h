// SessionFiles.h — where the session shown is kept: its file, or an untitled session's own
// autosave file (chosen when it first needs one, never shared with another untitled session);
// each finished run written as it finishes (a crash loses at most the runs in progress; a run
// that cannot be written stops the sweep and keeps its results in the window); the results and
// checkpoints other processes (shards, headlab-cli) write into the session's folder, shown as they
// appear; the recent files; and an untitled session's files removed once it is replaced.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

namespace headlab::ui {

class SessionModel;
class TrainingController;

class SessionFiles : public QObject {
    Q_OBJECT
public:
    SessionFiles(SessionModel *model, TrainingController *controller, QObject *parent = nullptr);

    // The untitled session's autosave file: autosave/untitled-TIME(ms)-PID[-N].yaml under the
    // application's data folder, chosen on the first call.
    QString autosavePath() const;
    // The one chosen so far; empty until one is needed.
    QString untitledAutosavePath() const { return m_autosavePath; }
    // An untitled session was replaced or the window closed without saving it: its autosave file
    // and results are removed (what a person kept was saved under a name of its own).
    void discardAutosave();
    // Saves the session to its file, or an untitled one to its autosave copy; false (the reason in
    // lastSaveError() and a message) when it could not. aboutToSave() comes first.
    bool autosave();
    QString lastSaveError() const { return m_lastSaveError; }
    // Writes a finished run's file; if that fails, stops the sweep and says so (storeFailed).
    void storeFinishedRun(int runIndex);
    // Every 2 s while this app is not training: what other processes wrote is read in.
    void watchDisk();
    // "shard 1/3 · shard 3/3 running elsewhere", or "" when nobody else writes.
    QString watching() const { return m_watching; }

    static QStringList recentFiles();
    void addRecentFile(const QString &path);

    // Recovery after a crash. While a session is shown whose work is on disk (its file, or an
    // untitled session's autosave once written), a marker names it: open/PID under the
    // application's data folder. A clean exit removes it; a crash, SIGKILL or a stop signal (which
    // saves first) leaves it, and the next start finds the sessions of processes that are gone.
    void markShown();
    void keepMarkOnExit() { m_keepMark = true; } // a stop signal: saved, offered at next start
    ~SessionFiles() override;
    // The sessions a HeadLab that is gone had shown, newest first (those whose file is still there).
    static QStringList crashedSessions();
    // Done with a crashed session's marker: reopened, or discarded (`discard`: an untitled autosave
    // and its results are removed too; a named session's file never is).
    static void forgetCrashed(const QString &path, bool discard);

Q_SIGNALS:
    void aboutToSave(); // the window writes its view into the session
    void recentFilesChanged();
    void resultsArrived(); // another process's results were read in
    void watchingChanged();
    void message(const QString &text, int milliseconds);
    // A finished run could not be written; `text` says why and what became of it.
    void storeFailed(const QString &text);

private:
    SessionModel *m_model;
    TrainingController *m_controller;
    mutable QString m_autosavePath; // autosavePath()'s choice for the untitled session shown now
    QString m_lastSaveError;        // why the last autosave() failed
    QString m_watching;
    bool m_keepMark = false;
};

} // namespace headlab::ui
