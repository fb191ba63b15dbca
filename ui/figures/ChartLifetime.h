// ChartLifetime.h — the lifetime rule of the figures' chart objects. Qt Charts draws a series
// through a chart item that it removes with deleteLater() when the series leaves the chart; a
// series (or axis) deleted at once leaves that item, until the event loop deletes it, pointing at
// freed memory, and a paint in between crashed (issue 75: SIGSEGV in LineChartItem::paint and
// XYChart after lesson-strip presses and F11 mid-run; tests/ui/test_ui_stress). So a series or
// axis taken off a chart is deleted later too, after its item: never while a paint may reach it.
// Every figure takes series and axes off its chart through these, never with delete or
// QChart::removeAllSeries (which deletes at once).
#pragma once

class QAbstractAxis;
class QAbstractSeries;
class QChart;

namespace headlab::ui {

void retireSeries(QChart *chart, QAbstractSeries *series);
void retireAxis(QChart *chart, QAbstractAxis *axis);
void retireAllSeries(QChart *chart);
void retireAllAxes(QChart *chart);

} // namespace headlab::ui
