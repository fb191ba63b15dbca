// CliCommands.cpp — headlab-cli: its command table (CLI11), and each command on top of the core.
//
// The arguments, the usage lines and every --help text come from the CLI11 definitions in
// addCommands(); a command is one row there and one function below. Sweeps run and store their
// results the way the app does (core/lab/SweepSession.h).
#include "CliCommands.h"

#include "InspectCommand.h"
#include "ProgressDisplay.h"
#include "SlurmCommand.h"

#include "core/lab/SweepSession.h"
#include "core/metrics/Metrics.h"
#include "core/model/Device.h"
#include "core/session/CsvExport.h"
#include "core/session/Presets.h"
#include "core/session/Replicates.h"
#include "core/session/Search.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"
#include "core/tasks/TaskSpec.h"
#include "core/train/Checkpoint.h"
#include "core/train/SweepRunner.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

namespace headlab::cli {

Session loadSessionReporting(const std::string &path)
{
    Session session = loadSession(path);
    for (const auto &line : session.unreadableRunFiles) std::fprintf(stderr, "%s\n", line.c_str());
    return session;
}

Session loadSweepRuns(const std::string &path)
{
    Session session = loadSessionReporting(path);
    for (const auto &line : setAsideRunsOutsideTheSweep(session, path))
        std::fprintf(stderr, "%s\n", line.c_str());
    return session;
}

namespace {

// "Inputs: addition: …; nearest_neighbour: …": each task's row says what its input is.
std::string inspectInputsHelp()
{
    std::string out = "Inputs, by task:";
    for (const TaskSpec *spec : taskTable()) out += "\n  " + spec->id + ": " + spec->inputHelp;
    return out;
}

const char *kExitStatus =
    "Exit status: 0 success; 1 a run failed with an error or results could not be saved;\n"
    "2 bad input (usage, invalid session, unknown preset, an output that holds other results);\n"
    "128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; results saved).\n"
    "The session format is described in docs/SESSION_FORMAT.md.";

std::string labelsText(const std::map<std::string, std::string> &labels)
{
    std::string text;
    for (const auto &[key, value] : labels) text += (text.empty() ? "" : " ") + key + "=" + value;
    return text.empty() ? "(base)" : text;
}

// Says which settings outside the config differ between the session's runs (RunResult::provenance).
void printProvenanceSpread(const Session &session, std::FILE *stream)
{
    const auto spread = provenanceSpread(session);
    if (spread.empty()) return;
    std::fprintf(stream, "runs of this session were trained under different settings:\n");
    for (const auto &line : spread) std::fprintf(stream, "  %s\n", line.c_str());
}

// ---------------------------------------------------------------------------------------------
// run

struct RunArguments {
    std::string sessionPath, presetName, outputPath, device, shard;
    bool shardGiven = false; // --shard "" is a mistake, not the whole sweep
    int threads = 0, concurrent = 0, maxEnsemble = 0;
    double progressEvery = 10.0; // seconds between plain progress lines (stderr not a terminal)
    bool overwrite = false;
};

// "I/N" (1-based), or, without --shard inside a Slurm array task, SLURM_ARRAY_TASK_ID (less
// SLURM_ARRAY_TASK_MIN) of SLURM_ARRAY_TASK_COUNT. An inactive shard: the whole sweep.
StoreShard parseShard(const std::string &text, bool given, std::string *error)
{
    StoreShard shard;
    auto number = [](const std::string &t, long *out) {
        char *end = nullptr;
        *out = std::strtol(t.c_str(), &end, 10);
        return !t.empty() && end && *end == '\0';
    };
    if (given || !text.empty()) {
        const auto slash = text.find('/');
        long i = 0, n = 0;
        if (slash == std::string::npos || !number(text.substr(0, slash), &i) ||
            !number(text.substr(slash + 1), &n) || n < 1 || n > 100000 || i < 1 || i > n) {
            *error = "--shard: expected I/N with 1 <= I <= N (e.g. 2/8), got '" + text + "'";
            return shard;
        }
        return {int(i - 1), int(n)};
    }
    const char *id = std::getenv("SLURM_ARRAY_TASK_ID");
    const char *count = std::getenv("SLURM_ARRAY_TASK_COUNT");
    if (!id || !count) return shard;
    const char *minimum = std::getenv("SLURM_ARRAY_TASK_MIN");
    long i = 0, n = 0, lo = 0;
    if (!number(id, &i) || !number(count, &n) || (minimum && !number(minimum, &lo)) || n < 1 ||
        i - lo < 0 || i - lo >= n) {
        *error = std::string("SLURM_ARRAY_TASK_ID=") + id + " of SLURM_ARRAY_TASK_COUNT=" + count +
                 " is not a shard (use --array 0-(N-1) or 1-N)";
        return shard;
    }
    return {int(i - lo), int(n)};
}

// auto, cpu, cuda, cuda:N, a comma list of them, or all.
const CLI::Validator kDeviceList(
    [](std::string &value) -> std::string {
        if (value == "all") return {};
        size_t start = 0;
        for (;;) {
            const size_t comma = value.find(',', start);
            const std::string one = value.substr(start, comma - start);
            const bool known = one == "auto" || one == "cpu" || one == "cuda" ||
                               (one.rfind("cuda:", 0) == 0 && one.size() > 5 &&
                                one.find_first_not_of("0123456789", 5) == std::string::npos);
            if (!known)
                return "unknown device '" + one +
                       "' (expected auto, cpu, cuda, cuda:N, a comma list of them, or all)";
            if (comma == std::string::npos) return {};
            start = comma + 1;
        }
    },
    "DEVICE");

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
        std::replace(sample.begin(), sample.end(), '\n', ' ');
        line += "\n    sample " + std::to_string(i + 1) + ": " + sample;
    }
    return line;
}

// SIGINT, SIGTERM and SIGHUP (Ctrl-C, a cluster scheduler, a closing terminal) all ask for a
// clean stop that saves the runs in progress. For SIGINT and SIGHUP, SA_RESETHAND restores the
// default action, so a second Ctrl-C ends the process at once. SIGTERM may come more than once
// for one stop — Slurm sends it to every process of a cancelled or preempted job, and the batch
// script passes its own on — so a repeated SIGTERM does not cut the saving short (SIGKILL does).
class StopSignals {
public:
    StopSignals()
    {
        g_signal.store(0);
        for (size_t i = 0; i < std::size(kSignals); ++i) {
            struct sigaction action {};
            action.sa_handler = onStopSignal;
            action.sa_flags = kSignals[i] == SIGTERM ? 0 : SA_RESETHAND;
            sigemptyset(&action.sa_mask);
            sigaction(kSignals[i], &action, &m_previous[i]);
        }
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
    struct sigaction m_previous[std::size(kSignals)]{};
};

// The training thread's reports, handed to the main thread. // guarded by mutex
struct Reports {
    struct Finished {
        int runIndex;
        RunResult result;
    };
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<RunProgress> progress;
    std::deque<Finished> finished;
    bool sweepFinished = false;

    SweepCallbacks callbacks()
    {
        SweepCallbacks c;
        c.onProgress = [this](const RunProgress &p) { push([&] { progress.push_back(p); }); };
        c.onRunFinished = [this](int runIndex, const RunResult &r) {
            push([&] { finished.push_back({runIndex, r}); });
        };
        c.onSweepFinished = [this] { push([&] { sweepFinished = true; }); };
        return c;
    }

private:
    void push(const std::function<void()> &add)
    {
        std::lock_guard lock(mutex);
        add();
        changed.notify_one();
    }
};

// Trains the pending runs of `session`, storing each result as it finishes; returns the exit
// status. The main thread draws progress, stores results and watches for stop signals.
class RunLoop {
public:
    RunLoop(Session &session, SessionStore &store, const RunArguments &a, StoreShard shard = {})
        : m_session(session)
        , m_store(store)
        , m_args(a)
        , m_shard(shard)
    {}

    int run()
    {
        std::vector<SweepJob> jobs = pendingJobs(m_session);
        if (m_shard.active()) {
            // The parts are of the whole sweep, not of what is pending, so that a task that runs
            // after others finished (or again after a failure) still trains its own part.
            std::vector<SweepJob> all;
            for (size_t i = 0; i < m_session.runs.size(); ++i)
                all.push_back({int(i), m_session.runs[i].config});
            std::set<int> mine;
            for (const auto &job : shardJobs(all, m_shard.index, m_shard.count))
                mine.insert(job.runIndex);
            std::erase_if(jobs, [&](const SweepJob &job) { return !mine.count(job.runIndex); });
        }
        for (const auto &note : attachCheckpoints(jobs, m_session, m_store.sessionPath()))
            std::fprintf(stderr, "%s\n", note.c_str());
        int64_t totalSteps = 0, resumedSteps = 0, resumed = 0;
        for (const auto &job : jobs) {
            totalSteps += job.config.totalSteps();
            if (!job.resumeFrom.empty()) {
                resumedSteps += job.resumeStep;
                ++resumed;
            }
        }
        if (resumed > 0)
            std::fprintf(
                stderr, "resuming %lld run%s from checkpoints (%lld of their steps already done)\n",
                static_cast<long long>(resumed), resumed == 1 ? "" : "s",
                static_cast<long long>(resumedSteps));
        m_pending = static_cast<int>(jobs.size());
        SweepOptions options;
        options.checkpoints = m_session.checkpoints;
        options.device = m_args.device; // empty: each run's own device
        options.threads = m_args.threads;
        options.concurrent = m_args.concurrent;
        options.maxEnsemble = m_args.maxEnsemble;

        const auto started = std::chrono::steady_clock::now();
        m_display =
            std::make_unique<ProgressDisplay>(stderr, totalSteps, m_pending, m_args.progressEvery);
        if (!m_runner.start(std::move(jobs), options, m_reports.callbacks())) {
            std::fprintf(stderr, "headlab-cli: the sweep runner did not start\n");
            return kExitRunFailed;
        }
        for (;;) {
            const bool sweepFinished = drain(std::chrono::milliseconds(100));
            if (StopSignals::received() != 0 && !m_stopRequested) {
                stop(std::string(strsignal(StopSignals::received())) +
                     ": stopping the runs in progress and saving" +
                     (StopSignals::received() == SIGTERM ? "" : " (again to quit at once)"));
            }
            if (sweepFinished || !m_runner.isRunning()) break;
            m_display->draw();
        }
        m_runner.wait();
        drain(std::chrono::milliseconds(0));
        m_display->draw(true);
        m_display->finish();
        return summarise(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }

private:
    // Moves the reports into the display, the session and the store; true once the sweep ended.
    bool drain(std::chrono::milliseconds wait)
    {
        std::deque<RunProgress> progress;
        std::deque<Reports::Finished> finished;
        bool sweepFinished = false;
        {
            std::unique_lock lock(m_reports.mutex);
            if (wait.count() > 0)
                m_reports.changed.wait_for(lock, wait, [&] {
                    return !m_reports.finished.empty() || m_reports.sweepFinished ||
                           StopSignals::received() != 0;
                });
            progress.swap(m_reports.progress);
            finished.swap(m_reports.finished);
            sweepFinished = m_reports.sweepFinished;
        }
        for (const auto &p : progress) m_display->update(p);
        for (auto &f : finished) record(f.runIndex, std::move(f.result));
        if (!finished.empty()) m_store.syncRuns();
        return sweepFinished;
    }

    void record(int runIndex, RunResult result)
    {
        if (runIndex < 0 || static_cast<size_t>(runIndex) >= m_session.runs.size()) return;
        SessionRun &run = m_session.runs[static_cast<size_t>(runIndex)];
        run.result = std::move(result);
        ++m_finished;
        m_failed += run.result.status == RunStatus::Failed;
        // A stopped run counts only the steps it did, so the bar does not jump to 100%.
        m_display->runFinished(runIndex,
                               run.result.status == RunStatus::Stopped
                                   ? std::min(run.result.stepsDone, run.config.totalSteps())
                                   : run.config.totalSteps());
        // Stored before it is reported: a line that says a run finished means its file is written
        // (the directory is synced once per batch, in drain()).
        const StoredResult stored = storeResult(m_store, run, /*syncDirectory=*/false);
        m_display->printLine(finishedLine(m_finished, m_pending, runIndex, run));
        if (stored.saved) {
            keepWithinCheckpointBudget();
            return;
        }
        m_unsaved.push_back(stored.rescuedTo);
        m_display->printLine(stored.error + "\nheadlab-cli: run " + std::to_string(runIndex) +
                             "'s result was written to " + stored.rescuedTo + " instead");
        // Training on would only make more results with nowhere to go.
        if (!m_stopRequested) stop("headlab-cli: stopping the sweep: results cannot be saved");
    }

    // The session's checkpoint budget: finished runs' checkpoints pruned as it says, their run
    // files saved again. Not in a shard, which writes only its own runs' files.
    void keepWithinCheckpointBudget()
    {
        if (m_shard.active()) return;
        const BudgetOutcome outcome = enforceCheckpointBudget(m_session, m_store.sessionPath());
        for (int i : outcome.changedRuns)
            storeResult(m_store, m_session.runs[size_t(i)], /*syncDirectory=*/false);
        if (!outcome.note.empty()) m_display->printLine(outcome.note);
    }

    void stop(const std::string &why)
    {
        m_stopRequested = true;
        m_display->printLine(why);
        m_runner.stop();
    }

    int summarise(double wall)
    {
        bool indexSaved = m_unsaved.empty();
        if (indexSaved &&
            m_shard.active()) { // a shard writes only its runs; merge writes the session
            std::fprintf(stderr,
                         "shard %d/%d: %d runs trained, %d failed; results in %s (headlab-cli "
                         "merge %s folds them in)\n",
                         m_shard.index + 1, m_shard.count, m_finished, m_failed,
                         m_store.resultsDir().c_str(), m_args.outputPath.c_str());
            if (!m_unsaved.empty()) return kExitRunFailed;
            if (m_stopRequested && StopSignals::received() != 0)
                return 128 + StopSignals::received();
            return m_failed > 0 ? kExitRunFailed : kExitOk;
        }
        if (indexSaved) {
            try {
                m_store.saveSession(m_session);
            } catch (const SessionError &e) {
                std::fprintf(stderr, "%s\n", e.what());
                indexSaved = false;
            }
        }
        const SweepCounts c = countRuns(m_session);
        std::fprintf(stderr, "%s: %d done, %d diverged, %d failed, %d not finished; ",
                     m_session.name.empty() ? "session" : m_session.name.c_str(), c.done,
                     c.diverged, c.failed, c.unfinished);
        if (!m_unsaved.empty())
            std::fprintf(stderr, "NOT all saved: %zu results are not in %s (see the lines above)\n",
                         m_unsaved.size(), m_store.resultsDir().c_str());
        else if (!indexSaved)
            std::fprintf(stderr,
                         "every result is in %s, but the session file %s could not be written\n",
                         m_store.resultsDir().c_str(), m_args.outputPath.c_str());
        else
            std::fprintf(stderr, "saved %s (results in %s; %.2f s of %.1f s spent saving)\n",
                         m_args.outputPath.c_str(), m_store.resultsDir().c_str(),
                         m_store.secondsSaving(), wall);
        printProvenanceSpread(m_session, stderr);
        if (!m_unsaved.empty() || !indexSaved) return kExitRunFailed;
        if (m_stopRequested && StopSignals::received() != 0) return 128 + StopSignals::received();
        return m_failed > 0 ? kExitRunFailed : kExitOk;
    }

    Session &m_session;
    SessionStore &m_store;
    const RunArguments &m_args;
    StoreShard m_shard;
    SweepRunner m_runner;
    Reports m_reports;
    std::unique_ptr<ProgressDisplay> m_display;
    int m_pending = 0, m_finished = 0, m_failed = 0;
    bool m_stopRequested = false;
    std::vector<std::string> m_unsaved; // where each result that missed its file went
};

// A boundary search: trains the planned round, plans the next from its results, and so on until
// every configuration has stopped; each round's plan is saved before it trains, so that a killed
// search resumes with the same rounds. A shard trains its part of the current round only.
int runSearch(Session &session, SessionStore &store, const RunArguments &a, StoreShard shard,
              size_t pending)
{
    for (;;) {
        if (pending > 0) {
            const int status = RunLoop(session, store, a, shard).run();
            if (status != kExitOk || shard.active()) return status;
        }
        const int added = planSearchRound(session);
        if (added == 0) break;
        try {
            store.saveSession(session);
        } catch (const SessionError &e) {
            std::fprintf(stderr, "%s\nheadlab-cli: the next round was not trained\n", e.what());
            return kExitRunFailed;
        }
        std::fprintf(stderr, "round %d: %d runs to train\n", session.search->probes.back().round,
                     added);
        pending = pendingRuns(session).size();
    }
    std::fputs(searchSummaryText(searchReport(session)).c_str(), stdout);
    return kExitOk;
}

int runCommand(RunArguments a)
{
    // From the start: a signal while the sweep is read and prepared (seconds for a large one) is
    // kept and stops the sweep before any run trains; it used to end the process with the
    // default action (exit -15, not 143).
    StopSignals signals;
    if (a.sessionPath.empty() == a.presetName.empty()) {
        std::fprintf(stderr,
                     "headlab-cli run: give either SESSION.yaml or --preset NAME (see --help)\n");
        return kExitBadInput;
    }
    std::string shardError;
    const StoreShard shard = parseShard(a.shard, a.shardGiven, &shardError);
    if (!shardError.empty()) {
        std::fprintf(stderr, "headlab-cli run: %s\n", shardError.c_str());
        return kExitBadInput;
    }
    if (shard.active() &&
        (a.sessionPath.empty() || (!a.outputPath.empty() && a.outputPath != a.sessionPath))) {
        std::fprintf(
            stderr,
            "headlab-cli run: a shard writes into SESSION.results beside its session file: give "
            "SESSION.yaml and no -o\n");
        return kExitBadInput;
    }
    if (a.outputPath.empty())
        a.outputPath = a.presetName.empty() ? a.sessionPath : a.presetName + ".yaml";
    if (!a.device.empty()) {
        if (const std::string why = checkDeviceSpec(a.device); !why.empty()) {
            std::fprintf(stderr, "headlab-cli run: --device: %s\n", why.c_str());
            return kExitBadInput;
        }
    }
    Session session;
    std::unique_ptr<SessionStore> store;
    try {
        session =
            a.presetName.empty() ? loadSessionReporting(a.sessionPath) : loadPreset(a.presetName);
        if (a.outputPath != a.sessionPath) {
            // Written elsewhere: the task's relative file paths become absolute, so they resolve there.
            // (A preset has no directory: its paths stay relative to the working directory.)
            std::error_code error;
            if (!a.sessionPath.empty() &&
                std::filesystem::absolute(a.outputPath, error).parent_path() !=
                    std::filesystem::absolute(a.sessionPath, error).parent_path())
                anchorTaskPaths(session);
            const OutputPlan plan = planOutput(session, a.outputPath, a.overwrite);
            if (plan.kind == OutputPlan::Kind::Refuse) {
                std::fprintf(stderr, "headlab-cli: %s\n", plan.message.c_str());
                return kExitBadInput;
            }
            if (!plan.message.empty()) std::fprintf(stderr, "%s\n", plan.message.c_str());
        }
        expandSweep(session);
        // A search whose last round has finished (or that has none yet) plans its next round
        // before anything trains; a shard trains the round it finds (merge plans the next).
        if (session.search && !shard.active()) planSearchRound(session);
        store = std::make_unique<SessionStore>(a.outputPath, shard);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    for (const auto &s : session.skipped)
        std::fprintf(stderr, "skipped %s: %s\n", labelsText(s.labels).c_str(), s.reason.c_str());
    const size_t pending = pendingRuns(session).size();
    std::fprintf(
        stderr, "%s: %zu runs, %zu already finished, %zu to train, %zu skipped; saving to %s\n",
        session.name.empty() ? "session" : session.name.c_str(), session.runs.size(),
        session.runs.size() - pending, pending, session.skipped.size(), a.outputPath.c_str());
    if (session.runs.empty() && !session.skipped.empty()) {
        std::fprintf(stderr, "headlab-cli: nothing can run: every combination of the sweep is "
                             "skipped (why is above)\n");
        return kExitBadInput;
    }
    if (!shard.active()) {
        try {
            store->saveSession(session);
        } catch (const SessionError &e) {
            std::fprintf(stderr, "%s\nheadlab-cli: nothing was trained\n", e.what());
            return kExitRunFailed;
        }
    }
    if (!session.search) {
        if (pending == 0) return kExitOk;
        return RunLoop(session, *store, a, shard).run();
    }
    return runSearch(session, *store, a, shard, pending);
}

// ---------------------------------------------------------------------------------------------
// validate, presets, export-csv, export-yaml

int validateCommand(const std::string &path)
{
    Session session;
    try {
        session = loadSessionReporting(path);
        expandSweep(session);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    const size_t pending = pendingRuns(session).size();
    std::printf(
        "%s: valid session '%s' (schema %d): %zu runs (%zu finished, %zu to run), %zu skipped\n",
        path.c_str(), session.name.c_str(), session.schemaVersion, session.runs.size(),
        session.runs.size() - pending, pending, session.skipped.size());
    if (session.search) {
        // What run would train next: the current round, or the next one it plans.
        Session next = session;
        const int planned = pending == 0 ? planSearchRound(next) : 0;
        const SearchReport report = searchReport(session);
        std::printf("  a boundary search along %s over %zu configurations: %d rounds so far, %s\n",
                    session.search->axis.c_str(), report.configurations.size(), report.rounds,
                    report.finished ? "finished"
                    : pending > 0
                        ? (std::to_string(pending) + " runs of the current round to train").c_str()
                        : ("the next round trains " + std::to_string(planned) + " runs").c_str());
        for (const auto &s : next.skipped)
            std::printf("  skipped %s: %s\n", labelsText(s.labels).c_str(), s.reason.c_str());
    }
    for (const auto &s : session.skipped)
        std::printf("  skipped %s: %s\n", labelsText(s.labels).c_str(), s.reason.c_str());
    printProvenanceSpread(session, stdout);
    if (session.runs.empty() && !session.skipped.empty()) {
        std::fprintf(
            stderr,
            "%s: nothing can run: every combination of the sweep is skipped (why is above)\n",
            path.c_str());
        return kExitBadInput;
    }
    return kExitOk;
}

int presetsCommand()
{
    const auto presets = builtinPresets();
    size_t width = 0;
    for (const auto &p : presets) width = std::max(width, p.name.size());
    for (const auto &p : presets)
        std::printf("%-*s  %s\n", static_cast<int>(width), p.name.c_str(), p.description.c_str());
    return kExitOk;
}

int exportCsvCommand(const std::string &sessionPath, const std::string &directory)
{
    try {
        const CsvExportSummary summary = exportSessionCsv(loadSweepRuns(sessionPath), directory);
        std::printf("wrote %s (%zu runs) and %s (%zu points)\n", summary.runsPath.c_str(),
                    summary.runs, summary.curvesPath.c_str(), summary.points);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    return kExitOk;
}

int exportYamlCommand(const std::string &sessionPath, const std::string &output)
{
    try {
        const Session session = loadSweepRuns(sessionPath);
        saveSessionAtomic(session, output);
        std::printf("wrote %s (%zu runs)\n", output.c_str(), session.runs.size());
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    return kExitOk;
}

// Folds the shards' run files into the session file (atomic, idempotent; takes what has finished
// while shards still run). Run files that are not runs of the session's sweep are named and left
// where they are.
int mergeCommand(const std::string &sessionPath)
{
    try {
        Session session = loadSweepRuns(sessionPath);
        expandSweep(session);
        // A search plans its next round from the merged results (once all shards are done).
        const int planned = session.search && SessionStore::runningShards(sessionPath).empty()
                                ? planSearchRound(session)
                                : 0;
        SessionStore store(sessionPath, {}, SessionStore::Role::Merger);
        store.saveSession(session);
        if (session.search) {
            const SearchReport report = searchReport(session);
            if (planned > 0)
                std::printf("%s: round %d planned: %d runs to train (run the shards again)\n",
                            sessionPath.c_str(), report.rounds - 1, planned);
            else if (report.finished)
                std::printf("%s: the search is finished\n", sessionPath.c_str());
        }
        const SweepCounts c = countRuns(session);
        std::printf(
            "%s: merged %d results (%d done, %d diverged, %d failed), %d runs still to train\n",
            sessionPath.c_str(), c.done + c.diverged + c.failed, c.done, c.diverged, c.failed,
            c.unfinished);
        for (const auto &line : SessionStore::runningShards(sessionPath))
            std::printf("  still running: %s\n", line.c_str());
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    return kExitOk;
}

// Frees the disk of finished runs' checkpoints, keeping those whose reason is in `keep`.
int pruneCommand(const std::string &sessionPath, const std::vector<std::string> &keepList,
                 bool dryRun)
{
    static const std::set<std::string> kReasons = {"final", "periodic", "stop", "plateau_entry",
                                                   "plateau_exit"};
    std::set<std::string> keep;
    for (const auto &reason : keepList) {
        if (reason == "plateau") {
            keep.insert({"plateau_entry", "plateau_exit"});
        } else if (reason == "none") {
        } else if (kReasons.count(reason)) {
            keep.insert(reason);
        } else {
            std::fprintf(stderr,
                         "headlab-cli prune: --keep: '%s' is not a checkpoint reason (final, "
                         "plateau, plateau_entry, plateau_exit, periodic, stop, none)\n",
                         reason.c_str());
            return kExitBadInput;
        }
    }
    try {
        Session session = loadSweepRuns(sessionPath);
        expandSweep(session);
        // The session's writer lock: never while it trains (its runs' checkpoints are in use).
        std::optional<SessionStore> store;
        if (!dryRun) store.emplace(sessionPath);
        const PruneSummary p = pruneCheckpoints(session, sessionPath, keep, dryRun);
        if (store) store->saveSession(session);
        std::string kept;
        for (const auto &k : keep) kept += (kept.empty() ? "" : ", ") + k;
        if (p.marked > 0)
            kept += (kept.empty() ? "" : ", ") + std::to_string(p.marked) + " marked to keep";
        std::printf("%s: %s %d checkpoint files of %d finished runs (%.1f MB); kept %d (%.1f MB: "
                    "%s)\n",
                    sessionPath.c_str(), dryRun ? "would remove" : "removed", p.removed, p.runs,
                    double(p.bytesFreed) / 1e6, p.kept, double(p.bytesKept) / 1e6,
                    kept.empty() ? "none" : kept.c_str());
        for (const auto &line : p.problems) std::fprintf(stderr, "%s\n", line.c_str());
        return p.problems.empty() ? kExitOk : kExitRunFailed;
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
}

// Marks a finished run's checkpoints as ones that `prune` and the budget keep (or, with `off`,
// takes the mark away), and saves the run's file.
int keepCommand(const std::string &sessionPath, const std::string &runText,
                const std::vector<long long> &steps, bool off)
{
    try {
        Session session = loadSweepRuns(sessionPath);
        expandSweep(session);
        std::string error;
        const int row = findRun(session, runText, &error);
        if (row < 0) {
            std::fprintf(stderr, "headlab-cli keep: %s: %s\n", sessionPath.c_str(), error.c_str());
            return kExitBadInput;
        }
        for (long long step : steps) markCheckpoint(session, row, step, !off);
        SessionStore store(sessionPath); // the writer lock: refused while the session trains
        store.saveRun(session.runs[size_t(row)]);
        for (long long step : steps)
            std::printf("%s: run %d's checkpoint at step %lld %s\n", sessionPath.c_str(), row, step,
                        off ? "is no longer marked: `prune` may remove it"
                            : "is marked: `prune` and the checkpoint budget keep it");
        return kExitOk;
    } catch (const SessionError &e) {
        std::fprintf(stderr, "headlab-cli keep: %s: %s\n", sessionPath.c_str(), e.what());
        return kExitBadInput;
    }
}

// The progress of a sweep written by other processes or machines: finished runs from the run
// files, the shards running now.
int statusCommand(const std::string &sessionPath)
{
    try {
        Session session = loadSessionReporting(sessionPath);
        expandSweep(session);
        const SweepCounts c = countRuns(session);
        const int total = int(session.runs.size()), finished = c.done + c.diverged + c.failed;
        // Runs in the part of a shard (or the whole sweep) that runs now are in training, whatever
        // their stored status says (a run file is written when a run ends).
        const auto active = activeRuns(session, sessionPath);
        std::set<int> training;
        std::map<std::string, std::vector<int64_t>>
            byTrainer; // trainer -> its runs' checkpoint steps
        for (const auto &a : active) {
            training.insert(a.runIndex);
            byTrainer[a.trainer].push_back(a.step);
        }
        int stopped = 0;
        for (size_t i = 0; i < session.runs.size(); ++i)
            stopped +=
                session.runs[i].result.status == RunStatus::Stopped && !training.count(int(i));
        std::printf("%s: %d of %d runs finished (%d done, %d diverged, %d failed), %zu in training "
                    "now, %d stopped (they "
                    "resume from their checkpoints), %d not started\n",
                    sessionPath.c_str(), finished, total, c.done, c.diverged, c.failed,
                    training.size(), stopped, total - finished - int(training.size()) - stopped);
        for (const auto &[trainer, steps] : byTrainer) {
            std::string where;
            int withCheckpoint = 0;
            for (const int64_t step : steps)
                if (step >= 0) where += (withCheckpoint++ ? ", " : "") + std::to_string(step);
            std::printf("  running: %s: %zu runs to train%s\n", trainer.c_str(), steps.size(),
                        withCheckpoint ? (", checkpoints at steps " + where).c_str()
                                       : ", no checkpoint yet");
        }
        {
            const std::string results = resultsDirFor(sessionPath);
            const uint64_t runs = directoryBytes(results + "/runs"),
                           checkpoints = directoryBytes(results + "/checkpoints");
            std::printf("  disk: %.1f MB (run files %.1f MB, checkpoints %.1f MB; `headlab-cli "
                        "prune` frees finished runs' checkpoints)\n",
                        double(runs + checkpoints) / 1e6, double(runs) / 1e6,
                        double(checkpoints) / 1e6);
        }
        if (active.empty()) {
            for (const auto &line : SessionStore::runningShards(sessionPath))
                std::printf("  running: %s (its runs are finished)\n", line.c_str());
            if (SessionStore::lockHolder(sessionPath).empty() &&
                SessionStore::runningShards(sessionPath).empty())
                std::printf("  nothing is running\n");
        }
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    return kExitOk;
}

// A summary's table as CSV at `output` (none when empty); the exit status.
int writeTable(const std::string &output, const std::string &csv, size_t rows)
{
    if (output.empty()) return kExitOk;
    try {
        writeFileAtomic(output, csv);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitRunFailed;
    }
    std::printf("wrote %s (%zu rows)\n", output.c_str(), rows);
    return kExitOk;
}

// A boundary search: each configuration's crossing with its interval, the run count and the law.
int searchSummary(const Session &session, const std::string &lawX,
                  const std::vector<std::string> &lawAlso, const std::string &output)
{
    std::vector<std::string> asked = lawAlso;
    if (!lawX.empty()) asked.push_back(lawX);
    const auto &axes = lawAxes();
    for (const auto &axis : asked) {
        if (std::find(axes.begin(), axes.end(), axis) != axes.end()) continue;
        std::string list;
        for (const auto &a : axes) list += (list.empty() ? "" : ", ") + a;
        std::fprintf(stderr,
                     "headlab-cli summary: --law-x/--law-also: '%s' is not an axis a law can be "
                     "fitted against (%s)\n",
                     axis.c_str(), list.c_str());
        return kExitBadInput;
    }
    const SearchReport report = searchReport(session, lawX, lawAlso);
    std::fputs(searchSummaryText(report).c_str(), stdout);
    std::printf("learned: %s\n", describe(session.learnedRule));
    return writeTable(output, searchSummaryCsv(report), report.configurations.size());
}

// Seeds as replicates: the table the figures draw, one row per configuration.
// `summary --lr-sensitivity`: per configuration (lr pooled), the learning-rate sensitivity over
// its replicates, with the statistic and spread asked for.
int lrSensitivitySummary(const Session &session, ReplicateStat stat, ReplicateSpread spread,
                         const std::string &output)
{
    const auto groups = groupByConfigurationWithoutLr(session);
    std::vector<std::string> header;
    for (const auto &[axis, value] : groups.front().labels) header.push_back(axis);
    std::string csv;
    for (const auto &h : header) csv += csvField(h) + ",";
    csv += "replicates,lr_values,lr_sensitivity,low,high,mean,sd,se,median,q1,q3,min,max\n";
    for (const auto &h : header) std::printf("%-14s ", h.c_str());
    std::printf("%4s %5s  %-11s %s\n", "n", "η's", toString(stat),
                (std::string(toString(spread)) + " (spread)").c_str());
    for (const auto &g : groups) {
        const LrSensitivity sens = lrSensitivity(session, g.runs);
        const SampleStats &st = sens.stats;
        const auto [low, high] = spreadRange(st, spread);
        for (const auto &h : header) {
            std::printf("%-14s ", g.labels.at(h).c_str());
            csv += csvField(g.labels.at(h)) + ",";
        }
        char value[32] = "-", range[64] = "-";
        if (st.count) {
            std::snprintf(value, sizeof value, "%.4g", statValue(st, stat));
            std::snprintf(range, sizeof range, "[%.4g, %.4g]", low, high);
        }
        std::printf("%4d %5d  %-11s %s\n", st.count, sens.lrValues, value, range);
        auto number = [&](double v) { return st.count ? yaml::formatNumber(v) : std::string(); };
        csv += std::to_string(st.count) + "," + std::to_string(sens.lrValues) + "," +
               number(statValue(st, stat)) + "," + number(low) + "," + number(high) + "," +
               number(st.mean) + "," + number(st.sd) + "," + number(st.se) + "," +
               number(st.median) + "," + number(st.q1) + "," + number(st.q3) + "," +
               number(st.min) + "," + number(st.max) + "\n";
    }
    std::printf("learning-rate sensitivity (Wortsman et al. 2023): per replicate, the mean over "
                "its η of min(final loss, initial loss) − the best final loss; 0: every η as good "
                "as the best. Read it beside the loss-against-η figure.\n");
    return writeTable(output, csv, groups.size());
}

int summaryCommand(const std::string &sessionPath, const std::vector<std::string> &by,
                   const std::string &statName, const std::string &spreadName,
                   const std::string &output, const std::string &lawX,
                   const std::vector<std::string> &lawAlso, bool sensitivity)
{
    ReplicateStat stat = ReplicateStat::Median;
    ReplicateSpread spread = ReplicateSpread::Iqr;
    if (!parseReplicateStat(statName, &stat) || !parseReplicateSpread(spreadName, &spread))
        return kExitBadInput;
    Session session;
    try {
        session = loadSweepRuns(sessionPath);
        expandSweep(session);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    if (session.search) return searchSummary(session, lawX, lawAlso, output);
    if (sensitivity) return lrSensitivitySummary(session, stat, spread, output);
    std::vector<std::string> axes;
    for (const auto &axis : session.axes) axes.push_back(axis.name);
    for (const auto &axis : by) {
        if (std::find(axes.begin(), axes.end(), axis) != axes.end()) continue;
        std::string list;
        for (const auto &a : axes) list += (list.empty() ? "" : ", ") + a;
        std::fprintf(
            stderr, "headlab-cli summary: --by: '%s' is not an axis of this sweep (its axes: %s)\n",
            axis.c_str(), list.c_str());
        return kExitBadInput;
    }
    const auto groups = groupReplicates(session, by);
    const std::string csv = replicateSummaryCsv(session, groups, by, stat, spread);
    // The table on stdout: the grouping labels, replicates, the statistic with its spread, P(learned).
    std::vector<std::string> header;
    for (const auto &[axis, value] :
         groups.empty() ? std::map<std::string, std::string>{} : groups.front().labels)
        header.push_back(axis);
    for (const auto &h : header) std::printf("%-12s ", h.c_str());
    std::printf("%4s  %-9s %-23s %s\n", "n", toString(stat),
                (std::string(toString(spread)) + " (spread)").c_str(), "learned");
    for (const auto &g : groups) {
        for (const auto &h : header) std::printf("%-12s ", g.labels.at(h).c_str());
        const SampleStats &st = g.finalLoss;
        const auto [low, high] = spreadRange(st, spread);
        char value[32] = "-", range[64] = "-", learned[32] = "-";
        if (st.count) {
            std::snprintf(value, sizeof value, "%.4g", statValue(st, stat));
            std::snprintf(range, sizeof range, "[%.4g, %.4g]", low, high);
        }
        if (g.verdicts)
            std::snprintf(learned, sizeof learned, "%d/%d%s", g.learned, g.verdicts,
                          g.split() ? " split" : "");
        std::printf("%4d  %-9s %-23s %s\n", st.count, value, range, learned);
    }
    std::printf(
        "final test loss over the finished replicates (%s); learned: %s\n",
        [&] {
            std::string r;
            for (const auto &a : replicateAxes(session)) r += (r.empty() ? "" : ", ") + a;
            return r;
        }()
            .c_str(),
        describe(session.learnedRule));
    return writeTable(output, csv, groups.size());
}

// ---------------------------------------------------------------------------------------------
// The command table.

struct Arguments {
    RunArguments run;
    SlurmArguments slurm;
    InspectArguments inspect;
    std::string session, output;
    std::vector<std::string> by;
    std::string stat = "median", spread = "iqr";
    std::string lawX;
    std::vector<std::string> lawAlso;
    std::vector<std::string> keep = {"final", "plateau"};
    bool dryRun = false;
    std::string markRun;              // keep: the run
    std::vector<long long> markSteps; // keep: its checkpoints' steps
    bool unmark = false;              // keep --off
    bool lrSensitivity = false;       // summary --lr-sensitivity
};

// Adds every command to `app`; the returned function runs the one that was parsed.
std::function<int()> addCommands(CLI::App &app, Arguments &a)
{
    std::vector<std::pair<CLI::App *, std::function<int()>>> commands;

    CLI::App *run = app.add_subcommand(
        "run", "Train a session's runs that have no result yet, saving each as it ends");
    run->footer(
        "Expands the session's sweep, lists the skipped combinations with why, and trains every "
        "run\n"
        "that has no result yet (queued, running, paused or stopped), so running a session again\n"
        "resumes it. Progress and ETA go to stderr. The session is saved to OUT.yaml if given, "
        "else\n"
        "over SESSION.yaml (for --preset: NAME.yaml in the current directory); each finished run "
        "is\n"
        "written at once to its own file in OUT.results/runs/. One process writes a session at a\n"
        "time: a second is refused with the first one's PID and host. If a result cannot be saved\n"
        "(a full disk), the sweep stops and says where the result went instead. Ctrl-C, SIGTERM "
        "and\n"
        "SIGHUP stop the runs in progress, save them as stopped, and exit 128+N. Exits 1 if a run "
        "of\n"
        "this invocation failed with an error or a result could not be saved; a diverged run is a\n"
        "result.");
    run->add_option("session", a.run.sessionPath, "The session file (SESSION.yaml)");
    run->add_option("--preset", a.run.presetName,
                    "Start from a built-in preset (see: headlab-cli presets)")
        ->excludes(run->get_option("session"));
    run->add_option(
        "-o,--output", a.run.outputPath,
        "Where to save the session with its results. If it already holds results of the same "
        "experiment, they are resumed; of another, the command refuses unless --overwrite");
    run->add_flag("--overwrite", a.run.overwrite,
                  "Replace the output; its old results are moved to OUT.results.replaced-TIME/, "
                  "never deleted");
    run->add_option("--device", a.run.device,
                    "auto, cpu, cuda, cuda:N, a list (cuda:0,cuda:1) or all GPUs, for every run "
                    "(default: each "
                    "run's own); ensembles spread over the list")
        ->check(kDeviceList);
    run->add_option("--threads", a.run.threads,
                    "CPU threads for LibTorch (default: LibTorch's choice)")
        ->check(CLI::Range(1, 4096));
    run->add_option("--concurrent", a.run.concurrent,
                    "Ensembles trained at once on each GPU, each on its own stream (default 4)")
        ->check(CLI::Range(1, 4096));
    CLI::Option *shardOption =
        run->add_option("--shard", a.run.shard,
                        "Run only part I of N of the pending runs (whole ensembles, balanced by "
                        "cost), writing only their "
                        "files; inside a Slurm array task SLURM_ARRAY_TASK_ID/COUNT give it. Then: "
                        "headlab-cli merge");
    run->add_option(
           "--max-ensemble", a.run.maxEnsemble,
           "Most runs trained together as one batched model (default: as many as half the GPU's "
           "free memory holds, at most 64; 8 on a CPU)")
        ->check(CLI::Range(1, 4096));
    run->add_option("--progress-every", a.run.progressEvery,
                    "Seconds between progress lines when stderr is not a terminal (logs, Slurm; "
                    "default 10)")
        ->check(CLI::Range(0.05, 86400.0));
    commands.push_back({run, [&a, shardOption] {
                            a.run.shardGiven = shardOption->count() > 0;
                            return runCommand(a.run);
                        }});

    CLI::App *validate =
        app.add_subcommand("validate", "Read a session and expand its sweep without training");
    validate->footer(
        "Prints a summary (runs, skipped combinations and why) and exits 0, or prints\n"
        "file:line:col: key.path: message and exits 2.");
    validate->add_option("session", a.session, "The session file (SESSION.yaml)")->required();
    commands.push_back({validate, [&a] { return validateCommand(a.session); }});

    CLI::App *presets = app.add_subcommand("presets", "List the built-in presets");
    presets->footer(
        "The presets are compiled into the binary. Run one with: headlab-cli run --preset NAME.");
    commands.push_back({presets, [] { return presetsCommand(); }});

    CLI::App *csv = app.add_subcommand("export-csv", "Write runs.csv and curves.csv of a session");
    csv->footer(
        "DIR/runs.csv: one row per run (labels, key configuration, status, metrics); "
        "DIR/curves.csv:\n"
        "run,curve,step,value for every point of every curve (run is the row of runs.csv).\n"
        "See docs/SESSION_FORMAT.md.");
    csv->add_option("session", a.session, "The session file (SESSION.yaml)")->required();
    csv->add_option("-o,--output", a.output, "The directory (DIR)")->required();
    commands.push_back({csv, [&a] { return exportCsvCommand(a.session, a.output); }});

    CLI::App *merge = app.add_subcommand(
        "merge", "Fold the results of shards (run --shard) into the session file");
    merge->footer("Atomic and idempotent; while shards still run it takes what has finished. "
                  "Refuses run files whose\n"
                  "config is not a run of the session's sweep, naming each.");
    merge->add_option("session", a.session, "The session file (SESSION.yaml)")->required();
    commands.push_back({merge, [&a] { return mergeCommand(a.session); }});

    CLI::App *slurm =
        app.add_subcommand("slurm", "Submit the sweep to Slurm as a job array, one shard per task");
    slurm->footer("Writes SESSION.results/slurm/submit.sbatch (a log per task in append mode, "
                  "requeue allowed,\n"
                  "SIGTERM 120 s before the end so runs in progress are saved) and submits it with "
                  "sbatch. Submitting\n"
                  "again after a failure trains only the runs without a result. Then: headlab-cli "
                  "status / merge.");
    slurm->add_option("session", a.session, "The session file (SESSION.yaml)")->required();
    slurm->add_option("--array", a.slurm.array, "Array tasks (shards)")
        ->required()
        ->check(CLI::Range(1, 100000));
    slurm->add_option("--partition", a.slurm.partition, "Slurm partition");
    slurm->add_option("--gpus-per-task", a.slurm.gpusPerTask, "GPUs per task")
        ->check(CLI::Range(0, 64));
    slurm
        ->add_option("--cpus-per-task", a.slurm.cpusPerTask,
                     "CPUs per task (also LibTorch's threads)")
        ->check(CLI::Range(0, 4096));
    slurm->add_option("--time", a.slurm.time,
                      "Time limit per task, as Slurm writes it (e.g. 2:00:00)");
    slurm->add_option("--account", a.slurm.account, "Slurm account");
    slurm->add_option("--device", a.slurm.device, "Passed to each task's run (e.g. cuda)")
        ->check(kDeviceList);
    slurm->add_flag("--dry-run", a.slurm.dryRun, "Print the script; submit nothing");
    commands.push_back({slurm, [&a] { return slurmCommand(a.session, a.slurm); }});

    CLI::App *status =
        app.add_subcommand("status", "Progress of a sweep run by other processes or machines");
    status->add_option("session", a.session, "The session file (SESSION.yaml)")->required();
    commands.push_back({status, [&a] { return statusCommand(a.session); }});

    CLI::App *prune = app.add_subcommand(
        "prune", "Remove finished runs' checkpoints, keeping the final and plateau ones");
    prune->footer("Checkpoints of done, diverged and failed runs whose reason is not kept are "
                  "removed, with files\n"
                  "their run no longer lists; unfinished runs keep theirs (they resume from "
                  "them). Takes the\n"
                  "session's lock: refused while the session trains. `status` shows the disk "
                  "used.");
    prune->add_option("session", a.session, "The session file (SESSION.yaml)")->required();
    prune
        ->add_option("--keep", a.keep,
                     "Reasons kept: final, plateau (entry and exit), periodic, stop, or none "
                     "(default: final plateau)")
        ->delimiter(',');
    prune->add_flag("--dry-run", a.dryRun, "Count what would be removed; remove nothing");
    commands.push_back({prune, [&a] { return pruneCommand(a.session, a.keep, a.dryRun); }});

    CLI::App *keep = app.add_subcommand(
        "keep", "Mark a finished run's checkpoints so that prune and the budget keep them");
    keep->footer("The mark is written in the run's file (`keep: true` in its checkpoint list) and "
                 "read by the\n"
                 "app's Inside the heads view, which can set it too. --off takes it away.");
    keep->add_option("session", a.session, "The session file (SESSION.yaml)")->required();
    keep->add_option("--run", a.markRun, "The run: its row (0-based) or its result file's hash")
        ->required();
    keep->add_option("--step", a.markSteps, "The checkpoints' steps (comma-separated)")
        ->required()
        ->delimiter(',')
        ->check(CLI::NonNegativeNumber);
    keep->add_flag("--off", a.unmark, "Take the mark away instead");
    commands.push_back(
        {keep, [&a] { return keepCommand(a.session, a.markRun, a.markSteps, a.unmark); }});

    CLI::App *summary = app.add_subcommand(
        "summary", "Statistics over replicates (seeds): the table the figures draw");
    summary->footer("One row per configuration (the swept axes other than the replicate axes: "
                    "seed, or the session's\n"
                    "replicate_axes), over its replicates: how many finished, the final test "
                    "loss's statistic and\n"
                    "spread, and how many learned by the session's rule (split: the replicates "
                    "disagree). -o writes\n"
                    "the same table as CSV with every statistic (mean, sd, se, median, q1, q3, "
                    "min, max, p_learned).");
    summary->add_option("session", a.session, "The session file (SESSION.yaml)")->required();
    summary
        ->add_option("--by", a.by,
                     "Group by these axes only (comma-separated); the rest are pooled")
        ->delimiter(',');
    summary->add_option("--stat", a.stat, "median (default) or mean")
        ->check(CLI::IsMember({"median", "mean"}));
    summary->add_option("--spread", a.spread, "iqr (default), sd, se or minmax")
        ->check(CLI::IsMember({"iqr", "sd", "se", "minmax"}));
    summary->add_option("-o,--output", a.output, "Also write the table as CSV (FILE.csv)");
    summary->add_option("--law-x", a.lawX,
                        "A search: fit the law against this axis instead of the session's "
                        "(head_dim, d_model, heads, total_heads, layers, width_multiplier)");
    summary
        ->add_option("--law-also", a.lawAlso,
                     "A search: further axes of the law, each with its own exponent "
                     "(comma-separated)")
        ->delimiter(',');
    summary->add_flag("--lr-sensitivity", a.lrSensitivity,
                      "Per configuration (lr pooled): the learning-rate sensitivity over its "
                      "replicates (docs/STABILIZERS.md)");
    commands.push_back({summary, [&a] {
                            return summaryCommand(a.session, a.by, a.stat, a.spread, a.output,
                                                  a.lawX, a.lawAlso, a.lrSensitivity);
                        }});

    CLI::App *inspect = app.add_subcommand(
        "inspect", "Inside the heads of a run at a checkpoint: attention, statistics, ablation");
    inspect->footer("Prints each head's attention row at the input's answer (or last) position, "
                    "the per-head statistics\n"
                    "(logit RMS and max, entropy, weight and gradient norms), the test loss with "
                    "each head removed, and\n"
                    "a greedy pruning curve; writes attention.csv, head_stats.csv, ablation.csv "
                    "and pruning.csv (default\n"
                    "folder SESSION.results/inspect/HASH-step-N). --json prints everything as one "
                    "JSON document.\n" +
                    inspectInputsHelp());
    inspect->add_option("session", a.inspect.session, "The session file (SESSION.yaml)")
        ->required();
    inspect
        ->add_option("--run", a.inspect.run, "The run: its row (0-based) or its result file's hash")
        ->required();
    inspect->add_option("--step", a.inspect.step, "A checkpoint's step (default: the newest)")
        ->check(CLI::NonNegativeNumber);
    inspect->add_option("--input", a.inspect.input,
                        "What to show the attention on (default: the task's example)");
    inspect
        ->add_option("--ablation", a.inspect.ablation,
                     "zero (default) or mean: what a removed head outputs")
        ->check(CLI::IsMember({"zero", "mean"}));
    inspect->add_flag("!--no-prune", a.inspect.prune, "Skip the greedy pruning curve");
    inspect->add_flag("--json", a.inspect.json, "Print JSON instead of tables");
    inspect->add_option("-o,--output", a.inspect.output, "Folder for the CSV files");
    inspect->add_option("--device", a.inspect.device, "cpu (default), cuda, auto");
    commands.push_back({inspect, [&a] { return inspectCommand(a.inspect); }});

    CLI::App *yamlExport =
        app.add_subcommand("export-yaml", "Write a session with its results as one YAML file");
    yamlExport->footer(
        "The session file otherwise keeps its results in SESSION.results/, one file per run.");
    yamlExport->add_option("session", a.session, "The session file (SESSION.yaml)")->required();
    yamlExport->add_option("-o,--output", a.output, "The file to write (FILE.yaml)")->required();
    commands.push_back({yamlExport, [&a] { return exportYamlCommand(a.session, a.output); }});

    return [commands] {
        for (const auto &[command, action] : commands)
            if (command->parsed()) return action();
        return kExitBadInput;
    };
}

} // namespace

int runCli(int argc, char **argv)
{
    CLI::App app("headlab-cli: run and inspect HeadLab sessions without a display.", "headlab-cli");
    app.footer(kExitStatus);
    app.require_subcommand(1);
    app.get_formatter()->column_width(30);
    Arguments arguments;
    const std::function<int()> command = addCommands(app, arguments);
    std::string names;
    bool known = false;
    for (const CLI::App *sub : app.get_subcommands({})) {
        names += (names.empty() ? "" : ", ") + sub->get_name();
        known = known || (argc > 1 && sub->get_name() == argv[1]);
    }
    if (argc > 1 && argv[1][0] != '-' && !known) {
        std::fprintf(stderr,
                     "headlab-cli: unknown command '%s' (the commands are %s; see --help)\n",
                     argv[1], names.c_str());
        return kExitBadInput;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e); // the help of the command asked, on stdout, exit 0
    } catch (const CLI::ParseError &e) {
        std::string where = "headlab-cli";
        for (const CLI::App *sub : app.get_subcommands()) where += " " + sub->get_name();
        std::fprintf(stderr, "%s: %s\nRun '%s --help' for the options.\n", where.c_str(), e.what(),
                     where.c_str());
        return kExitBadInput;
    }
    // Nothing ends the process with an uncaught exception: the limits keep sessions from asking
    // for absurd memory, and whatever still escapes gets a message and exit 1.
    try {
        return command();
    } catch (const std::bad_alloc &) {
        std::fprintf(
            stderr,
            "headlab-cli: out of memory; the session asks for more than this machine has\n");
    } catch (const std::exception &e) {
        std::fprintf(stderr, "headlab-cli: %s\n", e.what());
    }
    return kExitRunFailed;
}

} // namespace headlab::cli
