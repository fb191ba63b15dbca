// SessionStore.h — where a session's results live on disk, and the one way to write them.
//
// A session saved by this version is two things side by side (docs/SESSION_FORMAT.md):
//
//   S.yaml                  what a user reads and edits: the experiment, the sweep, the view, and
//                           an index of the runs (labels, status, the file of each result)
//   S.results/runs/K.yaml   one file per run, the run's whole result, written atomically once
//                           when the run finishes (K: a hash of the run's resolved config)
//   S.results/lock          held (flock) by the one process that writes the session
//
// Finishing a run costs one small file, not a rewrite of the session, so saving scales with the
// run and not with the session. The run files are the truth: loading reads every file in
// S.results/runs/, including those written after the index was last saved (a crash between the
// two loses nothing). A session written as one self-contained YAML file (schema 1, or an export)
// still loads; its runs then come from the file itself.
//
// Writers: the CLI and the app both write through SessionStore. Opening one for writing takes an
// exclusive lock; a second writer is refused with a message naming the first (PID, host, since).
// Temporary files that a killed writer left behind are removed when the lock is taken.
//
// Torch-free and Qt-free.
#pragma once

#include "core/config/Files.h"
#include "core/session/RunFiles.h"
#include "core/session/SessionData.h"
#include "core/session/SessionYaml.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headlab {

// Reads a session file and, when it names a results folder, every run file in it
// (SessionStore.h). Throws SessionError, located in whichever file is at fault.
Session loadSession(const std::string &path);

// One of N parts of a sweep run by its own process (a Slurm array task): it writes only its runs'
// files, under a lock of its own (S.results/lock.shard-I-of-N), never the session file, and leaves
// other writers' temporary files alone. `headlab-cli merge` folds the parts into the session.
struct StoreShard {
    int index = -1; // 0-based
    int count = 0;
    bool active() const { return count > 0; }
};

class SessionStore {
public:
    // Opens `sessionPath` for writing: creates S.results/runs/, takes the lock, and removes the
    // temporary files a killed writer left (unless shards are running). Throws SessionError if
    // another process holds the lock ("... is being written by PID 1234 on host since
    // 2026-11-26 10:00:00"). A shard takes its own lock instead (StoreShard).
    //
    // A Trainer (the default: `run`, the app) is refused while a writer of the other kind trains the
    // session: a shard while the whole sweep runs, the whole sweep while shards run, naming their
    // PIDs and hosts (one writer per run). A Merger only folds finished run files into the session
    // file, which it may do while shards train.
    enum class Role { Trainer, Merger };
    explicit SessionStore(std::string sessionPath, StoreShard shard = {},
                          Role role = Role::Trainer);
    ~SessionStore(); // releases the lock
    SessionStore(const SessionStore &) = delete;
    SessionStore &operator=(const SessionStore &) = delete;

    const std::string &sessionPath() const { return m_sessionPath; }
    const std::string &resultsDir() const { return m_resultsDir; }

    // Writes one run's result file (atomic). Throws SessionError on failure. Runs that finish
    // together (an ensemble) are saved with `syncDirectory` false and one syncRuns() after them.
    void saveRun(const SessionRun &run, bool syncDirectory = true);
    void syncRuns();
    // Writes the session file (the index) and every run that has a result but no file yet, or
    // whose file is out of date. Throws SessionError on failure.
    void saveSession(const Session &session);
    // The runs this process trains now (LiveRuns, SessionYaml.h), written atomically to
    // S.results/live/HOST-PID.yaml for readers that cannot ask it; an empty list removes the file,
    // as the destructor does. A kill -9 leaves it: readers judge it by its PID and updated_at.
    void writeLiveRuns(const std::vector<SessionRun> &runs);
    // Every live file of `sessionPath` that parses (one that does not is named in `problems`).
    static std::vector<LiveRuns> readLiveRuns(const std::string &sessionPath,
                                              std::vector<std::string> *problems = nullptr);
    // Seconds spent in saveRun and saveSession so far (what the bench reports).
    double secondsSaving() const { return m_secondsSaving; }

    // Who holds the lock of `sessionPath`, or "" if nobody.
    static std::string lockHolder(const std::string &sessionPath);
    // The shards of `sessionPath` running now: "shard 2/3: PID ... on host since ...", one each.
    static std::vector<std::string> runningShards(const std::string &sessionPath);
    // The same, as parts: which shard (0-based index of count) and who runs it.
    struct RunningShard {
        StoreShard shard;
        std::string holder; // "PID ... on host since ..."
    };
    static std::vector<RunningShard> runningShardParts(const std::string &sessionPath);

private:
    std::string m_sessionPath;
    std::string m_resultsDir;
    StoreShard m_shard;
    int m_lockFd = -1;
    double m_secondsSaving = 0.0;
    // Writes a run's file unless it already holds this text (known from m_written, or, with
    // `compareWithDisk`, read back from the file an earlier process wrote).
    void writeRun(const SessionRun &run, bool compareWithDisk, bool syncDirectory);
    // Run files known to hold the result as it is now: file name -> a hash of their text.
    std::map<std::string, uint64_t> m_written;
    std::string m_livePath; // this process's live file while it lists runs
};

} // namespace headlab
