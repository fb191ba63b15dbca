// GroupPanelsView.cpp — see GroupPanelsView.h.
#include "ui/figures/GroupPanelsView.h"
#include "ui/model/CsvCell.h"

#include "core/schema/TaskSpec.h"
#include "core/session/Replicates.h"

#include "ui/model/AxisRange.h"
#include "ui/model/ColourTable.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

namespace headlab::ui {

namespace {

// The task's groups: their curves' names and their display names ("digit 0 (units)").
struct TaskGroups {
    std::vector<std::string> curves;
    QStringList names;
    QString word = QStringLiteral("group");
};

TaskGroups taskGroups(const Session &session)
{
    TaskGroups g;
    const TaskSpec *spec = findTaskSpec(session.base.task.kind);
    if (!spec || spec->groupCurvePrefix.empty() || !spec->groups) return g;
    const std::vector<std::string> names = spec->groups(session.base.task);
    for (size_t i = 0; i < names.size(); ++i) {
        g.curves.push_back(spec->groupCurvePrefix + std::to_string(i));
        g.names << QString::fromStdString(names[i]);
    }
    g.word = QString::fromStdString(spec->groupWord);
    return g;
}

} // namespace

GroupPanelsView::GroupPanelsView(SessionModel *model, QWidget *parent)
    : FigureView(model, parent)
{
    m_median = new QCheckBox(tr("Median over seeds"), this);
    m_median->setChecked(true);
    m_median->setToolTip(tr("One line per configuration at its seeds' median; off: every run"));
    m_logX = new QCheckBox(tr("Log x"), this);
    controlsLayout()->addWidget(m_median);
    controlsLayout()->addWidget(m_logX);
    controlsLayout()->addStretch(1);
    m_canvasWidget =
        new PaintedCanvas(this, {[this](QPainter &p, const QRectF &area) { paint(p, area); },
                                 [this](const QPointF &at) { return hoverText(at); },
                                 [this](const QPointF &at) { return runsAt(at); }});
    setCanvas(m_canvasWidget);
    connect(m_median, &QCheckBox::toggled, this, &FigureView::controlChanged);
    connect(m_logX, &QCheckBox::toggled, this, &FigureView::controlChanged);
}

QString GroupPanelsView::title() const
{
    const TaskGroups g = taskGroups(m_model->session());
    return m_median->isChecked()
               ? tr("Test loss per %1, one panel each, median over seeds per configuration")
                     .arg(g.word)
               : tr("Test loss per %1, one panel each, every run").arg(g.word);
}

QStringList GroupPanelsView::groupNames() const
{
    return taskGroups(m_model->session()).names;
}

void GroupPanelsView::setMedian(bool on)
{
    m_median->setChecked(on);
}

std::vector<GroupPanelsView::Line> GroupPanelsView::lines() const
{
    const Session &s = m_model->session();
    const TaskGroups g = taskGroups(s);
    std::vector<Line> out;
    if (g.curves.empty()) return out;
    const ConfigurationColours colours = configurationColours(s, "");
    // The runs of each configuration, in the sweep's order.
    std::vector<ConfigurationKey> order;
    std::map<ConfigurationKey, QList<int>> runsOf;
    for (int i = 0; i < int(s.runs.size()); ++i) {
        const ConfigurationKey key = configurationOf(s, s.runs[size_t(i)], "");
        if (!runsOf.count(key)) order.push_back(key);
        runsOf[key] << i;
    }
    auto nameOf = [](const ConfigurationKey &key) {
        QStringList parts;
        for (const auto &[axis, label] : key)
            parts << axisValueText(axis, QString::fromStdString(label));
        return parts.join(QStringLiteral(", "));
    };
    for (int group = 0; group < int(g.curves.size()); ++group)
        for (const auto &key : order) {
            const auto style = colours.styleOf(key);
            Line base;
            base.group = group;
            base.colour = style.colour;
            base.shade = style.shade;
            base.shades = colours.shades;
            const std::string &curveName = g.curves[size_t(group)];
            auto curveOf = [&](int run) -> const Curve * {
                const auto &extra = s.runs[size_t(run)].result.extra;
                const auto it = extra.find(curveName);
                return it == extra.end() || it->second.empty() ? nullptr : &it->second;
            };
            if (!m_median->isChecked()) {
                for (int run : runsOf[key]) {
                    const Curve *c = curveOf(run);
                    if (!c) continue;
                    Line line = base;
                    line.name = runLabel(s, s.runs[size_t(run)]);
                    line.runs = {run};
                    line.replicates = 1;
                    for (const auto &pt : *c)
                        if (std::isfinite(pt.value)) line.points.emplace_back(pt.step, pt.value);
                    out.push_back(std::move(line));
                }
                continue;
            }
            // The median at each step over the seeds that logged it (curveStats, as the loss
            // curves' median view takes it).
            std::vector<const Curve *> curves;
            Line line = base;
            line.name = nameOf(key);
            for (int run : runsOf[key])
                if (const Curve *c = curveOf(run)) {
                    line.runs << run;
                    curves.push_back(c);
                }
            if (line.runs.isEmpty()) continue;
            line.replicates = int(line.runs.size());
            for (const auto &[step, st] : curveStats(curves))
                if (st.count > 0) line.points.emplace_back(step, st.median);
            out.push_back(std::move(line));
        }
    return out;
}

GroupPanelsView::Layout GroupPanelsView::layoutFor(const QRectF &area,
                                                   const std::vector<Line> &drawn) const
{
    const double fs = m_theme.fontScale;
    Layout l;
    const int groups = std::max<int>(1, int(groupNames().size()));
    const int columns = std::min(groups, 3);
    const int rows = (groups + columns - 1) / columns;
    // The legend's height: its entries on as many lines as the width needs.
    std::set<int> colours;
    for (const auto &line : drawn) colours.insert(line.colour);
    const int entries = int(colours.size()) + (drawn.empty() ? 0 : drawn.front().shades);
    const double entryW = 150 * fs;
    const int perLine = std::max(1, int((area.width() - 40 * fs) / entryW));
    const int legendLines = std::max(1, (entries + perLine - 1) / perLine);
    l.legend = QRectF(area.left() + 40 * fs, area.top() + 30 * fs, area.width() - 48 * fs,
                      legendLines * 17 * fs);
    const double top = l.legend.bottom() + 10 * fs, bottom = area.bottom() - 30 * fs;
    const double left = area.left() + 58 * fs, right = area.right() - 10 * fs;
    const double pw = (right - left) / columns, ph = (bottom - top) / rows;
    for (int k = 0; k < groups; ++k) {
        const int r = k / columns, c = k % columns;
        l.panels.emplace_back(left + c * pw + 6 * fs, top + r * ph + 18 * fs, pw - 14 * fs,
                              ph - 18 * fs - (r + 1 == rows ? 0 : 26 * fs));
    }
    std::vector<double> values;
    for (const auto &line : drawn)
        for (const auto &[step, v] : line.points) {
            values.push_back(v);
            l.xMax = std::max(l.xMax, double(step));
        }
    l.yMax = std::max(robustTop(values, 1.0).top * 1.05, 0.1);
    return l;
}

QPointF GroupPanelsView::toPixel(const Layout &l, int group, int64_t step, double loss) const
{
    const QRectF &plot = l.panels[size_t(group)];
    const double fx = m_logX->isChecked()
                          ? std::log(std::max(double(step), 1.0)) / std::log(std::max(l.xMax, 2.0))
                          : double(step) / l.xMax;
    const double fy = std::clamp(loss / l.yMax, 0.0, 1.02);
    return {plot.left() + fx * plot.width(), plot.bottom() - fy * plot.height()};
}

std::optional<GroupPanelsView::Hit> GroupPanelsView::hit(const QPointF &at, double radius) const
{
    std::vector<Line> drawn = lines();
    const Layout l = layoutFor(QRectF(m_canvasWidget->rect()), drawn);
    int best = -1, bestPoint = -1;
    double bestDistance = radius;
    for (int i = 0; i < int(drawn.size()); ++i) {
        const Line &line = drawn[size_t(i)];
        if (line.group >= int(l.panels.size()) ||
            !l.panels[size_t(line.group)].adjusted(-radius, -radius, radius, radius).contains(at))
            continue;
        for (int k = 0; k < int(line.points.size()); ++k) {
            const QPointF p =
                toPixel(l, line.group, line.points[size_t(k)].first, line.points[size_t(k)].second);
            const double d = std::hypot(p.x() - at.x(), p.y() - at.y());
            if (d <= bestDistance) {
                bestDistance = d;
                best = i;
                bestPoint = k;
            }
        }
    }
    if (best < 0) return std::nullopt;
    return Hit{std::move(drawn[size_t(best)]), bestPoint};
}

QString GroupPanelsView::hoverText(const QPointF &at) const
{
    const auto found = hit(at, 8);
    if (!found) return {};
    const Line &line = found->line;
    const auto &[step, loss] = line.points[size_t(found->point)];
    return tr("%1\n%2: test loss %3 at step %4%5")
        .arg(line.name, groupNames().value(line.group))
        .arg(formatNumber(loss))
        .arg(step)
        .arg(line.replicates > 1 ? tr(" (median of %1 seeds)").arg(line.replicates) : QString());
}

QList<int> GroupPanelsView::runsAt(const QPointF &at) const
{
    const auto found = hit(at, 8);
    return found ? found->line.runs : QList<int>{};
}

void GroupPanelsView::paint(QPainter &p, const QRectF &area) const
{
    const ChartTheme &t = m_theme;
    const double fs = t.fontScale;
    const Session &s = m_model->session();
    p.fillRect(area, t.background);
    p.setPen(t.foreground);
    drawFittedText(p, QRectF(area.left(), area.top() + 4, area.width(), 24 * fs), title(),
                   t.font(11, true), 7.0, Qt::AlignCenter);
    const std::vector<Line> drawn = lines();
    const Layout l = layoutFor(area, drawn);
    const QStringList names = groupNames();
    if (drawn.empty()) {
        p.setPen(t.muted);
        p.setFont(t.font(9));
        p.drawText(
            area, Qt::AlignCenter,
            names.isEmpty()
                ? tr("This task's loss has no groups.")
                : tr("Lines appear as runs log their per-%1 test loss.").arg(taskGroups(s).word));
        return;
    }
    auto colourOf = [&](const Line &line) {
        return t.shadedSeriesColor(line.colour >= 0 ? line.colour : 0, line.shade, line.shades);
    };
    // The legend: each colour once (the configuration, or the colour axis's value where the
    // configurations are more than the palette's colours), then the shades' meaning.
    {
        const ConfigurationColours colours = configurationColours(s, "");
        std::vector<std::pair<QColor, QString>> entries;
        std::set<int> named;
        for (const auto &line : drawn) {
            if (line.group != 0 || named.count(line.colour)) continue;
            named.insert(line.colour);
            if (colours.shades > 1)
                entries.push_back(
                    {t.seriesColor(line.colour),
                     axisValueText(colours.table.axis, colours.table.values.value(line.colour))});
            else
                entries.push_back(
                    {colourOf(line), m_median->isChecked()
                                         ? line.name
                                         : line.name.section(QLatin1Char(' '), 0, 1)});
        }
        if (colours.shades > 1)
            for (int k = 0; k < colours.shades; ++k) {
                QStringList rest;
                for (const auto &[axis, label] : colours.shadeKeys[size_t(k)])
                    rest << axisValueText(axis, QString::fromStdString(label));
                entries.push_back({t.shadedSeriesColor(-1, k, colours.shades),
                                   rest.join(QStringLiteral(", ")) + tr(" (shade)")});
            }
        p.setFont(t.font(8.5));
        const double entryW = 150 * fs;
        const int perLine = std::max(1, int(l.legend.width() / entryW));
        for (int e = 0; e < int(entries.size()); ++e) {
            const double x = l.legend.left() + (e % perLine) * entryW;
            const double y = l.legend.top() + (e / perLine) * 17 * fs;
            p.setPen(QPen(entries[size_t(e)].first, t.line(2.5)));
            p.drawLine(QPointF(x, y + 8 * fs), QPointF(x + 18 * fs, y + 8 * fs));
            p.setPen(t.foreground);
            drawFittedText(p, QRectF(x + 22 * fs, y, entryW - 26 * fs, 16 * fs),
                           entries[size_t(e)].second, t.font(8.5), 6.0,
                           Qt::AlignLeft | Qt::AlignVCenter);
        }
    }
    const auto plateaus = plateausOf(s); // the highest: a group not learned (ln 10 a digit)
    const LinearTicks yTicks = niceTicks(0.0, l.yMax, 5);
    for (int k = 0; k < int(l.panels.size()); ++k) {
        const QRectF &plot = l.panels[size_t(k)];
        p.setPen(QPen(t.grid, 1));
        p.setBrush(t.plotBackground);
        p.drawRect(plot);
        p.setPen(t.foreground);
        drawFittedText(p, QRectF(plot.left(), plot.top() - 17 * fs, plot.width(), 15 * fs),
                       names.value(k), t.font(9, true), 6.0, Qt::AlignCenter);
        // Ticks: y on every panel's left, labelled on the first of each row; x below each.
        p.setFont(t.font(7.5));
        const QFontMetricsF fm(p.font());
        const bool firstOfRow = k % 3 == 0;
        for (int i = 0; i < yTicks.count; ++i) {
            const double v = yTicks.first + i * yTicks.step;
            const double y = plot.bottom() - v / l.yMax * plot.height();
            p.setPen(QPen(t.foreground, 1));
            p.drawLine(QPointF(plot.left() - 3 * fs, y), QPointF(plot.left(), y));
            if (firstOfRow)
                p.drawText(QRectF(plot.left() - 44 * fs, y - fm.height() / 2, 40 * fs, fm.height()),
                           Qt::AlignRight | Qt::AlignVCenter,
                           QString::fromStdString(tickLabel(yTicks, v)));
        }
        if (!m_logX->isChecked()) {
            const LinearTicks xTicks = niceTicks(0.0, l.xMax, 4);
            for (int i = 0; i < xTicks.count; ++i) {
                const double v = xTicks.first + i * xTicks.step;
                const double x = plot.left() + v / l.xMax * plot.width();
                p.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 3 * fs));
                // Inside the panel's width, so that neighbouring panels' ends do not run together.
                const QString text = QString::fromStdString(tickLabel(xTicks, v));
                const double w = fm.horizontalAdvance(text) + 2;
                QRectF box(x - w / 2, plot.bottom() + 3 * fs, w, fm.height());
                if (box.right() > plot.right()) box.moveRight(plot.right());
                if (box.left() < plot.left()) box.moveLeft(plot.left());
                p.drawText(box, Qt::AlignCenter, text);
            }
        }
        if (!plateaus.empty() && plateaus.front().loss <= l.yMax) {
            const double y = plot.bottom() - plateaus.front().loss / l.yMax * plot.height();
            p.setPen(QPen(t.muted, 1, Qt::DashLine));
            p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
            p.setPen(t.foreground);
            p.drawText(QRectF(plot.right() - 60 * fs, y - fm.height(), 58 * fs, fm.height()),
                       Qt::AlignRight | Qt::AlignBottom,
                       QString::fromStdString(plateaus.front().label));
        }
    }
    // The lines, clipped to their panels; selected runs' lines thick, on top.
    const QSet<int> selected(m_selected.begin(), m_selected.end());
    for (const bool selectedPass : {false, true})
        for (const auto &line : drawn) {
            bool isSelected = false;
            for (int run : line.runs) isSelected = isSelected || selected.contains(run);
            if (isSelected != selectedPass || line.points.empty()) continue;
            p.save();
            p.setClipRect(l.panels[size_t(line.group)].adjusted(-1, -2, 1, 1));
            QPainterPath path(
                toPixel(l, line.group, line.points.front().first, line.points.front().second));
            for (size_t k = 1; k < line.points.size(); ++k)
                path.lineTo(toPixel(l, line.group, line.points[k].first, line.points[k].second));
            p.setPen(QPen(colourOf(line), t.line(selectedPass ? 3.0 : 1.6)));
            p.setBrush(Qt::NoBrush);
            p.drawPath(path);
            p.restore();
        }
    // The shared axes' titles.
    p.setPen(t.foreground);
    p.setFont(t.font(8.5));
    p.drawText(QRectF(area.left(), area.bottom() - 16 * fs, area.width(), 14 * fs), Qt::AlignCenter,
               m_logX->isChecked() ? tr("step (log), in every panel") : tr("step, in every panel"));
    p.save();
    p.translate(area.left() + 10 * fs, (l.legend.bottom() + area.bottom()) / 2);
    p.rotate(-90);
    p.drawText(QRectF(-150 * fs, -8 * fs, 300 * fs, 16 * fs), Qt::AlignCenter,
               tr("test loss (%1)").arg(lossUnit(s)));
    p.restore();
}

QString GroupPanelsView::csv() const
{
    const QStringList names = groupNames();
    QString out = QStringLiteral("line,group,runs,replicates,step,loss\n");
    for (const auto &line : lines()) {
        QStringList runs;
        for (int r : line.runs) runs << QString::number(r);
        for (const auto &[step, loss] : line.points)
            out += QStringLiteral("%1,%2,%3,%4,%5,%6\n")
                       .arg(csvCell(line.name), csvCell(names.value(line.group)), runs.join(' '))
                       .arg(line.replicates)
                       .arg(step)
                       .arg(loss, 0, 'g', 10);
    }
    return out;
}

void GroupPanelsView::refresh()
{
    m_canvasWidget->update();
}

void GroupPanelsView::saveViewState(ViewState &state) const
{
    setStateValue(state, "median", m_median->isChecked() ? "true" : "false");
    setStateValue(state, "log_x", m_logX->isChecked() ? "true" : "false");
}

void GroupPanelsView::restoreViewState(const ViewState &state)
{
    const QSignalBlocker b1(m_median), b2(m_logX);
    m_median->setChecked(stateValue(state, "median", "true") == "true");
    m_logX->setChecked(stateValue(state, "log_x", "false") == "true");
    refresh();
}

FigureView::Pooling GroupPanelsView::pooling() const
{
    Pooling out;
    for (const auto &line : lines()) out.groups.push_back(line.runs);
    return out;
}

} // namespace headlab::ui
