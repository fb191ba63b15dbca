// RunFiles.h — the files of the stored layout (SessionStore.h) below the YAML: where the results
// folder and a run's file are, the size limits of what is read, and the per-head curves file
// beside a run file. Torch-free and Qt-free.
#pragma once

#include "core/config/RunConfig.h"
#include "core/config/RunResult.h"

#include <cstdint>
#include <map>
#include <string>

namespace headlab {

// Limits on what a session may ask for (SessionError with the key when exceeded).
struct SessionLimits {
    static constexpr uint64_t kMaxFileBytes = 256ull << 20; // a session or run file
    static constexpr int kMaxNesting = 64;                  // YAML nesting depth
};

// The session file a path names: a symbolic link to a session is that session, followed to the
// file it ends at (up to 40 links), so that every writer and every "is it being trained" check
// of one session meets at one results folder and one lock, whatever link or name was given.
// Folders on the way need no resolving: a link or bind mount there reaches the same folder, and
// the lock is taken on the file itself (flock), one inode whatever path reaches it.
std::string sessionFileOf(const std::string &path);
// "S.results" beside "S.yaml" (the extension, if any, replaced), of the session file the path
// names (sessionFileOf).
std::string resultsDirFor(const std::string &sessionPath);
// A run's stable identity: 16 hex digits of its resolved config's hash. The same in every
// session, across merges and shards (runs.csv's run_id, the Python package's).
std::string runId(const RunConfig &config);
// The file name of a run's result inside S.results/runs/: runId(config) + ".yaml".
std::string runFileName(const RunConfig &config);

// Reads a session or run file (readFileLimited with kMaxFileBytes). writeFileAtomic and the other
// file primitives are in core/config/Files.h.
// `what` names the file in a refusal ("is not a regular file …; expected a run file").
std::string readSessionText(const std::string &path, const char *what = "a session file");
// Whether readSessionText reads `path` as something other than a session file: a gzip archive
// (S.export.yaml.gz) or a report (HtmlEmbed.h). HeadLab never writes back to it: saving such a
// session asks for a new file.
bool isReadOnlySessionPath(const std::string &path);

// A run's per-head curves (named head.L.H.STAT) live in a binary file beside its run file,
// S.results/runs/NAME.heads-HASH.safetensors (SessionYaml.h's storedRunFiles writes the pair).
bool isHeadCurve(const std::string &curveName);
bool isHeadCurvesFileName(const std::string &name);
std::string headCurvesFileName(const std::string &runStem, const std::string &bytes);
// The per-head curves of `result` as that file's bytes ("" when it has none).
std::string headCurvesBytes(const RunResult &result);
// Reads such a file; throws SessionError naming it when it is missing, damaged, or does not hold
// `expectedCurves` curves.
std::map<std::string, Curve> readHeadCurves(const std::string &path, int64_t expectedCurves);
// The largest per-head curves file readHeadCurves reads for a run file that declares
// `expectedCurves` curves: 64 MiB and 1 MiB a curve (131,072 points of float64 each, more than
// any run logs). The Python package applies the same bound.
uint64_t headCurvesFileLimit(int64_t expectedCurves);

} // namespace headlab
