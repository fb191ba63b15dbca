// ParallelCoordinatesView.cpp — see ParallelCoordinatesView.h.
#include "ui/figures/ParallelCoordinatesView.h"
#include "ui/model/CsvCell.h"

#include "core/metrics/LearnedRule.h"
#include "core/metrics/RunValues.h"
#include "core/schema/Dimensions.h"
#include "core/session/Replicates.h"

#include "ui/model/AxisRange.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QToolButton>

#include <algorithm>
#include <cmath>

namespace headlab::ui {

namespace {

// The distance from `p` to the segment a–b.
double segmentDistance(const QPointF &p, const QPointF &a, const QPointF &b)
{
    const QPointF ab = b - a;
    const double length2 = QPointF::dotProduct(ab, ab);
    const double t =
        length2 > 0 ? std::clamp(QPointF::dotProduct(p - a, ab) / length2, 0.0, 1.0) : 0.0;
    const QPointF q = a + t * ab;
    return std::hypot(p.x() - q.x(), p.y() - q.y());
}
} // namespace

ParallelCoordinatesView::ParallelCoordinatesView(SessionModel *model, QWidget *parent)
    : FigureView(model, parent)
{
    m_metricBar = new QWidget(this);
    m_metricBar->setObjectName(QStringLiteral("metricAxes"));
    auto *bar = new QHBoxLayout(m_metricBar);
    bar->setContentsMargins(0, 0, 0, 0);
    controlsLayout()->addWidget(m_metricBar);
    auto *help = new QLabel(tr("Hover a line for its run; click it, or a value on an axis, to "
                               "select runs."),
                            this);
    help->setToolTip(tr("One line per finished run, across its configuration axes to its "
                        "metric axes. Each metric axis is a statistic of one of the run's curves: "
                        "final, lowest, highest, best or the mean of its last tenth."));
    controlsLayout()->addWidget(help);
    controlsLayout()->addStretch(1);
    m_canvasWidget =
        new PaintedCanvas(this, {[this](QPainter &p, const QRectF &area) { paint(p, area); },
                                 [this](const QPointF &at) { return hoverText(at); },
                                 [this](const QPointF &at) { return runsAtClick(at); }});
    setCanvas(m_canvasWidget);
    rebuildMetricControls();
}

QString ParallelCoordinatesView::title() const
{
    if (m_metrics == QStringList{QStringLiteral("final(test_loss)")})
        return tr("Every finished run across its axes to its final test loss, coloured by verdict");
    QStringList titles;
    for (const QString &key : m_metrics)
        titles << QString::fromStdString(runValueTitle(key.toStdString()));
    return tr("Every finished run across its axes to %1, coloured by verdict")
        .arg(titles.join(QStringLiteral(", ")));
}

QStringList ParallelCoordinatesView::configurationAxesShown() const
{
    QStringList out;
    for (const auto &axis : configurationAxes(m_model->session()))
        out << QString::fromStdString(axis);
    int at = 0;
    for (const QString &first : {QStringLiteral("d_model"), QStringLiteral("heads")})
        if (const int i = int(out.indexOf(first)); i >= 0) out.move(i, at++);
    return out;
}

QStringList ParallelCoordinatesView::axes() const
{
    return configurationAxesShown() + m_metrics;
}

bool ParallelCoordinatesView::setMetricAxes(const QStringList &keys)
{
    if (keys.isEmpty()) return false;
    for (const QString &key : keys) {
        std::string statistic, curve;
        if (!parseRunValueKey(key.toStdString(), &statistic, &curve) ||
            !findCurveStatistic(statistic))
            return false;
    }
    if (keys == m_metrics) return true;
    m_metrics = keys;
    rebuildMetricControls();
    m_canvasWidget->update();
    Q_EMIT viewStateChanged();
    return true;
}

void ParallelCoordinatesView::rebuildMetricControls()
{
    auto *bar = static_cast<QHBoxLayout *>(m_metricBar->layout());
    while (QLayoutItem *item = bar->takeAt(0)) {
        if (QWidget *w = item->widget()) {
            w->hide();
            w->deleteLater(); // it may be the sender of the signal that brought us here
        }
        delete item;
    }
    bar->addWidget(new QLabel(tr("metric axes"), m_metricBar));
    std::vector<std::string> curves = m_curveChoices;
    if (curves.empty()) curves = {"test_loss", "train_loss"};
    for (int k = 0; k < int(m_metrics.size()); ++k) {
        std::string statistic, curve;
        parseRunValueKey(m_metrics[k].toStdString(), &statistic, &curve);
        auto *stat = new QComboBox(m_metricBar);
        stat->setObjectName(QStringLiteral("metricStatistic%1").arg(k));
        for (const auto &row : curveStatisticTable())
            stat->addItem(QString::fromUtf8(row.title), QString::fromLatin1(row.name));
        stat->setCurrentIndex(stat->findData(QString::fromStdString(statistic)));
        stat->setToolTip(tr("The statistic of the curve this axis shows"));
        auto *of = new QComboBox(m_metricBar);
        of->setObjectName(QStringLiteral("metricCurve%1").arg(k));
        if (std::find(curves.begin(), curves.end(), curve) == curves.end()) curves.push_back(curve);
        for (const auto &name : curves) {
            std::string words = name;
            std::replace(words.begin(), words.end(), '_', ' ');
            of->addItem(QString::fromStdString(words), QString::fromStdString(name));
        }
        of->setCurrentIndex(of->findData(QString::fromStdString(curve)));
        auto changed = [this, k, stat, of] {
            QStringList keys = m_metrics;
            keys[k] = stat->currentData().toString() + '(' + of->currentData().toString() + ')';
            m_metrics = keys; // the controls stay: only their choice changed
            m_canvasWidget->update();
            Q_EMIT viewStateChanged();
        };
        connect(stat, &QComboBox::currentIndexChanged, this, changed);
        connect(of, &QComboBox::currentIndexChanged, this, changed);
        bar->addWidget(stat);
        bar->addWidget(of);
        if (m_metrics.size() > 1) {
            auto *remove = new QToolButton(m_metricBar);
            remove->setObjectName(QStringLiteral("removeMetricAxis%1").arg(k));
            remove->setText(QStringLiteral("\u00D7"));
            remove->setToolTip(tr("Remove this metric axis"));
            connect(remove, &QToolButton::clicked, this, [this, k] {
                QStringList keys = m_metrics;
                keys.removeAt(k);
                setMetricAxes(keys);
            });
            bar->addWidget(remove);
        }
    }
    auto *add = new QToolButton(m_metricBar);
    add->setObjectName(QStringLiteral("addMetricAxis"));
    add->setText(QStringLiteral("+"));
    add->setToolTip(tr("Add a metric axis: another curve, or the same with another statistic"));
    connect(add, &QToolButton::clicked, this, [this, curves] {
        // The first curve without an axis, else the first with another statistic.
        QString next;
        for (const auto &name : curves)
            if (next.isEmpty() &&
                !m_metrics.contains(QStringLiteral("final(%1)").arg(QString::fromStdString(name))))
                next = QStringLiteral("final(%1)").arg(QString::fromStdString(name));
        if (next.isEmpty()) next = QStringLiteral("min(test_loss)");
        setMetricAxes(m_metrics + QStringList{next});
    });
    bar->addWidget(add);
}

void ParallelCoordinatesView::saveViewState(ViewState &state) const
{
    setStateValue(state, "metric_axes", m_metrics.join(' ').toStdString());
}

void ParallelCoordinatesView::restoreViewState(const ViewState &state)
{
    const QString keys = QString::fromStdString(stateValue(state, "metric_axes"));
    if (!setMetricAxes(keys.split(' ', Qt::SkipEmptyParts)))
        setMetricAxes({QStringLiteral("final(test_loss)")});
}

double ParallelCoordinatesView::Scale::position(const QString &label) const
{
    if (continuous) {
        const double v = label.toDouble();
        const double f = log ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo))
                             : (v - lo) / (hi - lo);
        return std::isfinite(f) ? std::clamp(f, 0.0, 1.0) : 0.5;
    }
    const int at = int(labels.indexOf(label));
    // A value the axis lacks (a run of an older sweep) in the middle.
    return labels.size() <= 1 || at < 0 ? 0.5 : double(at) / double(labels.size() - 1);
}

QList<std::pair<double, QString>> ParallelCoordinatesView::Scale::ticks() const
{
    QList<std::pair<double, QString>> out;
    if (!continuous) {
        for (const QString &label : labels) out << std::make_pair(position(label), label);
        return out;
    }
    auto add = [&](double v) {
        const QString text = QString::number(v, 'g', 6);
        out << std::make_pair(position(text), text);
    };
    if (log) {
        for (double e = std::ceil(std::log10(lo) - 1e-9); e <= std::log10(hi) + 1e-9; e += 1)
            add(std::pow(10.0, e));
        if (hi / lo <= 100) // two decades or less: 2 and 5 × 10^k too (AxisRange.h)
            for (const double v : roundLogTicks(lo, hi)) add(v);
    } else {
        const LinearTicks nice = niceTicks(lo, hi, 6);
        for (int k = 0; k < nice.count; ++k) add(nice.first + k * nice.step);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<ParallelCoordinatesView::Scale> ParallelCoordinatesView::scales() const
{
    const Session &s = m_model->session();
    std::vector<Scale> out;
    const QStringList names = configurationAxesShown();
    for (const QString &axis : names) {
        Scale scale;
        scale.labels = axisValueLabels(s, axis.toStdString());
        bool numeric = scale.labels.size() > 8;
        double lo = HUGE_VAL, hi = -HUGE_VAL;
        for (const QString &label : scale.labels) {
            bool ok = false;
            const double v = label.toDouble(&ok);
            numeric = numeric && ok && std::isfinite(v);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        if (numeric && hi > lo) {
            scale.continuous = true;
            scale.log = lo > 0 && hi / lo >= 20;
            scale.lo = lo;
            scale.hi = hi;
        }
        out.push_back(std::move(scale));
    }
    return out;
}

// The outcome axis's top: the loss at initialisation (ln 22 for addition) with a margin, or a
// top a blown-up run cannot flatten the axis with (AxisRange.h) where the task has none.
double ParallelCoordinatesView::lossTop() const
{
    const Session &s = m_model->session();
    const double initial = initialLossOf(s);
    if (initial > 0) return initial * 1.05;
    std::vector<double> values;
    for (const auto &run : s.runs) values.push_back(finalTestLoss(run.result));
    const double top = robustTop(values, 1.0).top * 1.05;
    return top > 0 ? top : 1.0;
}

std::vector<ParallelCoordinatesView::MetricScale> ParallelCoordinatesView::metricScales() const
{
    const Session &s = m_model->session();
    std::vector<MetricScale> out;
    for (const QString &key : m_metrics) {
        std::string statistic, curve;
        parseRunValueKey(key.toStdString(), &statistic, &curve);
        MetricScale scale;
        if (curve == "test_loss" || curve == "train_loss") {
            scale.loss = true;
            scale.hi = lossTop();
            out.push_back(scale);
            continue;
        }
        std::vector<double> values;
        double least = 0;
        for (const auto &run : s.runs)
            if (reachedAnOutcome(run.result.status))
                if (const auto v = runValue(run.result, key.toStdString());
                    v && std::isfinite(*v)) {
                    values.push_back(*v);
                    least = std::min(least, *v);
                }
        scale.lo = least;
        const double top = robustTop(values, 1.0).top;
        scale.hi = top > least ? top + 0.05 * (top - least) : least + 1;
        out.push_back(scale);
    }
    return out;
}

ParallelCoordinatesView::Layout ParallelCoordinatesView::layoutFor(const QRectF &area) const
{
    const double fs = m_theme.fontScale;
    Layout l;
    const QStringList names = axes();
    // Room for the title, the legend and the axes' names above; the last axis's tick labels on
    // the right.
    const double top = area.top() + 70 * fs, bottom = area.bottom() - 16 * fs;
    const double left = area.left() + 24 * fs, right = area.right() - 70 * fs;
    l.plot = QRectF(left, top, std::max(10.0, right - left), std::max(10.0, bottom - top));
    const int n = int(names.size());
    for (int i = 0; i < n; ++i)
        l.xs.push_back(n == 1 ? l.plot.center().x() : l.plot.left() + l.plot.width() * i / (n - 1));
    return l;
}

std::vector<ParallelCoordinatesView::Line>
ParallelCoordinatesView::lines(const Layout &layout, const std::vector<Scale> &axisScales) const
{
    const Session &s = m_model->session();
    const QStringList names = configurationAxesShown();
    const auto labels = configurationLabels(s); // each run's value on every axis
    const std::vector<MetricScale> metrics = metricScales();
    std::vector<Line> out;
    for (int i = 0; i < int(s.runs.size()); ++i) {
        const SessionRun &run = s.runs[size_t(i)];
        const RunStatus status = run.result.status;
        if (!reachedAnOutcome(status)) continue;
        Line line;
        line.run = i;
        for (int k = 0; k < int(names.size()); ++k) {
            const auto value = labels[size_t(i)].find(names[k].toStdString());
            const double f =
                value == labels[size_t(i)].end()
                    ? 0.5
                    : axisScales[size_t(k)].position(QString::fromStdString(value->second));
            line.points.emplace_back(layout.xs[size_t(k)],
                                     layout.plot.bottom() - f * layout.plot.height());
        }
        // A diverged run and a finished one without a finite loss at the top, each its own
        // category; a value outside its axis (a crafted -1e308, a blow-up past the top) at the
        // axis's end, marked, never passed off as a loss of 0 or of the top.
        const bool diverged = status == RunStatus::Diverged;
        const bool finite = std::isfinite(finalTestLoss(run.result));
        for (size_t m = 0; m < metrics.size(); ++m) {
            const MetricScale &scale = metrics[m];
            const double v = runValue(run.result, m_metrics[int(m)].toStdString()).value_or(NAN);
            const bool number = std::isfinite(v);
            const double f = diverged || !number
                                 ? 1.0
                                 : std::clamp((v - scale.lo) / (scale.hi - scale.lo), 0.0, 1.0);
            line.points.emplace_back(layout.xs[names.size() + m],
                                     layout.plot.bottom() - f * layout.plot.height());
            line.clipped.push_back(!diverged && number ? (v > scale.hi   ? 1
                                                          : v < scale.lo ? -1
                                                                         : 0)
                                                       : 0);
        }
        if (diverged) {
            line.verdict = Line::Verdict::Diverged;
        } else if (!finite) {
            line.verdict = Line::Verdict::NonFinite;
        } else {
            const auto verdict = runLearned(s, run.result);
            line.verdict = !verdict   ? Line::Verdict::Unknown
                           : *verdict ? Line::Verdict::Learned
                                      : Line::Verdict::NotLearned;
        }
        out.push_back(std::move(line));
    }
    return out;
}

std::vector<std::pair<std::optional<ParallelCoordinatesView::Line::Verdict>, QString>>
ParallelCoordinatesView::legendOf(const std::vector<Line> &drawn)
{
    constexpr int kVerdicts = 5;
    int counts[kVerdicts] = {}, clipped = 0;
    for (const auto &line : drawn) {
        ++counts[int(line.verdict)];
        clipped += line.anyClipped() ? 1 : 0;
    }
    const char *names[kVerdicts] = {QT_TR_NOOP("learned"), QT_TR_NOOP("not learned"),
                                    QT_TR_NOOP("no verdict"), QT_TR_NOOP("diverged"),
                                    QT_TR_NOOP("non-finite loss")};
    std::vector<std::pair<std::optional<Line::Verdict>, QString>> out;
    for (int v = 0; v < kVerdicts; ++v)
        if (counts[v] > 0)
            out.emplace_back(Line::Verdict(v), tr("%1 (%2)").arg(tr(names[v])).arg(counts[v]));
    // The marker drawn at the outcome axis's ends (drawLine).
    if (clipped > 0)
        out.emplace_back(std::nullopt,
                         tr("%n outside a metric axis (at its end, \u25B2/\u25BC)", "", clipped));
    return out;
}

QStringList ParallelCoordinatesView::legend() const
{
    QStringList out;
    for (const auto &entry : legendOf(lines(layoutFor(QRectF(m_canvasWidget->rect())), scales())))
        out << entry.second;
    return out;
}

std::vector<std::pair<int, std::vector<QPointF>>> ParallelCoordinatesView::drawnLines() const
{
    std::vector<std::pair<int, std::vector<QPointF>>> out;
    for (auto &line : lines(layoutFor(QRectF(m_canvasWidget->rect())), scales()))
        out.emplace_back(line.run, std::move(line.points));
    return out;
}

int ParallelCoordinatesView::runAt(const QPointF &at, double radius) const
{
    int best = -1;
    double bestDistance = radius;
    for (const auto &line : lines(layoutFor(QRectF(m_canvasWidget->rect())), scales()))
        for (size_t k = 1; k < line.points.size(); ++k) {
            const double d = segmentDistance(at, line.points[k - 1], line.points[k]);
            if (d <= bestDistance) {
                bestDistance = d;
                best = line.run;
            }
        }
    return best;
}

QString ParallelCoordinatesView::hoverText(const QPointF &at) const
{
    const int run = runAt(at);
    if (run < 0) return {};
    const Session &s = m_model->session();
    const SessionRun &r = s.runs[size_t(run)];
    const auto verdict = runLearned(s, r.result);
    QStringList values;
    for (const QString &key : m_metrics) {
        const double v = runValue(r.result, key.toStdString()).value_or(NAN);
        values << QStringLiteral("%1 %2").arg(
            QString::fromStdString(runValueTitle(key.toStdString())),
            std::isfinite(v) ? formatNumber(v) : statusText(r.result.status));
    }
    return tr("run %1: %2\n%3%4")
        .arg(run + 1)
        .arg(runLabel(s, r))
        .arg(values.join(QStringLiteral(", ")))
        .arg(!verdict   ? QString()
             : *verdict ? tr(", learned")
                        : tr(", not learned"));
}

QList<int> ParallelCoordinatesView::runsAtClick(const QPointF &at) const
{
    // A value's label, right of its axis (its text, as drawn): every run of that value. Before
    // the lines, which pass under the labels.
    const Layout l = layoutFor(QRectF(m_canvasWidget->rect()));
    const QStringList names = configurationAxesShown();
    const std::vector<Scale> axisScales = scales();
    const Session &s = m_model->session();
    const QFontMetricsF fm(m_theme.font(7.5));
    for (int k = 0; k < int(names.size()); ++k) {
        const Scale &scale = axisScales[size_t(k)];
        if (scale.continuous) continue; // its ticks are round numbers, not values
        for (const QString &label : scale.labels) {
            const double y = l.plot.bottom() - scale.position(label) * l.plot.height();
            const QRectF box(l.xs[size_t(k)] + 5, y - fm.height() / 2,
                             fm.horizontalAdvance(displayLabel(label)) + 2, fm.height());
            if (!box.contains(at)) continue;
            QList<int> runs;
            const auto labels = configurationLabels(s);
            for (int i = 0; i < int(s.runs.size()); ++i)
                if (const auto it = labels[size_t(i)].find(names[k].toStdString());
                    it != labels[size_t(i)].end() && QString::fromStdString(it->second) == label)
                    runs << i;
            return runs;
        }
    }
    if (const int run = runAt(at); run >= 0) return {run};
    return {};
}

void ParallelCoordinatesView::paint(QPainter &p, const QRectF &area) const
{
    const ChartTheme &t = m_theme;
    const double fs = t.fontScale;
    const Session &s = m_model->session();
    p.fillRect(area, t.background);
    p.setPen(t.foreground);
    drawFittedText(p, QRectF(area.left(), area.top() + 4, area.width(), 24 * fs), title(),
                   t.font(11, true), 7.0, Qt::AlignCenter);
    const Layout l = layoutFor(area);
    const std::vector<Scale> axisScales = scales();
    const std::vector<Line> drawn = lines(l, axisScales);
    // Colours by verdict: learned and not learned as the first two series colours, diverged in
    // the theme's own colour, runs without a verdict (tasks that give none) muted.
    auto colourOf = [&](Line::Verdict v) {
        switch (v) {
        case Line::Verdict::Learned:
            return t.seriesColor(0);
        case Line::Verdict::NotLearned:
            return t.seriesColor(1);
        case Line::Verdict::Diverged:
        case Line::Verdict::NonFinite: // dashed (styleOf)
            return t.diverged;
        case Line::Verdict::Unknown:
            break;
        }
        return t.muted;
    };
    auto styleOf = [](Line::Verdict v) {
        return v == Line::Verdict::NonFinite ? Qt::DashLine : Qt::SolidLine;
    };
    // The legend: the verdicts drawn, and how many runs each; then the lines outside the axis.
    {
        p.setFont(t.font(8.5));
        const QFontMetricsF fm(p.font());
        double x = area.left() + 24 * fs;
        const double y = area.top() + 32 * fs;
        for (const auto &[verdict, text] : legendOf(drawn)) {
            if (verdict) {
                p.setPen(QPen(colourOf(*verdict), t.line(2.5), styleOf(*verdict)));
                p.drawLine(QPointF(x, y + 8 * fs), QPointF(x + 18 * fs, y + 8 * fs));
                x += 22 * fs;
            }
            p.setPen(t.foreground);
            p.drawText(QRectF(x, y, fm.horizontalAdvance(text) + 4, 16 * fs),
                       Qt::AlignLeft | Qt::AlignVCenter, text);
            x += fm.horizontalAdvance(text) + 16 * fs;
        }
        if (drawn.empty()) {
            p.setPen(t.muted);
            p.drawText(QRectF(x, y, area.right() - x, 16 * fs), Qt::AlignLeft | Qt::AlignVCenter,
                       tr("Lines appear as runs finish (0 of %1 finished).").arg(s.runs.size()));
        }
    }
    // The lines: every run's faint when there are many, the selected ones on top, opaque and
    // thick enough to cover their faint line.
    const double alpha =
        std::clamp(6.0 / std::sqrt(double(std::max<size_t>(1, drawn.size()))), 0.18, 0.9);
    auto drawLine = [&](QPainter &painter, const Line &line, bool isSelected) {
        QColor c = colourOf(line.verdict);
        c.setAlphaF(isSelected ? 1.0f : float(alpha));
        // The faint lines one device pixel wide (times the presenter's scale): the raster
        // engine's thin-line stroker draws them antialiased ~40 times faster than the path
        // stroker a wider pen takes (657 runs opened in 1.4 s on 2 cores, issue 75).
        QPen pen(c, isSelected ? t.line(2.8) : std::max(1.0, t.lineScale), styleOf(line.verdict));
        pen.setCosmetic(!isSelected);
        painter.setPen(pen);
        painter.setBrush(Qt::NoBrush);
        painter.drawPolyline(line.points.data(), int(line.points.size()));
        const size_t first = line.points.size() - line.clipped.size();
        for (size_t m = 0; m < line.clipped.size(); ++m) {
            if (line.clipped[m] == 0) continue;
            // a triangle at the axis's end, pointing where the value lies
            const QPointF at = line.points[first + m];
            const double r = 4.5 * fs, d = line.clipped[m] > 0 ? -1.0 : 1.0;
            c.setAlphaF(1.0f);
            painter.setPen(Qt::NoPen);
            painter.setBrush(c);
            painter.drawPolygon(
                QPolygonF({at + QPointF(0, d * 2 * r), at + QPointF(-r, 0), at + QPointF(r, 0)}));
        }
    };
    // On screen the faint lines come from an image kept while they stay the same, so that a
    // click on a run redraws only the selected lines: stroking a few hundred antialiased lines
    // took ~0.1 s a click. Exports (PNG, SVG) draw every line as it is.
    if (p.device() == m_canvasWidget) {
        const qreal dpr = m_canvasWidget->devicePixelRatioF();
        size_t key = qHashMulti(0, area.width(), area.height(), dpr, alpha, t.line(1.3));
        for (const auto &line : drawn) {
            key = qHashMulti(key, colourOf(line.verdict).rgba());
            for (const QPointF &at : line.points) key = qHashMulti(key, at.x(), at.y());
        }
        if (m_faintLines.isNull() || key != m_faintKey) {
            m_faintLines =
                QImage((area.size() * dpr).toSize(), QImage::Format_ARGB32_Premultiplied);
            m_faintLines.setDevicePixelRatio(dpr);
            m_faintLines.fill(Qt::transparent);
            QPainter layer(&m_faintLines);
            layer.setRenderHint(QPainter::Antialiasing);
            layer.translate(-area.topLeft());
            for (const auto &line : drawn) drawLine(layer, line, false);
            m_faintKey = key;
        }
        p.drawImage(area.topLeft(), m_faintLines);
    } else {
        for (const auto &line : drawn) drawLine(p, line, false);
    }
    const QSet<int> selected(m_selected.begin(), m_selected.end());
    for (const auto &line : drawn)
        if (selected.contains(line.run)) drawLine(p, line, true);
    // The axes: a line each, its name above, its values beside it.
    const QStringList names = axes();
    const int configurationCount = int(names.size() - m_metrics.size());
    const std::vector<MetricScale> metrics = metricScales();
    for (int k = 0; k < int(names.size()); ++k) {
        const double x = l.xs[size_t(k)];
        p.setPen(QPen(t.foreground, 1.2));
        p.drawLine(QPointF(x, l.plot.top()), QPointF(x, l.plot.bottom()));
        const bool outcome = k >= configurationCount;
        const MetricScale metric =
            outcome ? metrics[size_t(k - configurationCount)] : MetricScale{};
        const QString metricName =
            outcome ? QString::fromStdString(runValueTitle(names[k].toStdString())) : QString();
        const QString name = !outcome
                                 ? QString::fromStdString(dimensionTitle(names[k].toStdString()))
                             : metric.loss ? tr("%1 (%2)").arg(metricName, lossUnit(s))
                                           : metricName;
        const double slot = l.xs.size() > 1 ? l.plot.width() / double(l.xs.size() - 1) : 200 * fs;
        // Centred over its axis, moved inside the figure at its edges.
        QRectF nameBox(x - slot / 2, l.plot.top() - 22 * fs, slot, 16 * fs);
        if (nameBox.left() < area.left()) nameBox.moveLeft(area.left() + 2);
        if (nameBox.right() > area.right()) nameBox.moveRight(area.right() - 2);
        p.setPen(t.foreground);
        drawFittedText(p, nameBox, name, t.font(9, true), 6.0,
                       nameBox.center().x() < x - 1   ? Qt::AlignRight | Qt::AlignVCenter
                       : nameBox.center().x() > x + 1 ? Qt::AlignLeft | Qt::AlignVCenter
                                                      : Qt::AlignCenter);
        p.setFont(t.font(7.5));
        const QFontMetricsF fm(p.font());
        if (outcome) { // round ticks, and a loss's plateaus by name
            const LinearTicks ticks = niceTicks(metric.lo, metric.hi, 6);
            auto yOf = [&](double v) {
                return l.plot.bottom() -
                       (v - metric.lo) / (metric.hi - metric.lo) * l.plot.height();
            };
            for (int i = 0; i < ticks.count; ++i) {
                const double v = ticks.first + i * ticks.step, y = yOf(v);
                p.setPen(QPen(t.foreground, 1));
                p.drawLine(QPointF(x - 3, y), QPointF(x + 3, y));
                p.drawText(QRectF(x + 5, y - 8 * fs, 60 * fs, 16 * fs),
                           Qt::AlignLeft | Qt::AlignVCenter,
                           QString::fromStdString(tickLabel(ticks, v)));
            }
            for (const auto &plateau : metric.loss ? plateausOf(s) : std::vector<PlateauLine>{}) {
                const double y = yOf(plateau.loss);
                p.setPen(QPen(t.foreground, 1, Qt::DashLine));
                p.drawLine(QPointF(x - 12 * fs, y), QPointF(x, y));
                const QString text = QString::fromStdString(plateau.label);
                const double w = fm.horizontalAdvance(text) + 2;
                const QRectF box(x - 14 * fs - w, y - fm.height() / 2, w, fm.height());
                QColor halo = t.background;
                halo.setAlphaF(0.75f);
                p.fillRect(box, halo);
                p.drawText(box, Qt::AlignRight | Qt::AlignVCenter, text);
            }
            continue;
        }
        const auto ticks = axisScales[size_t(k)].ticks();
        // Every value where they fit; else every n-th (the first and the last always).
        const double spacing =
            ticks.size() > 1 ? l.plot.height() / double(ticks.size() - 1) : l.plot.height();
        const int every = std::max(1, int(std::ceil(fm.height() / std::max(1.0, spacing))));
        for (int v = 0; v < int(ticks.size()); ++v) {
            const double y = l.plot.bottom() - ticks[v].first * l.plot.height();
            p.setPen(QPen(t.foreground, 1));
            p.drawLine(QPointF(x - 3, y), QPointF(x + 3, y));
            if (v % every != 0 && v != int(ticks.size()) - 1) continue;
            // A halo of the background behind the label, over the lines.
            const QString text = displayLabel(ticks[v].second);
            const QRectF box(x + 5, y - fm.height() / 2, fm.horizontalAdvance(text) + 2,
                             fm.height());
            QColor halo = t.background;
            halo.setAlphaF(0.75f);
            p.fillRect(box, halo);
            p.setPen(t.foreground);
            p.drawText(box, Qt::AlignLeft | Qt::AlignVCenter, text);
        }
    }
}

QString ParallelCoordinatesView::csv() const
{
    const Session &s = m_model->session();
    const QStringList names = configurationAxesShown();
    const auto labels = configurationLabels(s);
    QStringList header;
    for (const QString &name : names) header << csvCell(name);
    for (const QString &key : m_metrics) header << csvCell(key);
    QString out = QStringLiteral("run,%1,status,learned\n").arg(header.join(','));
    for (int i = 0; i < int(s.runs.size()); ++i) {
        const SessionRun &run = s.runs[size_t(i)];
        const RunStatus status = run.result.status;
        if (!reachedAnOutcome(status)) continue;
        QStringList row = {QString::number(i)};
        for (const QString &axis : names) {
            const auto it = labels[size_t(i)].find(axis.toStdString());
            row << (it == labels[size_t(i)].end() ? QString() : csvCell(it->second));
        }
        for (const QString &key : m_metrics) {
            const double v = runValue(run.result, key.toStdString()).value_or(NAN);
            row << (std::isfinite(v) ? QString::number(v, 'g', 10) : QString());
        }
        row << statusText(status);
        const auto verdict = runLearned(s, run.result);
        row << (!verdict ? QString() : *verdict ? QStringLiteral("1") : QStringLiteral("0"));
        out += row.join(',') + '\n';
    }
    return out;
}

void ParallelCoordinatesView::refresh()
{
    // The curves the metric axes can show: the controls follow the session's (looked at once per
    // revision of it: a run's 200 per-head curves are not read every frame).
    if (m_curvesRevision != m_model->revision()) {
        m_curvesRevision = m_model->revision();
        std::vector<const RunResult *> results;
        for (const auto &run : m_model->session().runs) results.push_back(&run.result);
        std::vector<std::string> curves = runCurveNames(results);
        if (curves != m_curveChoices) {
            m_curveChoices = std::move(curves);
            rebuildMetricControls();
        }
    }
    m_canvasWidget->update();
}

} // namespace headlab::ui
