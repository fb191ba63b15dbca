// FigureData.h — the numbers behind the paper's Figures 3 and 4, computed from a session.
//
// Figure 3: final test loss against m (d_model) and against m_H = m / n_H, one line per n_H, at
// one learning rate. Figure 4: final test loss, and learned / not learned, against η and against
// η·sqrt(m_H), one line per configuration. Only finished runs count; the figures fill in live as
// runs finish. Seeds (and any axis not plotted) are averaged.
#pragma once

#include "core/Session.h"

#include <QList>
#include <QPointF>
#include <QString>

#include <vector>

namespace headlab::ui {

struct FigureSeries {
    QString name;
    QList<QPointF> points;   // sorted by x
    QList<bool> learned;     // per point: mean final test loss below ln 10
    QList<double> divergedX; // x of points where every run diverged, drawn at the top
};

struct FigureData {
    QString title;
    QString xTitle;
    QString yTitle;
    bool logX = true;
    std::vector<FigureSeries> series;
    double yMax = 0.0;
    QString csv() const;
};

// Figure 3. byHeadDim: x is m_H instead of m. lrLabel: the lr axis label to keep ("" keeps all).
FigureData scalingFigure(const Session &session, bool byHeadDim, const QString &lrLabel);
// Figure 4. scaled: x is η·sqrt(m_H) instead of η.
FigureData learningRateFigure(const Session &session, bool scaled);

} // namespace headlab::ui
