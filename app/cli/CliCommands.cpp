// CliCommands.cpp — headlab-cli's subcommands on top of the core's sessions and SweepRunner.
#include "CliCommands.h"

#include "core/metrics/Metrics.h"

#include "ProgressDisplay.h"

#include "core/session/CsvExport.h"
#include "core/session/Presets.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"
#include "core/train/SweepRunner.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iterator>
#include <memory>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>

#include <sys/stat.h>
#include <unistd.h>

namespace headlab::cli {

namespace {

const char *kUsage =
    "headlab-cli: run and inspect HeadLab sessions without a display.\n"
    "\n"
    "Usage:\n"
    "  headlab-cli run SESSION.yaml [-o OUT.yaml] [--overwrite] [--device D] [--threads N]\n"
    "                  [--concurrent N] [--max-ensemble N]\n"
    "  headlab-cli run --preset NAME [-o OUT.yaml] (the same options)\n"
    "  headlab-cli validate SESSION.yaml\n"
    "  headlab-cli presets\n"
    "  headlab-cli export-csv SESSION.yaml -o DIR\n"
    "  headlab-cli export-yaml SESSION.yaml -o FILE.yaml\n"
    "  headlab-cli COMMAND --help\n"
    "\n"
    "Exit status: 0 success; 1 a run failed with an error or results could not be saved;\n"
    "2 bad input (usage, invalid session, unknown preset, an output that holds other results);\n"
    "128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; results saved).\n"
    "The session format is described in docs/SESSION_FORMAT.md.\n";

const char *kRunHelp =
    "Usage: headlab-cli run SESSION.yaml [-o OUT.yaml] [--overwrite] [--device D] [--threads N]\n"
    "                       [--concurrent N] [--max-ensemble N]\n"
    "       headlab-cli run --preset NAME [-o OUT.yaml] (the same options)\n"
    "\n"
    "Expands the session's sweep, lists the skipped combinations with why, and trains every run\n"
    "that has no result yet (queued, running, paused or stopped), so running a session again\n"
    "resumes it. Progress and ETA go to stderr. The session is saved to OUT.yaml if given, else\n"
    "over SESSION.yaml (for --preset: NAME.yaml in the current directory); each finished run is\n"
    "written at once to its own file in OUT.results/runs/. One process writes a session at a\n"
    "time: a second is refused with the first one's PID and host. If a result cannot be saved\n"
    "(a full disk), the sweep stops and says where the result went instead.\n"
    "Ctrl-C, SIGTERM and SIGHUP stop the runs in progress, save them as stopped, and exit 128+N.\n"
    "\n"
    "  -o, --output OUT.yaml   where to save the session with its results. If OUT.yaml already\n"
    "                          holds results of the same experiment, they are resumed; of\n"
    "                          another, the command refuses unless --overwrite\n"
    "  --overwrite             replace OUT.yaml; its old results are moved to\n"
    "                          OUT.results.replaced-TIME/, never deleted\n"
    "  --preset NAME           start from a built-in preset (see: headlab-cli presets)\n"
    "  --device D              auto, cpu, cuda, cuda:N, a list (cuda:0,cuda:1) or all GPUs, for\n"
    "                          every run (default: each run's own); ensembles spread over the list\n"
    "  --threads N             CPU threads for LibTorch (default: LibTorch's choice)\n"
    "  --concurrent N          ensembles trained at once on each GPU, each on its own stream\n"
    "                          (default 4; small ensembles cannot fill a GPU alone)\n"
    "  --max-ensemble N        most runs trained together as one batched model (default: as\n"
    "                          many as half the GPU's free memory holds, at most 64; 8 on a CPU)\n"
    "\n"
    "Exits 1 if a run of this invocation failed with an error or a result could not be saved;\n"
    "a diverged run is a result.\n";

const char *kValidateHelp =
    "Usage: headlab-cli validate SESSION.yaml\n"
    "\n"
    "Reads the session and expands its sweep without training. Prints a summary (runs, skipped\n"
    "combinations and why) and exits 0, or prints file:line:col: key.path: message and exits 2.\n";

const char *kPresetsHelp =
    "Usage: headlab-cli presets\n"
    "\n"
    "Lists the built-in presets (compiled into the binary) with one line each. Run one with\n"
    "headlab-cli run --preset NAME.\n";

const char *kExportYamlHelp =
    "Usage: headlab-cli export-yaml SESSION.yaml -o FILE.yaml\n"
    "\n"
    "Writes the session with every run's results as one self-contained YAML file (the session\n"
    "file otherwise keeps its results in SESSION.results/, one file per run).\n";

const char *kExportHelp =
    "Usage: headlab-cli export-csv SESSION.yaml -o DIR\n"
    "\n"
    "Writes DIR/runs.csv (one row per run: labels, key configuration, status, metrics) and\n"
    "DIR/curves.csv (long format: run,curve,step,value for every point of every curve; run is\n"
    "the row of runs.csv). See docs/SESSION_FORMAT.md.\n";

bool wantsHelp(const std::vector<std::string> &args)
{
    return std::any_of(args.begin(), args.end(),
                       [](const std::string &a) { return a == "-h" || a == "--help"; });
}

int usageError(const std::string &message, const char *help)
{
    std::fprintf(stderr, "headlab-cli: %s\n\n%s", message.c_str(), help);
    return kExitBadInput;
}

std::string labelsText(const std::map<std::string, std::string> &labels)
{
    std::string text;
    for (const auto &[key, value] : labels) text += (text.empty() ? "" : " ") + key + "=" + value;
    return text.empty() ? "(base)" : text;
}

struct FinishedRun {
    int runIndex;
    RunResult result;
};

// What the training thread hands to the main thread. // guarded by mutex
struct SharedState {
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<RunProgress> progress;
    std::deque<FinishedRun> finished;
    bool sweepFinished = false;
};

std::string finishedLine(int position, int count, int runIndex, const SessionRun &run)
{
    const RunResult &r = run.result;
    char buffer[512];
    std::string outcome = toString(r.status);
    if (r.status == RunStatus::Diverged) outcome += " at step " + std::to_string(r.divergedAtStep);
    if (auto it = r.metrics.find(metric::kFinalTestLoss); it != r.metrics.end()) {
        std::snprintf(buffer, sizeof buffer, ", final test loss %.4g", it->second);
        outcome += buffer;
    }
    if (!r.message.empty() && (r.status == RunStatus::Failed || r.status == RunStatus::Diverged))
        outcome += " (" + r.message + ")";
    std::snprintf(buffer, sizeof buffer, "[%d/%d] run %d %s: %s, %s", position, count, runIndex,
                  labelsText(run.labels).c_str(), outcome.c_str(),
                  ProgressDisplay::formatDuration(r.wallSeconds).c_str());
    std::string line = buffer;
    // Text runs: what the final model writes, indented under the run's line.
    for (size_t i = 0; i < r.samples.size(); ++i) {
        std::string sample = r.samples[i];
        for (auto &c : sample)
            if (c == '\n') c = ' ';
        line += "\n    sample " + std::to_string(i + 1) + ": " + sample;
    }
    return line;
}

} // namespace

namespace {

struct RunArguments {
    std::string sessionPath, presetName, outputPath, device;
    int threads = 0, concurrent = 0, maxEnsemble = 0;
    bool overwrite = false;
};

// Parses `run`'s arguments; returns an exit status, or -1 to go on.
int parseRunArguments(const std::vector<std::string> &args, RunArguments *out)
{
    RunArguments &a = *out;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string &arg = args[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= args.size()) return std::nullopt;
            return args[++i];
        };
        if (arg == "-o" || arg == "--output") {
            auto v = value();
            if (!v) return usageError(arg + " needs a file name", kRunHelp);
            a.outputPath = *v;
        } else if (arg == "--preset") {
            auto v = value();
            if (!v) return usageError("--preset needs a name", kRunHelp);
            a.presetName = *v;
        } else if (arg == "--device") {
            auto v = value();
            if (!v) return usageError("--device needs auto, cpu, cuda or cuda:N", kRunHelp);
            a.device = *v;
        } else if (arg == "--overwrite") {
            a.overwrite = true;
        } else if (arg == "--threads" || arg == "--concurrent" || arg == "--max-ensemble") {
            auto v = value();
            char *end = nullptr;
            const long n = v ? std::strtol(v->c_str(), &end, 10) : 0;
            if (!v || end == v->c_str() || *end != '\0' || n < 1 || n > 4096)
                return usageError(arg + " needs a positive number", kRunHelp);
            (arg == "--threads" ? a.threads : arg == "--concurrent" ? a.concurrent : a.maxEnsemble) =
                static_cast<int>(n);
        } else if (!arg.empty() && arg[0] == '-') {
            return usageError("unknown option " + arg, kRunHelp);
        } else if (a.sessionPath.empty()) {
            a.sessionPath = arg;
        } else {
            return usageError("more than one session given: " + a.sessionPath + " and " + arg,
                              kRunHelp);
        }
    }
    if (a.sessionPath.empty() == a.presetName.empty())
        return usageError("give either SESSION.yaml or --preset NAME", kRunHelp);
    // One device, "all" GPUs, or a comma list of devices the sweep spreads its ensembles over.
    auto knownDevice = [](const std::string &d) {
        return d == "auto" || d == "cpu" || d == "cuda" ||
               (d.rfind("cuda:", 0) == 0 && d.size() > 5 &&
                d.find_first_not_of("0123456789", 5) == std::string::npos);
    };
    if (!a.device.empty() && a.device != "all") {
        size_t start = 0;
        for (;;) {
            const size_t comma = a.device.find(',', start);
            const std::string one = a.device.substr(start, comma - start);
            if (!knownDevice(one))
                return usageError("unknown device '" + one +
                                      "' (expected auto, cpu, cuda, cuda:N, a comma list of "
                                      "them, or all)",
                                  kRunHelp);
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    if (a.outputPath.empty())
        a.outputPath = a.presetName.empty() ? a.sessionPath : a.presetName + ".yaml";
    return -1;
}

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

// The experiment and sweep of a session as text: two sessions run the same experiment when
// these are equal.
std::string definitionText(Session session)
{
    session.runs.clear();
    session.skipped.clear();
    session.view.clear();
    session.name.clear();
    session.description.clear();
    session.learnedRule = LearnedRule::LeftLn10Plateau; // how results are read, not what is run
    return sessionToYaml(session);
}

// -o onto a file that already holds results: resume it when it is the same experiment, refuse
// otherwise unless --overwrite, which moves its results aside (never deletes them). Returns an
// exit status, or -1 to go on with `session` (replaced by the existing file's when resuming).
int adoptExistingOutput(const RunArguments &a, Session &session)
{
    if (!fileExists(a.outputPath) || a.outputPath == a.sessionPath) return -1;
    Session existing;
    try {
        existing = loadSession(a.outputPath);
    } catch (const SessionError &e) {
        if (!a.overwrite) {
            std::fprintf(stderr,
                         "headlab-cli: %s\nheadlab-cli: the output %s exists and is not a "
                         "session HeadLab can read; pass --overwrite to replace it\n",
                         e.what(), a.outputPath.c_str());
            return kExitBadInput;
        }
    }
    const int results = countResults(existing);
    if (results == 0 && !a.overwrite) return -1;
    if (!a.overwrite && definitionText(existing) == definitionText(session)) {
        std::fprintf(stderr, "%s holds %d results of the same experiment: resuming it\n",
                     a.outputPath.c_str(), results);
        existing.view.insert(session.view.begin(), session.view.end());
        session = std::move(existing);
        return -1;
    }
    if (!a.overwrite) {
        std::fprintf(stderr,
                     "headlab-cli: %s already holds %d results of a different experiment or "
                     "sweep; refusing to replace them.\n  Choose another -o, or pass --overwrite "
                     "(its results are then moved aside, not deleted).\n",
                     a.outputPath.c_str(), results);
        return kExitBadInput;
    }
    if (results > 0 || fileExists(resultsDirFor(a.outputPath))) {
        const std::string aside =
            resultsDirFor(a.outputPath) + ".replaced-" + std::to_string(std::time(nullptr));
        if (std::rename(resultsDirFor(a.outputPath).c_str(), aside.c_str()) != 0 &&
            errno != ENOENT) {
            std::fprintf(stderr, "headlab-cli: cannot move %s aside: %s\n",
                         resultsDirFor(a.outputPath).c_str(), std::strerror(errno));
            return kExitRunFailed;
        }
        if (fileExists(aside)) {
            const std::string asideSession = aside + "/replaced-session.yaml";
            std::rename(a.outputPath.c_str(), asideSession.c_str());
            std::fprintf(stderr, "--overwrite: the previous results of %s are kept in %s\n",
                         a.outputPath.c_str(), aside.c_str());
        }
    }
    return -1;
}

// Where a result goes when the session's folder cannot take it (a full disk): a rescue folder
// in $TMPDIR (or /tmp), else the text on stderr. Returns where it went.
std::string rescueRun(const SessionRun &run)
{
    const char *tmp = std::getenv("TMPDIR");
    const std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/headlab-rescue-" +
                            std::to_string(::getpid());
    try {
        ::mkdir(dir.c_str(), 0700);
        const std::string file = dir + "/" + runFileName(run.config);
        writeFileAtomic(file, runToYaml(run));
        return file;
    } catch (const std::exception &) {
    }
    std::fprintf(stderr, "----- result of run %s (save it as a .yaml file) -----\n%s-----\n",
                 labelsText(run.labels).c_str(), runToYaml(run).c_str());
    return "stderr above";
}

// SIGINT, SIGTERM and SIGHUP (Ctrl-C, a cluster scheduler, a closing terminal) all ask for a
// clean stop that saves the runs in progress; SA_RESETHAND restores the default action, so a
// second signal ends the process at once.
class StopSignals {
public:
    StopSignals()
    {
        g_signal.store(0);
        struct sigaction action {};
        action.sa_handler = onStopSignal;
        action.sa_flags = SA_RESETHAND;
        sigemptyset(&action.sa_mask);
        for (size_t i = 0; i < std::size(kSignals); ++i)
            sigaction(kSignals[i], &action, &m_previous[i]);
    }
    ~StopSignals()
    {
        for (size_t i = 0; i < std::size(kSignals); ++i)
            sigaction(kSignals[i], &m_previous[i], nullptr);
    }
    static int received() { return g_signal.load(); }

private:
    static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
    static inline std::atomic<int> g_signal{0};
    static void onStopSignal(int signal) { g_signal.store(signal); }
    struct sigaction m_previous[std::size(kSignals)] {};
};

int countStatus(const Session &session, RunStatus status)
{
    return static_cast<int>(std::count_if(session.runs.begin(), session.runs.end(),
                                           [&](const SessionRun &r) {
                                               return r.result.status == status;
                                           }));
}

} // namespace

int runCommand(const std::vector<std::string> &args)
{
    if (wantsHelp(args)) {
        std::fputs(kRunHelp, stdout);
        return kExitOk;
    }
    RunArguments a;
    if (const int status = parseRunArguments(args, &a); status >= 0) return status;

    Session session;
    std::unique_ptr<SessionStore> store;
    try {
        session = a.presetName.empty() ? loadSession(a.sessionPath) : loadPreset(a.presetName);
        if (const int status = adoptExistingOutput(a, session); status >= 0) return status;
        expandSweep(session);
        store = std::make_unique<SessionStore>(a.outputPath);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }

    for (const auto &s : session.skipped)
        std::fprintf(stderr, "skipped %s: %s\n", labelsText(s.labels).c_str(), s.reason.c_str());
    const std::vector<int> pending = pendingRuns(session);
    std::fprintf(stderr,
                 "%s: %zu runs, %zu already finished, %zu to train, %zu skipped; saving to %s\n",
                 session.name.empty() ? "session" : session.name.c_str(), session.runs.size(),
                 session.runs.size() - pending.size(), pending.size(), session.skipped.size(),
                 a.outputPath.c_str());
    try {
        store->saveSession(session);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\nheadlab-cli: nothing was trained\n", e.what());
        return kExitRunFailed;
    }
    if (pending.empty()) return kExitOk;

    std::vector<SweepJob> jobs;
    int64_t totalSteps = 0;
    for (int index : pending) {
        jobs.push_back({index, session.runs[static_cast<size_t>(index)].config});
        totalSteps += session.runs[static_cast<size_t>(index)].config.totalSteps();
    }
    SweepOptions options;
    options.device = a.device; // empty: each run's own device
    options.threads = a.threads;
    options.concurrent = a.concurrent;
    options.maxEnsemble = a.maxEnsemble;

    SharedState shared;
    SweepCallbacks callbacks;
    callbacks.onProgress = [&shared](const RunProgress &p) {
        std::lock_guard lock(shared.mutex);
        shared.progress.push_back(p);
        shared.changed.notify_one();
    };
    callbacks.onRunFinished = [&shared](int runIndex, const RunResult &result) {
        std::lock_guard lock(shared.mutex);
        shared.finished.push_back({runIndex, result});
        shared.changed.notify_one();
    };
    callbacks.onSweepFinished = [&shared] {
        std::lock_guard lock(shared.mutex);
        shared.sweepFinished = true;
        shared.changed.notify_one();
    };

    StopSignals signals;
    const auto started = std::chrono::steady_clock::now();
    ProgressDisplay display(stderr, totalSteps, static_cast<int>(jobs.size()));
    SweepRunner runner;
    if (!runner.start(std::move(jobs), options, callbacks)) {
        std::fprintf(stderr, "headlab-cli: the sweep runner did not start\n");
        return kExitRunFailed;
    }

    int finishedCount = 0, failedCount = 0;
    std::vector<std::string> unsaved; // where each result that missed its file went
    bool stopRequested = false;
    // Each finished run is written to its own file at once; if that fails (a full disk), the
    // sweep stops: training on would only make more results with nowhere to go.
    auto handleFinished = [&](std::deque<FinishedRun> &finished) {
        for (auto &f : finished) {
            if (f.runIndex < 0 || static_cast<size_t>(f.runIndex) >= session.runs.size()) continue;
            SessionRun &run = session.runs[static_cast<size_t>(f.runIndex)];
            run.result = std::move(f.result);
            ++finishedCount;
            if (run.result.status == RunStatus::Failed) ++failedCount;
            // A stopped run counts only the steps it did, so the bar does not jump to 100%.
            display.runFinished(f.runIndex,
                                run.result.status == RunStatus::Stopped
                                    ? std::min(run.result.stepsDone, run.config.totalSteps())
                                    : run.config.totalSteps());
            display.printLine(
                finishedLine(finishedCount, static_cast<int>(pending.size()), f.runIndex, run));
            try {
                store->saveRun(run, /*syncDirectory=*/false); // one sync for the batch, below
            } catch (const SessionError &e) {
                const std::string where = rescueRun(run);
                unsaved.push_back(where);
                display.printLine(std::string(e.what()) + "\nheadlab-cli: run " +
                                  std::to_string(f.runIndex) + "'s result was written to " +
                                  where + " instead");
                if (!stopRequested) {
                    stopRequested = true;
                    display.printLine("headlab-cli: stopping the sweep: results cannot be saved");
                    runner.stop();
                }
            }
        }
        if (!finished.empty()) store->syncRuns();
        finished.clear();
    };

    for (;;) {
        std::deque<RunProgress> progress;
        std::deque<FinishedRun> finished;
        bool sweepFinished = false;
        {
            std::unique_lock lock(shared.mutex);
            shared.changed.wait_for(lock, std::chrono::milliseconds(100), [&] {
                return !shared.finished.empty() || shared.sweepFinished ||
                       StopSignals::received() != 0;
            });
            progress.swap(shared.progress);
            finished.swap(shared.finished);
            sweepFinished = shared.sweepFinished;
        }
        for (const auto &p : progress) display.update(p);
        handleFinished(finished);
        if (StopSignals::received() != 0 && !stopRequested) {
            stopRequested = true;
            display.printLine(std::string(strsignal(StopSignals::received())) +
                              ": stopping the runs in progress and saving (again to quit at "
                              "once)");
            runner.stop();
        }
        if (sweepFinished || !runner.isRunning()) break;
        display.draw();
    }
    runner.wait();
    {
        std::deque<FinishedRun> finished;
        {
            std::lock_guard lock(shared.mutex);
            finished.swap(shared.finished);
        }
        handleFinished(finished);
    }
    display.draw(true);
    display.finish();

    bool indexSaved = unsaved.empty();
    if (indexSaved) {
        try {
            store->saveSession(session);
        } catch (const SessionError &e) {
            std::fprintf(stderr, "%s\n", e.what());
            indexSaved = false;
        }
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const int unfinished = static_cast<int>(session.runs.size()) -
                           countStatus(session, RunStatus::Done) -
                           countStatus(session, RunStatus::Diverged) -
                           countStatus(session, RunStatus::Failed);
    std::fprintf(stderr, "%s: %d done, %d diverged, %d failed, %d not finished; ",
                 session.name.empty() ? "session" : session.name.c_str(),
                 countStatus(session, RunStatus::Done), countStatus(session, RunStatus::Diverged),
                 countStatus(session, RunStatus::Failed), unfinished);
    if (!unsaved.empty()) {
        std::fprintf(stderr, "NOT all saved: %zu results are not in %s (see the lines above)\n",
                     unsaved.size(), store->resultsDir().c_str());
    } else if (!indexSaved) {
        std::fprintf(stderr,
                     "every result is in %s, but the session file %s could not be written\n",
                     store->resultsDir().c_str(), a.outputPath.c_str());
    } else {
        std::fprintf(stderr, "saved %s (results in %s; %.2f s of %.1f s spent saving)\n",
                     a.outputPath.c_str(), store->resultsDir().c_str(), store->secondsSaving(),
                     wall);
    }
    if (!unsaved.empty() || !indexSaved) return kExitRunFailed;
    if (stopRequested) return 128 + StopSignals::received();
    if (failedCount > 0) return kExitRunFailed;
    return kExitOk;
}

int validateCommand(const std::vector<std::string> &args)
{
    if (wantsHelp(args)) {
        std::fputs(kValidateHelp, stdout);
        return kExitOk;
    }
    if (args.size() != 1 || args[0].empty() || args[0][0] == '-')
        return usageError("validate takes one SESSION.yaml", kValidateHelp);
    Session session;
    try {
        session = loadSession(args[0]);
        expandSweep(session);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    const size_t pending = pendingRuns(session).size();
    std::printf(
        "%s: valid session '%s' (schema %d): %zu runs (%zu finished, %zu to run), %zu skipped\n",
        args[0].c_str(), session.name.c_str(), session.schemaVersion, session.runs.size(),
        session.runs.size() - pending, pending, session.skipped.size());
    for (const auto &s : session.skipped)
        std::printf("  skipped %s: %s\n", labelsText(s.labels).c_str(), s.reason.c_str());
    return kExitOk;
}

int presetsCommand(const std::vector<std::string> &args)
{
    if (wantsHelp(args)) {
        std::fputs(kPresetsHelp, stdout);
        return kExitOk;
    }
    if (!args.empty()) return usageError("presets takes no arguments", kPresetsHelp);
    const auto presets = builtinPresets();
    size_t width = 0;
    for (const auto &p : presets) width = std::max(width, p.name.size());
    for (const auto &p : presets)
        std::printf("%-*s  %s\n", static_cast<int>(width), p.name.c_str(), p.description.c_str());
    return kExitOk;
}

namespace {

// The arguments of the export commands, SESSION.yaml -o TARGET: an exit status, or -1 to go on.
int parseExportArguments(const std::vector<std::string> &args, const char *help,
                         const char *target, std::string *sessionPath, std::string *output)
{
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "-o" || args[i] == "--output") {
            if (i + 1 >= args.size()) return usageError(std::string("-o needs ") + target, help);
            *output = args[++i];
        } else if (!args[i].empty() && args[i][0] == '-') {
            return usageError("unknown option " + args[i], help);
        } else if (sessionPath->empty()) {
            *sessionPath = args[i];
        } else {
            return usageError("more than one session given", help);
        }
    }
    if (sessionPath->empty() || output->empty())
        return usageError(std::string("give SESSION.yaml and -o ") + target, help);
    return -1;
}

} // namespace

int exportCsvCommand(const std::vector<std::string> &args)
{
    if (wantsHelp(args)) {
        std::fputs(kExportHelp, stdout);
        return kExitOk;
    }
    std::string sessionPath, directory;
    if (const int status = parseExportArguments(args, kExportHelp, "DIR", &sessionPath, &directory);
        status >= 0)
        return status;
    try {
        const Session session = loadSession(sessionPath);
        const CsvExportSummary summary = exportSessionCsv(session, directory);
        std::printf("wrote %s (%zu runs) and %s (%zu points)\n", summary.runsPath.c_str(),
                    summary.runs, summary.curvesPath.c_str(), summary.points);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    return kExitOk;
}

int exportYamlCommand(const std::vector<std::string> &args)
{
    if (wantsHelp(args)) {
        std::fputs(kExportYamlHelp, stdout);
        return kExitOk;
    }
    std::string sessionPath, output;
    if (const int status =
            parseExportArguments(args, kExportYamlHelp, "FILE.yaml", &sessionPath, &output);
        status >= 0)
        return status;
    try {
        const Session session = loadSession(sessionPath);
        saveSessionAtomic(session, output);
        std::printf("wrote %s (%zu runs)\n", output.c_str(), session.runs.size());
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    return kExitOk;
}

namespace {

int dispatch(const std::string &command, const std::vector<std::string> &args)
{
    if (command == "run") return runCommand(args);
    if (command == "validate") return validateCommand(args);
    if (command == "presets") return presetsCommand(args);
    if (command == "export-csv") return exportCsvCommand(args);
    if (command == "export-yaml") return exportYamlCommand(args);
    std::fprintf(stderr, "headlab-cli: unknown command '%s'\n\n%s", command.c_str(), kUsage);
    return kExitBadInput;
}

} // namespace

int runCli(int argc, char **argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::fputs(kUsage, stderr);
        return kExitBadInput;
    }
    const std::string command = args.front();
    args.erase(args.begin());
    if (command == "-h" || command == "--help" || command == "help") {
        std::fputs(kUsage, stdout);
        return kExitOk;
    }
    // Nothing ends the process with an uncaught exception: the limits keep sessions from asking
    // for absurd memory, and whatever still escapes gets a message and exit 1.
    try {
        return dispatch(command, args);
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "headlab-cli: out of memory; the session asks for more than this "
                             "machine has\n");
    } catch (const std::exception &e) {
        std::fprintf(stderr, "headlab-cli: %s\n", e.what());
    }
    return kExitRunFailed;
}

} // namespace headlab::cli
