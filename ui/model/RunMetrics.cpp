// RunMetrics.cpp — see RunMetrics.h.
#include "ui/model/RunMetrics.h"

#include "core/schema/Dimensions.h"
#include "core/session/Replicates.h"

#include "core/metrics/Metrics.h"

#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <charconv>

namespace headlab::ui {

double valueAtStep(const Curve &curve, int64_t step)
{
    if (curve.empty()) return kNaN;
    if (step < 0) return curve.back().value;
    double value = kNaN;
    for (const auto &p : curve) {
        if (p.step > step) break;
        value = p.value;
    }
    return value;
}

double finalTestLoss(const RunResult &result)
{
    if (result.status == RunStatus::Diverged) return kNaN;
    auto it = result.metrics.find(metric::kFinalTestLoss);
    if (it != result.metrics.end()) return it->second;
    return valueAtStep(result.test, -1);
}

double finalTrainLoss(const RunResult &result)
{
    if (result.status == RunStatus::Diverged) return kNaN;
    auto it = result.metrics.find(metric::kFinalTrainLoss);
    if (it != result.metrics.end()) return it->second;
    return valueAtStep(result.train, -1);
}

double testLossAtStep(const RunResult &result, int64_t step)
{
    if (step < 0) return finalTestLoss(result);
    if (result.status == RunStatus::Diverged && result.divergedAtStep >= 0 &&
        step >= result.divergedAtStep)
        return kNaN;
    return valueAtStep(result.test, step);
}

bool reachedAnOutcome(RunStatus status)
{
    return status == RunStatus::Done || status == RunStatus::Diverged ||
           status == RunStatus::Stopped;
}

bool isLearned(const Session &session, const RunResult &result)
{
    return runLearned(session, result).value_or(false);
}

bool givesVerdicts(const Session &session)
{
    const TaskSpec *spec = sessionTask(session);
    if (!spec) return true;
    if (!spec->learnedMeaning) return false;
    if (!spec->chancePlateau) return true;
    return std::any_of(session.runs.begin(), session.runs.end(), [&](const SessionRun &run) {
        return runLearned(session, run.result).has_value();
    });
}

QString lossUnit(const Session &session)
{
    const TaskSpec *spec = sessionTask(session);
    return QString::fromUtf8(spec ? spec->lossUnit : "nats");
}

int64_t headDimension(const RunConfig &config)
{
    return config.model.heads.empty() ? config.model.dModel : config.model.headDimOfLayer(0);
}

double headsPerLayer(const RunConfig &config)
{
    const auto &h = config.model.heads;
    if (h.empty()) return 0;
    for (auto v : h)
        if (v != h.front()) return double(config.model.totalHeads()) / double(h.size());
    return double(h.front());
}

QString axisLabel(const SessionRun &run, const std::string &axis)
{
    auto it = run.labels.find(axis);
    return it == run.labels.end() ? QString() : QString::fromStdString(it->second);
}

QString runLabel(const Session &session, const SessionRun &run, bool includeSeed)
{
    QStringList parts;
    for (const auto &axis : session.axes) {
        if (!includeSeed && axis.name == "seed") continue;
        if (axis.values.size() < 2 && session.axes.size() > 1) continue; // not varied: noise
        auto it = run.labels.find(axis.name);
        if (it != run.labels.end())
            parts << QString::fromStdString(axis.name) + "=" +
                         displayLabel(QString::fromStdString(it->second));
    }
    // Labels the session did not declare as axes (a rerun with another seed, say).
    for (const auto &[name, value] : run.labels) {
        bool declared = false;
        for (const auto &axis : session.axes) declared = declared || axis.name == name;
        if (!declared && (includeSeed || name != "seed"))
            parts << QString::fromStdString(name) + "=" +
                         displayLabel(QString::fromStdString(value));
    }
    if (parts.isEmpty()) {
        parts << QStringLiteral("d_model=%1").arg(run.config.model.dModel);
        parts << QStringLiteral("heads=%1").arg(headsPerLayer(run.config));
        parts << QStringLiteral("lr=%1").arg(formatNumber(run.config.lr));
    }
    return parts.join(' ');
}

QString statusText(RunStatus status)
{
    switch (status) {
    case RunStatus::Queued:
        return QStringLiteral("queued");
    case RunStatus::Running:
        return QStringLiteral("running");
    case RunStatus::Paused:
        return QStringLiteral("paused");
    case RunStatus::Done:
        return QStringLiteral("done");
    case RunStatus::Diverged:
        return QStringLiteral("diverged");
    case RunStatus::Failed:
        return QStringLiteral("failed");
    case RunStatus::Stopped:
        return QStringLiteral("stopped");
    }
    return QStringLiteral("?");
}

QColor statusColor(RunStatus status, bool dark)
{
    switch (status) {
    case RunStatus::Running:
        return dark ? QColor(110, 170, 255) : QColor(20, 90, 200);
    case RunStatus::Paused:
        return dark ? QColor(230, 190, 90) : QColor(160, 110, 0);
    case RunStatus::Done:
        return dark ? QColor(120, 210, 130) : QColor(20, 130, 40);
    case RunStatus::Diverged:
        return dark ? QColor(255, 120, 110) : QColor(190, 30, 30);
    case RunStatus::Failed:
        return dark ? QColor(255, 120, 200) : QColor(160, 0, 110);
    case RunStatus::Stopped:
        return dark ? QColor(170, 170, 170) : QColor(110, 110, 110);
    case RunStatus::Queued:
        break;
    }
    return dark ? QColor(200, 200, 200) : QColor(60, 60, 60);
}

QString formatLoss(double value)
{
    if (!std::isfinite(value)) return QStringLiteral("—");
    return QString::number(value, 'f', value < 0.01 ? 4 : 3);
}

QString formatDuration(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("—");
    const auto s = static_cast<long long>(std::llround(seconds));
    if (s < 60) return QStringLiteral("%1 s").arg(s);
    if (s < 3600) return QStringLiteral("%1 m %2 s").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
    return QStringLiteral("%1 h %2 m").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QChar('0'));
}

QString displayLabel(const QString &label)
{
    bool ok = false;
    const double v = label.toDouble(&ok);
    // Short plain numbers as written ("384", "0.03"); long ones and every exponent form in one
    // style ("3e-05" and "0.000169" read "3e-5" and "1.69e-4" side by side).
    const bool exponent = label.contains(QLatin1Char('e')) || label.contains(QLatin1Char('E'));
    if (!ok || (label.size() <= 6 && !exponent)) return label;
    return formatNumber(std::stod(QString::number(v, 'g', 3).toStdString()));
}

QString displayKey(const QString &key)
{
    static const QRegularExpression pair(QStringLiteral("^([A-Za-z_][A-Za-z0-9_.]*)=(\\S+)$"));
    QStringList parts;
    for (const QString &word : key.split(' ', Qt::SkipEmptyParts)) {
        const auto m = pair.match(word);
        if (!m.hasMatch()) return key;
        parts << axisValueText(m.captured(1).toStdString(), m.captured(2));
    }
    return parts.isEmpty() ? key : parts.join(QStringLiteral(", "));
}

QString axisValueText(const std::string &axis, const QString &value)
{
    return QString::fromStdString(dimensionSymbol(axis)) + QStringLiteral(" = ") +
           displayLabel(value);
}

QString exactNumber(double value)
{
    if (!std::isfinite(value)) return QString::number(value);
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value); // shortest round trip
    return QString::fromLatin1(buffer, int(result.ptr - buffer));
}

QString formatNumber(double value)
{
    if (!std::isfinite(value)) return QStringLiteral("—");
    if (value != 0 && (std::abs(value) < 1e-2 || std::abs(value) >= 1e5)) {
        QString s = QString::number(value, 'e', 2);
        // 1.00e-03 -> 1e-3, 3.16e-04 -> 3.16e-4
        auto parts = s.split('e');
        QString mant = parts[0];
        if (mant.contains('.')) {
            while (mant.endsWith('0')) mant.chop(1);
            if (mant.endsWith('.')) mant.chop(1);
        }
        int exp = parts[1].toInt();
        return mant + "e" + QString::number(exp);
    }
    return QString::number(value, 'g', 4);
}

const TaskSpec *sessionTask(const Session &session)
{
    return findTaskSpec(session.base.task.kind);
}

double initialLossOf(const Session &session)
{
    const TaskSpec *spec = sessionTask(session);
    return spec && spec->initialLoss ? spec->initialLoss(session.base.task) : 0.0;
}

std::vector<PlateauLine> plateausOf(const Session &session)
{
    const TaskSpec *spec = sessionTask(session);
    return spec && spec->plateaus ? spec->plateaus(session.base.task) : std::vector<PlateauLine>{};
}

int replicateShade(const Session &session, const SessionRun &run, const std::string &except)
{
    for (const auto &axis : replicateAxes(session)) {
        if (axis == except) continue;
        const QStringList values = axisValueLabels(session, axis);
        const auto it = run.labels.find(axis);
        if (values.size() < 2 || it == run.labels.end()) continue;
        return int(values.indexOf(QString::fromStdString(it->second)));
    }
    return -1;
}

QColor shadedColour(QColor colour, int shade, bool dark, int percent)
{
    if (shade <= 0) return colour;
    return dark ? colour.darker(100 + percent * shade) : colour.lighter(100 + percent * shade);
}

QStringList sweptAxes(const Session &session)
{
    QStringList out;
    for (const auto &axis : session.axes) out << QString::fromStdString(axis.name);
    // Axes set together in `sweep.combinations` (the paper's (n_H, m) pairs) are swept too.
    for (const auto &combination : session.combinations)
        for (const auto &[name, value] : combination)
            if (!out.contains(QString::fromStdString(name))) out << QString::fromStdString(name);
    auto prefer = [&](const QString &name, int at) {
        const int i = int(out.indexOf(name));
        if (i > at) out.move(i, at);
    };
    // The headline shapes first (d_model, then heads: the dimension table's order).
    int first = 0;
    for (const auto &name : headlineDimensions())
        if (isShapeDimension(name) && out.contains(QString::fromStdString(name)))
            prefer(QString::fromStdString(name), first++);
    return out;
}

QStringList axisValueLabels(const Session &session, const std::string &axis)
{
    QStringList out;
    for (const auto &a : session.axes)
        if (a.name == axis)
            for (const auto &v : a.values) out << QString::fromStdString(v.label());
    if (!out.isEmpty()) return out;
    // An axis of `sweep.combinations`, or one only some runs carry (a rerun's seed): collect
    // the labels seen, in numeric order when they are numbers.
    auto add = [&](const std::string &label) {
        const QString l = QString::fromStdString(label);
        if (!out.contains(l)) out << l;
    };
    for (const auto &combination : session.combinations) {
        auto it = combination.find(axis);
        if (it != combination.end()) add(it->second.label());
    }
    for (const auto &run : session.runs) {
        auto it = run.labels.find(axis);
        if (it != run.labels.end()) add(it->second);
    }
    // A combination that does not set the axis: its runs have the value their config has
    // (configurationLabels), which is one of the axis's values too.
    if (std::any_of(session.combinations.begin(), session.combinations.end(),
                    [&](const SweepCombination &c) { return !c.count(axis); }) &&
        std::any_of(session.combinations.begin(), session.combinations.end(),
                    [&](const SweepCombination &c) { return c.count(axis) > 0; }))
        for (const auto &labels : configurationLabels(session))
            if (auto it = labels.find(axis); it != labels.end()) add(it->second);
    bool numeric = true;
    for (const auto &l : out) {
        bool ok = false;
        l.toDouble(&ok);
        numeric = numeric && ok;
    }
    if (numeric)
        std::sort(out.begin(), out.end(),
                  [](const QString &a, const QString &b) { return a.toDouble() < b.toDouble(); });
    return out;
}

} // namespace headlab::ui
