// RunCommand.cpp — headlab-cli run: trains a session's pending runs (or a boundary search's rounds)
// with progress on stderr, saves each run as it ends, and stops cleanly on a signal.
#include "CliOptions.h"
#include "Commands.h"

#include "ProgressDisplay.h"
#include "core/lab/SweepSession.h"
#include "core/metrics/Metrics.h"
#include "core/model/Device.h"
#include "core/schema/TaskSpec.h"
#include "core/session/CsvExport.h"
#include "core/session/Presets.h"
#include "core/session/Replicates.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "core/session/search/SearchSummary.h"
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

namespace {

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
        // What is planned: each file is checked again as its ensemble starts (a run may fall
        // back to an older checkpoint or to step 0), and the summary says what was resumed.
        if (resumed > 0)
            std::fprintf(stderr,
                         "found checkpoints to resume %lld run%s from (%lld of their steps); each "
                         "is checked as its ensemble starts\n",
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
        for (const auto &p : progress) {
            // A run's first report says where it really went on from.
            if (m_started.insert(p.runIndex).second && p.startedAt > 0) {
                ++m_resumed;
                m_resumedSteps += p.startedAt;
            }
            m_display->update(p);
            noteLive(p);
        }
        for (auto &f : finished) {
            m_live.erase(f.runIndex);
            m_liveChanged = true;
            record(f.runIndex, std::move(f.result));
        }
        if (!finished.empty()) m_store.syncRuns();
        publishLive(sweepFinished);
        return sweepFinished;
    }

    // A run in training as readers see it (SessionStore::writeLiveRuns): its step, its status,
    // its origin (as its progress gives it).
    void noteLive(const RunProgress &p)
    {
        if (p.runIndex < 0 || size_t(p.runIndex) >= m_session.runs.size()) return;
        auto [it, added] = m_live.try_emplace(p.runIndex);
        m_liveChanged = m_liveChanged || added;
        it->second = {p.step, p.status, p.origin};
    }

    // The live file, rewritten every few seconds while runs train (at once when the set of runs
    // changes), removed when none is left. A file that cannot be written costs readers the rows of
    // runs in training, never training: it is said once.
    void publishLive(bool sweepFinished)
    {
        const auto now = std::chrono::steady_clock::now();
        if (!sweepFinished && !m_liveChanged && now - m_livePublished < std::chrono::seconds(5))
            return;
        std::vector<SessionRun> runs;
        if (!sweepFinished)
            for (const auto &[index, live] : m_live)
                runs.push_back(liveRecord(m_session, m_store.sessionPath(),
                                          m_session.runs[size_t(index)], live.status, live.step,
                                          live.origin));
        try {
            m_store.writeLiveRuns(runs);
        } catch (const SessionError &e) {
            if (!m_liveWarned)
                m_display->printLine(std::string(e.what()) +
                                     " (the runs in training are not listed for readers)");
            m_liveWarned = true;
        }
        m_liveChanged = false;
        m_livePublished = now;
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
        if (m_resumed > 0)
            std::fprintf(stderr,
                         "resumed %lld run%s from checkpoints (%lld of their steps were "
                         "already done)\n",
                         static_cast<long long>(m_resumed), m_resumed == 1 ? "" : "s",
                         static_cast<long long>(m_resumedSteps));
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
    std::set<int> m_started; // runs that have reported progress
    struct LiveRun {
        int64_t step = 0;
        RunStatus status = RunStatus::Running;
        RunOrigin origin;
    };
    std::map<int, LiveRun> m_live; // runs in training now, by index
    bool m_liveChanged = false, m_liveWarned = false;
    std::chrono::steady_clock::time_point m_livePublished{};
    int64_t m_resumed = 0, m_resumedSteps = 0; // of those, resumed from a checkpoint
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
    std::fputs(searchSummaryText(searchReport(session, "", {}, true)).c_str(), stdout);
    return kExitOk;
}

} // namespace

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
        if (const std::string missing = missingResultsMessage(session, a.sessionPath);
            !missing.empty()) { // before the store makes a new, empty results folder
            std::fprintf(stderr, "%s\nheadlab-cli: nothing was trained\n", missing.c_str());
            return kExitBadInput;
        }
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
// The command: its options and help (CLI11), registered with the command table.

namespace {

CommandAction defineRun(CLI::App &app)
{
    auto a = std::make_shared<RunArguments>();
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
    run->add_option("session", a->sessionPath, "The session file (SESSION.yaml)");
    run->add_option("--preset", a->presetName,
                    "Start from a built-in preset (see: headlab-cli presets)")
        ->excludes(run->get_option("session"));
    run->add_option(
        "-o,--output", a->outputPath,
        "Where to save the session with its results. If it already holds results of the same "
        "experiment, they are resumed; of another, the command refuses unless --overwrite");
    run->add_flag("--overwrite", a->overwrite,
                  "Replace the output; its old results are moved to OUT.results.replaced-TIME/, "
                  "never deleted");
    run->add_option("--device", a->device,
                    "auto, cpu, cuda, cuda:N, a list (cuda:0,cuda:1) or all GPUs, for every run "
                    "(default: each "
                    "run's own); ensembles spread over the list")
        ->check(deviceListValidator());
    run->add_option("--threads", a->threads,
                    "CPU threads for LibTorch (default: one less than the cores, at most 8; the "
                    "cores are OMP_NUM_THREADS when it is set)")
        ->check(rangeValidator(1, 4096));
    run->add_option("--concurrent", a->concurrent,
                    "Ensembles trained at once on each GPU, each on its own stream (default 4); on "
                    "the CPU, side by side (default: one per core, at most 8)")
        ->check(rangeValidator(1, 4096));
    CLI::Option *shardOption =
        run->add_option("--shard", a->shard,
                        "Run only part I of N of the pending runs (whole ensembles, balanced by "
                        "cost), writing only their "
                        "files; inside a Slurm array task SLURM_ARRAY_TASK_ID/COUNT give it. Then: "
                        "headlab-cli merge");
    run->add_option(
           "--max-ensemble", a->maxEnsemble,
           "Most runs trained together as one batched model (default: as many as half the GPU's "
           "free memory holds, at most 64; 8 on a CPU)")
        ->check(rangeValidator(1, 4096));
    run->add_option("--progress-every", a->progressEvery,
                    "Seconds between progress lines when stderr is not a terminal (logs, Slurm; "
                    "default 10)")
        ->check(rangeValidator(0.05, 86400.0));
    return {run, [a, shardOption] {
                a->shardGiven = shardOption->count() > 0;
                return runCommand(*a);
            }};
}

const CommandRegistration kRunCommand(10, defineRun);

} // namespace

} // namespace headlab::cli
