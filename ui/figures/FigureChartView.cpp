// FigureChartView.cpp — see FigureChartView.h.
#include "ui/figures/FigureChartView.h"

#include "ui/figures/ChartLifetime.h"

#include "ui/model/AxisRange.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QGraphicsLayout>
#include <QGraphicsTextItem>
#include <QHBoxLayout>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QTextDocument>
#include <QTextOption>
#include <QValueAxis>

#include <cmath>
#include <tuple>

namespace headlab::ui {

FigureChartView::FigureChartView(SessionModel *model, QWidget *parent)
    : FigureView(model, parent)
{
    m_fullRange = new QCheckBox(tr("Full y range"), this);
    m_fullRange->setToolTip(tr("Show every point, also losses far above the rest (a run that "
                               "blew up); off, they are left off the chart and counted"));
    controlsLayout()->addWidget(m_fullRange);
    connect(m_fullRange, &QCheckBox::toggled, this, [this] { refresh(); });
    m_highlight = new Highlight(this, controlsLayout());
    connect(m_highlight, &Highlight::changed, this, [this] { applyHighlight(); });
    connect(m_highlight, &Highlight::keptChanged, this, [this] { Q_EMIT viewStateChanged(); });
    m_chart = new QChart();
    // Legend entries drawn as their series are (a dashed line as a dashed line, a hollow marker
    // hollow), so that a line style (a stabilizer in the loss-against-η figure) reads in the legend.
    m_chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
    m_view = setChartCanvas(m_chart);

    m_threshold = new QLineSeries();
    m_threshold->setName(tr("ln 10 plateau"));
    m_learned = new QScatterSeries();
    m_learned->setName(tr("learned (left ln 10)"));
    m_notLearned = new QScatterSeries();
    m_notLearned->setName(tr("not learned"));
    m_diverged = new QScatterSeries();
    m_diverged->setName(tr("diverged"));
    m_diverged->setMarkerShape(QScatterSeries::MarkerShapeRotatedRectangle);
    m_replicateDots = new QScatterSeries();
    m_replicateDots->setName(tr("each seed"));
    m_notLearnedFaint = new QScatterSeries(); // of the lines a highlight leaves faint
    m_notLearnedFaint->setName(QStringLiteral("not learned, faint"));
    for (auto *s :
         {static_cast<QAbstractSeries *>(m_replicateDots),
          static_cast<QAbstractSeries *>(m_threshold), static_cast<QAbstractSeries *>(m_learned),
          static_cast<QAbstractSeries *>(m_notLearnedFaint),
          static_cast<QAbstractSeries *>(m_notLearned), static_cast<QAbstractSeries *>(m_diverged)})
        m_chart->addSeries(s);
    // Why the plot is empty, over its middle (part of the chart: exports carry it too).
    m_empty = new QGraphicsTextItem(m_chart);
    m_empty->setVisible(false);
    connect(m_chart, &QChart::plotAreaChanged, this, [this] { placeEmptyText(); });
}

void FigureChartView::placeEmptyText()
{
    const QRectF plot = m_chart->plotArea();
    m_empty->setTextWidth(std::max(120.0, std::min(plot.width() * 0.8, 560.0 * m_theme.fontScale)));
    const QRectF box = m_empty->boundingRect();
    m_empty->setPos(plot.center() - QPointF(box.width() / 2, box.height() / 2));
}

void FigureChartView::offerReplicatePoint()
{
    m_point = new QComboBox(this);
    m_point->addItem(tr("median, min–max"));
    m_point->addItem(tr("mean ± sd"));
    m_point->addItem(tr("mean ± se"));
    m_point->setToolTip(tr("Each point over its replicates (seeds): the median with a whisker over "
                           "their range, or the "
                           "mean with one over ± a standard deviation or ± a standard error; every "
                           "seed is a faint dot"));
    controlsLayout()->addWidget(m_point);
    connect(m_point, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
}

ReplicatePoint FigureChartView::replicatePoint() const
{
    if (!m_point || m_point->currentIndex() <= 0) return {};
    return {ReplicateStat::Mean,
            m_point->currentIndex() == 1 ? ReplicateSpread::Sd : ReplicateSpread::Se};
}

void FigureChartView::applyTheme(const ChartTheme &theme)
{
    m_theme = theme;
    m_stylesDirty = true;
    m_axisBase = 0; // rebuild axes with the new colours
    refresh();
}

void FigureChartView::showLegend()
{
    // The lines' own entries while they fit the figure's height, else the data's short legend
    // (a colour per head count, a shade per width): 25 entries ran off the bottom at 1280×720.
    const bool useShort =
        !m_data.shortLegend.empty() &&
        !Highlight::legendFits(m_chart, int(m_data.series.size()) + 5); // and the markers' entries
    std::vector<LegendEntry> wanted = useShort ? m_data.shortLegend : std::vector<LegendEntry>{};
    bool changed = wanted.size() != m_legendOnly.size();
    for (size_t i = 0; !changed && i < wanted.size(); ++i)
        changed = m_legendOnly[i]->name() != wanted[i].name ||
                  m_legendOnly[i]->property("colour").toInt() != wanted[i].colour ||
                  m_legendOnly[i]->property("shades").toInt() != wanted[i].shades;
    if (changed) {
        for (auto *line : m_legendOnly) {
            retireSeries(m_chart, line);
        }
        m_legendOnly.clear();
        for (const auto &entry : wanted) { // empty lines: only their legend entries show
            auto *line = Highlight::legendEntryLine(entry);
            m_chart->addSeries(line);
            line->attachAxis(m_axisX);
            line->attachAxis(m_axisY);
            m_legendOnly.push_back(line);
        }
    }
    penLines();
    for (const auto &[name, line] : m_lines) // a line without points has no entry either
        for (auto *m : m_chart->legend()->markers(line))
            m->setVisible(!useShort && line->count() > 0);
}

void FigureChartView::resizeEvent(QResizeEvent *event)
{
    FigureView::resizeEvent(event);
    showLegend(); // the lines' own entries may fit now, or no longer
    fitTitle();
}

QColor FigureChartView::lineColour(const QLineSeries *line) const
{
    return m_theme.shadedSeriesColor(line->property("colour").toInt(),
                                     line->property("shade").toInt(),
                                     line->property("shades").toInt());
}

void FigureChartView::ensureAxes(bool logX, bool logY, double logBase)
{
    if (m_axisX && m_axisLog == logX && m_axisLogY == logY && m_axisBase == logBase) return;
    retireAllAxes(m_chart);
    m_axisX = makeValueAxis(logX, logBase, "");
    m_axisY = makeValueAxis(logY, 10, "%.2f");
    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);
    for (auto *s : m_chart->series()) {
        s->attachAxis(m_axisX);
        s->attachAxis(m_axisY);
    }
    m_theme.apply(m_axisX);
    m_theme.apply(m_axisY);
    m_axisLog = logX;
    m_axisLogY = logY;
    m_axisBase = logBase;
}

void FigureChartView::showData(FigureData data, double logBase)
{
    m_data = std::move(data);
    m_empty->setVisible(!m_data.empty.isEmpty());
    if (!m_data.empty.isEmpty()) {
        m_empty->setDefaultTextColor(m_theme.muted);
        m_empty->setFont(m_theme.font(10));
        m_empty->setPlainText(m_data.empty);
        m_empty->document()->setDefaultTextOption(QTextOption(Qt::AlignHCenter));
        placeEmptyText();
    }
    ensureAxes(m_data.logX, m_data.logY, logBase);
    m_axisX->setTitleText(m_data.xTitle);
    m_axisY->setTitleText(m_data.yTitle);
    dropLinesNoLongerShown();
    const double initial =
        m_data.lossAxis ? initialLossOf(m_model->session()) : 0.0; // ln 22 for addition
    const bool reference =
        plateausOf(m_model->session()).empty() && std::isfinite(m_data.referenceY);
    const YRange y = yRange(initial, reference);
    m_marks = updateLines(y.top);
    const Marks &marks = m_marks;
    restoreLegendOrder();
    updateMarkers(marks);
    const auto [xMin, xMax] = xRange(marks, logBase);
    // The task's first plateau (ln 10 for addition), else the figure's reference line.
    const auto plateaus =
        m_data.lossAxis ? plateausOf(m_model->session()) : std::vector<PlateauLine>{};
    const bool plateau = !plateaus.empty();
    const double lineY = plateau ? plateaus.front().loss : m_data.referenceY;
    m_threshold->setName(plateau
                             ? tr("%1 plateau").arg(QString::fromStdString(plateaus.front().label))
                             : m_data.referenceName);
    if (plateau || reference) m_threshold->replace(QList<QPointF>{{xMin, lineY}, {xMax, lineY}});
    m_threshold->setVisible(plateau || reference);
    setAxisRange(m_axisX, xMin, xMax);
    setAxisRange(m_axisY, y.bottom, y.top);

    if (m_stylesDirty) styleLines();
    showLegend();
    QStringList configurations, texts;
    for (const auto &series : m_data.series)
        if (!series.points.isEmpty() || !series.divergedX.isEmpty()) {
            configurations << series.name;
            texts << displayKey(series.name);
        }
    m_highlight->offer(m_data.shortLegend, configurations, texts);
    m_highlight->wireLegend(m_chart);
    applyHighlight();
    for (auto *m : m_chart->legend()->markers(m_threshold)) m->setVisible(plateau || reference);
    for (auto *m : m_chart->legend()->markers(m_replicateDots))
        m->setVisible(!marks.dots.isEmpty());
    for (auto *m : m_chart->legend()->markers(m_notLearnedFaint)) m->setVisible(false);

    for (auto *w : m_whiskers)
        for (auto *m : m_chart->legend()->markers(w)) m->setVisible(false);
    for (auto *series : {m_learned, m_notLearned})
        for (auto *m : m_chart->legend()->markers(series)) m->setVisible(m_data.learnedMarkers);
    // "diverged" is listed only when there is one: a marker series waits for its style until it
    // has points (styleLines), and its entry was drawn meanwhile in a colour of Qt's palette.
    for (auto *m : m_chart->legend()->markers(m_diverged)) m->setVisible(!marks.diverged.isEmpty());
    m_chart->setTitle(y.above == 0 ? m_data.title
                                   : tr("%1 (%n point(s) above the range: Full y range shows "
                                        "them)",
                                        "", y.above)
                                         .arg(m_data.title));
    fitTitle();
}

// Drops the lines of series that disappeared.
void FigureChartView::dropLinesNoLongerShown()
{
    for (auto it = m_lines.begin(); it != m_lines.end();) {
        bool still = false;
        for (const auto &s : m_data.series) still = still || s.name == it->first;
        if (!still) {
            retireSeries(m_chart, it->second);
            it = m_lines.erase(it);
            m_stylesDirty = true;
        } else {
            ++it;
        }
    }
}

// The y axis's range: the data's, robust to outliers unless Full y range is on, down to 0 for
// losses, at least the loss at initialisation, on a log axis from the smallest positive value.
FigureChartView::YRange FigureChartView::yRange(double initial, bool reference)
{
    // Every value drawn: the points, and each replicate's dot and whisker end (issue 75: the loss
    // against total heads drew its seeds' dots off its y axis).
    std::vector<double> ys;
    for (const auto &s : m_data.series) {
        for (const auto &p : s.points) ys.push_back(p.y());
        for (const auto &values : s.replicates)
            for (double v : values) ys.push_back(v);
        for (const auto &[low, high] : s.spread) ys.insert(ys.end(), {low, high});
    }
    const RobustRange range =
        robustTop(ys, initial > 0 ? initial : (reference ? 2 * m_data.referenceY : 0.0),
                  m_fullRange->isChecked());
    m_data.yMax = std::min(m_data.yMax, range.top > 0 ? range.top : m_data.yMax);
    YRange y;
    y.top = std::max(m_data.yMax, initial) * 1.08;
    if (m_data.logY) {
        double yMin = reference ? m_data.referenceY : 1e300;
        for (double v : ys)
            if (v > 0) yMin = std::min(yMin, v);
        if (yMin > 1e299) yMin = 0.1;
        y.top = std::max(m_data.yMax, reference ? m_data.referenceY : 0.0) * 1.6;
        if (y.top <= 0) y.top = 10.0;
        y.bottom = yMin / 1.6;
    } else if (!m_data.yFromZero) {
        double lo = 1e300, hi = -1e300;
        for (double v : ys) {
            if (!std::isfinite(v) || v > m_data.yMax) continue;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        if (lo <= hi) {
            const double pad = std::max((hi - lo) * 0.15, std::abs(hi) * 0.01 + 1e-9);
            y.bottom = lo - pad;
            y.top = hi + pad;
        }
    }
    if (y.top <= 0) y.top = 1.0;
    y.above = range.above;
    return y;
}

// One line per series (its colour, dash and shade as the data says), dodged apart on a log axis
// where replicates are drawn; gathers the markers, whiskers and x range of every point.
FigureChartView::Marks FigureChartView::updateLines(double top)
{
    Marks marks;
    // Series that share x values are dodged apart a little on a log axis where their replicates
    // are drawn, so that the whiskers and dots of one x do not cover each other.
    bool anyReplicates = false;
    for (const auto &s : m_data.series)
        for (const auto &r : s.replicates) anyReplicates = anyReplicates || r.size() > 1;
    const int seriesCount = int(m_data.series.size());
    int seriesIndex = -1;
    for (auto s : m_data.series) {
        ++seriesIndex;
        if (anyReplicates && m_data.logX && seriesCount > 1) {
            // At most ±5 % in all, however many series: 25 configurations at one η were spread
            // over 7e-4 ... 1.5e-3 and read as different learning rates.
            const double step = std::min(0.035, 0.09 / double(seriesCount - 1));
            const double factor = std::exp(step * (seriesIndex - (seriesCount - 1) / 2.0));
            for (auto &p : s.points) p.setX(p.x() * factor);
        }
        auto it = m_lines.find(s.name);
        QLineSeries *line = nullptr;
        if (it == m_lines.end()) {
            line = new QLineSeries();
            line->setName(s.name);
            line->setProperty("key", s.name);
            m_chart->addSeries(line);
            line->attachAxis(m_axisX);
            line->attachAxis(m_axisY);
            connect(line, &QLineSeries::hovered, this, [this, key = s.name](QPointF, bool on) {
                m_highlight->hover(on ? Highlight::lineKey(key) : QString());
            });
            m_lines[s.name] = line;
            m_stylesDirty = true;
            m_legendOrderDirty = true;
        } else {
            line = it->second;
        }
        const int colour = s.colour >= 0 ? s.colour : seriesIndex;
        if (line->property("colour").toInt() != colour || !line->property("colour").isValid()) {
            line->setProperty("colour", colour);
            m_stylesDirty = true;
        }
        // The note (LR sensitivity) changes as runs finish.
        line->setName(displayKey(s.name) + s.note);
        if (int(line->property("dash").toInt()) != s.dash ||
            line->property("shade").toInt() != s.shade ||
            line->property("shades").toInt() != s.shades) {
            line->setProperty("dash", s.dash);
            line->setProperty("shade", s.shade);
            line->setProperty("shades", s.shades);
            m_stylesDirty = true;
        }
        line->replace(s.points);
        for (int i = 0; i < s.points.size(); ++i) {
            const bool learned = s.learned[i] || !m_data.learnedMarkers;
            (learned ? marks.learned : marks.notLearned) << s.points[i];
            (learned ? marks.learnedSeries : marks.notLearnedSeries).push_back(line);
            if (i < s.replicates.size() && s.replicates[i].size() > 1) {
                for (double y : s.replicates[i]) {
                    marks.dots << QPointF(s.points[i].x(), y);
                    marks.dotSeries.push_back(line);
                }
                marks.whiskers.push_back({QPointF(s.points[i].x(), s.spread[i].first),
                                          QPointF(s.points[i].x(), s.spread[i].second)});
                marks.whiskerSeries.push_back(line); // its line's colour
            }
            marks.xMin = std::min(marks.xMin, s.points[i].x());
            marks.xMax = std::max(marks.xMax, s.points[i].x());
        }
        for (double x : s.divergedX) {
            marks.diverged << QPointF(x, m_data.logY ? top / 1.15 : top * 0.985);
            marks.xMin = std::min(marks.xMin, x);
            marks.xMax = std::max(marks.xMax, x);
        }
    }
    return marks;
}

// The legend lists lines in the order they were added: put them back in the data's order (the
// sweep's), whatever order they appeared in while runs finished; markers go back above new lines.
void FigureChartView::restoreLegendOrder()
{
    if (m_legendOrderDirty) {
        // The legend lists lines in the order they were added: put them back in the data's order
        // (the sweep's), whatever order they appeared in while runs finished.
        for (const auto &s : m_data.series) {
            QLineSeries *line = m_lines.at(s.name);
            m_chart->removeSeries(line);
            m_chart->addSeries(line);
            line->attachAxis(m_axisX);
            line->attachAxis(m_axisY);
        }
        m_legendOrderDirty = false;
        m_stylesDirty = true;
    }
    if (m_stylesDirty) {
        // New lines were added on top; markers go back above them.
        for (auto *s : {static_cast<QAbstractSeries *>(m_learned),
                        static_cast<QAbstractSeries *>(m_notLearned),
                        static_cast<QAbstractSeries *>(m_diverged)}) {
            m_chart->removeSeries(s);
            m_chart->addSeries(s);
            s->attachAxis(m_axisX);
            s->attachAxis(m_axisY);
        }
    }
}

// The markers (learned, not learned, diverged), the replicates' dots and their whiskers.
void FigureChartView::updateMarkers(const Marks &marks)
{
    m_learned->setName(m_model->session().learnedRule == LearnedRule::LeftLn10Plateau
                           ? tr("learned (left ln 10)")
                           : tr("learned (final < ln 10)"));
    m_learned->replace(marks.learned);
    // Each filled marker in its line's colour, so that a point names its configuration as the
    // legend does (they were all in the text colour: 25 black dots on the Figure 2 grid).
    const QString active = activeHighlight();
    m_learned->clearPointsConfiguration();
    for (size_t i = 0; i < marks.learnedSeries.size(); ++i)
        m_learned->setPointConfiguration(int(i), QXYSeries::PointConfiguration::Color,
                                         shownColour(marks.learnedSeries[i], active));
    // Where a highlight is on, the hollow markers of the lines it leaves faint are faint too, and
    // their seeds' dots are left out.
    QList<QPointF> notLearned, faint, dots;
    for (int i = 0; i < marks.notLearned.size(); ++i)
        (m_highlight->shownLit(active, marks.notLearnedSeries[size_t(i)]) ? notLearned : faint)
            << marks.notLearned[i];
    for (int i = 0; i < marks.dots.size(); ++i)
        if (m_highlight->shownLit(active, marks.dotSeries[size_t(i)])) dots << marks.dots[i];
    m_notLearned->replace(notLearned);
    m_notLearnedFaint->replace(faint);
    m_diverged->replace(marks.diverged);
    m_replicateDots->replace(dots);
    while (m_whiskers.size() < marks.whiskers.size()) {
        auto *w = new QLineSeries();
        m_chart->addSeries(w);
        w->attachAxis(m_axisX);
        w->attachAxis(m_axisY);
        w->setPen(QPen(m_theme.muted, m_theme.line(1.3)));
        for (auto *m : m_chart->legend()->markers(w)) m->setVisible(false);
        m_whiskers.push_back(w);
    }
    for (size_t k = 0; k < m_whiskers.size(); ++k) {
        m_whiskers[k]->setVisible(k < marks.whiskers.size());
        if (k >= marks.whiskers.size()) continue;
        m_whiskers[k]->replace(QList<QPointF>{marks.whiskers[k].first, marks.whiskers[k].second});
        QColor c = shownColour(marks.whiskerSeries[k], active); // its series' line's colour
        c.setAlphaF(c.alphaF() * 0.75f);
        m_whiskers[k]->setPen(QPen(c, m_theme.line(1.6)));
    }
}

// The x axis's range around the points: whole decades on a log-10 axis, padded otherwise.
std::pair<double, double> FigureChartView::xRange(const Marks &marks, double logBase) const
{
    std::pair<double, double> x{marks.xMin, marks.xMax};
    if (x.first > x.second) {
        x.first = m_data.logX ? 1 : 0;
        x.second = m_data.logX ? 1000 : 1;
    }
    if (m_data.logX && logBase == 10) {
        // Whole decades, so that the ticks fall on them (setAxisRange does the same).
        std::tie(x.first, x.second) = decadeRange(x.first, x.second);
    } else if (m_data.logX) {
        x.first /= 1.5;
        x.second *= 1.5;
    } else {
        const double pad = (x.second - x.first) * 0.05 + 1e-9;
        x.first -= pad;
        x.second += pad;
    }
    return x;
}

// Pens and markers in the theme's colours, when lines were added or restyled.
void FigureChartView::styleLines()
{
    penLines();
    m_threshold->setPen(QPen(m_theme.muted, m_theme.line(1.2), Qt::DashLine));
    // A marker series is styled only while it has points: restyling one that was just emptied
    // makes Qt Charts (6.4) read its point −1 (XYChart::offGridStatusVector, the SIGSEGV of issue
    // 75 after F11 mid-run, reproduced by tests/ui/test_ui_stress). An empty one keeps the style
    // for later: the styles stay dirty until every marker series has had its turn.
    bool waiting = false;
    auto markers = [&](QScatterSeries *series, const QPen &pen, const QBrush &brush, double size) {
        if (series->count() == 0) {
            waiting = true;
            return;
        }
        series->setPen(pen);
        series->setBrush(brush);
        series->setMarkerSize(size);
    };
    const double ls = m_theme.lineScale;
    markers(m_learned, QPen(m_theme.foreground), QBrush(m_theme.foreground), 9 * ls);
    markers(m_notLearned, QPen(m_theme.foreground, m_theme.line(1.5)), QBrush(Qt::transparent),
            11 * ls);
    markers(m_diverged, QPen(m_theme.background), QBrush(m_theme.diverged), 11 * ls);
    QColor faint = m_theme.foreground;
    faint.setAlphaF(0.28f);
    markers(m_replicateDots, QPen(Qt::transparent), QBrush(faint), 5 * ls);
    QColor fainter = m_theme.foreground;
    fainter.setAlphaF(0.16f);
    markers(m_notLearnedFaint, QPen(fainter, m_theme.line(1.2)), QBrush(Qt::transparent), 11 * ls);
    // (The whiskers take their lines' colours in updateMarkers, every frame: restyled grey here
    // after it, they lost them until the next frame.)
    m_theme.apply(m_chart);
    m_stylesDirty = waiting;
}

void FigureChartView::fitTitle()
{
    fitChartTitle(m_chart, m_theme);
}

QString FigureChartView::activeHighlight() const
{
    return m_highlight->active(m_chart);
}

bool FigureChartView::isLit(const QString &seriesName) const
{
    const auto it = m_lines.find(seriesName);
    return it != m_lines.end() && m_highlight->shownLit(activeHighlight(), it->second);
}

QColor FigureChartView::shownColour(const QLineSeries *line, const QString &active) const
{
    QColor c = lineColour(line);
    if (!m_highlight->shownLit(active, line)) c.setAlphaF(0.14f);
    return c;
}

// Each line's pen, and each short-legend entry's: its colour, shade and dash, thick where
// highlighted and faint where another is.
void FigureChartView::penLines()
{
    static const Qt::PenStyle dashes[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine,
                                          Qt::DashDotLine};
    const QString active = activeHighlight();
    for (auto &[name, line] : m_lines) {
        const bool thick = !active.isEmpty() && m_highlight->lit(active, line);
        QPen pen(shownColour(line, active), m_theme.line(thick ? 3.6 : 2.0));
        pen.setStyle(dashes[std::clamp(line->property("dash").toInt(), 0, 3)]);
        line->setPen(pen);
    }
    for (auto *line : m_legendOnly)
        line->setPen(QPen(shownColour(line, active), m_theme.line(2.5)));
}

void FigureChartView::applyHighlight()
{
    const QString active = activeHighlight();
    if (active != m_drawnHighlight) {
        m_drawnHighlight = active;
        penLines();
        updateMarkers(m_marks);
    }
    m_highlight->fadeLegend(m_chart, active, m_theme.foreground);
}

void FigureChartView::saveViewState(ViewState &state) const
{
    if (!m_highlight->kept().isEmpty())
        setStateValue(state, "highlight", m_highlight->kept().toStdString());
}

void FigureChartView::restoreViewState(const ViewState &state)
{
    const QSignalBlocker block(m_highlight); // the subclass refreshes next
    m_highlight->keep(QString::fromStdString(stateValue(state, "highlight")));
    m_highlight->hover({});
}

FigureView::Pooling FigureChartView::pooling() const
{
    Pooling out;
    for (const auto &series : m_data.series) {
        for (const auto &runs : series.runs) out.groups.push_back(runs);
        for (const auto &runs : series.divergedRuns) out.groups.push_back(runs);
    }
    return out;
}

} // namespace headlab::ui
