// ChartTheme.h — colours, line widths and font sizes shared by every figure, derived from the
// application palette (light or dark, following the system) and the presenter-mode switch.
#pragma once

#include <QColor>
#include <QFont>
#include <QList>
#include <QPalette>

class QChart;
class QPainter;
class QRectF;
class QAbstractAxis;

namespace headlab::ui {

struct ChartTheme {
    bool dark = false;
    bool presenter = false;
    QColor background;
    QColor plotBackground;
    QColor foreground; // text, axes
    QColor grid;
    QColor muted;           // plateau lines, secondary text
    QColor diverged;        // diverged runs' marks: not a colour of `series`
    QList<QColor> series;   // one colour per value of the colour axis, colour-blind safe
    double lineScale = 1.0; // presenter mode draws thicker lines
    double fontScale = 1.0; // and larger text

    static ChartTheme fromPalette(const QPalette &palette, bool presenter);
    // The current application palette; `presenter` from the process-wide switch below.
    static ChartTheme current();
    // Presenter mode scales the figures' type by `fontScale` (lines by 1.4 times it).
    static void setPresenterMode(bool on, double fontScale = 1.6);
    static bool presenterMode();
    // The presenter scale for a screen `height` logical pixels tall: type readable from the back
    // of a lecture room, twice the desk size at 1080 lines, in proportion to the screen between
    // 1.4 (720 lines) and 3.
    static double presenterScaleFor(int height);

    QColor seriesColor(int i) const
    {
        return series.at(((i % series.size()) + series.size()) % series.size());
    }
    // Colour i of n categories that must all differ (the heads of a layer): the series palette
    // while it has room for n, else n hues evenly spaced around the colour wheel, alternate ones
    // darker, so that no two of the n are the same and neighbours differ in lightness too.
    QColor categoryColor(int i, int n) const;
    // Palette colour `colour` (the text's muted colour for −1) in shade `shade` of `shades`: from
    // 40 % towards the text colour to 40 % towards the background, so that every shade stays clear
    // of the background and of the palette's other colours (ConfigurationColours' shades).
    QColor shadedSeriesColor(int colour, int shade, int shades) const;
    QFont font(double pointSize, bool bold = false) const;
    double line(double width) const { return width * lineScale; }

    // Applies background, title, legend and axis colours and fonts to a Qt Charts chart.
    void apply(QChart *chart) const;
    void apply(QAbstractAxis *axis) const;
};

// Viridis, t in [0, 1].
QColor viridis(double t);

// Draws `text` in `box`: whole on one line, else broken at its spaces onto the lines the box has
// room for, else in smaller type down to `smallest` points; elided only when nothing fits, and
// then it returns true (the figures count what they had to cut off).
bool drawFittedText(QPainter &p, const QRectF &box, const QString &text, QFont font,
                    double smallest, Qt::Alignment align);

} // namespace headlab::ui
