// FigureData.cpp — see FigureData.h.
#include "ui/FigureData.h"

#include "ui/RunMetrics.h"

#include <QStringList>

#include <algorithm>
#include <cmath>
#include <map>

namespace headlab::ui {

namespace {
struct Accumulator {
    double sum = 0;
    int n = 0;
    int diverged = 0;
    int learned = 0;
};

// Finished runs only: Done contributes its loss, Diverged counts as not learned.
bool contributes(const RunResult &r)
{
    return r.status == RunStatus::Done || r.status == RunStatus::Diverged;
}

void addTo(Accumulator &a, const RunResult &r)
{
    if (r.status == RunStatus::Diverged) {
        ++a.diverged;
        return;
    }
    const double v = finalTestLoss(r);
    if (!std::isfinite(v)) {
        ++a.diverged;
        return;
    }
    a.sum += v;
    ++a.n;
    a.learned += isLearned(r) ? 1 : 0;
}

FigureSeries toSeries(const QString &name, const std::map<double, Accumulator> &points,
                      double &yMax)
{
    FigureSeries s;
    s.name = name;
    for (const auto &[x, a] : points) {
        if (a.n > 0) {
            const double y = a.sum / a.n;
            s.points << QPointF(x, y);
            s.learned << (a.learned * 2 > a.n + a.diverged);
            yMax = std::max(yMax, y);
        } else if (a.diverged > 0) {
            s.divergedX << x;
        }
    }
    return s;
}
} // namespace

FigureData scalingFigure(const Session &session, bool byHeadDim, const QString &lrLabel)
{
    FigureData d;
    d.title = byHeadDim ? QStringLiteral("Final test loss against head dimension m_H = m / n_H")
                        : QStringLiteral("Final test loss against d_model m");
    if (!lrLabel.isEmpty()) d.title += QStringLiteral(" (η = %1)").arg(displayLabel(lrLabel));
    d.xTitle = byHeadDim ? QStringLiteral("head dimension m_H") : QStringLiteral("d_model m");
    d.yTitle = QStringLiteral("final test loss (nats)");
    std::map<double, std::map<double, Accumulator>> byHeads; // n_H -> x -> values
    for (const auto &run : session.runs) {
        if (!contributes(run.result)) continue;
        if (!lrLabel.isEmpty()) {
            auto it = run.labels.find("lr");
            if (it != run.labels.end() && QString::fromStdString(it->second) != lrLabel) continue;
        }
        const double nH = headsPerLayer(run.config);
        const double x =
            byHeadDim ? double(headDimension(run.config)) : double(run.config.model.dModel);
        addTo(byHeads[nH][x], run.result);
    }
    for (const auto &[nH, points] : byHeads)
        d.series.push_back(toSeries(QStringLiteral("n_H = %1").arg(nH), points, d.yMax));
    return d;
}

FigureData learningRateFigure(const Session &session, bool scaled)
{
    FigureData d;
    d.title = scaled ? QStringLiteral("Final test loss against η·√m_H")
                     : QStringLiteral("Final test loss against learning rate η");
    d.xTitle = scaled ? QStringLiteral("η·√m_H") : QStringLiteral("learning rate η");
    d.yTitle = QStringLiteral("final test loss (nats)");
    std::map<QString, std::map<double, Accumulator>> byConfig;
    for (const auto &run : session.runs) {
        if (!contributes(run.result)) continue;
        QStringList key;
        for (const auto &[axis, label] : run.labels)
            if (axis != "lr" && axis != "seed")
                key << QString::fromStdString(axis) + "=" + QString::fromStdString(label);
        if (key.isEmpty())
            key << QStringLiteral("d_model=%1 heads=%2")
                       .arg(run.config.model.dModel)
                       .arg(headsPerLayer(run.config));
        const double x =
            scaled ? run.config.lr * std::sqrt(double(headDimension(run.config))) : run.config.lr;
        addTo(byConfig[key.join(' ')][x], run.result);
    }
    for (const auto &[name, points] : byConfig) d.series.push_back(toSeries(name, points, d.yMax));
    return d;
}

QString FigureData::csv() const
{
    QString out = QStringLiteral("series,x,final_test_loss,learned\n");
    for (const auto &s : series) {
        QString name = s.name;
        name.replace('"', '\'');
        for (int i = 0; i < s.points.size(); ++i)
            out += QStringLiteral("\"%1\",%2,%3,%4\n")
                       .arg(name)
                       .arg(s.points[i].x(), 0, 'g', 10)
                       .arg(s.points[i].y(), 0, 'g', 10)
                       .arg(s.learned[i] ? 1 : 0);
        for (double x : s.divergedX)
            out += QStringLiteral("\"%1\",%2,diverged,0\n").arg(name).arg(x, 0, 'g', 10);
    }
    return out;
}

} // namespace headlab::ui
