// SearchSummary.cpp — see SearchSummary.h.
#include "core/session/search/SearchSummary.h"

#include "core/config/Files.h"
#include "core/config/Yaml.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace headlab {

using namespace headlab::yaml;

namespace {

std::string csvLine(const std::vector<std::string> &fields)
{
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csvField(fields[i]);
    return line + "\n";
}

std::string labelsLine(const std::map<std::string, std::string> &labels)
{
    std::string text;
    for (const auto &[key, value] : labels) text += (text.empty() ? "" : " ") + key + "=" + value;
    return text.empty() ? "(the experiment)" : text;
}

std::string number3(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", value);
    return text;
}

} // namespace

std::string crossingSymbol(const std::string &axis)
{
    return axis == "lr" ? "η*" : axis + "*";
}

std::string searchSummaryText(const SearchReport &report)
{
    const bool log = report.logScale;
    std::string out;
    const std::string star = crossingSymbol(report.axis);
    char line[512];
    std::snprintf(line, sizeof line,
                  "boundary search along %s: %d rounds, %d runs (%d still to train); %s\n",
                  report.axis.c_str(), report.rounds, report.runs, report.pending,
                  report.finished ? "finished" : "not finished");
    out += line;
    size_t width = 13;
    for (const auto &c : report.configurations)
        width = std::max(width, labelsLine(c.configuration).size());
    std::snprintf(line, sizeof line, "%-*s %5s  %-12s %-10s %-23s %s\n", int(width),
                  "configuration", "runs", "state", star.c_str(), "interval",
                  log ? "width (decades)" : "width");
    out += line;
    for (const auto &c : report.configurations) {
        std::string estimate = "-", interval = "-", span = "-";
        if (c.interval.ok) {
            auto value = [&](double x) { return number3(log ? std::pow(10.0, x) : x); };
            estimate = value(c.interval.estimate);
            interval = std::string(c.interval.lowOpen ? "(" : "[") + value(c.interval.low) + ", " +
                       value(c.interval.high) + (c.interval.highOpen ? ")" : "]");
            span = number3(c.interval.width());
        }
        std::snprintf(line, sizeof line, "%-*s %5d  %-12s %-10s %-23s %s  (%s)\n", int(width),
                      labelsLine(c.configuration).c_str(), c.runs, toString(c.state),
                      estimate.c_str(), interval.c_str(), span.c_str(), c.note.c_str());
        out += line;
    }
    if (report.seeds == "paired") {
        // Seeds with few runs are monotone almost by construction (a bisection stays inside its
        // bracket), so those with five or more are counted apart.
        int seeds = 0, monotone = 0, covered = 0, checked = 0, tested = 0, testedMonotone = 0;
        for (const auto &c : report.configurations) {
            for (const auto &seed : c.seeds) {
                seeds += !seed.verdicts.empty();
                if (seed.verdicts.size() >= 5) {
                    ++tested;
                    testedMonotone += seed.bracket.monotone();
                }
            }
            monotone += c.monotoneSeeds();
            if (c.interval.ok && c.alternative.ok && c.stopped()) {
                ++checked;
                covered += c.interval.low <= c.alternative.estimate &&
                           c.alternative.estimate <= c.interval.high;
            }
        }
        std::snprintf(line, sizeof line,
                      "paired seeds: %d of %d seeds monotone along %s (a seed that learned on both "
                      "sides of a value where it failed is not); %s and its interval from one "
                      "slope with each seed's own offset; the logistic over every run, as a check, "
                      "puts %s inside that interval for %d of %d stopped configurations\n",
                      monotone, seeds, report.axis.c_str(), star.c_str(), star.c_str(), covered,
                      checked);
        out += line;
        std::snprintf(line, sizeof line, "  of the %d seeds with 5 or more runs, %d are monotone\n",
                      tested, testedMonotone);
        out += line;
    }
    const LawFit &law = report.law;
    if (!law.ok) {
        out += "law: " + law.note + "\n";
        return out;
    }
    std::string terms = "α log10 " + law.x;
    for (size_t k = 0; k < law.also.size(); ++k)
        terms += " − β" + std::to_string(k + 1) + " log10 " + law.also[k];
    std::snprintf(line, sizeof line, "law: log10 %s = log10 C − %s, over %d configurations%s\n",
                  star.c_str(), terms.c_str(), law.configurations,
                  law.provisional ? " (provisional: some are still searching)" : "");
    out += line;
    for (const auto &axis : law.leftOut)
        out += "  " + axis + " left out: over these configurations it follows from " + law.x +
               (law.also.empty() ? "" : " and the other axes") +
               " (its exponent cannot be told apart)\n";
    const int percent = int(std::lround(law.level * 100));
    std::snprintf(line, sizeof line, "  α = %.3f [%.3f, %.3f] (%d %%)   C = %s [%s, %s]\n",
                  law.alpha, law.alphaLow, law.alphaHigh, percent,
                  number3(std::pow(10.0, law.log10C)).c_str(),
                  number3(std::pow(10.0, law.log10CLow)).c_str(),
                  number3(std::pow(10.0, law.log10CHigh)).c_str());
    out += line;
    for (size_t k = 0; k < law.beta.size(); ++k) {
        std::snprintf(line, sizeof line,
                      "  β%zu (%s) = %.3f [%.3f, %.3f], correlation with α %.2f\n", k + 1,
                      law.also[k].c_str(), law.beta[k], law.betaLow[k], law.betaHigh[k],
                      k < law.correlation.size() ? law.correlation[k] : NAN);
        out += line;
    }
    if (law.model == "joint") {
        std::snprintf(line, sizeof line,
                      "  joint model: one slope shared by every configuration, the law inside the "
                      "likelihood; scatter about the law τ = %.3f %s\n",
                      law.tau, log ? "decades" : "units");
    } else {
        std::snprintf(line, sizeof line, "  χ² = %.2f on %d dof%s\n", law.chi2, law.dof,
                      law.scale > 1 ? " (the intervals are widened by sqrt(χ²/dof) for the misfit)"
                                    : "");
    }
    out += line;
    for (const auto &ref : law.references) {
        std::snprintf(line, sizeof line,
                      law.model == "joint"
                          ? "  α = %-4s: likelihood ratio χ² = %.2f on %d dof, p = %s; "
                            "%s the interval\n"
                          : "  α = %-4s: χ² = %.2f on %d dof, p = %s; %s the "
                            "interval\n",
                      ref.alpha == 0.5    ? "1/2"
                      : ref.alpha == 0.75 ? "3/4"
                                          : "1",
                      ref.chi2, ref.dof, std::isfinite(ref.p) ? number3(ref.p).c_str() : "-",
                      ref.inInterval ? "inside" : "outside");
        out += line;
    }
    if (const LawBend &bend = report.bend; bend.ok) {
        std::snprintf(line, sizeof line,
                      "bend: + γ (log10 %s − log10 %s)², γ = %.3f [%.3f, %.3f]; against the power "
                      "law Δχ² = %.1f (over χ²/dof where above 1), p = %s: %s\n"
                      "  local α %.2f at %s = %s, %.2f at %s, %.2f at %s; χ² = %.2f on %d dof\n",
                      bend.x.c_str(), number3(std::pow(10.0, bend.x0)).c_str(), bend.gamma,
                      bend.gammaLow, bend.gammaHigh, bend.statistic, number3(bend.p).c_str(),
                      bend.chosen ? "the bent law is chosen" : "the power law stands",
                      bend.alphaAtLow, bend.x.c_str(), number3(std::pow(10.0, bend.xLow)).c_str(),
                      bend.alpha, number3(std::pow(10.0, bend.x0)).c_str(), bend.alphaAtHigh,
                      number3(std::pow(10.0, bend.xHigh)).c_str(), bend.chi2, bend.dof);
        out += line;
    } else if (!bend.note.empty()) {
        out += "bend: " + bend.note + "\n";
    }
    if (law.model == "separate" && law.residuals.size() >= 3 && law.scale > 1) {
        out += "  the power law's misfit, largest first:";
        for (size_t i = 0; i < 3; ++i) {
            std::string name;
            for (const auto &[axis, value] : law.residuals[i].labels)
                name += (name.empty() ? "" : " ") + axis + "=" + value;
            std::snprintf(line, sizeof line, "%s %s %+.3f decades (%+.1f σ)", i ? ";" : "",
                          name.c_str(), law.residuals[i].decades, law.residuals[i].sigmas);
            out += line;
        }
        out += "\n";
    }
    if (const WidthAndHeads &wh = report.widthAndHeads; wh.ok) {
        std::snprintf(line, sizeof line,
                      "width and heads: log10 %s = log10 C − a log10 d_model + b log10 heads "
                      "(η·sqrt(m_H): a = b = 1/2; μP's width limit: a = 1, b = 0)\n"
                      "  a = %.3f [%.3f, %.3f]   b = %.3f [%.3f, %.3f] (%d %%), correlation "
                      "%.2f, by the %s model over %d configurations\n",
                      star.c_str(), wh.a(), wh.aLow(), wh.aHigh(), wh.b(), wh.bLow(), wh.bHigh(),
                      percent, wh.correlation(), wh.law.model.c_str(), wh.law.configurations);
        out += line;
    } else if (!wh.note.empty()) {
        out += "width and heads: " + wh.note + "\n";
    }
    if (const LawFit &other = report.alternative; other.ok) {
        std::snprintf(line, sizeof line,
                      "check, the %s model: α = %.3f [%.3f, %.3f], C = %s, over %d "
                      "configurations%s\n",
                      other.model == "joint" ? "joint" : "separate", other.alpha, other.alphaLow,
                      other.alphaHigh, number3(std::pow(10.0, other.log10C)).c_str(),
                      other.configurations,
                      other.model == "joint" ? (", τ = " + number3(other.tau)).c_str() : "");
        out += line;
    }
    if (!report.groups.empty())
        out += "law per group (configurations that differ in more than the model's shape):\n";
    for (const auto &g : report.groups) {
        std::string name;
        for (const auto &[axis, value] : g.labels)
            name += (name.empty() ? "" : " ") + axis + "=" + value;
        if (!g.law.ok) {
            out += "  " + name + ": " + g.law.note + "\n";
            continue;
        }
        std::snprintf(line, sizeof line,
                      "  %s: α = %.3f [%.3f, %.3f], C = %s, over %d configurations%s\n",
                      name.c_str(), g.law.alpha, g.law.alphaLow, g.law.alphaHigh,
                      number3(std::pow(10.0, g.law.log10C)).c_str(), g.law.configurations,
                      g.law.provisional ? " (provisional)" : "");
        out += line;
    }
    return out;
}

std::string searchSummaryCsv(const SearchReport &report)
{
    std::set<std::string> keys;
    for (const auto &c : report.configurations)
        for (const auto &[key, value] : c.configuration) keys.insert(key);
    std::vector<std::string> header(keys.begin(), keys.end());
    for (const char *column : {"runs", "verdicts", "state", "estimate", "low", "high", "low_open",
                               "high_open", "width", "slope"})
        header.push_back(column);
    const bool paired = report.seeds == "paired";
    if (paired)
        for (const char *column : {"seeds", "monotone_seeds", "seed_scatter"})
            header.push_back(column);
    std::string out = csvLine(header);
    for (const auto &c : report.configurations) {
        std::vector<std::string> row;
        for (const auto &key : keys) {
            auto it = c.configuration.find(key);
            row.push_back(it == c.configuration.end() ? "" : it->second);
        }
        row.push_back(std::to_string(c.runs));
        row.push_back(std::to_string(c.verdicts));
        row.push_back(toString(c.state));
        auto value = [&](double x) {
            return formatNumber(report.logScale ? std::pow(10.0, x) : x);
        };
        const bool ok = c.interval.ok;
        row.push_back(ok ? value(c.interval.estimate) : "");
        row.push_back(ok ? value(c.interval.low) : "");
        row.push_back(ok ? value(c.interval.high) : "");
        row.push_back(ok ? (c.interval.lowOpen ? "1" : "0") : "");
        row.push_back(ok ? (c.interval.highOpen ? "1" : "0") : "");
        row.push_back(ok ? formatNumber(c.interval.width()) : "");
        row.push_back(c.fit.ok ? formatNumber(c.fit.b) : "");
        if (paired) {
            row.push_back(std::to_string(c.seeds.size()));
            row.push_back(std::to_string(c.monotoneSeeds()));
            row.push_back(std::isfinite(c.seedScatter) ? formatNumber(c.seedScatter) : "");
        }
        out += csvLine(row);
    }
    return out;
}

} // namespace headlab
