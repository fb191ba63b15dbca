// ValidateCommand.cpp — headlab-cli validate: whether a session reads and what it would train (the command table: CliCommands.cpp).
#include "CliOptions.h"
#include "Commands.h"

#include "core/lab/SweepSession.h"
#include "core/session/Session.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "core/train/SweepRunner.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace headlab::cli {

namespace {

// The distinct head counts of an ensemble's runs, "1, 2, 3" (a run's layers: "1/2/4/8").
std::string headsText(const std::vector<SweepJob> &ensemble)
{
    std::set<std::vector<int64_t>> seen;
    std::string out;
    for (const auto &job : ensemble) {
        const auto &heads = job.config.model.heads;
        if (!seen.insert(heads).second) continue;
        // One number where every layer has as many heads; else each layer's, "1/2/4/8".
        std::string one;
        if (std::all_of(heads.begin(), heads.end(), [&](int64_t h) { return h == heads.front(); }))
            one = std::to_string(heads.front());
        else
            for (int64_t h : heads) one += (one.empty() ? "" : "/") + std::to_string(h);
        out += (out.empty() ? "" : ", ") + one;
    }
    return out;
}

// How SweepRunner would train the pending runs on `gpus` GPUs (planSweep): each GPU's ensembles
// and its share of the work by the cost model (ensembleWork), and the speed-up over one GPU that
// the busiest GPU allows by that model. Ensembles are planned at the default size cap: a GPU's
// free memory can cut them smaller when the run starts.
void printPlan(const Session &session, int gpus)
{
    const std::vector<SweepJob> jobs = pendingJobs(session);
    if (jobs.empty()) {
        std::printf("  plan on %d GPU%s: nothing to train\n", gpus, gpus == 1 ? "" : "s");
        return;
    }
    std::vector<std::string> cards;
    for (int k = 0; k < gpus; ++k) cards.push_back("cuda:" + std::to_string(k));
    const SweepPlan plan = planSweep(jobs, SweepOptions{}, cards, 0);
    double total = 0;
    for (double w : plan.work) total += w;
    std::vector<double> load(static_cast<size_t>(gpus), 0.0);
    for (size_t k = 0; k < load.size(); ++k)
        for (const size_t e : plan.onDevice(k)) load[k] += plan.work[e];
    const double busiest = *std::max_element(load.begin(), load.end());
    if (gpus == 1)
        std::printf("  plan on 1 GPU: %zu runs in %zu ensembles\n", jobs.size(),
                    plan.ensembles.size());
    else
        std::printf("  plan on %d GPUs: %zu runs in %zu ensembles; by the cost model, the busiest "
                    "GPU has %.1f %% of the work (%.2fx one GPU at most)\n",
                    gpus, jobs.size(), plan.ensembles.size(), 100.0 * busiest / total,
                    total / busiest);
    for (int k = 0; k < gpus; ++k) {
        std::printf("    cuda:%d, %.1f %%:", k, 100.0 * load[static_cast<size_t>(k)] / total);
        bool first = true;
        for (const size_t e : plan.onDevice(static_cast<size_t>(k))) {
            const auto &ensemble = plan.ensembles[e];
            const ModelConfig &m = ensemble.front().config.model;
            std::printf("%s %zu run%s of d_model %lld%s, heads %s (%.1f %%)", first ? "" : ";",
                        ensemble.size(), ensemble.size() == 1 ? "" : "s", (long long)m.dModel,
                        m.widthMultiplier > 1 ? (" w " + std::to_string(m.widthMultiplier)).c_str()
                                              : "",
                        headsText(ensemble).c_str(), 100.0 * plan.work[e] / total);
            first = false;
        }
        std::printf("%s\n", first ? " nothing" : "");
    }
}

} // namespace

int validateCommand(const std::string &path, int planGpus)
{
    Session session;
    session = loadSessionReporting(path);
    expandSweep(session);
    const size_t pending = pendingRuns(session).size();
    size_t missing = 0; // runs of the sweep whose finished result's file is gone
    for (const auto &run : session.runs)
        missing += !isFinished(run.result.status) &&
                   session.missingRunFiles.count(runFileName(run.config)) > 0;
    std::printf("%s: valid session '%s' (schema %d): %zu runs (%zu finished, %zu to run%s), %zu "
                "skipped\n",
                path.c_str(), session.name.c_str(), session.schemaVersion, session.runs.size(),
                session.runs.size() - pending - missing, pending,
                missing > 0 ? (", " + std::to_string(missing) + " finished but missing").c_str()
                            : "",
                session.skipped.size());
    if (!session.missingRunFiles.empty())
        std::fprintf(stderr, "%s\n", missingResultsMessage(session, path).c_str());
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
    if (planGpus > 0) printPlan(session, planGpus);
    if (session.runs.empty() && !session.skipped.empty()) {
        std::fprintf(
            stderr,
            "%s: nothing can run: every combination of the sweep is skipped (why is above)\n",
            path.c_str());
        return kExitBadInput;
    }
    return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// The command: its options and help (CLI11), registered with the command table.

namespace {

CommandAction defineValidate(CLI::App &app)
{
    struct Arguments {
        std::string session;
        int planGpus = 0;
    };
    auto a = std::make_shared<Arguments>();
    CLI::App *validate =
        app.add_subcommand("validate", "Read a session and expand its sweep without training");
    validate->footer(
        "Prints a summary (runs, skipped combinations and why) and exits 0, or prints\n"
        "file:line:col: key.path: message and exits 2. With --plan N, also the plan that\n"
        "run --device all follows on N GPUs: the ensembles the pending runs train in, each\n"
        "one's GPU, and each GPU's share of the work by the scheduler's cost model.");
    validate->add_option("session", a->session, "The session file (SESSION.yaml)")->required();
    validate
        ->add_option("--plan", a->planGpus,
                     "Also print how run --device all would group and place the pending runs on "
                     "this many GPUs (no GPU needed)")
        ->check(rangeValidator(1, 64));
    return {validate, [a] { return validateCommand(a->session, a->planGpus); }};
}

const CommandRegistration kValidateCommand(20, defineValidate);

} // namespace

} // namespace headlab::cli
