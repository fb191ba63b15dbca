// SweepSession.h — running a session's sweep and storing its results: the one way, shared by
// headlab-cli and the app.
//
// Which runs to train (those without a result), how a finished run enters the session and its
// store (its own file, at once), what happens when that file cannot be written (the result goes to
// a rescue folder, and the caller stops the sweep: training on would make results with nowhere to
// go), what an output file that already holds results means (the same experiment is resumed,
// another is refused unless it is moved aside), and how a sweep's outcome is counted.
#pragma once

#include "core/session/Session.h"
#include "core/session/SessionStore.h"
#include "core/train/SweepRunner.h"

#include <set>
#include <string>
#include <vector>

namespace headlab {

// The runs of `session` that have no result yet, in run order, as jobs for a SweepRunner.
std::vector<SweepJob> pendingJobs(const Session &session);

// The folder of a run's checkpoints: S.results/checkpoints/K/, K the name of its result file
// (runFileName) without ".yaml".
std::string checkpointDirFor(const std::string &sessionPath, const RunConfig &config);

// "" when a run's checkpoint folder `dir` (made by checkpointDirFor; it need not exist yet) lies
// inside the session's results folder with no symbolic link on the way from S.results/ to it;
// else one sentence naming the link and where it points. Such a folder is neither written,
// pruned nor copied: a session handed over as a tarball may carry a link to anywhere.
std::string checkpointFolderProblem(const std::string &sessionPath, const std::string &dir);

// Gives each job its checkpoint folder (when the session's policy keeps checkpoints) and, for a
// run that has not finished, the newest usable checkpoint to resume from. A file that cannot be
// used is skipped for the one before it; the returned lines say which and why, e.g.
// "S.results/checkpoints/K/step-000002000.safetensors: is not a usable checkpoint: truncated ...;
// run 3 resumes from step 1000 instead". A finished run trained again starts at step 0: its old
// folder is moved aside to K.replaced-TIME/, never deleted.
std::vector<std::string> attachCheckpoints(std::vector<SweepJob> &jobs, const Session &session,
                                           const std::string &sessionPath);

// Save As: each run's checkpoint folder beside `fromSession` is copied beside `toSession` (hard
// links where the file system allows, else copies), unless one is there already. Best effort: a
// folder that cannot be copied stays where it was, and is named in the returned lines.
std::vector<std::string> copyCheckpoints(const Session &session, const std::string &fromSession,
                                         const std::string &toSession);

// The jobs of shard `shard` (0-based) of `count`: the runs grouped into ensembles (runs that would
// train as one batched model), a group larger than a shard's fair share (runs / count, rounded up)
// cut into nearly equal pieces of at most that share, the pieces
// dealt to the shards longest first, each to the shard with the least work so far (ensembleWork,
// placeOnDevices). The same jobs give the same parts: the CLI deals
// every run of the sweep, then trains those of its part that have no result.
std::vector<SweepJob> shardJobs(const std::vector<SweepJob> &jobs, int shard, int count);

// Which unfinished runs of an (expanded) session are being trained now, by whom, and how far: the
// runs of the part of each shard that holds its lock (shardJobs deals them the same way the shard
// did), or every unfinished run when a whole-sweep run holds the session. `step` is the newest
// checkpoint's (read from its header), -1 before the first. What `status` and the app's live view
// report, so that a run a shard trains never shows as "not started".
struct RunActivity {
    int runIndex = -1;
    std::string trainer; // "shard 2/4: PID ... on host since ..." or "the whole sweep: PID ..."
    int64_t step = -1;
};
std::vector<RunActivity> activeRuns(const Session &session, const std::string &sessionPath);

// Folds the runs that the live files of `sessionPath` list (SessionStore::writeLiveRuns: the runs
// each trainer has in training now, their step, newest checkpoint and origin) into `session`: a
// run stored unfinished, or not at all, takes its live record (status running); a finished one
// keeps its result. A file whose trainer is gone is left out and named in `notes`: its PID is not
// alive on this host, or, written on another host, it was not rewritten for kLiveStaleSeconds.
// Returns how many runs it made rows in training. `export-csv --running`, and the Python
// package's runs(running=True) by the same rule.
inline constexpr int kLiveStaleSeconds = 60;
// `run` as a live file lists it (SessionStore::writeLiveRuns): its labels and config, and a
// result of its status, step and origin alone, with its newest checkpoint (read from the headers
// of its folder; none when the session keeps no checkpoints or the run has written none yet).
// No curves: they stay with the trainer. The one record the CLI's run loop and the app write.
SessionRun liveRecord(const Session &session, const std::string &sessionPath, const SessionRun &run,
                      RunStatus status, int64_t step, const RunOrigin &origin);
int addLiveRuns(Session &session, const std::string &sessionPath,
                std::vector<std::string> *notes = nullptr);

// Takes out of `session.runs` every stored run whose config is not a run of the session's sweep
// now (an earlier definition's, after the experiment was edited; another experiment's file dropped
// into runs/), so that exports and merge carry exactly the session's runs. Their files stay where
// they are. Returns one line per run set aside, naming its real file.
std::vector<std::string> setAsideRunsOutsideTheSweep(Session &session,
                                                     const std::string &sessionPath);

// Frees the disk that finished runs' checkpoints take: every checkpoint file of a done, diverged
// or failed run whose reason is not in `keep` (final, periodic, stop, plateau_entry,
// plateau_exit) and that the user has not marked (markCheckpoint) is removed, as are checkpoint
// files its list does not name (an earlier try's, one set aside as unusable, a killed write's
// temporary file), and its result's list follows. Only files named as HeadLab names them
// (isCheckpointFileName) are ever removed, only regular files, and only in a folder inside the
// results folder (checkpointFolderProblem): a link, a foreign file or a folder reached through a
// link is named in `leftAlone` and left. Unfinished runs are left alone: they resume from theirs.
// With `dryRun`, only counts. The caller saves the session (SessionStore) afterwards.
struct PruneSummary {
    int runs = 0; // finished runs that had checkpoints
    int removed = 0, kept = 0;
    int marked = 0; // of those kept, checkpoints the user marked (markCheckpoint)
    uint64_t bytesFreed = 0, bytesKept = 0;
    std::vector<std::string> problems;  // files that could not be removed, one sentence each
    std::vector<std::string> leftAlone; // links, foreign files and linked folders, named and left
};
PruneSummary pruneCheckpoints(Session &session, const std::string &sessionPath,
                              const std::set<std::string> &keep, bool dryRun);

// Marks (or unmarks, `keep` false) finished run `row`'s checkpoint at `step` as one to keep:
// pruneCheckpoints and the budget leave it whatever its reason. The caller saves the run's file.
// Throws SessionError naming the run and the steps it has when there is no such checkpoint, and
// for a run that has not finished (its trainer still rotates its checkpoints).
void markCheckpoint(Session &session, int row, int64_t step, bool keep);

// The run `text` names in a command line: its row (0-based, as in `status` and runs.csv) or a
// prefix of its result file's hash. -1 with `*error` set when there is none or more than one.
int findRun(const Session &session, const std::string &text, std::string *error);

// The session's checkpoint budget (`checkpoints: {budget_mb: N}`): while its checkpoints take more,
// finished runs' are pruned, first to their final and plateau checkpoints, then to their final
// ones; unfinished runs' never. Returns the runs whose checkpoint lists changed (the caller saves
// their files) and a sentence for the user ("" when within the budget or without one).
struct BudgetOutcome {
    std::vector<int> changedRuns;
    std::string note;
};
BudgetOutcome enforceCheckpointBudget(Session &session, const std::string &sessionPath);

// Where a result went.
struct StoredResult {
    bool saved = true;     // in the session's results folder
    std::string error;     // why not, when not saved
    std::string rescuedTo; // a file in $TMPDIR/headlab-rescue-PID/, or "stderr above"
};

// Writes `run`'s result file; when that fails, writes it to a rescue folder in $TMPDIR (or /tmp)
// instead, else prints it on stderr, and says so.
StoredResult storeResult(SessionStore &store, const SessionRun &run, bool syncDirectory = true);

// The experiment and sweep of a session as text: two sessions run the same experiment when these
// are equal (names, descriptions, views and the learned rule do not change what is trained).
std::string experimentText(Session session);

// Makes the task's relative file paths (option rows with mapPath) absolute, resolved against each
// config's base directory: done before a session is written to another directory than the one it
// was read from, so that the examples file is still found there, and before comparing it with what
// an output already holds.
void anchorTaskPaths(Session &session);

// What `-o OUT` (or Save As) onto an existing file means.
struct OutputPlan {
    enum class Kind { Fresh, Resume, Refuse, Replace } kind = Kind::Fresh;
    int results = 0;     // results OUT already holds
    std::string message; // for Resume, Refuse and Replace: one sentence for the user
};
// `session` is what is about to run into `output`. Resume: `session` is replaced by OUT's (with
// the results) keeping its view. Replace (overwrite): OUT's results are moved to
// OUT.results.replaced-TIME/, never deleted. Refuse: nothing is touched. Throws SessionError when
// OUT cannot be read and overwrite is false, or its results cannot be moved aside.
OutputPlan planOutput(Session &session, const std::string &output, bool overwrite);

// Provenance keys whose value differs between the session's runs, one line each, e.g.
// "libtorch: 2.5.1 (3 runs), 2.11.0 (2 runs)": why runs of one session may not be comparable
// bit for bit (a rerun elsewhere, another LibTorch, TF32 on). Empty when they agree.
std::vector<std::string> provenanceSpread(const Session &session);

struct SweepCounts {
    int done = 0, diverged = 0, failed = 0, unfinished = 0;
};
SweepCounts countRuns(const Session &session);

} // namespace headlab
