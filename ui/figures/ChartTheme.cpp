// ChartTheme.cpp — see ChartTheme.h.
#include "ui/figures/ChartTheme.h"

#include <QAbstractAxis>
#include <QApplication>
#include <QChart>
#include <QFontMetricsF>
#include <QLegend>
#include <QPainter>

#include <algorithm>
#include <array>
#include <cmath>

namespace headlab::ui {

namespace {
bool g_presenter = false;
double g_presenterScale = 1.6;
} // namespace

ChartTheme ChartTheme::fromPalette(const QPalette &palette, bool presenter)
{
    ChartTheme t;
    const QColor window = palette.color(QPalette::Window);
    t.dark = window.lightness() < 128;
    t.presenter = presenter;
    t.background = palette.color(QPalette::Base);
    t.plotBackground = t.background;
    t.foreground = palette.color(QPalette::Text);
    t.grid = t.dark ? QColor(70, 70, 78) : QColor(225, 225, 230);
    t.muted = t.dark ? QColor(150, 150, 160) : QColor(110, 110, 120);
    // Okabe and Ito's colour-blind-safe palette (2008), without its black: under a simulation of
    // deuteranopia (Machado et al. 2009) every pair stays apart (tests/ui checks it); tab10's
    // "3 heads" and "6 heads" did not. On a dark background its blue is lightened and taken last.
    // Then five more, so that up to 12 configurations each have a colour of their own (issue 52):
    // chosen from Tol's, Krzywinski's and Okabe and Ito's palettes by the smallest distance of any
    // pair under simulated deuteranopia and protanopia (and 0.8 of it in normal vision), with the
    // first seven fixed. On white none of the five brings any pair closer than the first seven's
    // closest (51.5 under either simulation); on the dark background the closest pair under
    // deuteranopia goes from 51.5 to 47.7 (bench/palette_search.py, docs/data/issue52/palette.txt).
    if (t.dark) {
        t.series = {QColor(86, 180, 233),  QColor(230, 159, 0),  QColor(0, 158, 115),
                    QColor(204, 121, 167), QColor(240, 228, 66), QColor(213, 94, 0),
                    QColor(120, 140, 255), QColor(0, 252, 207),  QColor(25, 101, 176),
                    QColor(144, 201, 135), QColor(140, 86, 75),  QColor(187, 187, 187)};
    } else {
        t.series = {QColor(0, 114, 178),   QColor(230, 159, 0),  QColor(0, 158, 115),
                    QColor(204, 121, 167), QColor(86, 180, 233), QColor(213, 94, 0),
                    QColor(240, 228, 66),  QColor(66, 21, 10),   QColor(51, 34, 136),
                    QColor(136, 34, 85),   QColor(132, 0, 205),  QColor(144, 201, 135)};
    }
    // Diverged runs are marked in the text colour: no colour of the table, which names values.
    t.diverged = t.foreground;
    t.lineScale = presenter ? 1.4 * g_presenterScale : 1.0;
    t.fontScale = presenter ? g_presenterScale : 1.0;
    return t;
}

QColor ChartTheme::categoryColor(int i, int n) const
{
    if (n <= int(series.size())) return seriesColor(i);
    i = ((i % n) + n) % n;
    // Hues i/n from the palette's blue on; odd indices darker (lighter on a dark background), so
    // two colours of one lightness are at least 2/n of the wheel apart.
    const double hue = std::fmod(0.57 + double(i) / double(n), 1.0);
    const double lightness = dark ? (i % 2 ? 0.74 : 0.58) : (i % 2 ? 0.30 : 0.50);
    return QColor::fromHslF(float(hue), 0.80f, float(lightness));
}

QColor ChartTheme::shadedSeriesColor(int colour, int shade, int shades) const
{
    const QColor base = colour >= 0 ? seriesColor(colour) : muted;
    if (shades < 2) return base;
    const double t = -0.4 + 0.8 * shade / double(shades - 1);
    const QColor towards = t < 0 ? foreground : background;
    const double a = std::abs(t);
    return QColor::fromRgbF(float(base.redF() * (1 - a) + towards.redF() * a),
                            float(base.greenF() * (1 - a) + towards.greenF() * a),
                            float(base.blueF() * (1 - a) + towards.blueF() * a));
}

ChartTheme ChartTheme::current()
{
    return fromPalette(QApplication::palette(), g_presenter);
}

void ChartTheme::setPresenterMode(bool on, double fontScale)
{
    g_presenter = on;
    g_presenterScale = fontScale;
}

double ChartTheme::presenterScaleFor(int height)
{
    return std::clamp(2.0 * double(height) / 1080.0, 1.4, 3.0);
}
bool ChartTheme::presenterMode()
{
    return g_presenter;
}

QFont ChartTheme::font(double pointSize, bool bold) const
{
    QFont f = QApplication::font();
    f.setPointSizeF(pointSize * fontScale);
    f.setBold(bold);
    return f;
}

void ChartTheme::apply(QChart *chart) const
{
    chart->setBackgroundBrush(background);
    chart->setPlotAreaBackgroundVisible(false);
    chart->setTitleBrush(foreground);
    chart->setTitleFont(font(11, true));
    chart->legend()->setLabelColor(foreground);
    chart->legend()->setFont(font(8.5));
    chart->setBackgroundRoundness(0);
    for (auto *axis : chart->axes()) apply(axis);
}

void ChartTheme::apply(QAbstractAxis *axis) const
{
    axis->setLabelsBrush(foreground);
    axis->setLabelsFont(font(8.5));
    axis->setTitleBrush(foreground);
    axis->setTitleFont(font(9.5));
    axis->setLinePen(QPen(muted, 1));
    axis->setGridLinePen(QPen(grid, 1));
    axis->setMinorGridLinePen(QPen(dark ? grid.darker(120) : grid.lighter(104), 1, Qt::DotLine));
}

QColor viridis(double t)
{
    static const std::array<std::array<double, 3>, 9> stops = {{{0.267, 0.005, 0.329},
                                                                {0.283, 0.141, 0.458},
                                                                {0.254, 0.265, 0.530},
                                                                {0.207, 0.372, 0.553},
                                                                {0.164, 0.471, 0.558},
                                                                {0.128, 0.567, 0.551},
                                                                {0.135, 0.659, 0.518},
                                                                {0.478, 0.821, 0.318},
                                                                {0.993, 0.906, 0.144}}};
    if (!std::isfinite(t)) t = 0;
    t = std::clamp(t, 0.0, 1.0) * (stops.size() - 1);
    const size_t i = std::min(size_t(t), stops.size() - 2);
    const double f = t - double(i);
    auto mix = [&](int c) { return stops[i][size_t(c)] * (1 - f) + stops[i + 1][size_t(c)] * f; };
    return QColor::fromRgbF(float(mix(0)), float(mix(1)), float(mix(2)));
}

bool drawFittedText(QPainter &p, const QRectF &box, const QString &text, QFont font,
                    double smallest, Qt::Alignment align)
{
    for (;;) {
        const QFontMetricsF fm(font);
        p.setFont(font);
        if (fm.horizontalAdvance(text) <= box.width()) {
            p.drawText(box, int(align), text);
            return false;
        }
        const QRectF wrapped = fm.boundingRect(box, int(align | Qt::TextWordWrap), text);
        if (wrapped.width() <= box.width() + 0.5 && wrapped.height() <= box.height() + 0.5) {
            p.drawText(box, int(align | Qt::TextWordWrap), text);
            return false;
        }
        if (font.pointSizeF() - 0.5 < smallest) break;
        font.setPointSizeF(font.pointSizeF() - 0.5);
    }
    p.drawText(box, int(align), QFontMetricsF(font).elidedText(text, Qt::ElideRight, box.width()));
    return true;
}

} // namespace headlab::ui
