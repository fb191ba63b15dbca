// CliCommands.cpp — headlab-cli: its command table (CLI11), and each command on top of the core.
//
// The arguments, the usage lines and every --help text come from the CLI11 definitions in
// addCommands(); a command is one row there and one function in a file of its own (Commands.h).
// Sweeps run and store their results the way the app does (core/lab/SweepSession.h).
#include "CliCommands.h"

#include "Commands.h"
#include "InspectCommand.h"
#include "SlurmCommand.h"

#include "core/lab/SweepSession.h"
#include "core/schema/TaskSpec.h"
#include "core/session/Session.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

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

std::string labelsText(const std::map<std::string, std::string> &labels)
{
    std::string text;
    for (const auto &[key, value] : labels) text += (text.empty() ? "" : " ") + key + "=" + value;
    return text.empty() ? "(base)" : text;
}

void printProvenanceSpread(const Session &session, std::FILE *stream)
{
    const auto spread = provenanceSpread(session);
    if (spread.empty()) return;
    std::fprintf(stream, "runs of this session were trained under different settings:\n");
    for (const auto &line : spread) std::fprintf(stream, "  %s\n", line.c_str());
}

namespace {

// A checkpoint's step on the command line: a whole number, 0 or more, said in words (CLI11's
// NonNegativeNumber printed its range up to 1.8e308).
CLI::Validator checkpointStep()
{
    return CLI::Validator(
        [](std::string &text) -> std::string {
            long long step = 0;
            if (!CLI::detail::lexical_cast(text, step))
                return "'" + text + "' is not a checkpoint's step (a whole number, 0 or more)";
            if (step < 0) return "a checkpoint's step is 0 or more, got " + text;
            return {};
        },
        "STEP");
}

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

// ---------------------------------------------------------------------------------------------
// The command table.

struct Arguments {
    RunArguments run;
    SlurmArguments slurm;
    InspectArguments inspect;
    std::string session, output;
    std::vector<std::string> by;
    std::string stat = "median", spread = "iqr";
    SearchSummaryOptions search; // summary of a search
    std::vector<std::string> keep = {"final", "plateau"};
    bool dryRun = false;
    std::string markRun;              // keep: the run
    std::vector<long long> markSteps; // keep: its checkpoints' steps
    bool unmark = false;              // keep --off
    bool lrSensitivity = false;       // summary --lr-sensitivity
    bool running = false;             // export-csv --running
    int planGpus = 0;                 // validate --plan
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
                    "CPU threads for LibTorch (default: one less than the cores, at most 8; the "
                    "cores are OMP_NUM_THREADS when it is set)")
        ->check(CLI::Range(1, 4096));
    run->add_option("--concurrent", a.run.concurrent,
                    "Ensembles trained at once on each GPU, each on its own stream (default 4); on "
                    "the CPU, side by side (default: one per core, at most 8)")
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
        "file:line:col: key.path: message and exits 2. With --plan N, also the plan that\n"
        "run --device all follows on N GPUs: the ensembles the pending runs train in, each\n"
        "one's GPU, and each GPU's share of the work by the scheduler's cost model.");
    validate->add_option("session", a.session, "The session file (SESSION.yaml)")->required();
    validate
        ->add_option("--plan", a.planGpus,
                     "Also print how run --device all would group and place the pending runs on "
                     "this many GPUs (no GPU needed)")
        ->check(CLI::Range(1, 64));
    commands.push_back({validate, [&a] { return validateCommand(a.session, a.planGpus); }});

    CLI::App *presets = app.add_subcommand("presets", "List the built-in presets");
    presets->footer(
        "The presets are compiled into the binary. Run one with: headlab-cli run --preset NAME.");
    commands.push_back({presets, [] { return presetsCommand(); }});

    CLI::App *schema = app.add_subcommand(
        "schema", "Print the keys each record of a session or run file may hold, as JSON");
    schema->footer("The same key tables the readers check (core/session/SessionYaml.h): the Python "
                   "package ships\nthem as python/headlab/schema.json, and tests/python checks "
                   "that the two agree.");
    commands.push_back({schema, [] {
                            std::fputs(sessionSchemaJson().c_str(), stdout);
                            return kExitOk;
                        }});

    CLI::App *csv = app.add_subcommand("export-csv", "Write runs.csv and curves.csv of a session");
    csv->footer(
        "DIR/runs.csv: one row per run (labels, key configuration, status, metrics); "
        "DIR/curves.csv:\n"
        "run,curve,step,value for every point of every curve (run is the row of runs.csv).\n"
        "See docs/SESSION_FORMAT.md.");
    csv->add_option("session", a.session, "The session file (SESSION.yaml)")->required();
    csv->add_option("-o,--output", a.output, "The directory (DIR)")->required();
    csv->add_flag("--running", a.running,
                  "Add the runs in training now, as their trainers list them (status running, "
                  "steps_done their step, their newest checkpoint)");
    commands.push_back({csv, [&a] { return exportCsvCommand(a.session, a.output, a.running); }});

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
        ->check(checkpointStep());
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
    summary->add_option("--law-x", a.search.lawX,
                        "A search: fit the law against this axis instead of the session's "
                        "(head_dim, d_model, heads, total_heads, layers, width_multiplier)");
    summary
        ->add_option("--law-also", a.search.lawAlso,
                     "A search: further axes of the law, each with its own exponent "
                     "(comma-separated)")
        ->delimiter(',');
    summary
        ->add_option("--model", a.search.model,
                     "A search: read it with this model instead of the session's: separate (a "
                     "logistic per configuration) or joint (one model with the law inside it)")
        ->check(CLI::IsMember({"separate", "joint"}));
    summary
        ->add_option("--until-round", a.search.untilRound,
                     "A search: as it stood after this round (its later rounds' runs left out): "
                     "replays what it knew then")
        ->check(CLI::Range(0, 1'000'000));
    summary->add_flag("--lr-sensitivity", a.lrSensitivity,
                      "Per configuration (lr pooled): the learning-rate sensitivity over its "
                      "replicates (docs/STABILIZERS.md)");
    commands.push_back({summary, [&a] {
                            return summaryCommand(a.session, a.by, a.stat, a.spread, a.output,
                                                  a.search, a.lrSensitivity);
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
        ->check(checkpointStep());
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
    } catch (const SessionError &e) { // bad input, located by whoever read it: exit 2
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
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
