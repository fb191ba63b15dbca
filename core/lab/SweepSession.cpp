// SweepSession.cpp — see SweepSession.h.
#include "core/lab/SweepSession.h"
#include "core/config/Files.h"
#include "core/session/RunFiles.h"
#include "core/session/SessionStore.h"

#include "core/schema/RunConfigFields.h"
#include "core/schema/TaskSpec.h"
#include "core/train/Checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace headlab {

namespace {

// Renames `path` to "path.replaced-TIME" (seconds since the epoch): results and checkpoints that
// make way for new ones are moved aside, never deleted. Returns the new name; `error` says why not.
std::string moveAside(const std::string &path, std::error_code &error)
{
    const std::string aside = path + ".replaced-" + std::to_string(std::time(nullptr));
    std::filesystem::rename(path, aside, error);
    return aside;
}

// The lock of a results folder (SessionStore's `lock`, a flock) held for as long as this lives;
// throws a SessionError naming `session` when another process holds it or trains a shard of it.
class LockWhileMoving {
public:
    LockWhileMoving(const std::string &results, const std::string &session)
    {
        auto refuse = [&](const std::string &who) {
            throw SessionError(
                session, 0, 0, "",
                "is being trained by another HeadLab (" + who +
                    "); --overwrite does not move its results aside while it "
                    "trains: wait for it to finish or stop it, or choose another -o");
        };
        if (const auto shards = SessionStore::runningShards(session); !shards.empty())
            refuse(shards.front());
        m_fd = ::open((results + "/lock").c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (m_fd >= 0 && ::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
            ::close(m_fd);
            m_fd = -1;
            const std::string holder = SessionStore::lockHolder(session);
            refuse(holder.empty() ? "a process that has not yet said who it is" : holder);
        }
    }
    ~LockWhileMoving()
    {
        if (m_fd >= 0) ::close(m_fd);
    }
    LockWhileMoving(const LockWhileMoving &) = delete;
    LockWhileMoving &operator=(const LockWhileMoving &) = delete;

private:
    int m_fd = -1;
};

// Exists, following links: a link to a file not written yet does not.
bool fileExists(const std::string &path)
{
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0;
}

int countResults(const Session &session)
{
    int n = 0;
    for (const auto &run : session.runs) n += hasResult(run);
    return n;
}

} // namespace

std::vector<SweepJob> pendingJobs(const Session &session)
{
    std::vector<SweepJob> jobs;
    for (int index : pendingRuns(session))
        jobs.push_back({index, session.runs[size_t(index)].config});
    return jobs;
}

std::string checkpointDirFor(const std::string &sessionPath, const RunConfig &config)
{
    std::string name = runFileName(config);
    name.resize(name.size() - 5); // ".yaml"
    return resultsDirFor(sessionPath) + "/checkpoints/" + name;
}

namespace {

std::string linkTarget(const std::string &path)
{
    char buffer[4096];
    const ssize_t n = ::readlink(path.c_str(), buffer, sizeof buffer - 1);
    return n > 0 ? std::string(buffer, size_t(n)) : std::string();
}

} // namespace

std::string checkpointFolderProblem(const std::string &sessionPath, const std::string &dir)
{
    namespace fs = std::filesystem;
    const fs::path results = resultsDirFor(sessionPath);
    const fs::path relative = fs::path(dir).lexically_relative(results);
    if (relative.empty() || *relative.begin() == "..")
        return dir + ": is not inside the session's results folder " + results.string();
    fs::path at = results;
    for (const auto &part : relative) {
        at /= part;
        switch (pathKindAt(at.string())) {
        case PathKind::Missing:
            return {}; // made below a real folder
        case PathKind::Directory:
            continue;
        case PathKind::Link: {
            const std::string target = linkTarget(at.string());
            return at.string() + ": is a symbolic link" +
                   (target.empty() ? std::string() : " to " + target) +
                   ", not a folder HeadLab made; its checkpoints are not written, pruned or "
                   "copied (remove the link, or put the folder it points to in its place)";
        }
        default:
            return at.string() + ": is not a folder; its run's checkpoints cannot be kept there";
        }
    }
    return {};
}

namespace {

// The temporary files a killed writer left in a run's checkpoint folder (writeFileAtomic's). Only
// the run's own writer calls this (one writer per run: SessionStore's locks).
void sweepTemporaryFiles(const std::string &dir)
{
    std::error_code error;
    if (!std::filesystem::is_directory(dir, error)) return;
    std::vector<std::filesystem::path> doomed;
    for (const auto &entry : std::filesystem::directory_iterator(dir, error)) {
        const std::string name = entry.path().filename().string();
        if (isTemporaryName(name) && isCheckpointFileName(name) &&
            pathKindAt(entry.path().string()) == PathKind::Regular)
            doomed.push_back(entry.path());
    }
    for (const auto &path : doomed) std::filesystem::remove(path, error);
}

} // namespace

std::vector<std::string> attachCheckpoints(std::vector<SweepJob> &jobs, const Session &session,
                                           const std::string &sessionPath)
{
    std::vector<std::string> notes;
    if (!session.checkpoints.enabled || sessionPath.empty()) return notes;
    std::map<const SweepJob *, std::map<int64_t, std::string>>
        byStep; // a job's valid checkpoints by step
    std::map<const SweepJob *, std::vector<std::string>>
        ensembleOf; // the runs its newest resumable checkpoint trained with
    for (auto &job : jobs) {
        job.checkpointDir = checkpointDirFor(sessionPath, job.config);
        if (const std::string problem = checkpointFolderProblem(sessionPath, job.checkpointDir);
            !problem.empty()) {
            notes.push_back(problem + "; run " + std::to_string(job.runIndex) +
                            " trains without checkpoints");
            job.checkpointDir.clear();
            continue;
        }
        const RunResult *stored =
            job.runIndex >= 0 && static_cast<size_t>(job.runIndex) < session.runs.size()
                ? &session.runs[static_cast<size_t>(job.runIndex)].result
                : nullptr;
        const bool finished = stored && isFinished(stored->status) && !failedOnACheckpoint(*stored);
        if (finished) {
            std::error_code error;
            if (!std::filesystem::is_empty(job.checkpointDir, error) && !error) {
                const std::string aside = moveAside(job.checkpointDir, error);
                notes.push_back("run " + std::to_string(job.runIndex) +
                                " trains again from step 0; its checkpoints " +
                                (error ? "could not be moved aside: " + error.message()
                                       : "were moved to " + aside));
                if (error) job.checkpointDir.clear(); // never mix them with the new run's
            }
            continue;
        }
        sweepTemporaryFiles(job.checkpointDir);
        // Headers only (a run can keep many checkpoints of a large model); the one chosen below is
        // read and verified whole.
        std::vector<std::string> problems;
        const auto found = listCheckpoints(job.checkpointDir, &problems, false);
        for (const auto &p : problems)
            notes.push_back(p + "; run " + std::to_string(job.runIndex) +
                            (found.empty() ? " starts at step 0"
                                           : " resumes from step " +
                                                 std::to_string(found.front().step) + " instead"));
        auto &steps = byStep[&job]; // every unfinished job has an entry, empty without checkpoints
        for (const auto &info : found)
            if (!info.weightsOnly) {                                 // slim ones cannot resume
                if (steps.empty()) ensembleOf[&job] = info.ensemble; // found is newest first
                steps[info.step] = info.path;
            }
    }
    // Runs that trained as one ensemble resume as one, from one step: the newest at which every one
    // of them has a checkpoint (a kill between the members' writes leaves some a step ahead), or,
    // where there is none, all from step 0. Runs of different head counts compute other bits in an
    // ensemble than alone, so splitting them by step would change their numbers. Who trained with
    // whom is what each run's newest checkpoint names: runs of one shape that trained in several
    // ensembles (--max-ensemble, the card's memory, several devices) stop at different steps, and
    // each ensemble resumes from its own. Runs whose checkpoints name no ensemble (none yet, or
    // files written before it was recorded) are grouped by shape, as they were then.
    std::map<std::string, SweepJob *> byName; // a run by its checkpoint folder's name
    std::map<SweepJob *, SweepJob *> parent;  // union-find over the runs that trained together
    for (auto &job : jobs)
        if (byStep.count(&job)) {
            byName[std::filesystem::path(job.checkpointDir).filename().string()] = &job;
            parent[&job] = &job;
        }
    std::function<SweepJob *(SweepJob *)> root = [&](SweepJob *j) {
        return parent[j] == j ? j : parent[j] = root(parent[j]);
    };
    std::map<std::string, SweepJob *> unnamed; // the first run of each shape that names none
    for (auto &[job, p] : parent) {
        (void)p;
        if (ensembleOf[job].empty()) {
            auto [it, first] = unnamed.emplace(ensembleKey(job->config), job);
            if (!first) parent[root(job)] = root(it->second);
        }
        for (const auto &name : ensembleOf[job])
            if (const auto it = byName.find(name); it != byName.end())
                parent[root(job)] = root(it->second);
    }
    std::map<std::string, std::vector<SweepJob *>> groups;
    for (auto &job : jobs)
        if (byStep.count(&job))
            groups[ensembleKey(job.config) + "\nensemble: " +
                   std::filesystem::path(root(&job)->checkpointDir).filename().string()]
                .push_back(&job);
    for (auto &[key, members] : groups) {
        int64_t step = -1;
        for (bool verified = false; !verified;) {
            std::vector<std::map<int64_t, std::string>> lists;
            for (SweepJob *m : members) lists.push_back(byStep[m]);
            const auto steps = stepsEveryMemberHas(lists);
            step = steps.empty() ? -1 : steps.front();
            verified = true;
            if (step < 0) break;
            for (SweepJob *m : members) { // the chosen step's files, read whole: checksum and all
                try {
                    inspectCheckpoint(byStep[m].at(step), true);
                } catch (const SessionError &e) {
                    notes.push_back(std::string(e.what()) + "; run " + std::to_string(m->runIndex) +
                                    " resumes from an earlier step instead");
                    byStep[m].erase(step);
                    verified = false;
                }
            }
        }
        for (SweepJob *m : members) {
            if (step < 0) {
                if (!byStep[m].empty())
                    notes.push_back("run " + std::to_string(m->runIndex) +
                                    " starts at step 0: the runs it trains with have no "
                                    "checkpoint of a step in common with it");
                continue;
            }
            if (byStep[m].rbegin()->first != step)
                notes.push_back("run " + std::to_string(m->runIndex) + " resumes from step " +
                                std::to_string(step) +
                                ", the newest step every run of its ensemble has a checkpoint of");
            m->resumeFrom = byStep[m].at(step);
            m->resumeStep = step;
            // A run that goes on keeps the time its training first began.
            if (m->runIndex >= 0 && size_t(m->runIndex) < session.runs.size())
                m->startedAt = session.runs[size_t(m->runIndex)].result.origin.startedAt;
            m->resumeEnsemble = key;
        }
    }
    return notes;
}

std::vector<std::string> copyCheckpoints(const Session &session, const std::string &fromSession,
                                         const std::string &toSession)
{
    namespace fs = std::filesystem;
    std::vector<std::string> problems;
    for (const auto &run : session.runs) {
        const std::string from = checkpointDirFor(fromSession, run.config),
                          to = checkpointDirFor(toSession, run.config);
        std::error_code error;
        if (from == to || !fs::is_directory(from, error) || fs::exists(to, error)) continue;
        if (std::string problem = checkpointFolderProblem(fromSession, from); !problem.empty()) {
            problems.push_back(std::move(problem));
            continue;
        }
        if (std::string problem = checkpointFolderProblem(toSession, to); !problem.empty()) {
            problems.push_back(std::move(problem));
            continue;
        }
        fs::create_directories(to, error);
        for (const auto &entry : fs::directory_iterator(from, error)) {
            if (!isCheckpointFileName(entry.path().filename().string()) ||
                pathKindAt(entry.path().string()) != PathKind::Regular)
                continue; // only what HeadLab wrote travels
            const fs::path target = fs::path(to) / entry.path().filename();
            std::error_code linkError;
            fs::create_hard_link(entry.path(), target, linkError);
            if (linkError)
                fs::copy_file(entry.path(), target, fs::copy_options::overwrite_existing, error);
            if (error) {
                problems.push_back(to + ": " + error.message() + "; the checkpoints stay in " +
                                   from);
                break;
            }
        }
    }
    return problems;
}

namespace {

void anchorTaskPaths(TaskConfig &task)
{
    const TaskSpec *spec = findTaskSpec(task.kind);
    if (!spec) return;
    for (const auto &row : spec->options) {
        if (!row.mapPath) continue;
        row.mapPath(task, [&task](const std::string &path) {
            if (path.empty() || path.front() == '/') return path;
            std::error_code error;
            const auto absolute = std::filesystem::absolute(resolveTaskPath(task, path), error);
            return error ? path : absolute.lexically_normal().string();
        });
    }
}

} // namespace

void anchorTaskPaths(Session &session)
{
    anchorTaskPaths(session.base.task);
    for (auto &run : session.runs) anchorTaskPaths(run.config.task);
}

std::vector<SweepJob> shardJobs(const std::vector<SweepJob> &jobs, int shard, int count)
{
    std::map<std::string, std::vector<SweepJob>> byKey;
    std::vector<std::string> order; // first appearance, so that ties keep the sweep's order
    for (const auto &job : jobs) {
        const std::string key = ensembleKey(job.config);
        if (!byKey.count(key)) order.push_back(key);
        byKey[key].push_back(job);
    }
    // A group larger than a shard's fair share of the runs is cut into nearly equal pieces of at
    // most that share, each still one ensemble in its shard: forty seeds of one shape went whole
    // to shard 1 of 2 and left shard 2 idle (a Slurm array of N tasks ran on one).
    const size_t shards = size_t(std::max(1, count));
    const size_t share = std::max<size_t>(1, (jobs.size() + shards - 1) / shards);
    std::vector<std::vector<SweepJob>> pieces;
    for (const auto &key : order) {
        const auto &group = byKey[key];
        const size_t parts = (group.size() + share - 1) / share;
        for (size_t k = 0, begin = 0; k < parts; ++k) {
            const size_t size = group.size() / parts + (k < group.size() % parts ? 1 : 0);
            pieces.emplace_back(group.begin() + long(begin), group.begin() + long(begin + size));
            begin += size;
        }
    }
    std::vector<double> work;
    for (const auto &piece : pieces) work.push_back(ensembleWork(piece));
    const std::vector<size_t> placed = placeOnDevices(work, shards);
    std::vector<SweepJob> mine;
    for (size_t i = 0; i < pieces.size(); ++i)
        if (int(placed[i]) == shard) mine.insert(mine.end(), pieces[i].begin(), pieces[i].end());
    std::sort(mine.begin(), mine.end(),
              [](const SweepJob &a, const SweepJob &b) { return a.runIndex < b.runIndex; });
    return mine;
}

std::vector<RunActivity> activeRuns(const Session &session, const std::string &sessionPath)
{
    std::vector<RunActivity> out;
    auto add = [&](int index, const std::string &trainer) {
        const SessionRun &run = session.runs[size_t(index)];
        if (isFinished(run.result.status)) return;
        RunActivity a{index, trainer, -1};
        if (session.checkpoints.enabled) {
            const auto found =
                listCheckpoints(checkpointDirFor(sessionPath, run.config), nullptr, false);
            if (!found.empty()) a.step = found.front().step;
        }
        out.push_back(std::move(a));
    };
    if (const std::string holder = SessionStore::lockHolder(sessionPath); !holder.empty()) {
        for (size_t i = 0; i < session.runs.size(); ++i) add(int(i), "the whole sweep: " + holder);
        return out;
    }
    std::vector<SweepJob> all;
    for (size_t i = 0; i < session.runs.size(); ++i)
        all.push_back({int(i), session.runs[i].config});
    for (const auto &running : SessionStore::runningShardParts(sessionPath))
        for (const auto &job : shardJobs(all, running.shard.index, running.shard.count))
            add(job.runIndex, "shard " + std::to_string(running.shard.index + 1) + "/" +
                                  std::to_string(running.shard.count) + ": " + running.holder);
    return out;
}

SessionRun liveRecord(const Session &session, const std::string &sessionPath, const SessionRun &run,
                      RunStatus status, int64_t step, const RunOrigin &origin)
{
    SessionRun listed;
    listed.labels = run.labels;
    listed.config = run.config;
    listed.result.status = status;
    listed.result.stepsDone = step;
    listed.result.origin = origin;
    if (session.checkpoints.enabled) {
        const auto found =
            listCheckpoints(checkpointDirFor(sessionPath, run.config), nullptr, false);
        if (!found.empty())
            listed.result.checkpoints.push_back(
                {found.front().step, std::filesystem::path(found.front().path).filename().string(),
                 found.front().reason, false});
    }
    return listed;
}

int addLiveRuns(Session &session, const std::string &sessionPath, std::vector<std::string> *notes)
{
    std::map<std::string, size_t> byId;
    for (size_t i = 0; i < session.runs.size(); ++i) byId[runId(session.runs[i].config)] = i;
    const std::string here = hostName();
    const int64_t now = int64_t(std::time(nullptr));
    int added = 0;
    for (const auto &live : SessionStore::readLiveRuns(sessionPath, notes)) {
        const bool alive = live.host == here && live.pid > 0
                               ? (::kill(pid_t(live.pid), 0) == 0 || errno == EPERM)
                               : now - utcSeconds(live.updatedAt) <= kLiveStaleSeconds;
        if (!alive) {
            if (notes)
                notes->push_back("the runs " + live.trainer + " listed as training at " +
                                 live.updatedAt + " are left out: " +
                                 (live.host == here
                                      ? "that process is gone"
                                      : "it has not said so for over " +
                                            std::to_string(kLiveStaleSeconds) + " s"));
            continue;
        }
        for (const auto &run : live.runs) {
            const auto it = byId.find(runId(run.config));
            if (it == byId.end()) {
                byId[runId(run.config)] = session.runs.size();
                session.runs.push_back(run);
            } else if (!isFinished(session.runs[it->second].result.status)) {
                session.runs[it->second].result = run.result;
            } else {
                continue; // it finished since the file was written
            }
            ++added;
        }
    }
    return added;
}

std::vector<std::string> setAsideRunsOutsideTheSweep(Session &session,
                                                     const std::string &sessionPath)
{
    Session definition = session;
    definition.runs.clear();
    definition.skipped.clear();
    expandSweep(definition);
    std::set<std::string> sweep;
    for (const auto &run : definition.runs) sweep.insert(yaml::canonicalYaml(run.config));
    std::vector<std::string> aside;
    std::vector<SessionRun> kept;
    for (auto &run : session.runs) {
        if (!hasResult(run) || sweep.count(yaml::canonicalYaml(run.config))) {
            kept.push_back(std::move(run));
            continue;
        }
        const std::string file =
            run.storedFile.empty() ? resultsDirFor(sessionPath) + "/runs/" + runFileName(run.config)
                                   : run.storedFile;
        aside.push_back(file + ": not a run of " + sessionPath +
                        "'s sweep as it is now (an earlier definition's run, or another "
                        "experiment's file); kept there, "
                        "left out");
    }
    session.runs = std::move(kept);
    return aside;
}

PruneSummary pruneCheckpoints(Session &session, const std::string &sessionPath,
                              const std::set<std::string> &keep, bool dryRun)
{
    namespace fs = std::filesystem;
    PruneSummary summary;
    for (auto &run : session.runs) {
        if (!isFinished(run.result.status)) continue;
        const std::string dir = checkpointDirFor(sessionPath, run.config);
        std::error_code error;
        if (pathKindAt(dir) == PathKind::Missing) continue;
        if (const std::string problem = checkpointFolderProblem(sessionPath, dir);
            !problem.empty()) {
            summary.leftAlone.push_back(problem);
            continue;
        }
        std::set<std::string> kept;
        std::vector<CheckpointRecord> list;
        for (const auto &c : run.result.checkpoints)
            if (c.keep || keep.count(c.reason)) {
                kept.insert(c.file);
                summary.marked += c.keep;
                list.push_back(c);
            }
        bool any = false;
        std::vector<std::pair<fs::path, uint64_t>> doomed; // and their bytes
        for (const auto &entry : fs::directory_iterator(dir, error)) {
            const std::string name = entry.path().filename().string();
            const PathKind kind = pathKindAt(entry.path().string());
            if (!isCheckpointFileName(name) || kind != PathKind::Regular) {
                summary.leftAlone.push_back(entry.path().string() + ": left alone (" +
                                            (kind == PathKind::Link        ? "a symbolic link"
                                             : kind == PathKind::Directory ? "a folder"
                                             : !isCheckpointFileName(name)
                                                 ? "not a file HeadLab names a checkpoint"
                                                 : "not a regular file") +
                                            ")");
                continue;
            }
            any = true;
            const uint64_t bytes = entry.file_size(error);
            if (kept.count(name)) {
                ++summary.kept;
                summary.bytesKept += bytes;
                continue;
            }
            doomed.emplace_back(entry.path(), bytes);
            ++summary.removed;
            summary.bytesFreed += bytes;
        }
        for (const auto &[path, bytes] : doomed) {
            std::error_code removeError;
            if (!dryRun) fs::remove(path, removeError);
            if (removeError) {
                summary.problems.push_back(path.string() +
                                           ": not removed: " + removeError.message());
                --summary.removed;
                summary.bytesFreed -= bytes;
            }
        }
        summary.runs += any;
        if (!dryRun) run.result.checkpoints = list;
    }
    return summary;
}

void markCheckpoint(Session &session, int row, int64_t step, bool keep)
{
    if (row < 0 || size_t(row) >= session.runs.size())
        throw SessionError("", 0, 0, "",
                           "run " + std::to_string(row) + ": the session has runs 0 to " +
                               std::to_string(int(session.runs.size()) - 1));
    RunResult &result = session.runs[size_t(row)].result;
    if (!isFinished(result.status))
        throw SessionError("", 0, 0, "",
                           "run " + std::to_string(row) + " is " +
                               std::string(toString(result.status)) +
                               ": mark its checkpoints once it has finished (until then its "
                               "trainer keeps the newest ones and removes older ones)");
    std::string steps;
    for (auto &c : result.checkpoints) {
        if (c.step == step) {
            c.keep = keep;
            return;
        }
        steps += (steps.empty() ? "" : ", ") + std::to_string(c.step);
    }
    throw SessionError(
        "", 0, 0, "",
        "run " + std::to_string(row) + " has no checkpoint at step " + std::to_string(step) +
            (steps.empty() ? std::string(" (it has none)") : "; it has steps " + steps));
}

int findRun(const Session &session, const std::string &text, std::string *error)
{
    char *end = nullptr;
    const long index = std::strtol(text.c_str(), &end, 10);
    if (!text.empty() && *end == '\0') {
        if (index >= 0 && static_cast<size_t>(index) < session.runs.size())
            return static_cast<int>(index);
        *error = "--run " + text + ": the session has runs 0 to " +
                 std::to_string(int(session.runs.size()) - 1);
        return -1;
    }
    int found = -1;
    for (size_t i = 0; i < session.runs.size(); ++i)
        if (runFileName(session.runs[i].config).rfind(text, 0) == 0) {
            if (found >= 0) {
                *error = "--run " + text +
                         ": more than one run's file starts with it; give more of the hash";
                return -1;
            }
            found = static_cast<int>(i);
        }
    if (found < 0) *error = "--run " + text + ": no run has that row or result-file hash";
    return found;
}

BudgetOutcome enforceCheckpointBudget(Session &session, const std::string &sessionPath)
{
    BudgetOutcome outcome;
    const double budget = session.checkpoints.budgetMb * 1e6;
    if (budget <= 0 || sessionPath.empty()) return outcome;
    const std::string dir = resultsDirFor(sessionPath) + "/checkpoints";
    const uint64_t before = directoryBytes(dir);
    if (double(before) <= budget) return outcome;
    std::vector<size_t> listed;
    for (const auto &run : session.runs) listed.push_back(run.result.checkpoints.size());
    PruneSummary total;
    const char *kept = "";
    const std::vector<std::pair<std::set<std::string>, const char *>> stages = {
        {{"final", "plateau_entry", "plateau_exit"}, "their final and plateau ones kept"},
        {{"final"}, "their final ones kept"}};
    for (const auto &stage : stages) {
        const PruneSummary p = pruneCheckpoints(session, sessionPath, stage.first, false);
        total.removed += p.removed;
        total.bytesFreed += p.bytesFreed;
        total.problems.insert(total.problems.end(), p.problems.begin(), p.problems.end());
        if (total.leftAlone.empty()) total.leftAlone = p.leftAlone; // each stage finds the same
        kept = stage.second;
        if (double(directoryBytes(dir)) <= budget) break;
    }
    for (size_t i = 0; i < session.runs.size(); ++i)
        if (session.runs[i].result.checkpoints.size() != listed[i])
            outcome.changedRuns.push_back(int(i));
    const uint64_t after = directoryBytes(dir);
    char text[512];
    std::snprintf(text, sizeof text,
                  "checkpoints took %.1f MB, over the session's budget of %.1f MB: removed %d "
                  "files of finished runs (%.1f MB; %s)",
                  double(before) / 1e6, budget / 1e6, total.removed, double(total.bytesFreed) / 1e6,
                  kept);
    outcome.note = text;
    if (double(after) > budget) {
        std::snprintf(text, sizeof text,
                      "; still %.1f MB: what unfinished runs resume from and finished runs' final "
                      "checkpoints are kept",
                      double(after) / 1e6);
        outcome.note += text;
    }
    for (const auto &problem : total.problems) outcome.note += "; " + problem;
    for (const auto &line : total.leftAlone) outcome.note += "; " + line;
    return outcome;
}

StoredResult storeResult(SessionStore &store, const SessionRun &run, bool syncDirectory)
{
    StoredResult stored;
    try {
        store.saveRun(run, syncDirectory);
        return stored;
    } catch (const SessionError &e) {
        stored.saved = false;
        stored.error = e.what();
    }
    const char *tmp = std::getenv("TMPDIR");
    const std::string dir =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/headlab-rescue-" + std::to_string(::getpid());
    try {
        ::mkdir(dir.c_str(), 0700);
        stored.rescuedTo = dir + "/" + runFileName(run.config);
        writeFileAtomic(stored.rescuedTo, runToYaml(run));
        return stored;
    } catch (const std::exception &) {}
    std::fprintf(
        stderr, "----- a result that could not be saved (save it as a .yaml file) -----\n%s-----\n",
        runToYaml(run).c_str());
    stored.rescuedTo = "stderr above";
    return stored;
}

std::string experimentText(Session session)
{
    session.runs.clear();
    session.skipped.clear();
    session.view.clear();
    session.name.clear();
    session.description.clear();
    session.learnedRule = LearnedRule::LeftLn10Plateau; // how results are read, not what is run
    // A search's rounds are its progress, not its definition: an output that holds later rounds
    // of the same search resumes it.
    if (session.search) session.search->probes.clear();
    return sessionToYaml(session);
}

OutputPlan planOutput(Session &session, const std::string &output, bool overwrite)
{
    OutputPlan plan;
    if (!fileExists(output)) return plan;
    Session existing;
    try {
        existing = loadSession(output);
    } catch (const SessionError &e) {
        if (!overwrite)
            throw SessionError(output, 0, 0, "",
                               std::string("exists and is not a session HeadLab can read (") +
                                   e.message() + "); pass --overwrite to replace it");
    }
    plan.results = countResults(existing);
    if (plan.results == 0 && !overwrite) return plan;
    if (!overwrite && experimentText(existing) == experimentText(session)) {
        plan.kind = OutputPlan::Kind::Resume;
        plan.message = output + " holds " + std::to_string(plan.results) +
                       " results of the same experiment: resuming it";
        existing.view.insert(session.view.begin(), session.view.end());
        session = std::move(existing);
        return plan;
    }
    if (!overwrite) {
        plan.kind = OutputPlan::Kind::Refuse;
        plan.message = output + " already holds " + std::to_string(plan.results) +
                       " results of a different experiment or sweep; refusing to replace them.\n  "
                       "Choose another "
                       "-o, or pass --overwrite (its results are then moved aside, not deleted).";
        return plan;
    }
    plan.kind = OutputPlan::Kind::Replace;
    const std::string results = resultsDirFor(output);
    if (plan.results > 0 || fileExists(results)) {
        // Never behind another writer's back (issue 74): its lock is held here while the folder
        // moves, so a writer that holds it (the app, a `run`, through a link too) keeps its
        // folder, and one that starts meanwhile waits for the move; a running shard likewise.
        const LockWhileMoving lock(results, output);
        std::error_code error;
        const std::string aside = moveAside(results, error);
        if (error && error != std::errc::no_such_file_or_directory)
            throw SessionError(results, 0, 0, "", "cannot move it aside: " + error.message());
        if (fileExists(aside)) {
            std::rename(output.c_str(), (aside + "/replaced-session.yaml").c_str());
            plan.message =
                "--overwrite: the previous results of " + output + " are kept in " + aside;
        }
    }
    return plan;
}

std::vector<std::string> provenanceSpread(const Session &session)
{
    std::map<std::string, std::map<std::string, int>> values; // key → value → runs
    int recorded = 0;
    for (const auto &run : session.runs) {
        if (run.result.provenance.empty()) continue;
        ++recorded;
        for (const auto &[key, value] : run.result.provenance) ++values[key][value];
    }
    std::vector<std::string> lines;
    for (auto &[key, counts] : values) {
        int with = 0;
        for (const auto &[value, n] : counts) with += n;
        if (with < recorded) counts["(not recorded)"] += recorded - with;
        if (counts.size() < 2) continue;
        std::string line = key + ":";
        bool first = true;
        for (const auto &[value, n] : counts) {
            line += (first ? " " : ", ") + value + " (" + std::to_string(n) +
                    (n == 1 ? " run)" : " runs)");
            first = false;
        }
        lines.push_back(line);
    }
    return lines;
}

SweepCounts countRuns(const Session &session)
{
    SweepCounts c;
    for (const auto &run : session.runs) {
        switch (run.result.status) {
        case RunStatus::Done:
            ++c.done;
            break;
        case RunStatus::Diverged:
            ++c.diverged;
            break;
        case RunStatus::Failed:
            ++c.failed;
            break;
        default:
            ++c.unfinished;
            break;
        }
    }
    return c;
}

} // namespace headlab
