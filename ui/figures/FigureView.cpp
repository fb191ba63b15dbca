// FigureView.cpp — see FigureView.h.
#include "ui/figures/FigureView.h"

#include "ui/model/SessionModel.h"

#include "ui/model/AxisRange.h"

#include <QChart>
#include <QChartView>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QHBoxLayout>
#include <QLegend>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QXYSeries>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace headlab::ui {

namespace {

// A figure's row of controls, scrolled sideways when the window is narrower than the row: its
// full width (up to 1,213 px) was the window's minimum, which opened at 1753 px on a 1280 px
// screen and grew past it. Its height is the row's and a scroll bar's.
class ControlsBar : public QScrollArea {
public:
    explicit ControlsBar(QWidget *parent)
        : QScrollArea(parent)
    {
        setFrameShape(QFrame::NoFrame);
        setWidgetResizable(true);
        setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
        setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    }
    QSize sizeHint() const override
    {
        const QSize row = widget() ? widget()->sizeHint() : QSize(0, 0);
        return {row.width(), row.height() + horizontalScrollBar()->sizeHint().height()};
    }
    QSize minimumSizeHint() const override { return {80, sizeHint().height()}; }
};

} // namespace

FigureView::FigureView(SessionModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
    , m_theme(ChartTheme::current())
{
    m_layout = new QVBoxLayout(this);
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_layout->setSpacing(2);
    m_controlsBar = new ControlsBar(this);
    m_controls = new QWidget;
    m_controlsLayout = new QHBoxLayout(m_controls);
    m_controlsLayout->setContentsMargins(6, 4, 6, 0);
    m_controlsBar->setWidget(m_controls);
    m_layout->addWidget(m_controlsBar);
}

void FigureView::addFooter(QWidget *footer)
{
    m_layout->addWidget(footer);
}

void FigureView::setCanvas(QWidget *canvas)
{
    m_canvas = canvas;
    m_layout->addWidget(canvas, 1);
}

namespace {

// A chart view that says what is under the cursor: the nearest drawn point within a few pixels,
// with its series' name and both values in the axes' words (issue 52: hovering showed nothing).
class ValueChartView : public QChartView {
public:
    ValueChartView(QChart *chart, QWidget *parent)
        : QChartView(chart, parent)
    {
        setMouseTracking(true);
    }

protected:
    // A log axis of at most two decades gets its round values between the decades labelled too
    // (2 and 5 × 10^k, roundLogTicks), in the axis's own font and colour, where they fit beside
    // the decade labels Qt Charts draws. Drawn over the scene, so exports (QWidget::render) have
    // them.
    void drawForeground(QPainter *painter, const QRectF &rect) override
    {
        QChartView::drawForeground(painter, rect);
        QChart *c = chart();
        if (!c) return;
        const QRectF plot = c->mapRectToScene(c->plotArea());
        for (const auto &label : FigureView::tickLabels(c)) {
            if (!label.added) continue;
            painter->save();
            painter->setFont(label.axis->labelsFont());
            painter->setPen(label.axis->labelsBrush().color());
            painter->drawText(label.box, Qt::AlignCenter, label.text);
            painter->drawLine(
                label.orientation == Qt::Horizontal
                    ? QLineF(label.at.x(), plot.bottom(), label.at.x(), plot.bottom() + 4)
                    : QLineF(plot.left() - 4, label.at.y(), plot.left(), label.at.y()));
            painter->restore();
        }
    }

    void mouseMoveEvent(QMouseEvent *e) override
    {
        QChartView::mouseMoveEvent(e);
        const QString text = FigureView::valueAt(this, e->position().toPoint());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(e->globalPosition().toPoint(), text, this);
    }
};

QString axisWords(Qt::Orientation orientation, QAbstractSeries *series)
{
    for (QAbstractAxis *axis : series->attachedAxes())
        if (axis->orientation() == orientation) return axis->titleText();
    return orientation == Qt::Horizontal ? QStringLiteral("x") : QStringLiteral("y");
}

} // namespace

std::vector<FigureView::TickLabel> FigureView::tickLabels(QChart *chart)
{
    std::vector<TickLabel> out;
    if (!chart || !chart->scene()) return out;
    const QRectF plot = chart->mapRectToScene(chart->plotArea());
    // Qt Charts' own: its axes' labels are text items under the plot (x) or left of it (y),
    // holding a number (the axis titles hold words).
    for (QGraphicsItem *item : chart->scene()->items()) {
        auto *text = qgraphicsitem_cast<QGraphicsTextItem *>(item);
        if (!text || !text->isVisible()) continue;
        bool number = false;
        text->toPlainText().toDouble(&number);
        if (!number) continue;
        const QRectF box = text->sceneBoundingRect();
        const bool below = box.top() >= plot.bottom() - 2 && box.left() < plot.right() + 80 &&
                           box.right() > plot.left() - 80;
        const bool left = box.right() <= plot.left() + 2 && box.top() < plot.bottom() + 40 &&
                          box.bottom() > plot.top() - 40;
        if (!below && !left) continue;
        out.push_back({box, text->toPlainText(), below ? Qt::Horizontal : Qt::Vertical,
                       box.center(), nullptr, false});
    }
    // A log axis of at most two decades gets its round values between the decades labelled too
    // (2 and 5 × 10^k, roundLogTicks), in the axis's own font, where they overlap no label.
    const size_t own = out.size();
    for (QAbstractAxis *axis : chart->axes()) {
        auto *log = qobject_cast<QLogValueAxis *>(axis);
        if (!log || log->base() != 10 || !log->isVisible() || !log->labelsVisible() ||
            !(log->alignment() & (Qt::AlignLeft | Qt::AlignBottom)))
            continue;
        const std::vector<double> ticks = roundLogTicks(log->min(), log->max());
        if (ticks.empty()) continue;
        QAbstractSeries *series = nullptr;
        for (QAbstractSeries *s : chart->series())
            if (s->attachedAxes().contains(axis)) series = s;
        if (!series) continue;
        const QFontMetricsF fm(log->labelsFont());
        const bool horizontal = log->orientation() == Qt::Horizontal;
        // Qt's decade labels sit a little off the plot: the added ones on their line.
        double line = horizontal ? plot.bottom() + 6 : plot.left() - 6;
        for (size_t i = 0; i < own; ++i)
            if (out[i].orientation == log->orientation())
                line = horizontal ? out[i].box.top() : std::min(line, out[i].box.right());
        for (const double v : ticks) {
            const QString text = QString::asprintf("%g", v);
            const QPointF at = chart->mapToScene(
                chart->mapToPosition(horizontal ? QPointF(v, 1) : QPointF(1, v), series));
            if (horizontal ? (at.x() < plot.left() - 1 || at.x() > plot.right() + 1)
                           : (at.y() < plot.top() - 1 || at.y() > plot.bottom() + 1))
                continue;
            const double w = fm.horizontalAdvance(text);
            const QRectF box = horizontal
                                   ? QRectF(at.x() - w / 2, line, w, fm.height())
                                   : QRectF(line - w, at.y() - fm.height() / 2, w, fm.height());
            // Clear of every label drawn so far by a few pixels (issue 75: labels drawn over
            // each other on the collapse's axis at 1920×1080).
            const QRectF room = box.adjusted(-4, -1, 4, 1);
            bool clear = true;
            for (const auto &label : out)
                clear = clear &&
                        (label.orientation != log->orientation() || !label.box.intersects(room));
            if (clear) out.push_back({box, text, log->orientation(), at, log, true});
        }
    }
    return out;
}

QString FigureView::valueAt(QChartView *view, const QPoint &at, double radius)
{
    QChart *chart = view ? view->chart() : nullptr;
    if (!chart) return {};
    double best = radius * radius;
    QString text;
    const QPointF cursor(at);
    auto say = [&](QAbstractSeries *series, const QPointF &p) {
        const QString name = series->name().isEmpty() ? QString() : series->name() + "\n";
        text = QStringLiteral("%1%2 = %3\n%4 = %5")
                   .arg(name, axisWords(Qt::Horizontal, series))
                   .arg(p.x(), 0, 'g', 6)
                   .arg(axisWords(Qt::Vertical, series))
                   .arg(p.y(), 0, 'g', 6);
    };
    for (QAbstractSeries *series : chart->series()) {
        auto *xy = qobject_cast<QXYSeries *>(series);
        if (!xy || !xy->isVisible() || xy->count() == 0) continue;
        const QList<QPointF> points = xy->points();
        auto pixelOf = [&](const QPointF &p) {
            return view->mapFromScene(chart->mapToScene(chart->mapToPosition(p, series)));
        };
        // Points sorted by x (a curve's steps, a line's values): only those within the radius's
        // span of x are looked at, so that a hover over 120 curves of 500 points stays quick.
        qsizetype first = 0, last = points.size();
        const bool sorted =
            std::is_sorted(points.begin(), points.end(),
                           [](const QPointF &a, const QPointF &b) { return a.x() < b.x(); });
        if (sorted) {
            const QPointF lo = chart->mapToValue(
                chart->mapFromScene(view->mapToScene(at - QPoint(int(radius) + 1, 0))), series);
            const QPointF hi = chart->mapToValue(
                chart->mapFromScene(view->mapToScene(at + QPoint(int(radius) + 1, 0))), series);
            auto byX = [](const QPointF &p, double x) { return p.x() < x; };
            first = std::max<qsizetype>(
                0, std::lower_bound(points.begin(), points.end(), std::min(lo.x(), hi.x()), byX) -
                       points.begin() - 1);
            last =
                std::min<qsizetype>(points.size(), std::lower_bound(points.begin(), points.end(),
                                                                    std::max(lo.x(), hi.x()), byX) -
                                                       points.begin() + 1);
        }
        const bool line = series->type() == QAbstractSeries::SeriesTypeLine ||
                          series->type() == QAbstractSeries::SeriesTypeSpline;
        QPointF previous;
        bool havePrevious = false;
        for (qsizetype i = first; i < last; ++i) {
            const QPointF &p = points[i];
            if (!std::isfinite(p.x()) || !std::isfinite(p.y())) {
                havePrevious = false;
                continue;
            }
            const QPointF pixel = pixelOf(p);
            const QPointF d = pixel - cursor;
            if (QPointF::dotProduct(d, d) < best) {
                best = QPointF::dotProduct(d, d);
                say(series, p);
            }
            // On a line between two points: the nearer of the two is named (issue 75: a curve
            // said nothing between its evaluations, where the tour says the mouse names it).
            if (line && havePrevious && sorted) {
                const QPointF a = pixelOf(previous), ab = pixel - a;
                const double length = QPointF::dotProduct(ab, ab);
                const double t =
                    length > 0 ? std::clamp(QPointF::dotProduct(cursor - a, ab) / length, 0.0, 1.0)
                               : 0.0;
                const QPointF off = a + t * ab - cursor;
                const double dd = QPointF::dotProduct(off, off);
                if (dd < best) {
                    best = dd;
                    say(series, t < 0.5 ? previous : p);
                }
            }
            previous = p;
            havePrevious = true;
        }
    }
    return text;
}

QChartView *FigureView::setChartCanvas(QChart *chart)
{
    chart->legend()->setAlignment(Qt::AlignRight);
    chart->setMargins(QMargins(6, 6, 6, 6));
    chart->layout()->setContentsMargins(0, 0, 0, 0); // no frame of window colour around the chart
    auto *view = new ValueChartView(chart, this);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumSize(320, 220);
    setCanvas(view);
    return view;
}

QAbstractAxis *FigureView::makeValueAxis(bool log, double logBase, const char *linearFormat)
{
    if (log) {
        auto *axis = new QLogValueAxis();
        axis->setBase(logBase);
        axis->setLabelFormat(logBase == 2 ? "%.0f" : "%g");
        axis->setMinorTickCount(logBase == 10 ? 8 : 0);
        return axis;
    }
    auto *axis = new QValueAxis();
    if (linearFormat && *linearFormat) axis->setLabelFormat(linearFormat);
    return axis;
}

void FigureView::setAxisRange(QAbstractAxis *axis, double lo, double hi)
{
    if (auto *log = qobject_cast<QLogValueAxis *>(axis)) {
        if (log->base() == 10) std::tie(lo, hi) = decadeRange(lo, hi);
        log->setRange(lo, hi);
        return;
    }
    auto *linear = qobject_cast<QValueAxis *>(axis);
    if (!linear) return;
    const LinearTicks ticks = niceTicks(lo, hi);
    // Interval and anchor before the tick type, and the range last: dynamic ticks laid out with
    // the default interval of 0 (or a stale one on a new range) cost Qt Charts half a second.
    const QString format = QString::fromStdString(tickFormat(ticks));
    if (linear->tickInterval() != ticks.step) linear->setTickInterval(ticks.step);
    if (linear->tickAnchor() != ticks.first) linear->setTickAnchor(ticks.first);
    if (linear->tickType() != QValueAxis::TicksDynamic)
        linear->setTickType(QValueAxis::TicksDynamic);
    if (linear->labelFormat() != format) linear->setLabelFormat(format);
    linear->setRange(lo, hi);
}

void FigureView::fitChartTitle(QChart *chart, const ChartTheme &theme)
{
    QFont font = theme.font(11, true);
    const double room = chart->size().width() - 24;
    // A title wrapped before was broken at a space: the break is that space again (removing it
    // had joined the words, "Trainingspeedper run" after two fits).
    const QString whole = chart->title().replace(QStringLiteral("<br>"), QStringLiteral(" "));
    // Two lines, broken at the space nearest the middle.
    const int middle = int(whole.size() / 2);
    int at = int(whole.lastIndexOf(' ', middle));
    if (at < 0) at = int(whole.indexOf(' ', middle));
    const QString first = at > 0 ? whole.left(at) : whole, second = at > 0 ? whole.mid(at + 1) : "";
    QString title = whole;
    for (;;) {
        const QFontMetricsF fm(font);
        if (fm.horizontalAdvance(whole) <= room) break; // one line
        // Two lines once the type is two points smaller than a title's.
        if (at > 0 && font.pointSizeF() <= theme.font(9, true).pointSizeF() &&
            std::max(fm.horizontalAdvance(first), fm.horizontalAdvance(second)) <= room) {
            title = first + QStringLiteral("<br>") + second;
            break;
        }
        if (font.pointSizeF() <= 7.0) break;
        font.setPointSizeF(font.pointSizeF() - 0.5);
    }
    if (title != chart->title()) chart->setTitle(title);
    if (chart->titleFont() != font) chart->setTitleFont(font);
}

void FigureView::controlChanged()
{
    refresh();
    Q_EMIT viewStateChanged();
}

void FigureView::setControlsVisible(bool visible)
{
    m_controlsBar->setVisible(visible);
}

void FigureView::applyTheme(const ChartTheme &theme)
{
    m_theme = theme;
    refresh();
}

void FigureView::setSelectedRuns(const QList<int> &runs)
{
    if (runs == m_selected) return;
    m_selected = runs;
    if (window()->isVisible() && !isVisible()) {
        m_selectionStale = true;
        selectionChangedWhileHidden();
        return;
    }
    m_selectionStale = false;
    selectionChanged();
}

void FigureView::ensureCurrent()
{
    if (!m_selectionStale) return;
    m_selectionStale = false;
    selectionChanged();
}

void FigureView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    ensureCurrent();
}

std::string FigureView::stateValue(const ViewState &state, const std::string &key,
                                   const std::string &fallback) const
{
    auto it = state.find(figureId().toStdString() + "." + key);
    return it == state.end() ? fallback : it->second;
}

void FigureView::setStateValue(ViewState &state, const std::string &key,
                               const std::string &value) const
{
    state[figureId().toStdString() + "." + key] = value;
}

PaintedCanvas::PaintedCanvas(FigureView *view, Hooks hooks)
    : QWidget(view)
    , m_view(view)
    , m_hooks(std::move(hooks))
{
    setMinimumSize(320, 240);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMouseTracking(true);
}

void PaintedCanvas::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    m_hooks.paint(p, QRectF(rect()));
}

void PaintedCanvas::mouseMoveEvent(QMouseEvent *event)
{
    const QString text = m_hooks.hover ? m_hooks.hover(event->position()) : QString();
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void PaintedCanvas::mousePressEvent(QMouseEvent *event)
{
    const QList<int> runs = m_hooks.click ? m_hooks.click(event->position()) : QList<int>{};
    if (!runs.isEmpty()) Q_EMIT m_view->runsActivated(runs);
}

} // namespace headlab::ui
