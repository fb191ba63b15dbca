// SessionFiles.cpp — see SessionFiles.h.
#include "ui/app/window/SessionFiles.h"

#include "core/session/SessionStore.h"
#include "ui/model/SessionModel.h"
#include "ui/model/TrainingController.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <vector>

#include <unistd.h>

namespace headlab::ui {

namespace {
constexpr int kMaxRecent = 8;

QString markerDir()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/open");
}

QString markerPath(qint64 pid)
{
    return markerDir() + QStringLiteral("/%1").arg(pid);
}

bool processAlive(qint64 pid)
{
    return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM);
}

bool isUntitledAutosave(const QString &path)
{
    const QString autosaveDir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                                QStringLiteral("/autosave");
    return QFileInfo(path).absolutePath() == QFileInfo(autosaveDir).absoluteFilePath();
}
} // namespace

SessionFiles::SessionFiles(SessionModel *model, TrainingController *controller, QObject *parent)
    : QObject(parent)
    , m_model(model)
    , m_controller(controller)
{}

QString SessionFiles::autosavePath() const
{
    // One per untitled session: autosave/untitled-TIME(ms)-PID[-N].yaml, a name no other session or
    // process has used, so that no session ever finds another's results or checkpoints.
    if (m_autosavePath.isEmpty()) {
        const QDir dir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                       QStringLiteral("/autosave"));
        QDir().mkpath(dir.path());
        const QString stem =
            QStringLiteral("untitled-%1-%2")
                .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz")))
                .arg(QCoreApplication::applicationPid());
        QString name = stem + QStringLiteral(".yaml");
        for (int n = 2; QFileInfo::exists(dir.filePath(name)) ||
                        QFileInfo::exists(dir.filePath(name.chopped(5) + ".results"));
             ++n)
            name = QStringLiteral("%1-%2.yaml").arg(stem).arg(n);
        m_autosavePath = dir.filePath(name);
    }
    return m_autosavePath;
}

void SessionFiles::discardAutosave()
{
    if (m_autosavePath.isEmpty()) return;
    const QString path = m_autosavePath;
    m_autosavePath.clear();
    if (m_model->storePath() == path) return; // still the shown session's store (not replaced)
    QFile::remove(path);
    QDir(QString::fromStdString(resultsDirFor(path.toStdString()))).removeRecursively();
    markShown();
}

SessionFiles::~SessionFiles()
{
    if (!m_keepMark) QFile::remove(markerPath(QCoreApplication::applicationPid()));
}

void SessionFiles::markShown()
{
    const QString path = !m_model->filePath().isEmpty()      ? m_model->filePath()
                         : QFileInfo::exists(m_autosavePath) ? m_autosavePath
                                                             : QString();
    const QString marker = markerPath(QCoreApplication::applicationPid());
    if (path.isEmpty()) {
        QFile::remove(marker);
        return;
    }
    QDir().mkpath(markerDir());
    QFile file(marker);
    if (file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        file.write(QFileInfo(path).absoluteFilePath().toUtf8());
}

namespace {
// The markers of HeadLabs that are gone: each marker file with the session path it names.
std::vector<std::pair<QString, QString>> goneMarkers()
{
    std::vector<std::pair<QString, QString>> out;
    for (const QFileInfo &marker : QDir(markerDir()).entryInfoList(QDir::Files)) {
        bool ok = false;
        const qint64 pid = marker.fileName().toLongLong(&ok);
        if (!ok || processAlive(pid)) continue;
        QFile file(marker.filePath());
        if (file.open(QIODevice::ReadOnly))
            out.emplace_back(marker.filePath(), QString::fromUtf8(file.readAll()).trimmed());
    }
    return out;
}
} // namespace

QStringList SessionFiles::crashedSessions()
{
    std::vector<std::pair<QDateTime, QString>> found;
    for (const auto &[marker, path] : goneMarkers()) {
        if (!QFileInfo::exists(path)) {
            QFile::remove(marker); // nothing left to offer
            continue;
        }
        found.emplace_back(QFileInfo(path).lastModified(), path);
    }
    std::sort(found.begin(), found.end(), [](const auto &a, const auto &b) { return a > b; });
    QStringList out;
    for (const auto &[when, path] : found)
        if (!out.contains(path)) out << path;
    return out;
}

void SessionFiles::forgetCrashed(const QString &path, bool discard)
{
    for (const auto &[marker, named] : goneMarkers())
        if (named == QFileInfo(path).absoluteFilePath()) QFile::remove(marker);
    if (discard && isUntitledAutosave(path)) {
        QFile::remove(path);
        QDir(QString::fromStdString(resultsDirFor(path.toStdString()))).removeRecursively();
    }
}

bool SessionFiles::autosave()
{
    // After each finished run: a crash loses at most the runs in progress.
    try {
        if (!m_model->filePath().isEmpty()) {
            Q_EMIT aboutToSave();
            m_model->save();
        } else {
            m_model->saveCopy(autosavePath());
        }
    } catch (const std::exception &e) {
        Q_EMIT message(tr("Autosave failed: %1").arg(QString::fromUtf8(e.what())), 10000);
        m_lastSaveError = QString::fromUtf8(e.what());
        return false;
    }
    markShown(); // what a crash now would leave to recover
    return true;
}

void SessionFiles::storeFinishedRun(int runIndex)
{
    // One file per finished run: a crash loses at most the runs in progress.
    StoredResult stored;
    try {
        stored = m_model->storeRun(runIndex, autosavePath());
    } catch (const std::exception &e) { // the store could not be opened (locked, unreadable)
        stored.saved = false;
        stored.error = e.what();
    }
    if (stored.saved) {
        try {
            if (const QString note = m_model->enforceCheckpointBudget(); !note.isEmpty())
                Q_EMIT message(note, 10000);
        } catch (const std::exception &e) {
            Q_EMIT message(tr("Checkpoint budget: %1").arg(QString::fromUtf8(e.what())), 10000);
        }
        return;
    }
    // Training on would only make results with nowhere to go: stop, keep them in this window.
    const bool wasRunning = m_controller->isRunning();
    if (wasRunning) m_controller->stop();
    const QString rescued = stored.rescuedTo.empty()
                                ? QString()
                                : tr("This run's result was written to %1. ")
                                      .arg(QString::fromStdString(stored.rescuedTo));
    const QString why =
        tr("%1\n\n%2%3The results are kept in this window: free some space, or use File ▸ Save As "
           "to save "
           "them elsewhere.")
            .arg(QString::fromStdString(stored.error),
                 wasRunning ? tr("The sweep was stopped. ") : QString(), rescued);
    Q_EMIT message(tr("Saving failed: the sweep was stopped"), 10000);
    Q_EMIT storeFailed(why);
}

void SessionFiles::watchDisk()
{
    if (m_controller->isRunning() || m_model->filePath().isEmpty()) {
        m_watching.clear();
        return;
    }
    const std::string path = m_model->filePath().toStdString();
    QStringList writers;
    for (const auto &shard : SessionStore::runningShards(path))
        writers << QString::fromStdString(shard.substr(0, shard.find(':')));
    const std::string holder = SessionStore::lockHolder(path);
    if (!holder.empty() && holder.rfind("PID " + std::to_string(::getpid()) + " ", 0) != 0)
        writers << tr("headlab-cli");
    const int changed = m_model->refreshFromDisk();
    const QString watching =
        writers.isEmpty() ? QString()
                          : tr("%1 running elsewhere").arg(writers.join(QStringLiteral(" · ")));
    if (changed > 0) {
        Q_EMIT resultsArrived();
        if (m_watching.isEmpty() && !watching.isEmpty())
            Q_EMIT message(
                tr("Showing the results other processes write into %1").arg(m_model->filePath()),
                6000);
    }
    if (changed > 0 || watching != m_watching) {
        m_watching = watching;
        Q_EMIT watchingChanged();
    }
}

void SessionFiles::addRecentFile(const QString &path)
{
    QSettings settings;
    QStringList files = settings.value(QStringLiteral("recentFiles")).toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    files.removeAll(abs);
    files.prepend(abs);
    while (files.size() > kMaxRecent) files.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), files);
    settings
        .sync(); // on disk now: a crash later must not lose it (Open recent was empty after one)
    Q_EMIT recentFilesChanged();
}

QStringList SessionFiles::recentFiles()
{
    return QSettings().value(QStringLiteral("recentFiles")).toStringList();
}

} // namespace headlab::ui
