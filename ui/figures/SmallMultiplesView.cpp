// SmallMultiplesView.cpp — see SmallMultiplesView.h.
#include "ui/figures/SmallMultiplesView.h"
#include "ui/model/CsvCell.h"

#include "core/session/Replicates.h"

#include "ui/model/AxisRange.h"
#include "ui/model/ColourTable.h"
#include "ui/model/CurveDecimator.h"
#include "ui/model/HeatmapData.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <set>

namespace headlab::ui {

SmallMultiplesView::SmallMultiplesView(SessionModel *model, QWidget *parent)
    : FigureView(model, parent)
{
    m_rows = new QComboBox(this);
    m_columns = new QComboBox(this);
    m_logX = new QCheckBox(tr("Log x"), this);
    m_showTrain = new QCheckBox(tr("Train"), this);
    m_showTrain->setChecked(true);
    controlsLayout()->addWidget(new QLabel(tr("rows"), this));
    controlsLayout()->addWidget(m_rows);
    controlsLayout()->addWidget(new QLabel(tr("columns"), this));
    controlsLayout()->addWidget(m_columns);
    controlsLayout()->addWidget(m_logX);
    controlsLayout()->addWidget(m_showTrain);
    controlsLayout()->addStretch(1);
    m_canvasWidget =
        new PaintedCanvas(this, {[this](QPainter &p, const QRectF &area) { paintGrid(p, area); },
                                 [this](const QPointF &at) { return hoverText(at); },
                                 [this](const QPointF &at) { return runsAt(at); }});
    setCanvas(m_canvasWidget);
    connect(m_rows, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
    connect(m_columns, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
    connect(m_logX, &QCheckBox::toggled, this, &FigureView::controlChanged);
    connect(m_showTrain, &QCheckBox::toggled, this, &FigureView::controlChanged);
}

QString SmallMultiplesView::title() const
{
    QStringList axes;
    for (const std::string &a : {rowAxis(), columnAxis()})
        if (!a.empty()) axes << QString::fromStdString(a);
    if (axes.isEmpty()) return tr("Train and test loss of every run");
    return axes.size() == 1
               ? tr("Train and test loss, one panel per %1").arg(axes.front())
               : tr("Train and test loss, one panel per (%1, %2)").arg(axes[0], axes[1]);
}

std::string SmallMultiplesView::rowAxis() const
{
    return m_rows->currentData().toString().toStdString();
}
std::string SmallMultiplesView::columnAxis() const
{
    return m_columns->currentData().toString().toStdString();
}

std::string SmallMultiplesView::colourAxis() const
{
    // The session's colour axis (heads, when swept), so that a value has the colour it has in
    // every figure, unless it lays out the panels; then the first swept axis with several values
    // that is neither rows nor columns (η, usually), else a replicate axis (one colour per seed).
    const ColourTable table = colourTable(m_model->session());
    if (!table.axis.empty() && table.values.size() > 1 && table.axis != rowAxis() &&
        table.axis != columnAxis())
        return table.axis;
    const auto replicates = replicateAxes(m_model->session());
    auto isReplicate = [&](const std::string &name) {
        return std::find(replicates.begin(), replicates.end(), name) != replicates.end();
    };
    for (bool replicate : {false, true})
        for (const auto &axis : m_model->session().axes)
            if (axis.values.size() > 1 && axis.name != rowAxis() && axis.name != columnAxis() &&
                isReplicate(axis.name) == replicate)
                return axis.name;
    return {};
}

namespace {
// The line keys of a small-multiples grid: the rest of each run's configuration.
ConfigurationRest lineKeys(const Session &session, const std::string &rows,
                           const std::string &columns)
{
    std::set<std::string> drawn;
    for (const auto &axis : {rows, columns})
        if (!axis.empty()) drawn.insert(axis);
    return ConfigurationRest(session, drawn);
}
} // namespace

SmallMultiplesView::LineStyle SmallMultiplesView::lineStyle(const SessionRun &run) const
{
    const Session &s = m_model->session();
    const ConfigurationRest keys = lineKeys(s, rowAxis(), columnAxis());
    const QStringList values = keys.values();
    if (values.size() <= kPaletteColours) {
        // No rest at all (every line a replicate): a colour per value of the colour axis.
        if (values.size() == 1) {
            const std::string colourBy = colourAxis();
            const int c = colourBy.empty()
                              ? 0
                              : int(axisValueLabels(s, colourBy).indexOf(axisLabel(run, colourBy)));
            return {std::max(0, c), replicateShade(s, run, colourBy)};
        }
        return {int(values.indexOf(keys(run))), replicateShade(s, run)};
    }
    const std::string colourBy = colourAxis();
    std::set<std::string> drawn = {colourBy};
    for (const auto &axis : {rowAxis(), columnAxis()})
        if (!axis.empty()) drawn.insert(axis);
    const ConfigurationRest rest(s, drawn);
    const int c = int(axisValueLabels(s, colourBy).indexOf(axisLabel(run, colourBy)));
    return {std::max(0, c), int(rest.values().indexOf(rest(run)))};
}

SmallMultiplesView::LineLegend SmallMultiplesView::lineLegend() const
{
    const Session &s = m_model->session();
    const ConfigurationRest keys = lineKeys(s, rowAxis(), columnAxis());
    const QStringList values = keys.values();
    const std::string colourBy = colourAxis();
    LineLegend out;
    if (values.size() == 1 || values.size() > kPaletteColours) {
        for (const QString &label : colourBy.empty() ? QStringList() : axisValueLabels(s, colourBy))
            out.colours << QString::fromStdString(colourBy) + " " + displayLabel(label);
        if (values.size() > kPaletteColours) {
            std::set<std::string> drawn = {colourBy};
            for (const auto &axis : {rowAxis(), columnAxis()})
                if (!axis.empty()) drawn.insert(axis);
            const ConfigurationRest rest(s, drawn);
            for (const QString &v : rest.values()) out.shades << rest.legendName(v);
        }
        return out;
    }
    for (const QString &v : values) out.colours << keys.legendName(v);
    return out;
}

void SmallMultiplesView::refresh()
{
    const QStringList axes = sweptAxes(m_model->session());
    if (axes != m_axesShown || !m_pending.empty()) {
        ViewState state = m_pending;
        // The user's choice when the axes change; a fresh view (no choice yet) takes the defaults.
        if (state.empty() && m_rows->count() > 0) saveViewState(state);
        m_pending.clear();
        m_axesShown = axes;
        const QSignalBlocker b1(m_rows), b2(m_columns), b3(m_logX), b4(m_showTrain);
        m_rows->clear();
        m_columns->clear();
        m_rows->addItem(tr("(none)"), QString());
        m_columns->addItem(tr("(none)"), QString());
        for (const auto &a : axes) {
            m_rows->addItem(a, a);
            m_columns->addItem(a, a);
        }
        const QString defRows = axes.contains("heads") ? "heads" : axes.value(1);
        // Never the rows' axis again: a session that sweeps only heads got a heads × heads grid
        // whose off-diagonal panels were empty.
        QString defCols = axes.contains("d_model") && defRows != "d_model"
                              ? QStringLiteral("d_model")
                              : QString();
        for (const QString &a : axes)
            if (defCols.isEmpty() && a != defRows) defCols = a;
        int r = m_rows->findData(
            QString::fromStdString(stateValue(state, "rows", defRows.toStdString())));
        int c = m_columns->findData(
            QString::fromStdString(stateValue(state, "columns", defCols.toStdString())));
        m_rows->setCurrentIndex(std::max(0, r));
        m_columns->setCurrentIndex(std::max(0, c));
        if (state.count("grid.log_x")) m_logX->setChecked(stateValue(state, "log_x") == "true");
        if (state.count("grid.train"))
            m_showTrain->setChecked(stateValue(state, "train") == "true");
    }
    m_canvasWidget->update();
}

void SmallMultiplesView::saveViewState(ViewState &state) const
{
    if (m_rows->count() == 0 && !m_pending.empty()) {
        for (const auto &[k, v] : m_pending) state[k] = v;
        return;
    }
    setStateValue(state, "rows", rowAxis());
    setStateValue(state, "columns", columnAxis());
    setStateValue(state, "log_x", m_logX->isChecked() ? "true" : "false");
    setStateValue(state, "train", m_showTrain->isChecked() ? "true" : "false");
}

void SmallMultiplesView::restoreViewState(const ViewState &state)
{
    m_pending.clear();
    for (const auto &[k, v] : state)
        if (k.rfind("grid.", 0) == 0) m_pending[k] = v;
    if (m_pending.empty()) m_pending["grid.log_x"] = "false";
    m_axesShown.clear();
    refresh();
}

QPointF SmallMultiplesView::GridScale::toPixel(const QRectF &plot, double step, double loss) const
{
    const double fx = logX ? std::log(std::max(step, 1.0)) / std::log(xMax) : step / xMax;
    const double fy = std::clamp(loss / yMax, 0.0, 1.02);
    return {plot.left() + fx * plot.width(), plot.bottom() - fy * plot.height()};
}

QRectF SmallMultiplesView::plotOf(const QRectF &panel) const
{
    const double fs = m_theme.fontScale;
    return panel.adjusted(4 * fs, 16 * fs, -4 * fs, -4 * fs);
}

QList<int> SmallMultiplesView::runsOfPanel(const QString &rowLabel,
                                           const QString &columnLabel) const
{
    const auto &s = m_model->session();
    QList<int> out;
    for (int i = 0; i < int(s.runs.size()); ++i) {
        const auto &run = s.runs[size_t(i)];
        if (!rowAxis().empty() && axisLabel(run, rowAxis()) != rowLabel) continue;
        if (!columnAxis().empty() && axisLabel(run, columnAxis()) != columnLabel) continue;
        out << i;
    }
    return out;
}

std::optional<SmallMultiplesView::PanelAt> SmallMultiplesView::panelAt(const QPointF &pos) const
{
    const auto &s = m_model->session();
    const QStringList rows =
        rowAxis().empty() ? QStringList{QString()} : axisValueLabels(s, rowAxis());
    const QStringList cols =
        columnAxis().empty() ? QStringList{QString()} : axisValueLabels(s, columnAxis());
    const QRectF grid = legendFor(QRectF(m_canvasWidget->rect())).grid;
    const double pw = grid.width() / std::max<int>(1, int(cols.size())),
                 ph = grid.height() / std::max<int>(1, int(rows.size()));
    const int c = int((pos.x() - grid.left()) / pw), r = int((pos.y() - grid.top()) / ph);
    if (pos.x() < grid.left() || pos.y() < grid.top() || c >= cols.size() || r >= rows.size())
        return std::nullopt;
    return PanelAt{rows[r], cols[c],
                   plotOf(QRectF(grid.left() + c * pw, grid.top() + r * ph, pw, ph))};
}

QList<int> SmallMultiplesView::runsAt(const QPointF &pos) const
{
    const auto panel = panelAt(pos);
    return panel ? runsOfPanel(panel->rowLabel, panel->columnLabel) : QList<int>{};
}

QString SmallMultiplesView::hoverText(const QPointF &pos) const
{
    const auto panel = panelAt(pos);
    if (!panel) return {};
    const auto &s = m_model->session();
    const GridScale scale = gridScale();
    // The nearest drawn point of a run of this panel, within 8 pixels.
    double best = 8;
    QString text;
    for (const int i : runsOfPanel(panel->rowLabel, panel->columnLabel)) {
        const auto &run = s.runs[size_t(i)];
        for (const bool test : {true, false}) {
            if (!test && !m_showTrain->isChecked()) continue;
            for (const auto &pt : test ? run.result.test : run.result.train) {
                if (!std::isfinite(pt.value)) continue;
                const QPointF at = scale.toPixel(panel->plot, double(pt.step), pt.value);
                const double d = std::hypot(at.x() - pos.x(), at.y() - pos.y());
                if (d >= best) continue;
                best = d;
                text = tr("run %1: %2\n%3 loss %4 at step %5")
                           .arg(i + 1)
                           .arg(runLabel(s, run))
                           .arg(test ? tr("test") : tr("train"))
                           .arg(formatNumber(pt.value))
                           .arg(pt.step);
            }
        }
    }
    return text;
}

SmallMultiplesView::Legend SmallMultiplesView::legendFor(const QRectF &area) const
{
    // On as many lines as the width needs (25 values of η ran past the right edge); the panels
    // start below it.
    const ChartTheme &t = m_theme;
    const double fs = t.fontScale;
    const QFontMetricsF fm(t.font(8.5));
    const LineLegend lines = lineLegend();
    Legend legend;
    const double left = area.left() + 30 * fs, right = area.right() - 8 * fs;
    double lx = left, ly = area.top() + 32 * fs;
    auto add = [&](const QColor &colour, double width, const QString &text,
                   Qt::PenStyle style = Qt::SolidLine) {
        const double w = fm.horizontalAdvance(text);
        if (lx > left && lx + 22 * fs + w > right) { // the next line
            lx = left;
            ly += 17 * fs;
        }
        legend.items.push_back({QPointF(lx, ly), colour, width, style, text, w});
        lx += 22 * fs + w + 14 * fs;
    };
    for (int k = 0; k < lines.colours.size(); ++k)
        add(t.seriesColor(k), t.line(2.5), lines.colours[k]);
    for (int k = 0; k < lines.shades.size(); ++k)
        add(shadedColour(t.muted, k, t.dark, 30), t.line(2.5), lines.shades[k]);
    add(t.muted, t.line(1.0), tr("train (thin, dotted)"), Qt::DotLine);
    add(t.muted, t.line(2.2), tr("test (thick)"));
    const double top = ly + 24 * fs;
    // Room for the y tick labels beside the first column.
    double tickW = 0;
    const QFontMetricsF tickMetrics(t.font(7.5));
    for (const auto &tick : yTicks())
        tickW = std::max(tickW, tickMetrics.horizontalAdvance(tick.second));
    const double gridLeft = area.left() + 22 * fs + tickW;
    legend.grid = QRectF(gridLeft, top, area.right() - 8 * fs - gridLeft,
                         std::max(10.0, area.bottom() - top - 34 * fs));
    return legend;
}

QList<std::pair<double, QString>> SmallMultiplesView::yTicks() const
{
    const GridScale scale = gridScale();
    QList<std::pair<double, QString>> ticks;
    const auto plateaus = plateausOf(m_model->session());
    if (!plateaus.empty()) {
        ticks << std::make_pair(0.0, QStringLiteral("0"));
        for (const auto &line : plateaus)
            if (line.loss <= scale.yMax)
                ticks << std::make_pair(line.loss, QString::fromStdString(line.label));
        return ticks; // in the task's order: ln 10 is labelled first where not all fit
    }
    const LinearTicks nice = niceTicks(0.0, scale.yMax, 4);
    for (int k = 0; k < nice.count; ++k) {
        const double v = nice.first + k * nice.step;
        ticks << std::make_pair(v, QString::fromStdString(tickLabel(nice, v)));
    }
    return ticks;
}

void SmallMultiplesView::paintGrid(QPainter &p, const QRectF &area) const
{
    const ChartTheme &t = m_theme;
    const double fs = t.fontScale;
    const auto &s = m_model->session();
    p.fillRect(area, t.background);
    p.setPen(t.foreground);
    m_elided = drawFittedText(p, QRectF(area.left(), area.top() + 4, area.width(), 24 * fs),
                              title(), t.font(11, true), 7.0, Qt::AlignCenter);

    const QStringList rows =
        rowAxis().empty() ? QStringList{QString()} : axisValueLabels(s, rowAxis());
    const QStringList cols =
        columnAxis().empty() ? QStringList{QString()} : axisValueLabels(s, columnAxis());
    // Legend: colour per value of the colour axis, then line styles.
    p.setFont(t.font(8.5));
    const Legend legend = legendFor(area);
    for (const auto &item : legend.items) {
        const double lx = item.at.x(), ly = item.at.y();
        p.setPen(QPen(item.colour, item.width, item.style));
        p.drawLine(QPointF(lx, ly + 8 * fs), QPointF(lx + 18 * fs, ly + 8 * fs));
        p.setPen(t.foreground);
        p.drawText(QRectF(lx + 22 * fs, ly, item.textWidth + 4, 16 * fs),
                   Qt::AlignLeft | Qt::AlignVCenter, item.text);
    }
    const QRectF grid = legend.grid;
    const double pw = grid.width() / std::max<int>(1, int(cols.size())),
                 ph = grid.height() / std::max<int>(1, int(rows.size()));

    // Shared axes over all runs.
    const GridScale scale = gridScale();
    const double xMax = scale.xMax, yMax = scale.yMax;
    const bool logX = scale.logX;
    QSet<int> selected(m_selected.begin(), m_selected.end());

    auto panelTitle = [&](int r, int c) {
        QStringList head;
        if (!rowAxis().empty())
            head << QString::fromStdString(rowAxis()) + "=" + displayLabel(rows[r]);
        if (!columnAxis().empty())
            head << QString::fromStdString(columnAxis()) + "=" + displayLabel(cols[c]);
        return head.join("  ");
    };
    // One size for every panel's title: the largest at which the longest fits its panel.
    QFont titleFont = t.font(8);
    for (int r = 0; r < rows.size(); ++r)
        for (int c = 0; c < cols.size(); ++c)
            while (titleFont.pointSizeF() > 6.0 &&
                   QFontMetricsF(titleFont).horizontalAdvance(panelTitle(r, c)) > pw)
                titleFont.setPointSizeF(titleFont.pointSizeF() - 0.5);
    for (int r = 0; r < rows.size(); ++r) {
        for (int c = 0; c < cols.size(); ++c) {
            const QRectF panel(grid.left() + c * pw, grid.top() + r * ph, pw, ph);
            const QRectF plot = plotOf(panel);
            p.setPen(QPen(t.grid, 1));
            p.setBrush(t.plotBackground);
            p.drawRect(plot);
            p.setPen(t.foreground);
            m_elided += drawFittedText(p, QRectF(panel.left(), panel.top(), panel.width(), 15 * fs),
                                       panelTitle(r, c), titleFont, 5.5, Qt::AlignCenter);
            if (c == 0) { // the shared y ticks, labelled beside the first column only
                p.setFont(t.font(7.5));
                const double lineH = QFontMetricsF(p.font()).height();
                QList<double> labelled; // the labels' heights: a later one must not overlap
                for (const auto &[v, label] : yTicks()) {
                    const double y = plot.bottom() - std::clamp(v / yMax, 0.0, 1.0) * plot.height();
                    p.setPen(QPen(t.foreground, 1));
                    p.drawLine(QPointF(plot.left() - 3 * fs, y), QPointF(plot.left(), y));
                    if (std::any_of(labelled.begin(), labelled.end(),
                                    [&](double at) { return std::abs(at - y) < 0.9 * lineH; }))
                        continue;
                    p.drawText(QRectF(area.left() + 20 * fs, y - lineH / 2,
                                      plot.left() - 4 * fs - area.left() - 20 * fs, lineH),
                               Qt::AlignRight | Qt::AlignVCenter, label);
                    labelled << y;
                }
            }
            const bool panelSelected =
                paintPanelCurves(p, plot, rowAxis().empty() ? QString() : rows[r],
                                 columnAxis().empty() ? QString() : cols[c], scale, selected);
            if (panelSelected) {
                p.setPen(QPen(t.foreground, t.line(2.0)));
                p.setBrush(Qt::NoBrush);
                p.drawRect(plot);
            }
        }
    }
    // Shared axis annotations.
    p.setPen(t.foreground);
    p.setFont(t.font(8.5));
    p.drawText(QRectF(grid.left(), grid.bottom() + 4, grid.width(), 16 * fs), Qt::AlignCenter,
               logX ? tr("step (log), 1 … %1 in every panel").arg(xMax)
                    : tr("step, 0 … %1 in every panel").arg(xMax));
    p.save();
    p.translate(area.left() + 12 * fs, grid.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-grid.height() / 2, -8 * fs, grid.height(), 16 * fs), Qt::AlignCenter,
               tr("loss, 0 … %1 nats").arg(yMax, 0, 'f', 2));
    p.restore();
}

// The axes every panel shares: steps up to the longest run's, losses up to the loss at
// initialisation (or a robust top where the task has none).
SmallMultiplesView::GridScale SmallMultiplesView::gridScale() const
{
    const auto &s = m_model->session();
    GridScale scale;
    for (const auto &run : s.runs)
        scale.xMax = std::max<double>(scale.xMax, double(run.config.totalSteps()));
    const double initial = initialLossOf(s); // ln 22 for addition
    scale.yMax = initial * 1.05;
    if (!(initial > 0)) {
        // A blown-up run must not flatten every panel: a robust top (AxisRange.h).
        std::vector<double> values;
        for (const auto &run : s.runs)
            for (const auto &pt : run.result.test) values.push_back(pt.value);
        scale.yMax = robustTop(values, 1.0).top * 1.05;
        if (scale.yMax <= 0) scale.yMax = 1;
    }
    scale.logX = m_logX->isChecked();
    return scale;
}

// One panel's plateau lines and curves (train dotted, test solid, each run its colour-by value's
// colour, seeds as shades of it), clipped to its plot; whether it holds a selected run.
bool SmallMultiplesView::paintPanelCurves(QPainter &p, const QRectF &plot, const QString &rowLabel,
                                          const QString &columnLabel, const GridScale &scale,
                                          const QSet<int> &selected) const
{
    const ChartTheme &t = m_theme;
    const auto &s = m_model->session();
    const auto plateaus = plateausOf(s);
    auto toPoint = [&](double step, double v) { return scale.toPixel(plot, step, v); };
    p.setPen(QPen(t.muted, 0.8, Qt::DashLine));
    for (const auto &line : plateaus) {
        const double y = toPoint(0, line.loss).y();
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    }
    p.save();
    p.setClipRect(plot.adjusted(-1, -2, 1, 1));
    bool panelSelected = false;
    CurveView view;
    view.logX = scale.logX;
    view.xMin = scale.logX ? 1 : 0;
    view.xMax = scale.xMax;
    view.buckets = std::max(20, int(plot.width()));
    for (const int i : runsOfPanel(rowLabel, columnLabel)) {
        const auto &run = s.runs[size_t(i)];
        panelSelected = panelSelected || selected.contains(i);
        // Each line key its colour; replicates of one get shades of it, each seed its own line.
        const LineStyle style = lineStyle(run);
        const QColor colour = shadedColour(t.seriesColor(style.colour), style.shade, t.dark, 30);
        auto draw = [&](const Curve &curve, double width, int alpha, Qt::PenStyle style) {
            const auto pts = CurveDecimator::decimate(curve, view);
            if (pts.size() < 1) return;
            QPainterPath path(toPoint(pts[0].x(), pts[0].y()));
            for (int k = 1; k < pts.size(); ++k) path.lineTo(toPoint(pts[k].x(), pts[k].y()));
            QColor col = colour;
            col.setAlpha(alpha);
            p.setPen(QPen(col, width, style));
            p.setBrush(Qt::NoBrush);
            p.drawPath(path);
        };
        // Train thin and dotted, test thick and solid: told apart at a glance, also in print.
        if (m_showTrain->isChecked()) draw(run.result.train, t.line(0.9), 150, Qt::DotLine);
        draw(run.result.test, t.line(2.0), 255, Qt::SolidLine);
        if (run.result.status == RunStatus::Diverged) {
            p.setPen(QPen(t.diverged, t.line(1.5)));
            p.setFont(t.font(7.5));
            p.drawText(plot.adjusted(2, 2, -2, -2), Qt::AlignRight | Qt::AlignTop, tr("diverged"));
        }
    }
    p.restore();
    return panelSelected;
}

QString SmallMultiplesView::csv() const
{
    QString out = QStringLiteral("run,%1,%2,curve,step,value\n")
                      .arg(csvCell(rowAxis()), csvCell(columnAxis()));
    const auto &s = m_model->session();
    for (int i = 0; i < int(s.runs.size()); ++i) {
        const auto &run = s.runs[size_t(i)];
        const QString rl = rowAxis().empty() ? QString() : axisLabel(run, rowAxis());
        const QString cl = columnAxis().empty() ? QString() : axisLabel(run, columnAxis());
        for (const auto *name : {"train", "test"}) {
            const Curve &curve = std::string(name) == "train" ? run.result.train : run.result.test;
            for (const auto &pt : curve)
                out += QStringLiteral("%1,%2,%3,%4,%5,%6\n")
                           .arg(i)
                           .arg(csvCell(rl), csvCell(cl), QString::fromLatin1(name))
                           .arg(pt.step)
                           .arg(pt.value, 0, 'g', 10);
        }
    }
    return out;
}

FigureView::Pooling SmallMultiplesView::pooling() const
{
    const auto &s = m_model->session();
    // Drawn alike: one panel, one colour, and past the palette one shade (seeds share it then).
    const bool shaded = !lineLegend().shades.isEmpty();
    std::map<std::tuple<QString, QString, int, int>, QList<int>> alike;
    for (int i = 0; i < int(s.runs.size()); ++i) {
        const auto &run = s.runs[size_t(i)];
        const LineStyle style = lineStyle(run);
        alike[{rowAxis().empty() ? QString() : axisLabel(run, rowAxis()),
               columnAxis().empty() ? QString() : axisLabel(run, columnAxis()), style.colour,
               shaded ? style.shade : 0}]
            << i;
    }
    Pooling out;
    for (auto &[key, runs] : alike) out.groups.push_back(std::move(runs));
    return out;
}

} // namespace headlab::ui
