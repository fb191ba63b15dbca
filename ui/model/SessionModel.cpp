// SessionModel.cpp — see SessionModel.h.
#include "ui/model/SessionModel.h"

#include "core/session/RunFiles.h"

#include "core/lab/SweepSession.h"
#include "core/schema/RunConfigFields.h"
#include "core/session/Session.h"
#include "core/session/SessionYaml.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "core/train/Checkpoint.h"

#include <QDateTime>
#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

namespace headlab::ui {

namespace {

// A file's size and modification time ("" where it is not there).
std::string fileStamp(const std::string &path)
{
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    if (error) return {};
    const auto time = std::filesystem::last_write_time(path, error).time_since_epoch().count();
    return std::to_string(size) + ' ' + std::to_string(time);
}

} // namespace

SessionModel::SessionModel(QObject *parent)
    : QObject(parent)
{}

void SessionModel::touch()
{
    ++m_revision;
    Q_EMIT dataChanged();
}

std::shared_ptr<const headlab::SearchReport> SessionModel::searchReport() const
{
    if (!m_session.search) return nullptr;
    if (!m_report || m_reportRevision != m_revision) {
        m_report = std::make_shared<const headlab::SearchReport>(headlab::searchReport(m_session));
        m_reportRevision = m_revision;
    }
    return m_report;
}

headlab::SessionStore &SessionModel::storeFor(const QString &path)
{
    const std::string target = path.toStdString();
    if (!m_store || m_store->sessionPath() != target) {
        m_store.reset(); // release the old lock first: Save As onto the same file is fine
        m_store = std::make_unique<headlab::SessionStore>(target);
    }
    return *m_store;
}

void SessionModel::setSession(headlab::Session session, const QString &path)
{
    if (path != m_filePath || path.isEmpty()) m_store.reset();
    m_session = std::move(session);
    m_setAside.clear();
    m_live.assign(m_session.runs.size(), Live{});
    m_liveAttention.clear();
    m_activeRuns.clear();
    const bool pathChanged = path != m_filePath;
    m_filePath = path;
    m_annotationBase = headlab::annotationsOf(m_session);
    m_indexStamp = fileStamp(path.toStdString());
    Q_EMIT runsReset();
    touch();
    if (pathChanged) Q_EMIT filePathChanged(m_filePath);
    setModified(false);
}

void SessionModel::load(const QString &path)
{
    headlab::Session s = headlab::loadSession(path.toStdString());
    // A file may list only the sweep; expanding keeps every stored result whose configuration
    // is part of the sweep.
    headlab::expandSweep(s);
    // A report or a gzip archive is read, never written over: saving it asks for a new file.
    setSession(std::move(s), headlab::isReadOnlySessionPath(path.toStdString()) ? QString() : path);
}

void SessionModel::save(const QString &path)
{
    const QString target = path.isEmpty() ? m_filePath : path;
    if (target.isEmpty())
        throw headlab::SessionError("", 0, 0, "", "the session has no file name yet; use Save As");
    // Saved to another directory: the task's relative file paths become absolute (core/lab).
    if (QFileInfo(target).absolutePath() != QFileInfo(m_filePath).absolutePath())
        headlab::anchorTaskPaths(m_session);
    const QString previous = storePath();
    writeSession(target);
    if (!previous.isEmpty() && previous != target)
        headlab::copyCheckpoints(m_session, previous.toStdString(), target.toStdString());
    if (target != m_filePath) {
        m_filePath = target;
        Q_EMIT filePathChanged(m_filePath);
    }
    setModified(false);
}

headlab::PruneSummary SessionModel::pruneCheckpoints(const std::set<std::string> &keep)
{
    if (m_filePath.isEmpty())
        throw headlab::SessionError("", 0, 0, "", "the session has no file name yet; use Save As");
    const std::string path = m_filePath.toStdString();
    const headlab::PruneSummary summary = headlab::pruneCheckpoints(m_session, path, keep, false);
    writeSession(m_filePath);
    for (int i = 0; i < int(m_session.runs.size()); ++i) Q_EMIT runChanged(i);
    return summary;
}

void SessionModel::markCheckpoint(int row, int64_t step, bool keep)
{
    headlab::markCheckpoint(m_session, row, step, keep);
    if (!m_filePath.isEmpty()) storeFor(m_filePath).saveRun(m_session.runs[size_t(row)]);
    Q_EMIT runChanged(row);
}

QString SessionModel::enforceCheckpointBudget()
{
    if (m_filePath.isEmpty()) return {};
    const auto outcome = headlab::enforceCheckpointBudget(m_session, m_filePath.toStdString());
    for (int i : outcome.changedRuns) {
        headlab::storeResult(storeFor(m_filePath), m_session.runs[size_t(i)]);
        Q_EMIT runChanged(i);
    }
    return QString::fromStdString(outcome.note);
}

void SessionModel::writeSession(const QString &target)
{
    if (target != m_filePath) {
        storeFor(target).saveSession(m_session);
        return;
    }
    mergeAnnotationsFromDisk();
    storeFor(target).saveSession(m_session);
    // What was written is what the watch would read next: nothing to merge until another writes.
    m_annotationBase = headlab::annotationsOf(m_session);
    m_indexStamp = fileStamp(target.toStdString());
}

bool SessionModel::mergeAnnotationsFromDisk()
{
    const std::string path = m_filePath.toStdString();
    headlab::Annotations theirs;
    try {
        theirs =
            headlab::annotationsOf(headlab::sessionFromYaml(headlab::readSessionText(path), path));
    } catch (const std::exception &) {
        return false;
    }
    const headlab::Annotations ours = headlab::annotationsOf(m_session);
    headlab::Annotations merged = headlab::mergeAnnotations(m_annotationBase, ours, theirs);
    m_annotationBase = std::move(theirs);
    if (merged == ours) return false;
    std::vector<headlab::Annotation> before;
    for (int i = 0; i < runCount(); ++i) before.push_back(headlab::runAnnotation(m_session, i));
    headlab::setAnnotations(m_session, std::move(merged));
    // Only the runs whose note or tags the merge changed are redrawn.
    for (int i = 0; i < runCount(); ++i)
        if (headlab::runAnnotation(m_session, i) != before[size_t(i)]) Q_EMIT runChanged(i);
    touch();
    return true;
}

void SessionModel::saveCopy(const QString &path)
{
    headlab::Session copy = m_session;
    if (QFileInfo(path).absolutePath() != QFileInfo(m_filePath).absolutePath())
        headlab::anchorTaskPaths(copy);
    storeFor(path).saveSession(copy);
}

void SessionModel::openStore(const QString &fallbackPath)
{
    storeFor(m_filePath.isEmpty() ? fallbackPath : m_filePath);
}

namespace {

// Names, sizes and modification times of the run files and checkpoints under `resultsDir`.
std::string folderFingerprint(const std::string &resultsDir)
{
    namespace fs = std::filesystem;
    std::string out;
    std::error_code error;
    for (const char *sub : {"/runs", "/checkpoints"}) {
        const std::string dir = resultsDir + sub;
        if (!fs::is_directory(dir, error)) continue;
        for (auto it = fs::recursive_directory_iterator(dir, error);
             !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
            if (!it->is_regular_file(error)) continue;
            const auto time = fs::last_write_time(it->path(), error).time_since_epoch().count();
            out += it->path().string() + ' ' + std::to_string(it->file_size(error)) + ' ' +
                   std::to_string(time) + '\n';
        }
    }
    return out;
}

bool sameResult(const headlab::RunResult &a, const headlab::RunResult &b)
{
    return a.status == b.status && a.stepsDone == b.stepsDone && a.test.size() == b.test.size() &&
           a.train.size() == b.train.size() && a.checkpoints.size() == b.checkpoints.size();
}

} // namespace

void SessionModel::setAttentionRequest(int runIndex, const QString &input)
{
    if (runIndex == m_attentionRun && input == m_attentionInput) return;
    m_attentionRun = runIndex;
    m_attentionInput = input;
    Q_EMIT attentionRequestChanged(runIndex, input);
}

void SessionModel::setLiveAttention(int runIndex, const headlab::AttentionMaps &maps)
{
    m_liveAttention[runIndex] = maps;
    touch();
}

const headlab::AttentionMaps *SessionModel::liveAttention(int runIndex) const
{
    const auto it = m_liveAttention.find(runIndex);
    return it == m_liveAttention.end() ? nullptr : &it->second;
}

int SessionModel::refreshFromDisk()
{
    if (m_filePath.isEmpty()) return 0;
    const std::string path = m_filePath.toStdString();
    if (const std::string stamp = fileStamp(path); stamp != m_indexStamp) {
        m_indexStamp = stamp;
        mergeAnnotationsFromDisk();
    }
    const std::string fingerprint = folderFingerprint(headlab::resultsDirFor(path));
    if (fingerprint == m_diskFingerprint) return 0;
    m_diskFingerprint = fingerprint;
    headlab::Session disk;
    try {
        disk = headlab::loadSession(path);
        headlab::expandSweep(disk);
    } catch (const std::exception &) {
        return 0; // a file caught mid-rename or being edited: the next call reads it
    }
    std::map<std::string, const headlab::SessionRun *> byFile;
    for (const auto &run : disk.runs) byFile[headlab::runFileName(run.config)] = &run;
    int changed = 0;
    for (size_t i = 0; i < m_session.runs.size(); ++i) {
        auto &run = m_session.runs[i];
        const auto it = byFile.find(headlab::runFileName(run.config));
        headlab::RunResult fresh;
        if (it != byFile.end() && headlab::hasResult(*it->second) &&
            headlab::isFinished(it->second->result.status)) {
            fresh = it->second->result;
        } else {
            // Still training elsewhere: its newest checkpoint holds its curves so far.
            const auto found = headlab::listCheckpoints(headlab::checkpointDirFor(path, run.config),
                                                        nullptr, false);
            if (!found.empty() && found.front().step > run.result.stepsDone) {
                try {
                    fresh = headlab::loadCheckpoint(found.front().path, &run.config).partial;
                    if (fresh.status == headlab::RunStatus::Running && it != byFile.end() &&
                        it->second->result.status == headlab::RunStatus::Stopped)
                        fresh.status = headlab::RunStatus::Stopped;
                } catch (const std::exception &) {
                    continue;
                }
            } else if (it != byFile.end() && headlab::hasResult(*it->second)) {
                fresh = it->second->result;
            } else {
                continue;
            }
        }
        if (sameResult(fresh, run.result)) continue;
        run.result = std::move(fresh);
        ++changed;
        Q_EMIT runChanged(int(i));
    }
    if (changed > 0) touch();
    return changed;
}

headlab::StoredResult SessionModel::storeRun(int runIndex, const QString &fallbackPath)
{
    if (runIndex < 0 || runIndex >= runCount()) return {};
    return headlab::storeResult(storeFor(m_filePath.isEmpty() ? fallbackPath : m_filePath),
                                m_session.runs[size_t(runIndex)]);
}

void SessionModel::setModified(bool modified)
{
    if (m_modified == modified) return;
    m_modified = modified;
    Q_EMIT modifiedChanged(m_modified);
}

void SessionModel::setSweep(const headlab::Session &definition)
{
    m_session.name = definition.name;
    m_session.description = definition.description;
    m_session.base = definition.base;
    m_session.axes = definition.axes;
    // A search's settings come from the form; the rounds it planned stay (they are the session's).
    std::vector<headlab::SearchProbe> probes;
    if (m_session.search) probes = m_session.search->probes;
    m_session.search = definition.search;
    if (m_session.search) m_session.search->probes = probes;
    // What trained is kept aside: a run the new sweep leaves out keeps its result for when it
    // comes back (its run file and checkpoints stay in the results folder meanwhile).
    for (const auto &run : m_session.runs)
        if (headlab::isFinished(run.result.status) || run.result.stepsDone > 0)
            m_setAside[headlab::yaml::canonicalYaml(run.config)] = run.result;
    headlab::expandSweep(m_session);
    for (auto &run : m_session.runs)
        if (!headlab::isFinished(run.result.status) && run.result.stepsDone == 0)
            if (const auto kept = m_setAside.find(headlab::yaml::canonicalYaml(run.config));
                kept != m_setAside.end())
                run.result = kept->second;
    runsRebuilt();
}

void SessionModel::reexpand()
{
    headlab::expandSweep(m_session);
    runsRebuilt();
}

void SessionModel::runsRebuilt()
{
    m_live.assign(m_session.runs.size(), Live{});
    m_activeRuns.clear();
    Q_EMIT runsReset();
    touch();
    setModified(true);
}

int SessionModel::planSearchRound()
{
    if (!m_session.search) return 0;
    const int added = headlab::planSearchRound(m_session);
    if (added == 0) return 0;
    // Planning expanded the runs; new probes sit beside their configuration's earlier ones, so
    // run indices moved.
    runsRebuilt();
    return added;
}

void SessionModel::setViewState(const std::string &key, const std::string &value)
{
    auto it = m_session.view.find(key);
    if (it != m_session.view.end() && it->second == value) return;
    // Saved with the session, but not a change worth a "save changes?" question on its own:
    // switching tabs or axes should not mark the session modified.
    m_session.view[key] = value;
}

namespace {
// "" when every tag of `a` is one word, else why not.
QString tagProblem(const headlab::Annotation &a)
{
    for (const auto &tag : a.tags)
        if (const std::string why = headlab::validTag(tag); !why.empty())
            return QString::fromStdString(why);
    return {};
}
} // namespace

bool SessionModel::setSessionAnnotation(const headlab::Annotation &annotation, QString *why)
{
    if (const QString problem = tagProblem(annotation); !problem.isEmpty()) {
        if (why) *why = problem;
        return false;
    }
    if (annotation.note == m_session.annotation.note &&
        annotation.tags == m_session.annotation.tags)
        return true;
    m_session.annotation = annotation;
    touch();
    setModified(true);
    return true;
}

bool SessionModel::setRunAnnotation(int runIndex, const headlab::Annotation &annotation,
                                    QString *why)
{
    if (runIndex < 0 || runIndex >= runCount()) return false;
    if (const QString problem = tagProblem(annotation); !problem.isEmpty()) {
        if (why) *why = problem;
        return false;
    }
    const std::string id = headlab::runId(m_session.runs[size_t(runIndex)].config);
    const headlab::Annotation &now = headlab::runAnnotation(m_session, size_t(runIndex));
    if (annotation.note == now.note && annotation.tags == now.tags) return true;
    if (annotation.empty())
        m_session.runAnnotations.erase(id);
    else
        m_session.runAnnotations[id] = annotation;
    Q_EMIT runChanged(runIndex);
    touch();
    setModified(true);
    return true;
}

void SessionModel::setLearnedRule(headlab::LearnedRule rule)
{
    if (m_session.learnedRule == rule) return;
    m_session.learnedRule = rule;
    for (int i = 0; i < runCount(); ++i) Q_EMIT runChanged(i);
    touch();
    setModified(true);
}

std::string SessionModel::viewState(const std::string &key, const std::string &fallback) const
{
    auto it = m_session.view.find(key);
    return it == m_session.view.end() ? fallback : it->second;
}

void SessionModel::markStarting(const std::vector<int> &runIndices)
{
    for (int i : runIndices) {
        if (i < 0 || i >= runCount()) continue;
        auto &r = m_session.runs[size_t(i)].result;
        r = headlab::RunResult{};
        r.status = headlab::RunStatus::Queued;
        m_live[size_t(i)] = Live{};
        Q_EMIT runChanged(i);
    }
    m_activeRuns = runIndices;
    setModified(true);
    touch();
}

static void appendCurve(headlab::Curve &into, const headlab::Curve &points)
{
    for (const auto &p : points) {
        // A point at or before the last one means the run restarted; keep the history monotonic.
        if (!into.empty() && p.step <= into.back().step) {
            auto it = std::lower_bound(
                into.begin(), into.end(), p.step,
                [](const headlab::CurvePoint &a, int64_t s) { return a.step < s; });
            into.erase(it, into.end());
        }
        into.push_back(p);
    }
}

void SessionModel::applyProgress(const headlab::RunProgress &p)
{
    if (p.runIndex < 0 || p.runIndex >= runCount()) return;
    auto &r = m_session.runs[size_t(p.runIndex)].result;
    if (headlab::isFinished(r.status)) return; // a late batch after the final result
    r.origin = p.origin; // as its result will record it (a resumed run: its first start)
    r.status = p.status;
    r.stepsDone = p.step;
    appendCurve(r.train, p.newTrain);
    appendCurve(r.test, p.newTest);
    for (const auto &[name, curve] : p.newExtra) appendCurve(r.extra[name], curve);
    auto &live = m_live[size_t(p.runIndex)];
    live.stepsPerSecond = p.stepsPerSecond;
    live.etaSeconds = p.etaSeconds;
    live.expectedEnd = p.expectedEnd;
    live.mayEndEarly = p.mayEndEarly;
    Q_EMIT runChanged(p.runIndex);
    touch();
    publishLive(false);
}

void SessionModel::publishLive(bool force)
{
    if (!m_store) return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (!force && now - m_livePublishedMs < 5000) return;
    m_livePublishedMs = now;
    std::vector<headlab::SessionRun> running;
    for (const auto &run : m_session.runs)
        if (run.result.status == headlab::RunStatus::Running ||
            run.result.status == headlab::RunStatus::Paused)
            running.push_back(headlab::liveRecord(m_session, m_store->sessionPath(), run,
                                                  run.result.status, run.result.stepsDone,
                                                  run.result.origin));
    try {
        m_store->writeLiveRuns(running);
    } catch (const headlab::SessionError &e) {
        // Readers outside the app lose the rows of runs in training; training goes on.
        if (!m_liveWarned)
            qWarning("%s (the runs in training are not listed for readers)", e.what());
        m_liveWarned = true;
    }
}

void SessionModel::applyResult(int runIndex, const headlab::RunResult &result)
{
    if (runIndex < 0 || runIndex >= runCount()) return;
    m_session.runs[size_t(runIndex)].result = result;
    auto &live = m_live[size_t(runIndex)];
    live.etaSeconds = 0;
    if (result.wallSeconds > 0 && result.stepsDone > 0)
        live.stepsPerSecond = result.stepsDone / result.wallSeconds;
    setModified(true);
    Q_EMIT runChanged(runIndex);
    touch();
}

void SessionModel::settleAfterSweep()
{
    for (int i = 0; i < runCount(); ++i) {
        auto &r = m_session.runs[size_t(i)].result;
        if (r.status == headlab::RunStatus::Running || r.status == headlab::RunStatus::Paused) {
            r.status = headlab::RunStatus::Stopped;
            m_live[size_t(i)].etaSeconds = -1;
            Q_EMIT runChanged(i);
        }
    }
    publishLive(true); // none left: the live file goes
    touch();
}

int SessionModel::addRun(const headlab::SessionRun &run)
{
    m_session.runs.push_back(run);
    m_live.push_back(Live{});
    Q_EMIT runsReset();
    touch();
    setModified(true);
    return runCount() - 1;
}

double SessionModel::stepsPerSecond(int runIndex) const
{
    return runIndex >= 0 && runIndex < int(m_live.size()) ? m_live[size_t(runIndex)].stepsPerSecond
                                                          : 0;
}

double SessionModel::etaSeconds(int runIndex) const
{
    return runIndex >= 0 && runIndex < int(m_live.size()) ? m_live[size_t(runIndex)].etaSeconds
                                                          : -1;
}

double SessionModel::sweepFraction() const
{
    double done = 0, total = 0;
    for (int i : m_activeRuns) {
        if (i < 0 || i >= runCount()) continue;
        const auto &run = m_session.runs[size_t(i)];
        const double steps = double(run.config.totalSteps());
        total += steps;
        done += headlab::isFinished(run.result.status)
                    ? steps
                    : std::min<double>(steps, double(run.result.stepsDone));
    }
    return total > 0 ? done / total : 0.0;
}

double SessionModel::sweepEtaSeconds() const
{
    double remaining = 0, rate = 0;
    for (int i : m_activeRuns) {
        if (i < 0 || i >= runCount()) continue;
        const auto &run = m_session.runs[size_t(i)];
        if (headlab::isFinished(run.result.status) ||
            run.result.status == headlab::RunStatus::Stopped)
            continue;
        // A run that went below the learned level ends where stop_after_learned ends it.
        const int64_t end = m_live[size_t(i)].expectedEnd > 0 ? m_live[size_t(i)].expectedEnd
                                                              : run.config.totalSteps();
        remaining += double(std::max<int64_t>(0, end - run.result.stepsDone));
        if (run.result.status == headlab::RunStatus::Running)
            rate += m_live[size_t(i)].stepsPerSecond;
    }
    if (remaining <= 0) return 0;
    return rate > 0 ? remaining / rate : -1;
}

bool SessionModel::sweepEtaIsAtMost() const
{
    for (int i : m_activeRuns) {
        if (i < 0 || i >= runCount()) continue;
        const auto &run = m_session.runs[size_t(i)];
        if (headlab::isFinished(run.result.status) ||
            run.result.status == headlab::RunStatus::Stopped || run.config.stopAfterLearned <= 0)
            continue;
        // Queued (no report yet), or training and not yet below the level.
        if (m_live[size_t(i)].expectedEnd == 0 || m_live[size_t(i)].mayEndEarly) return true;
    }
    return false;
}

} // namespace headlab::ui
