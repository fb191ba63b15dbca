// ChartLifetime.cpp — see ChartLifetime.h.
#include "ui/figures/ChartLifetime.h"

#include <QAbstractAxis>
#include <QAbstractSeries>
#include <QChart>

namespace headlab::ui {

void retireSeries(QChart *chart, QAbstractSeries *series)
{
    if (!series) return;
    if (series->chart() == chart) chart->removeSeries(series);
    series->deleteLater(); // after the chart item Qt Charts deleteLater()s on removal
}

void retireAxis(QChart *chart, QAbstractAxis *axis)
{
    if (!axis) return;
    // Hidden first: Qt Charts leaves a removed axis's labels in the scene until its item is
    // deleted, and a paint before that drew them under the new axis's (two sets of ticks, the
    // garbled labels of issue 75).
    axis->hide();
    chart->removeAxis(axis);
    axis->deleteLater();
}

void retireAllSeries(QChart *chart)
{
    for (auto *series : chart->series()) retireSeries(chart, series);
}

void retireAllAxes(QChart *chart)
{
    for (auto *axis : chart->axes()) retireAxis(chart, axis);
}

} // namespace headlab::ui
