// InspectCommand.cpp — prints and writes attention rows, head statistics, ablation and pruning.
#include "InspectCommand.h"

#include "CliCommands.h"
#include "CliOptions.h"
#include "Commands.h"

#include "core/config/Files.h"
#include "core/lab/SweepSession.h"
#include "core/metrics/Metrics.h"
#include "core/schema/TaskSpec.h"
#include "core/session/Session.h"
#include "core/train/Checkpoint.h"
#include "core/train/HeadInspector.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace headlab::cli {

namespace {

using json = nlohmann::json;

std::string number(double v)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", v);
    return buffer;
}

void writeText(const std::string &path, const std::string &text)
{
    writeFileAtomic(path, text, false);
}

// One run inspected at one checkpoint: what every output is made of.
struct Inspection {
    std::string session, checkpoint, reason, out;
    int row = 0;
    int64_t step = 0, totalHeads = 0;
    double testLoss = 0, loggedTestLoss = 0;
    AttentionMaps maps;
    AblationMode mode = AblationMode::Zero;
    std::vector<HeadStat> stats;
    std::vector<HeadAblation> ablation;
    std::vector<PruningCurve> pruning;
    std::vector<std::string> extras; // the task's own metrics, as delta_NAME columns
};

// The checkpoint asked for (--step), or the newest that reads whole and is this run's (checksum,
// config, ranges): a damaged or foreign one is named and passed over. nullptr, said, when none.
const CheckpointInfo *chooseCheckpoint(const std::vector<CheckpointInfo> &found,
                                       const SessionRun &run, long long wanted, int row,
                                       const std::string &dir)
{
    const CheckpointInfo *chosen = nullptr;
    if (wanted < 0) {
        for (const auto &c : found) {
            try {
                loadCheckpoint(c.path, &run.config);
                chosen = &c;
                break;
            } catch (const SessionError &e) {
                std::fprintf(stderr, "%s; an earlier checkpoint is used\n", e.what());
            }
        }
        if (!chosen) {
            std::fprintf(stderr, "headlab-cli inspect: run %d has no readable checkpoint in %s\n",
                         row, dir.c_str());
            return nullptr;
        }
    } else {
        std::string steps;
        for (const auto &c : found) {
            if (c.step == wanted) chosen = &c;
            steps = std::to_string(c.step) + (steps.empty() ? "" : ", ") + steps;
        }
        if (!chosen) {
            std::fprintf(
                stderr,
                "headlab-cli inspect: run %d has no checkpoint at step %lld; it has steps %s\n",
                row, wanted, steps.c_str());
            return nullptr;
        }
    }
    return chosen;
}

// attention.csv, head_stats.csv, ablation.csv and pruning.csv in the inspection's folder.
void writeInspectionCsv(const Inspection &x)
{
    std::filesystem::create_directories(x.out);
    {
        std::ostringstream csv;
        csv << "layer,head,query,key,query_label,key_label,weight\n";
        for (size_t l = 0; l < x.maps.weights.size(); ++l)
            for (int64_t h = 0; h < x.maps.heads[l]; ++h)
                for (int64_t q = 0; q < x.maps.queries; ++q)
                    for (int64_t k = 0; k < x.maps.keys; ++k)
                        csv << l << ',' << h << ',' << q << ',' << k << ','
                            << csvField(x.maps.labels[size_t(q)]) << ','
                            << csvField(x.maps.labels[size_t(k)]) << ','
                            << number(x.maps.at(l, h, q, k)) << '\n';
        writeText(x.out + "/attention.csv", csv.str());
    }
    std::vector<std::string> statNames;
    for (const auto &s : headStatTable()) statNames.push_back(s.name);
    {
        std::ostringstream csv;
        csv << "layer,head";
        for (const auto &n : statNames) csv << ',' << n;
        csv << '\n';
        for (const auto &s : x.stats) {
            csv << s.layer << ',' << s.head;
            for (const auto &n : statNames)
                csv << ',' << (s.values.count(n) ? number(s.values.at(n)) : "");
            csv << '\n';
        }
        writeText(x.out + "/head_stats.csv", csv.str());
    }
    {
        std::ostringstream csv;
        csv << "layer,head,mode,test_loss,delta";
        for (const auto &e : x.extras) csv << ",delta_" << e;
        csv << '\n';
        for (const auto &r : x.ablation) {
            csv << r.layer << ',' << r.head << ',' << toString(x.mode) << ',' << number(r.testLoss)
                << ',' << number(r.delta);
            for (const auto &e : x.extras) csv << ',' << number(r.extraDelta.at(e));
            csv << '\n';
        }
        writeText(x.out + "/ablation.csv", csv.str());
    }
    if (!x.pruning.empty()) {
        std::ostringstream csv;
        csv << "method,trained_steps,order,seed,ablation,removed,fraction,test_loss,layer,head,"
               "score\n";
        for (const auto &c : x.pruning)
            for (const auto &p : c.steps)
                csv << toString(c.method) << ',' << c.trainedSteps << ','
                    << (c.method == PruningMethod::L0Gates ? "" : toString(c.order)) << ','
                    << c.seed << ',' << toString(c.mode) << ',' << p.removed << ','
                    << number(p.fraction) << ',' << number(p.testLoss) << ',' << p.layer << ','
                    << p.head << ',' << (std::isfinite(p.score) ? number(p.score) : "") << '\n';
        writeText(x.out + "/pruning.csv", csv.str());
    }
    fsyncDirectory(x.out);
}

// Each bound of the table as JSON: what a reader labels the curves' removable_<name> with.
json boundsJson()
{
    json bounds = json::array();
    for (const auto &b : lossBoundTable())
        bounds.push_back(
            {{"name", b.name}, {"label", b.label}, {"value", b.value}, {"absolute", b.absolute}});
    return bounds;
}

// A curve's removable_<name> for each bound, against `intact`, the model's own test loss.
void addRemovable(json &curve, const PruningCurve &c, double intact)
{
    for (const auto &bound : lossBoundTable())
        curve[std::string("removable_") + bound.name] = c.removableWithin(bound, intact);
}

// The whole inspection as one JSON document (--json).
void printInspectionJson(const Inspection &x)
{
    json j;
    j["session"] = x.session;
    j["run"] = x.row;
    j["checkpoint"] = x.checkpoint;
    j["step"] = x.step;
    j["logged_test_loss"] = x.loggedTestLoss;
    j["test_loss"] = x.testLoss;
    j["input"] = x.maps.description;
    j["labels"] = x.maps.labels;
    j["focus_row"] = x.maps.focusRow;
    if (x.maps.probability >= 0) {
        j["prediction"] = x.maps.prediction;
        j["probability"] = x.maps.probability;
    }
    json layers = json::array();
    for (size_t l = 0; l < x.maps.weights.size(); ++l) {
        json heads = json::array();
        for (int64_t h = 0; h < x.maps.heads[l]; ++h) {
            json rows = json::array();
            for (int64_t q = 0; q < x.maps.queries; ++q) {
                json row = json::array();
                for (int64_t k = 0; k < x.maps.keys; ++k) row.push_back(x.maps.at(l, h, q, k));
                rows.push_back(row);
            }
            heads.push_back(rows);
        }
        layers.push_back(heads);
    }
    j["attention"] = layers; // [layer][head][query][key]
    json st = json::array();
    for (const auto &s : x.stats) {
        json e = {{"layer", s.layer}, {"head", s.head}};
        for (const auto &[k, v] : s.values) e[k] = v;
        st.push_back(e);
    }
    j["head_stats"] = st;
    json ab = json::array();
    for (const auto &r : x.ablation) {
        json e = {
            {"layer", r.layer}, {"head", r.head}, {"test_loss", r.testLoss}, {"delta", r.delta}};
        for (const auto &[k, v] : r.extraDelta) e["delta_" + k] = v;
        ab.push_back(e);
    }
    j["ablation"] = {{"mode", toString(x.mode)}, {"heads", ab}};
    json pr = json::array();
    for (const auto &c : x.pruning) {
        json steps = json::array();
        for (const auto &p : c.steps) {
            json e = {{"removed", p.removed},
                      {"fraction", p.fraction},
                      {"test_loss", p.testLoss},
                      {"layer", p.layer},
                      {"head", p.head}};
            if (std::isfinite(p.score)) e["score"] = p.score;
            steps.push_back(e);
        }
        json curve = {{"method", toString(c.method)},
                      {"trained_steps", c.trainedSteps},
                      {"order", c.method == PruningMethod::L0Gates ? "" : toString(c.order)},
                      {"seed", c.seed},
                      {"ablation", toString(c.mode)},
                      {"steps", steps}};
        if (std::isfinite(c.learningRate)) curve["learning_rate"] = c.learningRate;
        // Within each bound of the table, against the model before any head was removed.
        addRemovable(curve, c, x.testLoss);
        pr.push_back(curve);
    }
    j["pruning"] = pr;
    if (!x.pruning.empty()) j["bounds"] = boundsJson();
    j["csv"] = x.out;
    std::printf("%s\n", j.dump(1).c_str());
}

// The tables, for a terminal: the attention row, the statistics, ablation and pruning.
void printInspection(const Inspection &x)
{
    std::printf("run %d at step %lld (%s), %s\n", x.row, static_cast<long long>(x.step),
                x.reason.c_str(), x.checkpoint.c_str());
    std::printf("test loss %s (logged %s)\n\n", number(x.testLoss).c_str(),
                number(x.loggedTestLoss).c_str());
    std::printf("attention on %s\n", x.maps.description.c_str());
    if (x.maps.probability >= 0)
        std::printf("the model predicts '%s' (probability %s)\n", x.maps.prediction.c_str(),
                    number(x.maps.probability).c_str());
    const int64_t shownRow = x.maps.focusRow >= 0 ? x.maps.focusRow : x.maps.queries - 1;
    std::printf("row of position %lld (%s); the three keys it weighs most:\n",
                static_cast<long long>(shownRow), x.maps.labels[size_t(shownRow)].c_str());
    for (size_t l = 0; l < x.maps.weights.size(); ++l)
        for (int64_t h = 0; h < x.maps.heads[l]; ++h) {
            std::vector<std::pair<float, int64_t>> row;
            for (int64_t k = 0; k < x.maps.keys; ++k)
                row.push_back({x.maps.at(l, h, shownRow, k), k});
            std::sort(row.rbegin(), row.rend());
            std::printf("  layer %zu head %2lld:", l, static_cast<long long>(h));
            for (size_t i = 0; i < std::min<size_t>(3, row.size()); ++i)
                std::printf("  %s@%lld %.2f", x.maps.labels[size_t(row[i].second)].c_str(),
                            static_cast<long long>(row[i].second), row[i].first);
            std::printf("\n");
        }
    // One column per row of the statistics table (core/metrics: headStatTable).
    std::printf("\n%-5s %-4s", "layer", "head");
    for (const auto &row : headStatTable()) std::printf(" %10s", row.column);
    std::printf("\n");
    for (const auto &s : x.stats) {
        std::printf("%-5lld %-4lld", static_cast<long long>(s.layer),
                    static_cast<long long>(s.head));
        for (const auto &row : headStatTable())
            std::printf(" %10s",
                        s.values.count(row.name) ? number(s.values.at(row.name)).c_str() : "-");
        std::printf("\n");
    }
    std::printf("\nablation (%s): test loss with each head removed\n%-5s %-4s %10s %10s",
                toString(x.mode), "layer", "head", "test_loss", "delta");
    for (const auto &e : x.extras) std::printf(" %14s", ("d " + e).c_str());
    std::printf("\n");
    for (const auto &r : x.ablation) {
        std::printf("%-5lld %-4lld %10s %+10.4f", static_cast<long long>(r.layer),
                    static_cast<long long>(r.head), number(r.testLoss).c_str(), r.delta);
        for (const auto &e : x.extras) std::printf(" %+14.4f", r.extraDelta.at(e));
        std::printf("\n");
    }
    if (!x.pruning.empty()) {
        // One line per curve: how many heads go within each bound of lossBoundTable, and the
        // order they went in.
        std::string bounds;
        for (const auto &bound : lossBoundTable())
            bounds += (bounds.empty() ? "" : " / ") + std::string(bound.label);
        std::printf("\npruning (%s ablation; heads removed before the test loss rises by more "
                    "than %s, of %lld):\n",
                    toString(x.pruning.front().mode), bounds.c_str(),
                    static_cast<long long>(x.totalHeads));
        for (const auto &c : x.pruning) {
            std::string name = c.method == PruningMethod::L0Gates ? "" : toString(c.order);
            if (c.order == PruningOrder::Random) name += " (seed " + std::to_string(c.seed) + ")";
            if (c.method != PruningMethod::PostHoc)
                name = std::string(toString(c.method)) + (name.empty() ? "" : " " + name);
            std::string sequence;
            for (size_t i = 1; i < c.steps.size(); ++i)
                sequence +=
                    (i > 1 ? " " : "") +
                    (c.method == PruningMethod::L0Gates ? "λ " + number(c.steps[i].score) + ": " +
                                                              std::to_string(c.steps[i].removed)
                     : c.method == PruningMethod::Scratch
                         ? std::to_string(c.steps[i].removed) + ": " + number(c.steps[i].testLoss)
                         : std::to_string(c.steps[i].layer) + "." +
                               std::to_string(c.steps[i].head));
            std::string within;
            for (const auto &bound : lossBoundTable())
                within += (within.empty() ? "" : " / ") +
                          std::to_string(c.removableWithin(bound, x.testLoss));
            std::printf("  %-28s %-14s final loss %s   %s %s\n", name.c_str(), within.c_str(),
                        number(c.steps.back().testLoss).c_str(),
                        c.method == PruningMethod::L0Gates   ? "removed"
                        : c.method == PruningMethod::Scratch ? "loss at"
                                                             : "order",
                        sequence.c_str());
        }
    }
    std::printf("\nCSV: %s/{attention,head_stats,ablation%s}.csv\n", x.out.c_str(),
                x.pruning.empty() ? "" : ",pruning");
}

} // namespace

int inspectCommand(const InspectArguments &a)
{
    try {
        Session session = loadSessionReporting(a.session);
        expandSweep(session);
        std::string error;
        const int row = findRun(session, a.run, &error);
        if (row < 0) {
            std::fprintf(stderr, "headlab-cli inspect: %s\n", error.c_str());
            return kExitBadInput;
        }
        const SessionRun &run = session.runs[static_cast<size_t>(row)];
        const std::string dir = checkpointDirFor(a.session, run.config);
        std::vector<std::string> problems;
        const auto found =
            listCheckpoints(dir, &problems, false); // headers; the chosen one is read whole below
        for (const auto &p : problems) std::fprintf(stderr, "%s\n", p.c_str());
        if (found.empty()) {
            std::fprintf(stderr,
                         "headlab-cli inspect: run %d has no checkpoint in %s (it has not trained, "
                         "or the session "
                         "has `checkpoints: false`)\n",
                         row, dir.c_str());
            return kExitBadInput;
        }
        const CheckpointInfo *chosen = chooseCheckpoint(found, run, a.step, row, dir);
        if (!chosen) return kExitBadInput;
        const HeadInspector inspector(chosen->path, a.device, &run.config);
        const std::string input = a.input.empty() ? inspector.exampleInput() : a.input;
        AttentionMaps maps;
        try {
            maps = inspector.attention(input);
        } catch (const std::invalid_argument &e) {
            std::fprintf(stderr, "headlab-cli inspect: --input %s\n", e.what());
            return kExitBadInput;
        }
        Inspection x;
        x.session = a.session;
        x.checkpoint = chosen->path;
        x.reason = chosen->reason;
        x.row = row;
        x.step = inspector.step();
        x.totalHeads = inspector.totalHeads();
        x.loggedTestLoss = inspector.loggedTestLoss();
        x.testLoss = inspector.baseline().at("test_loss");
        x.maps = std::move(maps);
        x.mode = ablationModeOf(a.ablation);
        x.stats = inspector.statistics();
        x.ablation = inspector.ablate(x.mode);
        if (a.prune)
            for (const auto &name : a.orders) {
                PruningOptions o;
                o.mode = x.mode;
                o.order = pruningOrderOf(name);
                o.keepPerLayer = a.keepPerLayer;
                const int copies = o.order == PruningOrder::Random ? a.randomOrders : 1;
                for (int k = 0; k < copies; ++k) {
                    o.seed = a.seed + uint64_t(k);
                    x.pruning.push_back(inspector.prune(o));
                }
            }
        // With retraining: on the first order's curve (fine-tune, the control), and L0 gates.
        if (a.prune && !x.pruning.empty())
            for (const auto &name : a.retrain) {
                const PruningCurve &first = x.pruning.front();
                switch (pruningMethodOf(name)) {
                case PruningMethod::PostHoc:
                    break;
                case PruningMethod::FineTune:
                    x.pruning.push_back(inspector.fineTune(first, a.fineTuneSteps));
                    break;
                case PruningMethod::Scratch:
                    x.pruning.push_back(inspector.fromScratch(first, a.scratchPoints));
                    break;
                case PruningMethod::L0Gates:
                    x.pruning.push_back(inspector.l0Gates(a.lambdas, a.fineTuneSteps, a.seed));
                    break;
                }
            }
        if (!x.ablation.empty())
            for (const auto &[name, v] : x.ablation.front().extraDelta) x.extras.push_back(name);

        // CSV files.
        x.out = a.output;
        if (x.out.empty()) {
            std::string hash = runFileName(run.config);
            hash.resize(hash.size() - 5);
            x.out = resultsDirFor(a.session) + "/inspect/" + hash + "-step-" +
                    std::to_string(inspector.step());
        }
        writeInspectionCsv(x);
        if (a.json)
            printInspectionJson(x);
        else
            printInspection(x);
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitBadInput;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "headlab-cli inspect: %s\n", e.what());
        return kExitRunFailed;
    }
    return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// The command: its options and help (CLI11), registered with the command table.

namespace {

// "Inputs: addition: …; nearest_neighbour: …": each task's row says what its input is.
std::string inspectInputsHelp()
{
    std::string out = "Inputs, by task:";
    for (const TaskSpec *spec : taskTable()) out += "\n  " + spec->id + ": " + spec->inputHelp;
    return out;
}

CommandAction defineInspect(CLI::App &app)
{
    auto a = std::make_shared<InspectArguments>();
    CLI::App *inspect = app.add_subcommand(
        "inspect", "Inside the heads of a run at a checkpoint: attention, statistics, ablation");
    inspect->footer("Prints each head's attention row at the input's answer (or last) position, "
                    "the per-head statistics\n"
                    "(logit RMS and max, entropy, role scores, weight and gradient norms, update "
                    "alignment), the "
                    "test loss with each head removed,\n"
                    "and a pruning curve per order (heads removed one by one, one kept per "
                    "layer; --retrain adds\n"
                    "fine-tuning, the from-scratch control and L0 gates); writes attention.csv, "
                    "head_stats.csv, ablation.csv "
                    "and pruning.csv (default\n"
                    "folder SESSION.results/inspect/HASH-step-N). --json prints everything as one "
                    "JSON document.\n" +
                    inspectInputsHelp());
    inspect->add_option("session", a->session, "The session file (SESSION.yaml)")->required();
    inspect->add_option("--run", a->run, "The run: its row (0-based) or its result file's hash")
        ->required();
    inspect->add_option("--step", a->step, "A checkpoint's step (default: the newest)")
        ->check(checkpointStepValidator());
    inspect->add_option("--input", a->input,
                        "What to show the attention on (default: the task's example)");
    std::vector<std::string> modes, orders;
    std::string ordersHelp;
    for (const auto &row : ablationModeTable()) modes.push_back(row.name);
    for (const auto &row : pruningOrderTable()) {
        orders.push_back(row.name);
        ordersHelp += std::string("\n  ") + row.name + ": " + row.help;
    }
    a->orders = orders;
    inspect
        ->add_option("--ablation", a->ablation,
                     "What a removed head outputs: " + CLI::detail::join(modes, ", ") +
                         " (default zero; optimal: the constant that minimises the training "
                         "loss in its place)")
        ->check(CLI::IsMember(modes));
    inspect
        ->add_option("--order", a->orders,
                     "The pruning orders, comma-separated (default all):" + ordersHelp)
        ->delimiter(',')
        ->check(CLI::IsMember(orders));
    inspect
        ->add_option("--random-orders", a->randomOrders,
                     "Random orders, one per seed (default " + std::to_string(a->randomOrders) +
                         ")")
        ->check(rangeValidator(1, 1000));
    inspect->add_option("--seed", a->seed, "The first random order's seed (default 0)");
    inspect
        ->add_option("--keep-per-layer", a->keepPerLayer,
                     "Heads every layer keeps when pruning (default 1; 0 lets a layer lose all)")
        ->check(CLI::NonNegativeNumber);
    std::vector<std::string> methods;
    std::string methodsHelp;
    for (const auto &row : pruningMethodTable()) {
        if (row.method == PruningMethod::PostHoc) continue;
        methods.push_back(row.name);
        methodsHelp += std::string("\n  ") + row.name + ": " + row.help;
    }
    inspect
        ->add_option("--retrain", a->retrain,
                     "Pruning with retraining too, comma-separated (on the first order's curve):" +
                         methodsHelp)
        ->delimiter(',')
        ->check(CLI::IsMember(methods));
    inspect
        ->add_option("--fine-tune-steps", a->fineTuneSteps,
                     "Steps each pruned model (and the L0 gates) trains (default " +
                         std::to_string(a->fineTuneSteps) + ")")
        ->check(rangeValidator(1, 10000000));
    inspect
        ->add_option("--scratch-points", a->scratchPoints,
                     "Counts of heads removed the control trains, evenly spaced (default " +
                         std::to_string(a->scratchPoints) + "; 0: every count)")
        ->check(CLI::NonNegativeNumber);
    inspect
        ->add_option(
            "--l0-lambdas", a->lambdas,
            "The L0 penalty's lambdas, in loss per share of heads open (default " +
                [&] {
                    std::string list;
                    for (double l : a->lambdas) list += (list.empty() ? "" : ",") + number(l);
                    return list;
                }() +
                ")")
        ->delimiter(',')
        ->check(CLI::NonNegativeNumber);
    inspect->add_flag("!--no-prune", a->prune, "Skip the pruning curves");
    inspect->add_flag("--json", a->json, "Print JSON instead of tables");
    inspect->add_option("-o,--output", a->output, "Folder for the CSV files");
    inspect->add_option("--device", a->device, "cpu (default), cuda, auto");
    return {inspect, [a] { return inspectCommand(*a); }};
}

const CommandRegistration kInspectCommand(120, defineInspect);

// `recount FILE.json`: an `inspect --json` document's pruning counts under today's bounds and
// rule, for a file written before they were (its curves are kept as they are).
int recountCommand(const std::string &path)
{
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "%s: cannot be read\n", path.c_str());
        return 1;
    }
    json j;
    try {
        in >> j;
        const double intact = j.at("test_loss").get<double>();
        for (auto &c : j.at("pruning")) {
            PruningCurve curve;
            curve.method = pruningMethodOf(c.at("method").get<std::string>());
            for (const auto &s : c.at("steps"))
                curve.steps.push_back({s.at("removed").get<int64_t>(),
                                       s.at("fraction").get<double>(),
                                       s.at("test_loss").get<double>(), -1, -1});
            addRemovable(c, curve, intact);
        }
        j["bounds"] = boundsJson();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: not an inspect --json document with pruning curves (%s)\n",
                     path.c_str(), e.what());
        return 1;
    }
    std::printf("%s\n", j.dump(1).c_str());
    return 0;
}

CommandAction defineRecount(CLI::App &app)
{
    auto path = std::make_shared<std::string>();
    CLI::App *recount = app.add_subcommand(
        "recount", "An inspect --json file's pruning counts under today's bounds, to stdout");
    recount->add_option("file", *path, "The JSON `inspect --json` printed")
        ->required()
        ->check(CLI::ExistingFile);
    return {recount, [path] { return recountCommand(*path); }};
}

const CommandRegistration kRecountCommand(121, defineRecount);

} // namespace

} // namespace headlab::cli
