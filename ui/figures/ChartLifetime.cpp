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
