// SlurmCommand.cpp — the sbatch script of a sweep, and its submission without a shell.
#include "SlurmCommand.h"

#include "CliCommands.h"
#include "CliOptions.h"
#include "Commands.h"

#include "core/config/Files.h"
#include "core/lab/SweepSession.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "core/session/search/SearchSummary.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace headlab::cli {

namespace {

// A value the script cannot hold: a line break would start a line of its own (a command, for the
// batch shell), and a NUL would cut it short.
void refuseLineBreaks(const std::string &option, const std::string &value)
{
    for (char c : value)
        if (c == '\n' || c == '\r' || c == '\0')
            throw std::invalid_argument(
                option + ": the value holds a " +
                (c == '\0' ? std::string("NUL character") : std::string("line break")) +
                ", which a batch script cannot carry; rename or retype it");
}

} // namespace

std::string shellQuoted(const std::string &text)
{
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string sbatchQuoted(const std::string &text)
{
    std::string out = "\"";
    for (char c : text) {
        if (c == '\\' || c == '"') out += '\\';
        out += c;
    }
    return out + "\"";
}

// A path inside an sbatch filename pattern: Slurm reads "%x", "%j", ... in it as replacement
// symbols, so each literal '%' is written "%%" (a folder "100%x" would otherwise become the job's
// name in the log's path).
std::string slurmFilenamePattern(const std::string &path)
{
    std::string out;
    for (char c : path) out += c == '%' ? std::string("%%") : std::string(1, c);
    return out;
}

// One array task per shard, each running `headlab-cli run S.yaml` (the shard from
// SLURM_ARRAY_TASK_ID), a log per task in append mode (a requeued task adds to it), requeue
// allowed, and SIGTERM sent to headlab-cli 120 s before the time limit or a preemption, so that it
// saves its runs in progress.
std::string slurmScript(const std::string &sessionPath, const SlurmArguments &s,
                        const std::string &cli)
{
    std::error_code error;
    const std::string session =
        std::filesystem::absolute(sessionPath, error).lexically_normal().string();
    const std::string results = resultsDirFor(session);
    refuseLineBreaks("the session path", session);
    refuseLineBreaks("headlab-cli's path", cli);
    refuseLineBreaks("--partition", s.partition);
    refuseLineBreaks("--time", s.time);
    refuseLineBreaks("--account", s.account);
    refuseLineBreaks("--device", s.device);
    auto option = [](const std::string &name, const std::string &value) {
        return "#SBATCH --" + name + "=" + sbatchQuoted(value) + "\n";
    };
    std::string script = "#!/bin/bash\n"
                         "# Written by headlab-cli slurm for " +
                         shellQuoted(session) +
                         "\n"
                         "#SBATCH --job-name=headlab\n"
                         "#SBATCH --array=0-" +
                         std::to_string(s.array - 1) + "\n" +
                         option("output", slurmFilenamePattern(results) + "/slurm/%A_%a.log") +
                         "#SBATCH --open-mode=append\n"
                         "#SBATCH --requeue\n"
                         "#SBATCH --signal=B:TERM@120\n";
    if (!s.partition.empty()) script += option("partition", s.partition);
    if (s.gpusPerTask > 0)
        script += "#SBATCH --gpus-per-task=" + std::to_string(s.gpusPerTask) + "\n";
    if (s.cpusPerTask > 0)
        script += "#SBATCH --cpus-per-task=" + std::to_string(s.cpusPerTask) + "\n";
    if (!s.time.empty()) script += option("time", s.time);
    if (!s.account.empty()) script += option("account", s.account);
    script += "\n# headlab-cli takes its shard from SLURM_ARRAY_TASK_ID and "
              "SLURM_ARRAY_TASK_COUNT, runs only what\n"
              "# has no result yet, and saves its runs in progress on SIGTERM. It runs in the "
              "background and\n"
              "# the script waits for it, so that the batch shell passes Slurm's SIGTERM on.\n"
              "echo \"[$(date -Is)] task $SLURM_ARRAY_TASK_ID of job $SLURM_ARRAY_JOB_ID on "
              "$(hostname), restart ${SLURM_RESTART_COUNT:-0}\"\n" +
              shellQuoted(cli) + " run " + shellQuoted(session) +
              (s.device.empty() ? "" : " --device " + shellQuoted(s.device)) +
              (s.cpusPerTask > 0 ? " --threads " + std::to_string(s.cpusPerTask) : "") +
              " &\n"
              "pid=$!\n"
              "trap 'kill -TERM $pid' TERM\n"
              "wait $pid; status=$?\n"
              "if [ $status -gt 128 ]; then wait $pid; status=$?; fi\n"
              "exit $status\n";
    return script;
}

std::string searchChainScript(const std::string &sessionPath, const SlurmArguments &s,
                              const std::string &cli)
{
    std::error_code error;
    const std::string session =
        std::filesystem::absolute(sessionPath, error).lexically_normal().string();
    const std::string results = resultsDirFor(session);
    for (const auto &[option, value] :
         std::vector<std::pair<std::string, std::string>>{{"the session path", session},
                                                          {"headlab-cli's path", cli},
                                                          {"--partition", s.partition},
                                                          {"--time", s.time},
                                                          {"--account", s.account},
                                                          {"--device", s.device}})
        refuseLineBreaks(option, value);
    // The same options again, each value quoted for the shell.
    std::string again =
        shellQuoted(cli) + " slurm " + shellQuoted(session) + " --array " + std::to_string(s.array);
    auto add = [&again](const char *option, const std::string &value) {
        if (!value.empty()) again += std::string(" ") + option + " " + shellQuoted(value);
    };
    add("--partition", s.partition);
    add("--time", s.time);
    add("--account", s.account);
    add("--device", s.device);
    if (s.gpusPerTask > 0) again += " --gpus-per-task " + std::to_string(s.gpusPerTask);
    if (s.cpusPerTask > 0) again += " --cpus-per-task " + std::to_string(s.cpusPerTask);
    std::string script = "#!/bin/bash\n"
                         "# Written by headlab-cli slurm for the boundary search " +
                         shellQuoted(session) +
                         ": after a round's array,\n"
                         "# merge its results (which plans the next round) and submit the next.\n"
                         "#SBATCH --job-name=headlab-next\n"
                         "#SBATCH --output=" +
                         sbatchQuoted(slurmFilenamePattern(results) + "/slurm/next_%j.log") +
                         "\n"
                         "#SBATCH --ntasks=1\n"
                         "#SBATCH --cpus-per-task=1\n";
    if (!s.partition.empty()) script += "#SBATCH --partition=" + sbatchQuoted(s.partition) + "\n";
    if (!s.account.empty()) script += "#SBATCH --account=" + sbatchQuoted(s.account) + "\n";
    script +=
        "set -e\n" + shellQuoted(cli) + " merge " + shellQuoted(session) + "\n" + again + "\n";
    return script;
}

ProcessOutput runProcess(const std::vector<std::string> &argv)
{
    ProcessOutput out;
    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC) != 0) {
        out.error = std::string("cannot make a pipe: ") + std::strerror(errno);
        return out;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::vector<char *> args;
    for (const auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipeFds[1]);
    if (spawned != 0) {
        ::close(pipeFds[0]);
        out.error = "cannot run " + argv[0] + ": " + std::strerror(spawned);
        return out;
    }
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(pipeFds[0], buffer, sizeof buffer);
        if (n > 0)
            out.output.append(buffer, static_cast<size_t>(n));
        else if (n == 0 || errno != EINTR)
            break;
    }
    ::close(pipeFds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    out.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (!WIFEXITED(status))
        out.error = argv[0] + " was ended by signal " + std::to_string(WTERMSIG(status));
    return out;
}

int slurmCommand(const std::string &sessionPath, const SlurmArguments &s)
{
    try {
        Session session = loadSessionReporting(sessionPath);
        expandSweep(session);
        // A boundary search submits its current round; when that is over (or none was planned),
        // the next round is planned here first and saved, so that every shard trains the same.
        if (session.search && pendingRuns(session).empty() && !s.dryRun) {
            if (const std::string holder = SessionStore::lockHolder(sessionPath);
                holder.empty() && SessionStore::runningShards(sessionPath).empty() &&
                planSearchRound(session) > 0)
                SessionStore(sessionPath, {}, SessionStore::Role::Merger).saveSession(session);
        }
        const size_t pending = pendingRuns(session).size();
        const std::string cli = std::filesystem::canonical("/proc/self/exe").string();
        const std::string script = slurmScript(sessionPath, s, cli);
        if (s.dryRun) {
            std::fputs(script.c_str(), stdout);
            return kExitOk;
        }
        if (pending == 0) {
            if (session.search)
                std::printf("%s: the boundary search is finished; nothing to submit\n%s",
                            sessionPath.c_str(),
                            searchSummaryText(searchReport(session, "", {}, true)).c_str());
            else
                std::printf("%s: every run has a result; nothing to submit\n", sessionPath.c_str());
            return kExitOk;
        }
        if (const std::string holder = SessionStore::lockHolder(sessionPath); !holder.empty()) {
            std::fprintf(stderr,
                         "headlab-cli slurm: %s: a whole-sweep run is training this session (%s), "
                         "so no shard may "
                         "start; wait for it to finish (headlab-cli status) or stop it\n",
                         sessionPath.c_str(), holder.c_str());
            return kExitBadInput;
        }
        const std::string dir =
            resultsDirFor(std::filesystem::absolute(sessionPath).lexically_normal().string()) +
            "/slurm";
        std::filesystem::create_directories(dir);
        const std::string file = dir + "/submit.sbatch";
        writeFileAtomic(file, script);
        ProcessOutput sbatch = runProcess({"sbatch", "--parsable", file});
        std::string &output = sbatch.output;
        while (!output.empty() && (output.back() == '\n' || output.back() == '\r'))
            output.pop_back();
        if (sbatch.exitCode != 0) {
            std::fprintf(stderr, "headlab-cli slurm: sbatch failed: %s\n(the script is %s)\n",
                         (sbatch.error.empty()
                              ? output
                              : sbatch.error + (output.empty() ? "" : ": " + output))
                             .c_str(),
                         file.c_str());
            return kExitRunFailed;
        }
        const std::string job = output.substr(0, output.find(';'));
        if (session.search) {
            // The next step of the search waits for this round's array to end, however it ends.
            const std::string next = dir + "/next.sbatch";
            writeFileAtomic(next, searchChainScript(sessionPath, s, cli));
            ProcessOutput chained =
                runProcess({"sbatch", "--parsable", "--dependency=afterany:" + job, next});
            std::string &nextOut = chained.output;
            while (!nextOut.empty() && (nextOut.back() == '\n' || nextOut.back() == '\r'))
                nextOut.pop_back();
            if (chained.exitCode != 0) {
                std::fprintf(stderr,
                             "headlab-cli slurm: round submitted as job %s, but the job that "
                             "plans the next round was not: %s\n(the script is %s; after the "
                             "round, run headlab-cli merge and slurm again yourself)\n",
                             job.c_str(), nextOut.c_str(), next.c_str());
                return kExitRunFailed;
            }
            const SearchReport report = searchReport(session);
            std::printf("boundary search round %d: job %s, %d array tasks for its %zu runs; job %s "
                        "merges them and submits the next round when it ends\n"
                        "watch it with: headlab-cli summary %s\n",
                        std::max(0, report.rounds - 1), job.c_str(), s.array, pending,
                        nextOut.substr(0, nextOut.find(';')).c_str(),
                        shellQuoted(sessionPath).c_str());
            return kExitOk;
        }
        std::printf(
            "submitted job %s: %d array tasks for the %zu runs without a result; script %s\n"
            "watch it with: headlab-cli status %s   then: headlab-cli merge %s\n",
            job.c_str(), s.array, pending, file.c_str(), shellQuoted(sessionPath).c_str(),
            shellQuoted(sessionPath).c_str());
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    } catch (const std::invalid_argument &e) {
        std::fprintf(stderr, "headlab-cli slurm: %s\n", e.what());
        return kExitBadInput;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "headlab-cli slurm: %s\n", e.what());
        return kExitRunFailed;
    }
    return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// The command: its options and help (CLI11), registered with the command table.

namespace {

CommandAction defineSlurm(CLI::App &app)
{
    struct Arguments {
        std::string session;
        SlurmArguments slurm;
    };
    auto a = std::make_shared<Arguments>();
    CLI::App *slurm =
        app.add_subcommand("slurm", "Submit the sweep to Slurm as a job array, one shard per task");
    slurm->footer("Writes SESSION.results/slurm/submit.sbatch (a log per task in append mode, "
                  "requeue allowed,\n"
                  "SIGTERM 120 s before the end so runs in progress are saved) and submits it with "
                  "sbatch. Submitting\n"
                  "again after a failure trains only the runs without a result. Then: headlab-cli "
                  "status / merge.");
    slurm->add_option("session", a->session, "The session file (SESSION.yaml)")->required();
    slurm->add_option("--array", a->slurm.array, "Array tasks (shards)")
        ->required()
        ->check(rangeValidator(1, 100000));
    slurm->add_option("--partition", a->slurm.partition, "Slurm partition");
    slurm->add_option("--gpus-per-task", a->slurm.gpusPerTask, "GPUs per task")
        ->check(rangeValidator(0, 64));
    slurm
        ->add_option("--cpus-per-task", a->slurm.cpusPerTask,
                     "CPUs per task (also LibTorch's threads)")
        ->check(rangeValidator(0, 4096));
    slurm->add_option("--time", a->slurm.time,
                      "Time limit per task, as Slurm writes it (e.g. 2:00:00)");
    slurm->add_option("--account", a->slurm.account, "Slurm account");
    slurm->add_option("--device", a->slurm.device, "Passed to each task's run (e.g. cuda)")
        ->check(deviceListValidator());
    slurm->add_flag("--dry-run", a->slurm.dryRun, "Print the script; submit nothing");
    return {slurm, [a] { return slurmCommand(a->session, a->slurm); }};
}

const CommandRegistration kSlurmCommand(70, defineSlurm);

} // namespace

} // namespace headlab::cli
