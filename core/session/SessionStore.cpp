// SessionStore.cpp — run files, the session index, the writer's lock, and loading them back.
#include "core/session/SessionStore.h"

#include "core/config/Files.h"
#include "core/config/Hash.h"
#include "core/config/Safetensors.h"
#include "core/config/Yaml.h"
#include "core/schema/RunConfigFields.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace headlab {

namespace {

namespace fs = std::filesystem;

// Files of the previous release's saver: "NAME.tmp.XXXXXX".
bool isLegacyTemporaryOf(const std::string &name, const std::string &sessionName)
{
    const std::string prefix = sessionName + ".tmp.";
    return name.size() == prefix.size() + 6 && name.rfind(prefix, 0) == 0;
}

std::string nowText()
{
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char buffer[64];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S", &local);
    return buffer;
}

// This host as lock and live files name their writer.
std::string hostText()
{
    const std::string host = hostName();
    return host.empty() ? "an unknown host" : host;
}

// Which of two stored results of one configuration to keep: a finished one over one that is
// not, else the one that got further.
bool better(const RunResult &candidate, const RunResult &current)
{
    if (isFinished(candidate.status) != isFinished(current.status))
        return isFinished(candidate.status);
    return candidate.stepsDone >= current.stepsDone;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Loading

namespace {

// Relative paths in a task's options (an examples file) are resolved against the session file's
// directory (TaskConfig::baseDirectory), wherever the session is run from.
void setBaseDirectory(Session &session, const std::string &path)
{
    const std::string dir = directoryOf(path);
    session.base.task.baseDirectory = dir;
    for (auto &run : session.runs) run.config.task.baseDirectory = dir;
}

Session loadRuns(Session session, const std::string &path);

} // namespace

Session loadSession(const std::string &path)
{
    Session session = loadRuns(sessionFromYaml(readSessionText(path), path), path);
    setBaseDirectory(session, path);
    return session;
}

namespace {

Session loadRuns(Session session, const std::string &path)
{
    // A session file that names no results folder (written by hand, a preset saved as is) still
    // has the run files that shards wrote beside it (S.results/runs/), if any.
    std::string resultsDir = session.resultsDir;
    if (resultsDir.empty()) {
        struct stat info {};
        if (::stat((resultsDirFor(path) + "/runs").c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
            return session;
        resultsDir = baseName(resultsDirFor(path));
    }
    // The results folder sits beside the session file, the file a link names included.
    const std::string runsDir = directoryOf(sessionFileOf(path)) + "/" + resultsDir + "/runs";
    // The index's order first, then files written after the index was saved, by name.
    std::vector<std::string> names = session.indexedRunFiles;
    std::set<std::string> listed(names.begin(), names.end());
    std::vector<std::string> unlisted;
    if (DIR *dir = ::opendir(runsDir.c_str())) {
        while (const dirent *entry = ::readdir(dir)) {
            const std::string name = entry->d_name;
            if (name.empty() || name.front() == '.' || name.size() < 6 ||
                name.compare(name.size() - 5, 5, ".yaml") != 0 || listed.count(name))
                continue;
            unlisted.push_back(name);
        }
        ::closedir(dir);
    }
    std::sort(unlisted.begin(), unlisted.end());
    names.insert(names.end(), unlisted.begin(), unlisted.end());

    // Run files are independent: parse them on every core (yaml-cpp reads ~10 MB/s on one).
    struct Loaded {
        std::optional<SessionRun> run; // empty: indexed but never written (not run yet)
        std::exception_ptr error;
    };
    std::vector<Loaded> loaded(names.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i; (i = next.fetch_add(1)) < names.size();) {
            const std::string file = runsDir + "/" + names[i];
            struct stat info {};
            if (::stat(file.c_str(), &info) != 0) continue;
            try {
                loaded[i].run = runFromYaml(readSessionText(file, "a run file"), file);
                loaded[i].run->storedFile = file;
            } catch (...) {
                loaded[i].error = std::current_exception();
            }
        }
    };
    const size_t threads =
        std::min<size_t>(names.size() / 8 + 1, std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto &thread : pool) thread.join();

    std::map<std::string, size_t> byConfig; // canonical config -> index in session.runs
    for (size_t i = 0; i < session.runs.size(); ++i)
        byConfig.emplace(yaml::canonicalYaml(session.runs[i].config), i);
    // The index says runs finished and not one of their files is there: the results folder was
    // moved, deleted or left behind. (One file gone while others are there is a run to train
    // again, as a crash before it finished leaves it; the run files are the truth.)
    std::set<std::string> gone;
    bool anyThere = false;
    for (size_t i = 0; i < loaded.size(); ++i)
        if (session.indexedFinishedRunFiles.count(names[i])) {
            if (!loaded[i].run && !loaded[i].error)
                gone.insert(names[i]);
            else
                anyThere = true;
        }
    if (!anyThere) session.missingRunFiles = std::move(gone);
    for (auto &entry : loaded) {
        if (entry.error) { // named, and skipped: one broken file must not block every other run
            try {
                std::rethrow_exception(entry.error);
            } catch (const std::exception &e) {
                session.unreadableRunFiles.push_back(std::string(e.what()) +
                                                     " (this run file is skipped)");
            }
            continue;
        }
        if (!entry.run) continue;
        SessionRun run = std::move(*entry.run);
        if (!run.loadProblem.empty()) session.unreadableRunFiles.push_back(run.loadProblem);
        const std::string canonical = yaml::canonicalYaml(run.config);
        if (auto it = byConfig.find(canonical); it != byConfig.end()) {
            if (better(run.result, session.runs[it->second].result))
                session.runs[it->second] = std::move(run);
        } else {
            byConfig.emplace(canonical, session.runs.size());
            session.runs.push_back(std::move(run));
        }
    }
    session.indexedRunFiles.clear();
    return session;
}

} // namespace

namespace {

// "shard 2/3: PID ... on host since ...": how every message names a running shard.
std::string shardLine(const SessionStore::RunningShard &s)
{
    return "shard " + std::to_string(s.shard.index + 1) + "/" + std::to_string(s.shard.count) +
           ": " + s.holder;
}

// Who holds the lock file at `lockPath` ("PID ... on host since ..."), or "" if nobody.
std::string holderOf(const std::string &lockPath)
{
    // Never blocks and never follows a link: a FIFO named like a lock would block open() and
    // read() for ever, and a link may point anywhere. Neither is a lock HeadLab took.
    const int fd = ::open(lockPath.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return {};
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        ::close(fd);
        return {};
    }
    std::string holder;
    if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
        char buffer[512];
        const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
        holder = n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string("a process");
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\r'))
            holder.pop_back();
    }
    ::close(fd);
    return holder;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The writer

SessionStore::SessionStore(std::string sessionPath, StoreShard shard, Role role)
    : m_sessionPath(sessionFileOf(sessionPath)) // a link's writes reach its session, not replace it
    , m_resultsDir(resultsDirFor(m_sessionPath))
    , m_shard(shard)
{
    struct stat info {};
    if (::stat(m_sessionPath.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
        throw fileError(m_sessionPath, S_ISDIR(info.st_mode)
                                           ? "is a directory; give a session file name"
                                           : "is not a regular file (a device, FIFO or socket)");
    makeDirectories(m_resultsDir + "/runs");
    const std::string lockPath = m_shard.active() ? m_resultsDir + "/lock.shard-" +
                                                        std::to_string(m_shard.index + 1) + "-of-" +
                                                        std::to_string(m_shard.count)
                                                  : m_resultsDir + "/lock";
    // O_NOFOLLOW and O_NONBLOCK: a link named like the lock (a session unpacked from a tarball)
    // must not have its target truncated, and a FIFO must not block the open.
    m_lockFd =
        ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (m_lockFd < 0)
        throw fileError(lockPath,
                        errno == ELOOP
                            ? std::string("is a symbolic link, not HeadLab's lock file; "
                                          "remove it and try again")
                            : std::string("cannot open the lock file: ") + std::strerror(errno));
    if (struct stat lockInfo{}; ::fstat(m_lockFd, &lockInfo) != 0 || !S_ISREG(lockInfo.st_mode)) {
        ::close(m_lockFd);
        m_lockFd = -1;
        throw fileError(lockPath, "is not a regular file (a FIFO, device or folder), so it is not "
                                  "HeadLab's lock file; remove it and try again");
    }
    if (::flock(m_lockFd, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        ::close(m_lockFd);
        m_lockFd = -1;
        if (error == EWOULDBLOCK) {
            const std::string holder = holderOf(lockPath);
            throw fileError(m_sessionPath,
                            (m_shard.active() ? "shard " + std::to_string(m_shard.index + 1) + "/" +
                                                    std::to_string(m_shard.count) + " "
                                              : std::string()) +
                                "is being written by another HeadLab (" +
                                (holder.empty()
                                     ? std::string("a process that has not yet said who it is")
                                     : holder) +
                                "); wait for it to finish or stop it, or save to another file");
        }
        throw fileError(lockPath, std::string("cannot lock: ") + std::strerror(error));
    }
    const std::string owner =
        "PID " + std::to_string(::getpid()) + " on " + hostText() + " since " + nowText() + "\n";
    if (::ftruncate(m_lockFd, 0) == 0) {
        ssize_t ignored = ::pwrite(m_lockFd, owner.data(), owner.size(), 0);
        (void)ignored;
    }

    // One writer per run: a shard and a whole-sweep run never train the same session at once. Each
    // takes its own lock first and then looks at the other kind's, so of two that start together
    // at least one sees the other and steps back (both may; neither trains twice).
    std::string others;
    bool wholeSweep = false; // a whole-sweep run holds the session (what a shard is told)
    if (role == Role::Merger) {
    } else if (m_shard.active()) {
        if (const std::string holder = lockHolder(m_sessionPath); !holder.empty()) {
            others = "\n  the whole sweep: " + holder;
            wholeSweep = true;
        }
        // Shards of another count deal the runs otherwise: both would train the same runs into
        // the same checkpoint folders.
        for (const auto &s : runningShardParts(m_sessionPath))
            if (s.shard.count != m_shard.count) others += "\n  " + shardLine(s);
    } else {
        for (const auto &line : runningShards(m_sessionPath)) others += "\n  " + line;
    }
    if (!others.empty()) {
        ::close(m_lockFd);
        m_lockFd = -1;
        throw fileError(
            m_sessionPath,
            std::string(!m_shard.active() ? "shards of this session are running, so the whole "
                                            "sweep may not"
                        : wholeSweep
                            ? "a whole-sweep run is training this session, so no shard may"
                            : "shards of another count (another split of the runs) are training "
                              "this session, so shard " +
                                  std::to_string(m_shard.index + 1) + "/" +
                                  std::to_string(m_shard.count) + " may not") +
                " start:" + others +
                "\nWait for it to finish (headlab-cli status) or stop it; after shards, "
                "headlab-cli merge.");
    }

    // Nobody else writes here now: temporary files are a killed writer's leftovers. Not so while
    // shards run (they write beside us), nor for a shard itself.
    if (m_shard.active() || !runningShards(m_sessionPath).empty()) return;
    auto sweep = [](const std::string &dir, const std::function<bool(const std::string &)> &match) {
        if (DIR *d = ::opendir(dir.c_str())) {
            std::vector<std::string> doomed;
            while (const dirent *entry = ::readdir(d))
                if (match(entry->d_name)) doomed.push_back(dir + "/" + entry->d_name);
            ::closedir(d);
            for (const auto &file : doomed) ::unlink(file.c_str());
        }
    };
    const std::string sessionName = baseName(m_sessionPath);
    sweep(m_resultsDir + "/runs", isTemporaryName);
    sweep(directoryOf(m_sessionPath), [&](const std::string &name) {
        return (isTemporaryName(name) && name.rfind("." + sessionName + ".tmp-", 0) == 0) ||
               isLegacyTemporaryOf(name, sessionName);
    });
}

void SessionStore::writeLiveRuns(const std::vector<SessionRun> &runs)
{
    if (m_resultsDir.empty()) return;
    if (runs.empty()) {
        if (!m_livePath.empty()) ::unlink(m_livePath.c_str());
        m_livePath.clear();
        return;
    }
    const std::string dir = m_resultsDir + "/live";
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
        throw fileError(dir, std::string("cannot create: ") + std::strerror(errno));
    LiveRuns live;
    live.host = hostName();
    live.pid = ::getpid();
    live.trainer = "PID " + std::to_string(live.pid) + " on " + hostText() +
                   (m_shard.active() ? " (shard " + std::to_string(m_shard.index + 1) + "/" +
                                           std::to_string(m_shard.count) + ")"
                                     : std::string());
    live.updatedAt = utcTimestamp();
    live.runs = runs;
    m_livePath = dir + "/" + (live.host.empty() ? std::string("host") : live.host) + "-" +
                 std::to_string(live.pid) + ".yaml";
    writeFileAtomic(m_livePath, liveRunsToYaml(live), /*syncDirectory=*/false);
}

std::vector<LiveRuns> SessionStore::readLiveRuns(const std::string &sessionPath,
                                                 std::vector<std::string> *problems)
{
    std::vector<LiveRuns> out;
    const std::string dir = resultsDirFor(sessionPath) + "/live";
    DIR *d = ::opendir(dir.c_str());
    if (!d) return out;
    std::vector<std::string> names;
    while (const dirent *e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() > 5 && name[0] != '.' && name.ends_with(".yaml")) names.push_back(name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto &name : names) {
        const std::string path = dir + "/" + name;
        try {
            out.push_back(liveRunsFromYaml(readSessionText(path, "a trainer's live file"), path));
        } catch (const SessionError &e) {
            if (problems) problems->push_back(e.what());
        }
    }
    return out;
}

SessionStore::~SessionStore()
{
    if (!m_livePath.empty()) ::unlink(m_livePath.c_str());
    if (m_lockFd >= 0) {
        if (::ftruncate(m_lockFd, 0) != 0) {
            // The lock is released by close() all the same; a stale text only shows in messages.
        }
        ::close(m_lockFd);
    }
}

std::string SessionStore::lockHolder(const std::string &sessionPath)
{
    return holderOf(resultsDirFor(sessionPath) + "/lock");
}

std::vector<SessionStore::RunningShard>
SessionStore::runningShardParts(const std::string &sessionPath)
{
    std::vector<RunningShard> shards;
    const std::string dir = resultsDirFor(sessionPath);
    std::vector<std::string> names;
    if (DIR *d = ::opendir(dir.c_str())) {
        while (const dirent *entry = ::readdir(d))
            if (std::string(entry->d_name).rfind("lock.shard-", 0) == 0)
                names.push_back(entry->d_name);
        ::closedir(d);
    }
    for (const auto &name : names) {
        int index = 0, count = 0, used = 0; // "lock.shard-2-of-3"
        if (std::sscanf(name.c_str(), "lock.shard-%d-of-%d%n", &index, &count, &used) != 2 ||
            used != int(name.size()) || index < 1 || index > count)
            continue;
        const std::string holder = holderOf(dir + "/" + name);
        if (!holder.empty()) shards.push_back({{index - 1, count}, holder});
    }
    std::sort(shards.begin(), shards.end(), [](const RunningShard &a, const RunningShard &b) {
        return std::make_pair(a.shard.count, a.shard.index) <
               std::make_pair(b.shard.count, b.shard.index);
    });
    return shards;
}

std::vector<std::string> SessionStore::runningShards(const std::string &sessionPath)
{
    std::vector<std::string> lines;
    for (const auto &s : runningShardParts(sessionPath)) lines.push_back(shardLine(s));
    return lines;
}

namespace {

// Adds the time of its scope to a store's seconds spent saving.
class SavingClock {
public:
    explicit SavingClock(double *total)
        : m_total(total)
    {}
    ~SavingClock()
    {
        *m_total +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    }

private:
    double *m_total;
    std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

} // namespace

void SessionStore::writeRun(const SessionRun &run, bool compareWithDisk, bool syncDirectory)
{
    const std::string name = runFileName(run.config);
    const StoredRunFiles files = storedRunFiles(run);
    const std::string &text = files.yaml;
    const uint64_t fingerprint = fnv1a(text);
    if (auto it = m_written.find(name); it != m_written.end() && it->second == fingerprint) return;
    const std::string runsDir = m_resultsDir + "/runs", file = runsDir + "/" + name;
    // What is on disk now: unchanged since an earlier process wrote it (no need to write it
    // again), or naming per-head curves that the new version replaces.
    std::string previous;
    try {
        struct stat info {};
        if (::stat(file.c_str(), &info) == 0) previous = readSessionText(file, "a run file");
    } catch (const SessionError &) {}
    if (compareWithDisk && previous == text) {
        m_written[name] = fingerprint;
        return;
    }
    // The per-head curves first, flushed, under a name of their own content: the run file that
    // names them is renamed into place only after, so a crash leaves the old pair or the new one.
    if (!files.headCurvesName.empty()) {
        const std::string sidecar = runsDir + "/" + files.headCurvesName;
        struct stat info {};
        if (::stat(sidecar.c_str(), &info) != 0 ||
            uint64_t(info.st_size) != files.headCurves.size())
            writeFileAtomic(sidecar, files.headCurves, /*syncDirectory=*/false);
    }
    writeFileAtomic(file, text, syncDirectory);
    m_written[name] = fingerprint;
    // The per-head curves file the previous version named, now named by nothing.
    const std::string key = "head_curves: {file: ";
    if (auto at = previous.find(key); at != std::string::npos) {
        const size_t begin = at + key.size(), end = previous.find_first_of(",}", begin);
        const std::string old = previous.substr(begin, end - begin);
        if (old != files.headCurvesName && isHeadCurvesFileName(old))
            ::unlink((runsDir + "/" + old).c_str());
    }
}

void SessionStore::saveRun(const SessionRun &run, bool syncDirectory)
{
    SavingClock clock(&m_secondsSaving);
    writeRun(run, /*compareWithDisk=*/false, syncDirectory);
}

void SessionStore::syncRuns()
{
    SavingClock clock(&m_secondsSaving);
    fsyncDirectory(m_resultsDir + "/runs");
}

void SessionStore::saveSession(const Session &session)
{
    if (m_shard.active())
        throw fileError(
            m_sessionPath,
            "a shard writes only its runs' files; `headlab-cli merge` writes the session");
    // An index whose finished runs' files are missing would be written without them: the only
    // record of those results left (issue 49: a SIGTERM turned 75 finished runs into `runs: []`).
    if (!session.missingRunFiles.empty())
        throw fileError(m_sessionPath,
                        "not saved: " + missingResultsMessage(session, m_sessionPath));
    SavingClock clock(&m_secondsSaving);
    for (const auto &run : session.runs)
        if (hasResult(run)) writeRun(run, /*compareWithDisk=*/true, /*syncDirectory=*/false);
    fsyncDirectory(m_resultsDir + "/runs"); // once for all the run files
    writeFileAtomic(
        m_sessionPath,
        withLeadingComments(m_sessionPath, sessionIndexToYaml(session, baseName(m_resultsDir))));
}

} // namespace headlab
