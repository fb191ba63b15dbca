// SummaryCommand.cpp — headlab-cli summary: one row per configuration over its replicates, a search's η* and law (the command table: CliCommands.cpp).
#include "CliOptions.h"
#include "Commands.h"

#include "core/config/Files.h"
#include "core/session/Replicates.h"
#include "core/session/Session.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "core/session/search/SearchSummary.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headlab::cli {

namespace {

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
int searchSummary(Session session, const SearchSummaryOptions &options, const std::string &output)
{
    if (!applySearchOptions(session, options, "summary")) return kExitBadInput;
    const std::string &lawX = options.lawX;
    const std::vector<std::string> &lawAlso = options.lawAlso;
    const SearchReport report = searchReport(session, lawX, lawAlso, true);
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

} // namespace

bool applySearchOptions(Session &session, const SearchSummaryOptions &options, const char *command)
{
    if (!options.model.empty())
        session.search->model =
            options.model == "joint" ? SearchSpec::Model::Joint : SearchSpec::Model::Separate;
    if (session.search->model == SearchSpec::Model::Joint && !session.search->logScale) {
        std::fprintf(stderr,
                     "headlab-cli %s: --model joint: the joint model needs a log-scaled search "
                     "(search.scale: log)\n",
                     command);
        return false;
    }
    if (options.untilRound >= 0) session = searchUntilRound(session, options.untilRound);
    std::vector<std::string> asked = options.lawAlso;
    if (!options.lawX.empty()) asked.push_back(options.lawX);
    const auto &axes = lawDimensions();
    for (const auto &axis : asked) {
        if (std::find(axes.begin(), axes.end(), axis) != axes.end()) continue;
        std::fprintf(stderr,
                     "headlab-cli %s: --law-x/--law-also: '%s' is not an axis a law can be "
                     "fitted against (%s)\n",
                     command, axis.c_str(), joinedNames(axes, "and").c_str());
        return false;
    }
    return true;
}

int summaryCommand(const std::string &sessionPath, const std::vector<std::string> &by,
                   const std::string &statName, const std::string &spreadName,
                   const std::string &output, const SearchSummaryOptions &search, bool sensitivity)
{
    ReplicateStat stat = ReplicateStat::Median;
    ReplicateSpread spread = ReplicateSpread::Iqr;
    if (!parseReplicateStat(statName, &stat) || !parseReplicateSpread(spreadName, &spread))
        return kExitBadInput;
    Session session;
    session = loadSweepRuns(sessionPath);
    expandSweep(session);
    if (session.search) return searchSummary(std::move(session), search, output);
    if (search.untilRound >= 0 || !search.model.empty() || !search.lawX.empty() ||
        !search.lawAlso.empty()) {
        std::fprintf(stderr,
                     "headlab-cli summary: %s has no search: --model, --until-round, --law-x and "
                     "--law-also read a boundary search\n",
                     sessionPath.c_str());
        return kExitBadInput;
    }
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
// The command: its options and help (CLI11), registered with the command table.

namespace {

CommandAction defineSummary(CLI::App &app)
{
    struct Arguments {
        std::string session, output;
        std::vector<std::string> by;
        std::string stat = "median", spread = "iqr";
        SearchSummaryOptions search;
        bool lrSensitivity = false;
    };
    auto a = std::make_shared<Arguments>();
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
    summary->add_option("session", a->session, "The session file (SESSION.yaml)")->required();
    summary
        ->add_option("--by", a->by,
                     "Group by these axes only (comma-separated); the rest are pooled")
        ->delimiter(',');
    summary->add_option("--stat", a->stat, "median (default) or mean")
        ->check(CLI::IsMember({"median", "mean"}));
    summary->add_option("--spread", a->spread, "iqr (default), sd, se or minmax")
        ->check(CLI::IsMember({"iqr", "sd", "se", "minmax"}));
    summary->add_option("-o,--output", a->output, "Also write the table as CSV (FILE.csv)");
    summary->add_option("--law-x", a->search.lawX,
                        "A search: fit the law against this axis instead of the session's "
                        "(head_dim, d_model, heads, total_heads, layers, width_multiplier)");
    summary
        ->add_option("--law-also", a->search.lawAlso,
                     "A search: further axes of the law, each with its own exponent "
                     "(comma-separated)")
        ->delimiter(',');
    summary
        ->add_option("--model", a->search.model,
                     "A search: read it with this model instead of the session's: separate (a "
                     "logistic per configuration) or joint (one model with the law inside it)")
        ->check(CLI::IsMember({"separate", "joint"}));
    summary
        ->add_option("--until-round", a->search.untilRound,
                     "A search: as it stood after this round (its later rounds' runs left out): "
                     "replays what it knew then")
        ->check(rangeValidator(0, 1'000'000));
    summary->add_flag("--lr-sensitivity", a->lrSensitivity,
                      "Per configuration (lr pooled): the learning-rate sensitivity over its "
                      "replicates (docs/STABILIZERS.md)");
    return {summary, [a] {
                return summaryCommand(a->session, a->by, a->stat, a->spread, a->output, a->search,
                                      a->lrSensitivity);
            }};
}

const CommandRegistration kSummaryCommand(110, defineSummary);

} // namespace

} // namespace headlab::cli
