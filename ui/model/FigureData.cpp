// FigureData.cpp — see FigureData.h.
#include "ui/model/FigureData.h"
#include "ui/model/CsvCell.h"

#include "core/metrics/Logistic.h"
#include "core/metrics/Metrics.h"

#include "ui/model/ColourTable.h"
#include "ui/model/RunMetrics.h"

#include "core/session/Replicates.h"
#include "core/session/search/SearchReport.h"

#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace headlab::ui {

namespace {
struct Accumulator {
    std::vector<double> values; // finite final test losses of the replicates
    int diverged = 0;
    int learned = 0;
    QList<int> runs; // the runs counted (their indices in the session)
};

int indexOf(const Session &session, const SessionRun &run)
{
    return int(&run - session.runs.data());
}

// A line's legend name: its own, then the rest of its configuration where it differs.
QString withRest(const QString &name, const QString &rest, const ConfigurationRest &rests)
{
    return rest.isEmpty() ? name : name + QStringLiteral(", ") + rests.legendName(rest);
}

// Finished runs only: Done contributes its loss, Diverged counts as not learned.
bool contributes(const RunResult &r)
{
    return r.status == RunStatus::Done || r.status == RunStatus::Diverged;
}

void addTo(Accumulator &a, const SessionRun &run, const Session &session, const FigureY &y = {})
{
    const RunResult &r = run.result;
    if (r.status == RunStatus::Diverged) {
        ++a.diverged;
        a.runs << indexOf(session, run);
        return;
    }
    if (y.learnedFraction) { // an outcome: learned or not (a loss that is not finite did not)
        const bool learned = std::isfinite(finalTestLoss(r)) && isLearned(session, r);
        a.values.push_back(learned ? 1.0 : 0.0);
        a.learned += learned ? 1 : 0;
        a.runs << indexOf(session, run);
        return;
    }
    if (!y.stat.isEmpty()) { // a head statistic: runs without it are left out, not counted diverged
        const double v = figureYOf(r, y);
        if (!std::isfinite(v)) return;
        a.values.push_back(v);
        a.learned += isLearned(session, r) ? 1 : 0;
        a.runs << indexOf(session, run);
        return;
    }
    const double v = finalTestLoss(r);
    a.runs << indexOf(session, run);
    if (!std::isfinite(v)) {
        ++a.diverged;
        return;
    }
    a.values.push_back(v);
    a.learned += isLearned(session, r) ? 1 : 0;
}

// One point per x at the replicates' statistic (median, or mean), with their range.
FigureSeries toSeries(const QString &name, const std::map<double, Accumulator> &points,
                      double &yMax, ReplicatePoint point = {}, bool learnedFraction = false)
{
    const ReplicateStat stat = point.stat;
    FigureSeries s;
    s.name = name;
    for (const auto &[x, a] : points) {
        if (learnedFraction) { // the fraction learned, its Wilson interval the whisker
            const int n = int(a.values.size()) + a.diverged;
            if (n == 0) continue;
            const double y = double(a.learned) / n;
            s.points << QPointF(x, y);
            s.runs << a.runs;
            s.learned << (a.learned * 2 > n);
            QList<double> outcomes(a.values.begin(), a.values.end());
            for (int k = 0; k < a.diverged; ++k) outcomes << 0.0;
            s.replicates << outcomes;
            s.spread << wilsonInterval(a.learned, n);
            s.learnedOf << std::make_pair(a.learned, n);
            yMax = std::max(yMax, 1.0);
            continue;
        }
        const SampleStats st = sampleStats(a.values);
        if (st.count > 0) {
            const int n = st.count + a.diverged;
            const double y = statValue(st, stat);
            s.points << QPointF(x, y);
            s.runs << a.runs;
            s.learned << (a.learned * 2 > n);
            s.replicates << QList<double>(a.values.begin(), a.values.end());
            s.spread << spreadRange(st, point.spread);
            s.learnedOf << std::make_pair(a.learned, n);
            yMax = std::max({yMax, y, st.max}); // every replicate stays on the axis
        } else if (a.diverged > 0) {
            s.divergedX << x;
            s.divergedRuns << a.runs;
        }
    }
    return s;
}
} // namespace

QList<std::pair<QString, FigureY>> figureYChoices()
{
    QList<std::pair<QString, FigureY>> out = {
        {QStringLiteral("final test loss"), FigureY{}},
        {QStringLiteral("P(learned), with its 95 % interval"), FigureY{{}, false, false, true}}};
    for (const auto &row : headStatTable()) { // the rows offered on the figures
        if (!row.onFigures) continue;
        const QString title = QString::fromUtf8(row.title), stat = QString::fromLatin1(row.name);
        out.push_back(
            {title + QStringLiteral(", 100 steps into the last phase"), FigureY{stat, true}});
        out.push_back({title + QStringLiteral(", at the end"), FigureY{stat, false}});
    }
    out.push_back({QStringLiteral("largest attention logit, 100 steps into the last phase"),
                   FigureY{QStringLiteral("logit_max"), true, true}});
    out.push_back({QStringLiteral("largest attention logit, at the end"),
                   FigureY{QStringLiteral("logit_max"), false, true}});
    return out;
}

QString figureYName(const FigureY &y)
{
    if (y.learnedFraction) return QStringLiteral("p_learned");
    if (y.stat.isEmpty()) return QString::fromLatin1(metric::kFinalTestLoss);
    return y.stat + (y.largest ? QStringLiteral("_largest") : QString()) +
           (y.early ? QStringLiteral("@100") : QStringLiteral("@end"));
}

FigureY figureYFromName(const QString &name)
{
    for (const auto &[title, y] : figureYChoices())
        if (figureYName(y) == name) return y;
    return {};
}

double figureYOf(const RunResult &result, const FigureY &y)
{
    if (y.learnedFraction) return NAN; // an outcome of the session's rule, not of one result
    if (y.stat.isEmpty()) return finalTestLoss(result);
    const int64_t target = (result.phaseStarts.empty() ? 0 : result.phaseStarts.back()) + 100;
    double sum = 0;
    int n = 0;
    for (const auto &[name, curve] : result.extra) {
        int64_t layer = 0, head = 0;
        std::string stat;
        if (curve.empty() || !parseHeadCurve(name, &layer, &head, &stat) ||
            QString::fromStdString(stat) != y.stat)
            continue;
        const CurvePoint *at = &curve.back();
        if (y.early) {
            at = nullptr;
            for (const auto &p : curve)
                if (p.step >= target) {
                    at = &p;
                    break;
                }
        }
        if (at && std::isfinite(at->value)) {
            sum = y.largest ? (n ? std::max(sum, at->value) : at->value) : sum + at->value;
            ++n;
        }
    }
    if (!n) return std::numeric_limits<double>::quiet_NaN();
    return y.largest ? sum : sum / n;
}

namespace {
// The y title and the title's start for a figure's y.
QString yWords(const FigureY &y)
{
    if (y.learnedFraction) return QStringLiteral("P(learned)");
    for (const auto &[title, choice] : figureYChoices())
        if (choice == y && !y.stat.isEmpty())
            return y.largest ? title : title + QStringLiteral(" (mean over heads)");
    return QStringLiteral("final test loss (nats)");
}

// Why a figure has nothing to draw, said over its empty plot: no run finished yet, or none has
// the chosen per-head statistic.
void explainEmpty(FigureData &d, const Session &session, const FigureY &y)
{
    if (y.learnedFraction && !givesVerdicts(session)) { // every run would count as not learned
        d.series.clear();
        d.shortLegend.clear();
        d.empty = QStringLiteral("This task gives no learned verdict (no loss level marks a "
                                 "learned run): P(learned) has nothing to count. Choose the final "
                                 "test loss in the y menu.");
        return;
    }
    for (const auto &s : d.series)
        if (!s.points.isEmpty() || !s.divergedX.isEmpty()) return;
    d.shortLegend.clear(); // no line to tell apart
    int finished = 0;
    for (const auto &run : session.runs) finished += contributes(run.result) ? 1 : 0;
    if (finished == 0)
        d.empty = QStringLiteral("Nothing to draw yet: a point appears as each run finishes "
                                 "(0 of %1 finished).")
                      .arg(session.runs.size());
    else if (!y.stat.isEmpty())
        d.empty = QStringLiteral("None of the %1 finished runs has the %2: runs trained before "
                                 "HeadLab logged per-head statistics have none%3. Choose the "
                                 "final test loss in the y menu, or train the runs again.")
                      .arg(finished)
                      .arg(yWords(y))
                      .arg(y.early ? QStringLiteral(", and a value 100 steps into the last phase "
                                                    "needs a last phase that long")
                                   : QString());
    else
        d.empty = QStringLiteral("None of the %1 finished runs is at this figure's settings.")
                      .arg(finished);
}

void applyY(FigureData &d, const FigureY &y)
{
    if (y.learnedFraction) { // the fraction of seeds, with its Wilson interval, on 0 … 1
        d.yTitle = QStringLiteral("P(learned), fraction of seeds");
        d.title.replace(QStringLiteral("Final test loss"), QStringLiteral("P(learned)"));
        static const QRegularExpression point(
            QStringLiteral(", (median and range|mean ± standard (error|deviation)) (over seeds|"
                           "in bins of ¼ decade)"));
        d.title.replace(point, QStringLiteral(", fraction learned \\3 with its 95 % interval"));
        d.yColumn = figureYName(y);
        d.lossAxis = false;
        d.yFromZero = true;
        d.yMax = 1.0;
        return;
    }
    if (y.stat.isEmpty()) return;
    d.yTitle = yWords(y);
    d.title.replace(QStringLiteral("Final test loss"),
                    yWords(y).left(1).toUpper() + yWords(y).mid(1));
    d.yColumn = figureYName(y);
    d.lossAxis = false;
    d.yFromZero = true;
}

QString pointWords(ReplicatePoint point)
{
    if (point.stat == ReplicateStat::Median) return QStringLiteral(", median and range over seeds");
    return point.spread == ReplicateSpread::Se
               ? QStringLiteral(", mean ± standard error over seeds")
               : QStringLiteral(", mean ± standard deviation over seeds");
}
} // namespace

FigureData scalingFigure(const Session &session, bool byHeadDim, const QString &lrLabel,
                         ReplicatePoint point, const FigureY &y)
{
    FigureData d;
    d.title = byHeadDim ? QStringLiteral("Final test loss against head dimension m_H = m / n_H")
                        : QStringLiteral("Final test loss against d_model m");
    d.title += pointWords(point);
    if (!lrLabel.isEmpty()) d.title += QStringLiteral(" (η = %1)").arg(displayLabel(lrLabel));
    d.xTitle = byHeadDim ? QStringLiteral("head dimension m_H") : QStringLiteral("d_model m");
    d.learnedMarkers = givesVerdicts(session); // no hollow "not learned" for text or retrieval
    d.yTitle = QStringLiteral("final test loss (%1)").arg(lossUnit(session));
    // One line per n_H and rest of the configuration (a stabilizer, η where several are kept):
    // a point pools the seeds of one configuration.
    using LineKey = std::pair<double, QString>;                // n_H, the rest
    std::map<LineKey, std::map<double, Accumulator>> byLine;   // line -> x -> values
    std::map<LineKey, std::vector<const SessionRun *>> runsOf; // its runs, for the colour
    std::set<std::string> drawn = {"d_model", "heads"};
    if (!lrLabel.isEmpty()) drawn.insert("lr"); // one η kept, named in the title
    const ConfigurationRest restOf(session, drawn);
    for (const auto &run : session.runs) {
        if (!contributes(run.result)) continue;
        if (!lrLabel.isEmpty()) {
            auto it = run.labels.find("lr");
            if (it != run.labels.end() && QString::fromStdString(it->second) != lrLabel) continue;
        }
        const double nH = headsPerLayer(run.config);
        const double x =
            byHeadDim ? double(headDimension(run.config)) : double(run.config.model.dModel);
        const QString rest = restOf(run);
        addTo(byLine[{nH, rest}][x], run, session, y);
        runsOf[{nH, rest}].push_back(&run);
    }
    const ColourTable colours = colourTable(session);
    for (const auto &[line, points] : byLine) {
        const auto &[nH, rest] = line;
        d.series.push_back(toSeries(withRest(QStringLiteral("n_H = %1").arg(nH), rest, restOf),
                                    points, d.yMax, point, y.learnedFraction));
        d.series.back().colour = colours.sharedIndex(runsOf[line]);
        // The rests of one n_H share its colour, a shade each.
        // (ConfigurationRest's values, in the sweep's order: a shade stays while runs finish.)
        if (const QStringList rests = restOf.values(); rests.size() > 1) {
            d.series.back().shade = int(rests.indexOf(rest));
            d.series.back().shades = int(rests.size());
        }
    }
    applyY(d, y);
    explainEmpty(d, session, y);
    return d;
}

namespace {

using ConfigName = std::function<QString(const SessionRun &)>;

// Beside the loss-against-η curves, each configuration's learning-rate sensitivity (Wortsman et
// al.: never shown alone), as a note for its legend entry.
std::map<QString, QString> sensitivityNotes(const Session &session, const ConfigName &configName)
{
    std::map<QString, QString> sensitivityOf;
    for (const auto &g : groupByConfigurationWithoutLr(session)) {
        const LrSensitivity sens = lrSensitivity(session, g.runs);
        if (!sens.stats.count || g.runs.empty()) continue;
        const auto [low, high] = replicateBand(sens.stats);
        sensitivityOf[configName(session.runs[size_t(g.runs.front())])] =
            sens.stats.count > 1
                ? QStringLiteral(" · LR sensitivity %1 (%2–%3)")
                      .arg(sens.stats.median, 0, 'g', 2)
                      .arg(low, 0, 'g', 2)
                      .arg(high, 0, 'g', 2)
                : QStringLiteral(" · LR sensitivity %1").arg(sens.stats.median, 0, 'g', 2);
    }
    return sensitivityOf;
}

} // namespace

FigureData learningRateFigure(const Session &session, bool scaled, ReplicatePoint point,
                              const FigureY &y, double exponent, bool exponentFitted)
{
    FigureData d;
    const QString scaledName = exponent == 0.5
                                   ? QStringLiteral("η·√m_H")
                                   : QStringLiteral("η·m_H^%1").arg(exponent, 0, 'f', 2);
    d.title = scaled ? QStringLiteral("Final test loss against ") + scaledName
                     : QStringLiteral("Final test loss against learning rate η");
    if (scaled && exponent != 0.5)
        d.title += exponentFitted ? QStringLiteral(" (α fitted by the search)")
                                  : QStringLiteral(" (α chosen)");
    // A boundary search places one run at each of many η: points of one run each, joined in η
    // order, zig-zag between neighbouring outcomes. Its runs are pooled in bins of a quarter
    // decade of x instead, each bin a point with its spread.
    const bool binned = session.search.has_value();
    d.title += binned ? pointWords(point).replace(QStringLiteral("over seeds"),
                                                  QStringLiteral("in bins of ¼ decade"))
                      : pointWords(point);
    d.xTitle = scaled ? scaledName : QStringLiteral("learning rate η");
    d.learnedMarkers = givesVerdicts(session);
    d.yTitle = QStringLiteral("final test loss (%1)").arg(lossUnit(session));
    // A configuration's name: its labels but η and the replicate axes ("d_model=48 heads=3").
    const auto replicates = replicateAxes(session);
    const ConfigName configName = [&](const SessionRun &run) {
        QStringList key;
        for (const auto &[axis, label] : configurationOf(session, run, "lr"))
            key << QString::fromStdString(axis) + "=" + QString::fromStdString(label);
        if (key.isEmpty())
            key << QStringLiteral("d_model=%1 heads=%2")
                       .arg(run.config.model.dModel)
                       .arg(headsPerLayer(run.config));
        return key.join(' ');
    };
    std::map<QString, std::map<double, Accumulator>> byConfig;
    std::map<QString, std::vector<const SessionRun *>> runsOf; // every run, finished or not
    for (const auto &run : session.runs) {
        runsOf[configName(run)].push_back(&run);
        if (!contributes(run.result)) continue;
        double x = scaled ? run.config.lr * std::pow(double(headDimension(run.config)), exponent)
                          : run.config.lr;
        if (binned && x > 0) x = std::pow(10.0, std::round(std::log10(x) * 4) / 4);
        addTo(byConfig[configName(run)][x], run, session, y);
    }
    // Beside the loss-against-η curves, each configuration's learning-rate sensitivity.
    const std::map<QString, QString> sensitivityOf = !scaled && !binned && y.stat.isEmpty()
                                                         ? sensitivityNotes(session, configName)
                                                         : std::map<QString, QString>{};
    // A line style per group of the axes that are not the model's shape (a stabilizer, the QK
    // rule, the logit scale), when there are several; and the lines in the sweep's order (heads
    // 1, 2, 3, 6, 12; not as text), each coloured by its place among all the session's
    // configurations, finished or not.
    std::map<QString, std::map<std::string, std::string>> groupOf;
    std::set<std::map<std::string, std::string>> groups;
    std::map<QString, size_t> rankOf; // a configuration's place in the sweep's order
    for (const auto &run : session.runs) {
        const QString name = configName(run);
        rankOf.emplace(name, rankOf.size());
        auto group = lawGroupOf(run.labels, "lr", {});
        for (const auto &axis : replicates) group.erase(axis); // seeds are not a style
        groupOf[name] = group;
        groups.insert(group);
    }
    // Each configuration's colour and shade, as every figure of configurations has them
    // (ColourTable.h); with shades, the short legend lists the colours and the shades.
    const ConfigurationColours colours = configurationColours(session, "lr");
    d.shortLegend = shortLegendOf(colours);
    std::vector<std::pair<size_t, QString>> ranked;
    for (const auto &[name, points] : byConfig) ranked.push_back({rankOf.at(name), name});
    std::sort(ranked.begin(), ranked.end());
    for (const auto &[rank, name] : ranked) {
        const auto &points = byConfig.at(name);
        FigureSeries series = toSeries(name, points, d.yMax, point, y.learnedFraction);
        const auto style =
            colours.styleOf(configurationOf(session, *runsOf.at(name).front(), "lr"));
        series.colour = style.colour;
        series.shade = style.shade;
        series.shades = colours.shades;
        if (const auto note = sensitivityOf.find(name); note != sensitivityOf.end())
            series.note = note->second;
        if (groups.size() > 1 && groupOf.count(name))
            series.dash = int(std::distance(groups.begin(), groups.find(groupOf[name]))) % 4;
        d.series.push_back(series);
    }
    // One η trained: the figure has no learning-rate axis to show; it says so, and which fits.
    std::set<double> rates;
    for (const auto &run : session.runs)
        if (contributes(run.result)) rates.insert(run.config.lr);
    if (rates.size() == 1 && !scaled)
        d.title += QStringLiteral(" — one learning rate trained (η = %1): the heatmap or loss "
                                  "against m_H shows this sweep")
                       .arg(exactNumber(*rates.begin()));
    applyY(d, y);
    explainEmpty(d, session, y);
    return d;
}

namespace {

QString schemeOf(const SessionRun &run)
{
    auto it = run.labels.find("head_schedule");
    if (it == run.labels.end()) return QStringLiteral("one schedule");
    const QString label = QString::fromStdString(it->second);
    return label.section(':', 0, 0);
}

QString stoppedNote(int stopped)
{
    return stopped > 0 ? QStringLiteral(" — %1 run(s) stopped early").arg(stopped) : QString();
}
} // namespace

FigureData rankFigure(const Session &session)
{
    FigureData d;
    d.xTitle = QStringLiteral("rank: head dimension m_H");
    d.yTitle = QStringLiteral("best epoch-mean loss (MSE × d)");
    d.yColumn = QString::fromLatin1(metric::kBestEpochMean);
    d.logY = true;
    d.learnedMarkers = false;
    d.referenceY = 1.0;
    d.referenceName = QStringLiteral("1: predict 0");
    struct Best {
        double loss = kNaN;
        int diverged = 0;
        QList<int> runs; // the seeds it is the best of
    };
    // (layers, w, the rest of the configuration) -> rank -> best over seeds
    using LineKey = std::tuple<int64_t, int64_t, QString>;
    std::map<LineKey, std::map<double, Best>> lines;
    const ConfigurationRest restOf(session, {"heads", "head_dim", "layers", "width_multiplier"});
    int stopped = 0;
    for (const auto &run : session.runs) {
        const RunResult &r = run.result;
        if (!reachedAnOutcome(r.status)) continue;
        auto &best = lines[{run.config.model.layers(), run.config.model.widthMultiplier,
                            restOf(run)}][double(headDimension(run.config))];
        best.runs << indexOf(session, run);
        double loss = kNaN;
        if (r.status != RunStatus::Diverged) {
            auto it = r.metrics.find(metric::kBestEpochMean);
            loss = it != r.metrics.end() ? it->second : finalTestLoss(r);
        }
        if (!std::isfinite(loss) || loss <= 0) {
            if (r.status == RunStatus::Stopped) continue; // stopped before any loss: nothing
            ++best.diverged;
            continue;
        }
        stopped += r.status == RunStatus::Stopped ? 1 : 0;
        if (!std::isfinite(best.loss) || loss < best.loss) best.loss = loss;
    }
    d.title = QStringLiteral("Loss against rank, best over seeds") + stoppedNote(stopped);
    for (const auto &[key, points] : lines) {
        FigureSeries s;
        s.name =
            withRest(QStringLiteral("L = %1, w = %2").arg(std::get<0>(key)).arg(std::get<1>(key)),
                     std::get<2>(key), restOf);
        for (const auto &[x, b] : points) {
            if (std::isfinite(b.loss)) {
                s.points << QPointF(x, b.loss);
                s.runs << b.runs;
                s.learned << (b.loss < d.referenceY); // beats predicting 0
                d.yMax = std::max(d.yMax, b.loss);
            } else if (b.diverged > 0) {
                s.divergedX << x;
                s.divergedRuns << b.runs;
            }
        }
        d.series.push_back(std::move(s));
    }
    explainEmpty(d, session, {});
    return d;
}

bool sharesEnsembleClock(const Session &session)
{
    std::map<double, int> seen;
    for (const auto &run : session.runs)
        if (run.result.wallSeconds > 0 && ++seen[run.result.wallSeconds] > 1) return true;
    return false;
}

namespace {
// scheme -> total heads -> accumulated y, for the total-heads figures.
using ByScheme = std::map<QString, std::map<double, Accumulator>>;

FigureData totalHeadsFigure(const Session &session, bool speed)
{
    FigureData d;
    d.logX = false;
    d.learnedMarkers = false;
    d.xTitle = QStringLiteral("total heads (sum over layers)");
    ByScheme byScheme;
    std::map<QString, std::vector<const SessionRun *>> runsOf; // line -> its runs
    // A line per scheme and rest of the configuration: a point pools seeds only.
    const ConfigurationRest restOf(session, {"head_schedule", "heads"});
    auto lineOf = [&](const SessionRun &run) {
        return withRest(schemeOf(run), restOf(run), restOf);
    };
    int stopped = 0;
    for (const auto &run : session.runs) {
        const RunResult &r = run.result;
        runsOf[lineOf(run)].push_back(&run);
        if (!reachedAnOutcome(r.status)) continue;
        Accumulator &a = byScheme[lineOf(run)][double(run.config.model.totalHeads())];
        double y = kNaN;
        if (speed) {
            auto it = r.metrics.find(metric::kStepsPerSecond);
            if (it != r.metrics.end())
                y = it->second;
            else if (r.wallSeconds > 0 && r.stepsDone > 0)
                y = double(r.stepsDone) / r.wallSeconds;
            if (!std::isfinite(y)) continue; // no clock: nothing to show, not a divergence
        } else {
            y = finalTestLoss(r);
            if (!std::isfinite(y)) {
                if (r.status == RunStatus::Stopped) continue; // stopped before any loss
                ++a.diverged;
                a.runs << indexOf(session, run);
                continue;
            }
        }
        stopped += r.status == RunStatus::Stopped ? 1 : 0;
        a.values.push_back(y);
        a.runs << indexOf(session, run);
    }
    if (speed) {
        const bool shared = sharesEnsembleClock(session);
        d.title = shared ? QStringLiteral("Ensemble training speed: runs trained together share "
                                          "one clock")
                         : QStringLiteral("Training speed per run");
        d.yTitle = shared ? QStringLiteral("ensemble steps / s") : QStringLiteral("steps / s");
        d.yColumn = QString::fromLatin1(metric::kStepsPerSecond);
    } else {
        d.title = QStringLiteral("Final test loss against total heads, mean over seeds") +
                  stoppedNote(stopped);
        d.yTitle = QStringLiteral("final test loss (%1)").arg(lossUnit(session));
        d.yFromZero = false;
    }
    const ColourTable colours = colourTable(session);
    for (const auto &[scheme, points] : byScheme) {
        FigureSeries s =
            toSeries(scheme, points, d.yMax, {ReplicateStat::Mean, ReplicateSpread::MinMax});
        s.learned.fill(true); // no learned / not-learned verdict here: every point is drawn alike
        s.colour = colours.sharedIndex(runsOf[scheme]);
        d.series.push_back(std::move(s));
    }
    explainEmpty(d, session, {});
    return d;
}
} // namespace

FigureData totalHeadsLossFigure(const Session &session)
{
    return totalHeadsFigure(session, false);
}

FigureData totalHeadsSpeedFigure(const Session &session)
{
    return totalHeadsFigure(session, true);
}

QString FigureData::csv() const
{
    // The learned column only where the figure marks it (ln 10 is the addition task's threshold).
    // y is the replicates' statistic; their count, the whisker's ends and how many learned follow.
    QString out =
        QStringLiteral("series,x,%1%2,replicates,whisker_low,whisker_high,learned_count,verdicts\n")
            .arg(csvCell(yColumn), learnedMarkers ? ",learned" : "");
    for (const auto &s : series) {
        const QString name = csvCell(s.name);
        for (int i = 0; i < s.points.size(); ++i) {
            out += QStringLiteral("%1,%2,%3")
                       .arg(name)
                       .arg(s.points[i].x(), 0, 'g', 10)
                       .arg(s.points[i].y(), 0, 'g', 10);
            if (learnedMarkers) out += QStringLiteral(",%1").arg(s.learned[i] ? 1 : 0);
            if (i < s.replicates.size())
                out += QStringLiteral(",%1,%2,%3,%4,%5\n")
                           .arg(s.replicates[i].size())
                           .arg(s.spread[i].first, 0, 'g', 10)
                           .arg(s.spread[i].second, 0, 'g', 10)
                           .arg(s.learnedOf[i].first)
                           .arg(s.learnedOf[i].second);
            else
                out += QStringLiteral(",,,,,\n");
        }
        for (double x : s.divergedX)
            out += QStringLiteral("%1,%2,diverged%3,,,,,\n")
                       .arg(name)
                       .arg(x, 0, 'g', 10)
                       .arg(learnedMarkers ? ",0" : "");
    }
    return out;
}

} // namespace headlab::ui
