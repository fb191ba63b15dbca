// SessionYaml.h — a session and its run records in YAML (docs/SESSION_FORMAT.md): reading with
// located errors, writing in canonical form, and the files of the stored layout as text.
// Torch-free and Qt-free.
#pragma once

#include "core/session/SessionData.h"

#include <string>
#include <vector>

namespace headlab {

// Parses YAML text. `file` is used in error messages only. Throws SessionError.
Session sessionFromYaml(const std::string &yamlText, const std::string &file = "<session>");
// The whole session as one self-contained YAML document, results included (an export).
std::string sessionToYaml(const Session &session);
// Writes sessionToYaml to `path` atomically (writeFileAtomic): on any failure the previous file
// is left untouched and SessionError is thrown. For a session that is being trained, write
// through a SessionStore instead: it saves one file per finished run.
// A session file written over keeps the comment block it opens with (the lines from its start that
// are `#` comments or blank, up to the last comment): what a person wrote above the keys, such as
// how the file was made, is not lost when the app, `predict --into` or `note` saves it. Comments
// further down are not kept (docs/SESSION_FORMAT.md says so).
void saveSessionAtomic(const Session &session, const std::string &path);
// `text` (a session or its index, to be written to `path`) after the comment block the file at
// `path` now opens with, if it exists and has one; else `text`.
std::string withLeadingComments(const std::string &path, std::string text);
// One run's result file: the run record of the session format with its own schema_version,
// self-contained (every curve in it): what a rescue file and the tests write.
std::string runToYaml(const SessionRun &run);
// Reads a run file; per-head curves it names (below) are read from beside `file`.
SessionRun runFromYaml(const std::string &text, const std::string &file);

// A run as the stored layout keeps it: the run file, and, when the run logged per-head statistics
// (curves named head.L.H.STAT), those curves in a binary file beside it,
// S.results/runs/NAME.heads-HASH.safetensors (safetensors: a JSON header and raw little-endian
// numbers; HASH is the file's own FNV-1a, so a new version never overwrites the one a run file
// names). Curves sharing their steps are one [curves, points] tensor; values are float32 where
// every one of them is exactly a float32 (the trainer's statistics are), float64 otherwise: exact
// either way. The run file names it: `head_curves: {file: NAME.heads-HASH.safetensors, curves: K}`.
struct StoredRunFiles {
    std::string yaml;
    std::string headCurvesName; // "" when the run has no per-head curves
    std::string headCurves;     // that file's bytes
};
StoredRunFiles storedRunFiles(const SessionRun &run);

// The runs a process is training now, for readers that cannot ask it (the Python package,
// `headlab-cli export-csv --running`): S.results/live/HOST-PID.yaml (SessionStore::writeLiveRuns).
// Each entry is a run record with its run_id, status running (or paused), the step it is at as
// steps_done, its newest checkpoint, and its origin; no curves (they are in the run file when it
// finishes). `trainer` is "PID ... on HOST since ...", `updatedAt` when the file was written (UTC).
struct LiveRuns {
    std::string trainer;
    std::string host;
    int64_t pid = 0;
    std::string updatedAt;
    std::vector<SessionRun> runs;
};
std::string liveRunsToYaml(const LiveRuns &live);
LiveRuns liveRunsFromYaml(const std::string &text, const std::string &file);

// The keys each mapping of a session or run file may hold, one row per kind of mapping: the
// readers check against these rows, and `headlab-cli schema` writes them (with the run
// configuration's field tables) for the Python package, which checks the same keys
// (python/headlab/schema.json, compared with the CLI's output by tests/python).
struct RecordKeys {
    std::string name; // "session", "run_record", ...
    std::vector<std::string> keys;
};
const std::vector<RecordKeys> &recordKeyTable();
const std::vector<std::string> &recordKeys(const std::string &name); // throws on an unknown name

// Every key table as one JSON document: the rows above, then run_config, model, phase,
// stabilizers and task (kind and every task's options): what `headlab-cli schema` prints.
std::string sessionSchemaJson();

// The session file in the stored layout: everything but the results, plus the index of runs
// pointing into `resultsDir` (relative to the session file).
std::string sessionIndexToYaml(const Session &session, const std::string &resultsDirName);

} // namespace headlab
