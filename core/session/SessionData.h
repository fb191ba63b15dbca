// SessionData.h — a HeadLab session as data: the experiment, its sweep, every run's results and
// the view; what expands it (SweepExpansion.h), reads and writes it (SessionYaml.h) and stores it
// (SessionStore.h) are their own components, gathered by Session.h.
//
// A session is what a user saves and reopens (YAML, see docs/SESSION_FORMAT.md). The sweep is a
// base RunConfig plus named axes; their Cartesian product is the list of runs. Combinations that
// cannot run (a head count that does not divide d_model, say) are listed as skipped, with why.
#pragma once

#include "core/config/RunConfig.h"
#include "core/config/RunResult.h"
#include "core/config/Yaml.h"
#include "core/metrics/LearnedRule.h"
#include "core/schema/AxisValue.h"
#include "core/session/search/SearchSpec.h"

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace headlab {

// Axis values that are set together, one map per combination. A sweep that is not a full
// product (the paper's Figure 4 scans a list of (n_H, m) pairs) lists them under
// `sweep.combinations`; the runs are then every combination × the product of the axes.
using SweepCombination = std::map<std::string, AxisValue>;

struct SessionRun {
    std::map<std::string, std::string> labels; // axis name -> value label
    RunConfig config;
    RunResult result;
    // The run file it was read from (S.results/runs/NAME.yaml), "" when it was not: where a
    // message about it must point. Never written.
    std::string storedFile;
    // What could not be read of it while the rest could (its per-head curves' file missing or
    // damaged): said where the session's unreadable run files are. Never written.
    std::string loadProblem;
};

// A user's note and tags on a session or a run (`note:`, `tags:`, `annotations:`;
// docs/SESSION_FORMAT.md). A tag is one word: letters, digits and _ . : + - /, at most 64
// characters (validTag), so that the run filter's `tag=X` and a space-separated column can hold it.
struct Annotation {
    std::string note;
    std::vector<std::string> tags; // in the order given, each once
    bool operator==(const Annotation &) const = default;
    bool empty() const { return note.empty() && tags.empty(); }
    bool hasTag(const std::string &tag) const;
    // Adds each tag not there yet (in order), takes away each of `untag`; false with `why` for a
    // tag that is not one (validTag), then nothing changes.
    bool retag(const std::vector<std::string> &tag, const std::vector<std::string> &untag,
               std::string *why);
};
// "" for a good tag, else why not ("'a b': a tag is one word of letters, digits and _ . : + - /").
std::string validTag(const std::string &tag);
// Tags as a user types them in one field ("check, outlier slow"): split at spaces and commas, each
// once, in order (not checked: validTag).
std::vector<std::string> tagsFromText(const std::string &text);

// A session's notes and tags together: its own, and its runs' by run_id.
struct Annotations {
    Annotation session;
    std::map<std::string, Annotation> runs; // none empty
    bool operator==(const Annotations &) const = default;
};
// Three-way merge of what one writer holds (`ours`) with what another wrote meanwhile (`theirs`),
// both from `base` (what the two last agreed on), so that neither loses an edit: a note or tag only
// one side changed takes that side's; a tag either added stays unless the other took it away; a
// note both changed differently keeps both, ours first, theirs after a blank line. What the app does
// with `headlab-cli note` and the Python package's annotate written while it has the file open.
Annotation mergeAnnotation(const Annotation &base, const Annotation &ours,
                           const Annotation &theirs);
Annotations mergeAnnotations(const Annotations &base, const Annotations &ours,
                             const Annotations &theirs);

struct SkippedRun {
    std::map<std::string, std::string> labels;
    std::string reason;
};

struct Session {
    // 2: results stored one file per run beside the session (SessionStore.h); 1 still loads.
    static constexpr int kSchemaVersion = 2;
    int schemaVersion = kSchemaVersion;
    std::string name;
    std::string description;
    Annotation annotation; // the session's own note and tags
    // Each run's note and tags, by its run_id (RunFiles.h: its configuration's hash), so that they
    // follow the run through merges, shards and a sweep edited; kept for a run_id the session has
    // no run of (yet).
    std::map<std::string, Annotation> runAnnotations;
    RunConfig base;
    std::vector<SweepAxis> axes;
    std::vector<SweepCombination> combinations; // empty: the product of the axes alone
    // `search:` a boundary search (search/SearchSpec.h, search/SearchReport.h): the axes above define the
    // configurations, and the searched axis's values are the probes it has planned so far.
    std::optional<SearchSpec> search;
    std::vector<SessionRun> runs;
    std::vector<SkippedRun> skipped;
    std::map<std::string, std::string> view; // GUI view state: chart, heatmap_lr, log_x, ...
    LearnedRule learnedRule = LearnedRule::LeftLn10Plateau; // `learned_rule:` (LearnedRule.h)
    // `replicate_axes:` the axes whose runs are replicates of one configuration (Replicates.h);
    // empty: seed, init_seed and data_seed.
    std::vector<std::string> replicateAxes;
    // `checkpoints:` when runs keep checkpoints, how many, and whether they resume from them.
    CheckpointPolicy checkpoints;
    // The folder of run files (relative to the session file) it was loaded with, "" when the
    // session file held its results itself (schema 1, an export, a preset).
    std::string resultsDir;
    // The run files the session file's index lists, in its order (names inside resultsDir/runs/);
    // loadSession reads them, then any other run file in the folder.
    std::vector<std::string> indexedRunFiles;
    // Run files of the results folder that could not be read (truncated, not YAML, a directory
    // named x.yaml), one located message each: they block nothing else; commands and the app
    // report them. Never written.
    std::vector<std::string> unreadableRunFiles;
    // Run files the index lists as finished (done, diverged or failed) when loadSession found none
    // of them on disk (a results folder moved, deleted or left behind when the session file was
    // copied; one file gone among others is a run to train again): their names inside
    // resultsDir/runs/. pendingRuns leaves those runs out, so nothing
    // offers to train them again, and SessionStore refuses to write an index that would forget
    // them. `indexedFinishedRunFiles` is what the index says is finished. Never written.
    std::set<std::string> indexedFinishedRunFiles;
    std::set<std::string> missingRunFiles;
};

// "S.yaml lists 75 finished runs whose files are not in S.results/runs/ (...)": what commands
// and the app say of a session with missingRunFiles; "" when it has none.
std::string missingResultsMessage(const Session &session, const std::string &sessionPath);

// A run has something worth storing: it started, or has curves or a status other than Queued.
bool hasResult(const SessionRun &run);

// Whether a run learned, by the session's learned_rule, for a task whose row says what learning
// means (TaskSpec::learnedMeaning); empty for a run without a verdict, and for every run of a task
// without one (nearest neighbour and text: a loss of 0.741 against a baseline of 1.0 was called
// "learned" by the ln 10 rule of another task). What runs.csv, the replicates and the app show.
std::optional<bool> runLearned(const Session &session, const RunResult &result);
// The note and tags of run `index` (by its run_id); an empty one where it has none.
const Annotation &runAnnotation(const Session &session, size_t index);
// The session's notes and tags, and put back (runs' empty ones dropped).
Annotations annotationsOf(const Session &session);
void setAnnotations(Session &session, Annotations annotations);

// Indices of runs that still have to run (Queued, Running, Paused or Stopped, or failed only for a
// checkpoint that did not load: failedOnACheckpoint), less those whose finished result the index
// lists but whose file is missing (Session::missingRunFiles).
std::vector<int> pendingRuns(const Session &session);

} // namespace headlab
