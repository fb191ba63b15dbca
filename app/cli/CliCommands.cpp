// CliCommands.cpp — headlab-cli's subcommands on top of the core's sessions and SweepRunner.
#include "CliCommands.h"

#include "ProgressDisplay.h"

#include "core/CsvExport.h"
#include "core/Presets.h"
#include "core/Session.h"
#include "core/SweepRunner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>

namespace headlab::cli {

namespace {

const char *kUsage =
    "headlab-cli: run and inspect HeadLab sessions without a display.\n"
    "\n"
    "Usage:\n"
    "  headlab-cli run SESSION.yaml [-o OUT.yaml] [--device D] [--threads N]\n"
    "  headlab-cli run --preset NAME [-o OUT.yaml] [--device D] [--threads N]\n"
    "  headlab-cli validate SESSION.yaml\n"
    "  headlab-cli presets\n"
    "  headlab-cli export-csv SESSION.yaml -o DIR\n"
    "  headlab-cli COMMAND --help\n"
    "\n"
    "Exit status: 0 success; 1 a run failed with an error or results could not be saved;\n"
    "2 bad input (usage, invalid session, unknown preset); 130 interrupted (results saved).\n"
    "The session format is described in docs/SESSION_FORMAT.md.\n";

const char *kRunHelp =
    "Usage: headlab-cli run SESSION.yaml [-o OUT.yaml] [--device D] [--threads N] [--concurrent N]\n"
    "                       [--max-ensemble N]\n"
    "       headlab-cli run --preset NAME [-o OUT.yaml] (the same options)\n"
    "\n"
    "Expands the session's sweep, lists the skipped combinations with why, and trains every run\n"
    "that has no result yet (queued, running, paused or stopped), so running a session again\n"
    "resumes it. Progress and ETA go to stderr. The session is saved atomically after every\n"
    "finished run, to OUT.yaml if given, else over SESSION.yaml (for --preset: NAME.yaml in the\n"
    "current directory). Ctrl-C stops the runs in progress, saves them as stopped, and exits 130.\n"
    "\n"
    "  -o, --output OUT.yaml   where to save the session with its results\n"
    "  --preset NAME           start from a built-in preset (see: headlab-cli presets)\n"
    "  --device D              auto, cpu, cuda, cuda:N, a list (cuda:0,cuda:1) or all GPUs, for\n"
    "                          every run (default: each run's own); ensembles spread over the list\n"
    "  --threads N             CPU threads for LibTorch (default: LibTorch's choice)\n"
    "  --concurrent N          ensembles trained at once on each GPU, each on its own stream\n"
    "                          (default 4; small ensembles cannot fill a GPU alone)\n"
    "  --max-ensemble N        most runs trained together as one batched model (default: as\n"
    "                          many as half the GPU's free memory holds, at most 64; 8 on a CPU)\n"
    "\n"
    "Exits 1 if a run of this invocation failed with an error; a diverged run is a result.\n";

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

// Ctrl-C: the first asks for a clean stop; SA_RESETHAND then restores the default action, so a
// second one ends the process at once.
std::atomic<bool> g_interrupted{false};

extern "C" void onInterrupt(int)
{
    g_interrupted.store(true);
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
    if (auto it = r.metrics.find("final_test_loss"); it != r.metrics.end()) {
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

int runCommand(const std::vector<std::string> &args)
{
    if (wantsHelp(args)) {
        std::fputs(kRunHelp, stdout);
        return kExitOk;
    }
    std::string sessionPath, presetName, outputPath, device;
    int threads = 0, concurrent = 0, maxEnsemble = 0;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string &a = args[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= args.size()) return std::nullopt;
            return args[++i];
        };
        if (a == "-o" || a == "--output") {
            auto v = value();
            if (!v) return usageError(a + " needs a file name", kRunHelp);
            outputPath = *v;
        } else if (a == "--preset") {
            auto v = value();
            if (!v) return usageError("--preset needs a name", kRunHelp);
            presetName = *v;
        } else if (a == "--device") {
            auto v = value();
            if (!v) return usageError("--device needs auto, cpu, cuda or cuda:N", kRunHelp);
            device = *v;
        } else if (a == "--threads" || a == "--concurrent" || a == "--max-ensemble") {
            auto v = value();
            char *end = nullptr;
            const long n = v ? std::strtol(v->c_str(), &end, 10) : 0;
            if (!v || end == v->c_str() || *end != '\0' || n < 1 || n > 4096)
                return usageError(a + " needs a positive number", kRunHelp);
            (a == "--threads" ? threads : a == "--concurrent" ? concurrent : maxEnsemble) = static_cast<int>(n);
        } else if (!a.empty() && a[0] == '-') {
            return usageError("unknown option " + a, kRunHelp);
        } else if (sessionPath.empty()) {
            sessionPath = a;
        } else {
            return usageError("more than one session given: " + sessionPath + " and " + a,
                              kRunHelp);
        }
    }
    if (sessionPath.empty() == presetName.empty())
        return usageError("give either SESSION.yaml or --preset NAME", kRunHelp);
    // One device, "all" GPUs, or a comma list of devices the sweep spreads its ensembles over.
    auto knownDevice = [](const std::string &d) {
        return d == "auto" || d == "cpu" || d == "cuda" ||
               (d.rfind("cuda:", 0) == 0 && d.size() > 5 &&
                d.find_first_not_of("0123456789", 5) == std::string::npos);
    };
    if (!device.empty() && device != "all") {
        size_t start = 0;
        for (;;) {
            const size_t comma = device.find(',', start);
            const std::string one = device.substr(start, comma - start);
            if (!knownDevice(one))
                return usageError("unknown device '" + one +
                                      "' (expected auto, cpu, cuda, cuda:N, a comma list of "
                                      "them, or all)",
                                  kRunHelp);
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }

    Session session;
    try {
        session = presetName.empty() ? loadSession(sessionPath) : loadPreset(presetName);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    if (outputPath.empty()) outputPath = presetName.empty() ? sessionPath : presetName + ".yaml";

    expandSweep(session);
    for (const auto &s : session.skipped)
        std::fprintf(stderr, "skipped %s: %s\n", labelsText(s.labels).c_str(), s.reason.c_str());
    const std::vector<int> pending = pendingRuns(session);
    std::fprintf(stderr,
                 "%s: %zu runs, %zu already finished, %zu to train, %zu skipped; saving to %s\n",
                 session.name.empty() ? "session" : session.name.c_str(), session.runs.size(),
                 session.runs.size() - pending.size(), pending.size(), session.skipped.size(),
                 outputPath.c_str());

    try {
        saveSessionAtomic(session, outputPath);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
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
    options.device = device; // empty: each run's own device
    options.threads = threads;
    options.concurrent = concurrent;
    options.maxEnsemble = maxEnsemble;

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

    g_interrupted.store(false);
    struct sigaction action {};
    action.sa_handler = onInterrupt;
    action.sa_flags = SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    struct sigaction previousAction {};
    sigaction(SIGINT, &action, &previousAction);

    ProgressDisplay display(stderr, totalSteps, static_cast<int>(jobs.size()));
    SweepRunner runner;
    if (!runner.start(std::move(jobs), options, callbacks)) {
        sigaction(SIGINT, &previousAction, nullptr);
        std::fprintf(stderr, "headlab-cli: the sweep runner did not start\n");
        return kExitRunFailed;
    }

    int finishedCount = 0, failedCount = 0;
    bool saveFailed = false, stopRequested = false;
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
                saveSessionAtomic(session, outputPath);
            } catch (const SessionError &e) {
                display.printLine(e.what());
                saveFailed = true;
            }
        }
        finished.clear();
    };

    for (;;) {
        std::deque<RunProgress> progress;
        std::deque<FinishedRun> finished;
        bool sweepFinished = false;
        {
            std::unique_lock lock(shared.mutex);
            shared.changed.wait_for(lock, std::chrono::milliseconds(100), [&] {
                return !shared.finished.empty() || shared.sweepFinished || g_interrupted.load();
            });
            progress.swap(shared.progress);
            finished.swap(shared.finished);
            sweepFinished = shared.sweepFinished;
        }
        for (const auto &p : progress) display.update(p);
        handleFinished(finished);
        if (g_interrupted.load() && !stopRequested) {
            stopRequested = true;
            display.printLine("interrupted: stopping the runs in progress and saving (Ctrl-C again "
                              "to quit at once)");
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
    sigaction(SIGINT, &previousAction, nullptr);

    try {
        saveSessionAtomic(session, outputPath);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        saveFailed = true;
    }
    int done = 0, diverged = 0, failed = 0, unfinished = 0;
    for (const auto &run : session.runs) {
        switch (run.result.status) {
        case RunStatus::Done:
            ++done;
            break;
        case RunStatus::Diverged:
            ++diverged;
            break;
        case RunStatus::Failed:
            ++failed;
            break;
        default:
            ++unfinished;
            break;
        }
    }
    std::fprintf(stderr, "%s: %d done, %d diverged, %d failed, %d not finished; saved %s\n",
                 session.name.empty() ? "session" : session.name.c_str(), done, diverged, failed,
                 unfinished, outputPath.c_str());
    if (stopRequested) return kExitInterrupted;
    if (failedCount > 0 || saveFailed) return kExitRunFailed;
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
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    }
    expandSweep(session);
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

int exportCsvCommand(const std::vector<std::string> &args)
{
    if (wantsHelp(args)) {
        std::fputs(kExportHelp, stdout);
        return kExitOk;
    }
    std::string sessionPath, directory;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "-o" || args[i] == "--output") {
            if (i + 1 >= args.size()) return usageError("-o needs a directory", kExportHelp);
            directory = args[++i];
        } else if (!args[i].empty() && args[i][0] == '-') {
            return usageError("unknown option " + args[i], kExportHelp);
        } else if (sessionPath.empty()) {
            sessionPath = args[i];
        } else {
            return usageError("more than one session given", kExportHelp);
        }
    }
    if (sessionPath.empty() || directory.empty())
        return usageError("give SESSION.yaml and -o DIR", kExportHelp);
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
    if (command == "run") return runCommand(args);
    if (command == "validate") return validateCommand(args);
    if (command == "presets") return presetsCommand(args);
    if (command == "export-csv") return exportCsvCommand(args);
    std::fprintf(stderr, "headlab-cli: unknown command '%s'\n\n%s", command.c_str(), kUsage);
    return kExitBadInput;
}

} // namespace headlab::cli
