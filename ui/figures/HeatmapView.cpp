// HeatmapView.cpp — see HeatmapView.h.
#include "ui/figures/HeatmapView.h"

#include "core/schema/Dimensions.h"
#include "core/session/Replicates.h"

#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QSpinBox>
#include <QToolTip>

#include <cmath>

namespace headlab::ui {

class HeatmapCanvas : public QWidget {
public:
    explicit HeatmapCanvas(HeatmapView *view)
        : QWidget(view)
        , m_view(view)
    {
        setMinimumSize(320, 240);
        setMouseTracking(true);
        setAttribute(Qt::WA_OpaquePaintEvent);
    }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        m_view->paintHeatmap(p, QRectF(rect()));
    }
    void mousePressEvent(QMouseEvent *e) override
    {
        int panel = 0;
        const QPoint cell = m_view->cellAt(e->position().toPoint(), &panel);
        if (cell.x() >= 0) m_view->onCellClicked(panel, cell.y(), cell.x());
    }
    bool event(QEvent *e) override
    {
        if (e->type() == QEvent::ToolTip) {
            auto *help = static_cast<QHelpEvent *>(e);
            int panel = 0;
            const QPoint c = m_view->cellAt(help->pos(), &panel);
            if (c.x() >= 0) {
                const auto &d = m_view->panelData(panel);
                const auto &cell = d.cell(c.y(), c.x());
                QString text = QStringLiteral("%1 = %2").arg(QString::fromStdString(d.xAxis),
                                                             d.xLabels[c.x()]);
                if (!d.yAxis.empty())
                    text += QStringLiteral(", %1 = %2")
                                .arg(QString::fromStdString(d.yAxis), d.yLabels[c.y()]);
                if (cell.state == HeatmapCell::State::Value ||
                    cell.state == HeatmapCell::State::Running)
                    text += QStringLiteral("\ntest loss %1").arg(formatLoss(cell.value));
                if (!cell.note.isEmpty()) text += QStringLiteral("\n") + cell.note;
                QToolTip::showText(help->globalPos(), text, this);
            } else {
                QToolTip::hideText();
            }
            return true;
        }
        return QWidget::event(e);
    }

private:
    HeatmapView *m_view;
};

HeatmapView::HeatmapView(SessionModel *model, QWidget *parent)
    : FigureView(model, parent)
{
    auto *bar = controlsLayout();
    m_xCombo = new QComboBox(this);
    m_yCombo = new QComboBox(this);
    m_step = new QSpinBox(this);
    m_step->setRange(-1, 100000000);
    m_step->setSpecialValueText(tr("final"));
    m_step->setValue(-1);
    m_step->setToolTip(tr("Show the test loss at this step (the last evaluation at or before it)"));
    bar->addWidget(new QLabel(tr("x"), this));
    bar->addWidget(m_xCombo);
    bar->addWidget(new QLabel(tr("y"), this));
    bar->addWidget(m_yCombo);
    m_sideBySide = new QComboBox(this);
    m_sideBySide->setToolTip(
        tr("Draw one heatmap per value of this axis, side by side (e.g. qk_rule)"));
    bar->addWidget(new QLabel(tr("side by side"), this));
    bar->addWidget(m_sideBySide);
    m_fixedBox = new QWidget(this);
    m_fixedLayout = new QHBoxLayout(m_fixedBox);
    m_fixedLayout->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(m_fixedBox);
    bar->addWidget(new QLabel(tr("step"), this));
    bar->addWidget(m_step);
    m_stat = new QComboBox(this);
    m_stat->addItem(tr("median"), QString::fromLatin1(toString(HeatmapStat::Median)));
    m_stat->addItem(tr("mean"), QString::fromLatin1(toString(HeatmapStat::Mean)));
    m_stat->addItem(tr("P(learned)"), QString::fromLatin1(toString(HeatmapStat::LearnedFraction)));
    m_stat->addItem(tr("critical η* (a search)"),
                    QString::fromLatin1(toString(HeatmapStat::CriticalLr)));
    m_stat->addItem(tr("LR sensitivity (over η)"),
                    QString::fromLatin1(toString(HeatmapStat::LrSensitivity)));
    m_stat->setToolTip(tr(
        "What a cell shows of its replicates (the seeds, and every axis set to 'all'): the median "
        "or mean final test loss, or the fraction that learned, with its count. A corner mark "
        "flags a split cell, whose replicates disagree on learned."));
    bar->addWidget(new QLabel(tr("cell"), this));
    bar->addWidget(m_stat);
    bar->addStretch(1);

    m_canvasWidget = new HeatmapCanvas(this);
    setCanvas(m_canvasWidget);

    connect(m_xCombo, &QComboBox::currentTextChanged, this, &FigureView::controlChanged);
    connect(m_yCombo, &QComboBox::currentTextChanged, this, &FigureView::controlChanged);
    connect(m_step, &QSpinBox::valueChanged, this, &FigureView::controlChanged);
    connect(m_sideBySide, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
    connect(m_stat, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
}

QString HeatmapView::csv() const
{
    if (m_panels.empty()) return m_data.csv();
    // One table: the side-by-side axis first, then each panel's rows.
    const QString side = m_sideBySide->currentData().toString();
    const QStringList values = axisValueLabels(m_model->session(), side.toStdString());
    QString out;
    for (int k = 0; k < int(m_panels.size()); ++k) {
        const QStringList lines = m_panels[size_t(k)].csv().split('\n', Qt::SkipEmptyParts);
        for (int i = 0; i < lines.size(); ++i) {
            if (i == 0 && k > 0) continue; // header once
            out += (i == 0 ? side : values.value(k)) + ',' + lines[i] + '\n';
        }
    }
    return out;
}

void HeatmapView::setSideBySide(const QString &axis)
{
    const int i = m_sideBySide->findData(axis);
    m_sideBySide->setCurrentIndex(i >= 0 ? i : 0);
}

QString HeatmapView::title() const
{
    QString t = m_data.stat == HeatmapStat::CriticalLr
                    ? tr("Critical learning rate η* (boundary search; dashed: still searching)")
                : m_data.stat == HeatmapStat::LrSensitivity
                    ? tr("Learning-rate sensitivity over η (median over seeds; 0: every η as "
                         "good as the best)")
                : m_data.stat == HeatmapStat::LearnedFraction
                    ? tr("Fraction of replicates that learned")
                    : (m_data.stat == HeatmapStat::Median ? tr("Median ") : tr("Mean ")) +
                          (m_data.step < 0 ? tr("final test loss")
                                           : tr("test loss at step %1").arg(m_data.step));
    QStringList fixed;
    const std::string x = m_data.xAxis, y = m_data.yAxis;
    const std::string side =
        m_panels.empty() ? std::string() : m_sideBySide->currentData().toString().toStdString();
    for (const auto &[axis, combo] : m_fixedCombos)
        if (axis != x && axis != y && axis != side && !combo->currentData().toString().isEmpty() &&
            !(axis == "lr" && m_data.stat == HeatmapStat::LrSensitivity))
            fixed << axisValueText(axis, combo->currentData().toString());
    if (!fixed.isEmpty()) t += QStringLiteral(" at ") + fixed.join(", ");
    // An axis set to "all (pooled)" is named: its values are replicates of the cells then.
    const QStringList pooled = pooling().pooledAxes;
    if (!pooled.isEmpty()) t += tr(", pooled over %1").arg(pooled.join(", "));
    // Every cell of the same number of replicates: said once here, not in every cell, with the
    // spread its whiskers are (the interquartile range from 4 on).
    const QString what = pooled.isEmpty() ? tr("seeds") : tr("runs");
    if (const int n = sharedReplicates(); n > 1)
        t += m_data.stat == HeatmapStat::Median
                 ? tr(", %1 over %2 %3")
                       .arg(QString::fromLatin1(replicateBandName(n)))
                       .arg(n)
                       .arg(what)
             : m_data.stat == HeatmapStat::Mean ? tr(", ± sd and se over %1 %2").arg(n).arg(what)
                                                : QString();
    return t;
}

int HeatmapView::sharedReplicates() const
{
    if (m_data.stat != HeatmapStat::Median && m_data.stat != HeatmapStat::Mean) return 0;
    int shared = 0;
    auto visit = [&](const HeatmapData &data) {
        for (int r = 0; r < data.rows(); ++r)
            for (int c = 0; c < data.columns(); ++c) {
                const auto &cell = data.cell(r, c);
                if (cell.state != HeatmapCell::State::Value || cell.replicates < 1) continue;
                if (shared == 0) shared = cell.replicates;
                if (cell.replicates != shared) shared = -1;
            }
    };
    if (m_panels.empty()) visit(m_data);
    for (const auto &panel : m_panels) visit(panel);
    return std::max(0, shared);
}

void HeatmapView::rebuildControls()
{
    const QStringList axes = sweptAxes(m_model->session());
    bool valuesChanged = false;
    for (const auto &[axis, combo] : m_fixedCombos) {
        QStringList labels = axisValueLabels(m_model->session(), axis);
        if (combo->count() != labels.size() + 1) valuesChanged = true;
    }
    if (axes == m_axesShown && !valuesChanged && m_pending.empty()) return;
    m_axesShown = axes;
    ViewState state = m_pending;
    if (state.empty()) saveViewState(state);
    m_pending.clear();

    const QSignalBlocker bx(m_xCombo), by(m_yCombo), bs(m_step), bsb(m_sideBySide);
    m_sideBySide->clear();
    m_sideBySide->addItem(tr("(none)"), QString());
    for (const auto &a : axes) m_sideBySide->addItem(a, a);
    const int sbi =
        m_sideBySide->findData(QString::fromStdString(stateValue(state, "side_by_side")));
    m_sideBySide->setCurrentIndex(sbi >= 0 ? sbi : 0);
    m_xCombo->clear();
    m_yCombo->clear();
    m_xCombo->addItems(axes);
    m_yCombo->addItem(tr("(none)"), QString());
    for (const auto &a : axes) m_yCombo->addItem(a, a);
    const QString x = QString::fromStdString(stateValue(state, "x", axes.value(0).toStdString()));
    const QString y = QString::fromStdString(stateValue(state, "y", axes.value(1).toStdString()));
    m_xCombo->setCurrentIndex(std::max<int>(0, int(axes.indexOf(x))));
    const int yi = m_yCombo->findData(y);
    m_yCombo->setCurrentIndex(yi >= 0 ? yi : 0);
    m_step->setValue(std::atoi(stateValue(state, "step", "-1").c_str()));
    {
        const QSignalBlocker bstat(m_stat);
        const int si =
            m_stat->findData(QString::fromStdString(stateValue(state, "stat", "median")));
        m_stat->setCurrentIndex(si >= 0 ? si : 0);
    }

    for (auto &[axis, combo] : m_fixedCombos) combo->parentWidget()->deleteLater();
    m_fixedCombos.clear();
    // Defaults from one configuration that exists (the first run's), so that the fixed axes
    // never name a combination the sweep has no run of (issue 50).
    const Session &session = m_model->session();
    const std::map<std::string, std::string> first =
        session.runs.empty()
            ? std::map<std::string, std::string>()
            : configurationLabels(configurationAxes(session), session.runs.front().labels,
                                  session.runs.front().config);
    for (const auto &a : axes) {
        auto *box = new QWidget(m_fixedBox);
        auto *l = new QHBoxLayout(box);
        l->setContentsMargins(0, 0, 0, 0);
        l->addWidget(new QLabel(a, box));
        auto *combo = new QComboBox(box);
        const QStringList labels = axisValueLabels(m_model->session(), a.toStdString());
        for (const auto &v : labels) combo->addItem(displayLabel(v), v);
        const auto replicates = replicateAxes(m_model->session());
        const bool replicate =
            std::find(replicates.begin(), replicates.end(), a.toStdString()) != replicates.end();
        combo->addItem(replicate ? tr("all replicates") : tr("all (pooled)"), QString());
        // Replicate axes (seeds) are aggregated by default; the heatmap's η is the largest learning
        // rate, where heads matter most; other axes their first value.
        const std::string key = "fixed." + a.toStdString();
        const auto existing = first.find(a.toStdString());
        const QString fallback = replicate   ? QString()
                                 : a == "lr" ? labels.value(labels.size() - 1)
                                 : existing != first.end()
                                     ? QString::fromStdString(existing->second)
                                     : labels.value(0);
        const QString want = QString::fromStdString(stateValue(state, key, fallback.toStdString()));
        const int wi = combo->findData(want);
        combo->setCurrentIndex(wi >= 0 ? wi : 0);
        l->addWidget(combo);
        m_fixedLayout->addWidget(box);
        combo->setObjectName(QStringLiteral("fixed:") + a); // the axis it holds fixed
        m_fixedCombos[a.toStdString()] = combo;
        connect(combo, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
    }
}

HeatmapStat HeatmapView::currentStat() const
{
    return heatmapStatFromString(m_stat->currentData().toString().toStdString());
}

void HeatmapView::refresh()
{
    rebuildControls();
    const std::string x = m_xCombo->currentText().toStdString();
    const std::string y = m_yCombo->currentData().toString().toStdString();
    std::map<std::string, std::string> fixed;
    const std::string side = m_sideBySide->currentData().toString().toStdString();
    for (const auto &[axis, combo] : m_fixedCombos) {
        const bool isPlotted = axis == x || axis == y || axis == side;
        combo->parentWidget()->setVisible(!isPlotted);
        if (isPlotted) continue;
        const QString v = combo->currentData().toString();
        if (!v.isEmpty()) fixed[axis] = v.toStdString();
    }
    const std::string yAxis = y == x ? std::string() : y;
    // η* per cell comes from the search's report, fetched once for every panel; the other
    // statistics do not need it (a search training refits it at every change of its runs).
    const HeatmapStat stat = currentStat();
    const auto report = stat == HeatmapStat::CriticalLr ? m_model->searchReport() : nullptr;
    m_panels.clear();
    m_panelLabels.clear();
    if (!side.empty() && side != x && side != yAxis) {
        double vmin = 0, vmax = 0;
        for (const auto &label : axisValueLabels(m_model->session(), side)) {
            auto f = fixed;
            f[side] = label.toStdString();
            m_panels.push_back(HeatmapData::compute(m_model->session(), x, yAxis, f,
                                                    m_step->value(), stat, report.get()));
            m_panelLabels << axisValueText(side, label);
            vmin = std::min(vmin, m_panels.back().vmin);
            vmax = std::max(vmax, m_panels.back().vmax);
        }
        for (auto &panel : m_panels) { // one colour scale for all panels
            panel.vmin = vmin;
            panel.vmax = vmax;
        }
    }
    m_data = m_panels.empty() ? HeatmapData::compute(m_model->session(), x, yAxis, fixed,
                                                     m_step->value(), stat, report.get())
                              : m_panels.front();
    m_canvasWidget->update();
}

void HeatmapView::saveViewState(ViewState &state) const
{
    if (m_xCombo->count() == 0 && !m_pending.empty()) {
        for (const auto &[k, v] : m_pending) state[k] = v;
        return;
    }
    setStateValue(state, "x", m_xCombo->currentText().toStdString());
    setStateValue(state, "y", m_yCombo->currentData().toString().toStdString());
    setStateValue(state, "step", std::to_string(m_step->value()));
    setStateValue(state, "stat", m_stat->currentData().toString().toStdString());
    setStateValue(state, "side_by_side", m_sideBySide->currentData().toString().toStdString());
    for (const auto &[axis, combo] : m_fixedCombos)
        setStateValue(state, "fixed." + axis, combo->currentData().toString().toStdString());
}

void HeatmapView::restoreViewState(const ViewState &state)
{
    m_pending.clear();
    const std::string prefix = figureId().toStdString() + ".";
    for (const auto &[k, v] : state)
        if (k.rfind(prefix, 0) == 0) m_pending[k] = v;
    if (m_pending.empty()) m_pending[prefix + "step"] = "-1";
    // A boundary search along η opens on its critical η*: a median over the η a search chose is
    // no statistic of anything (the stabilizer search's cells pooled 24 η as "n 24").
    const Session &session = m_model->session();
    if (!m_pending.count(prefix + "stat") && session.search && session.search->axis == "lr")
        m_pending[prefix + "stat"] = toString(HeatmapStat::CriticalLr);
    m_axesShown.clear();
    refresh();
}

void HeatmapView::setAxes(const QString &x, const QString &y)
{
    m_xCombo->setCurrentText(x);
    const int yi = m_yCombo->findData(y);
    m_yCombo->setCurrentIndex(yi >= 0 ? yi : 0);
}

void HeatmapView::setFixedValue(const QString &axis, const QString &label)
{
    auto it = m_fixedCombos.find(axis.toStdString());
    if (it == m_fixedCombos.end()) return;
    const int i = it->second->findData(label);
    if (i >= 0) it->second->setCurrentIndex(i);
}

void HeatmapView::setStep(int64_t step)
{
    m_step->setValue(int(step));
}

void HeatmapView::setStat(HeatmapStat stat)
{
    const int i = m_stat->findData(QString::fromLatin1(toString(stat)));
    if (i >= 0) m_stat->setCurrentIndex(i);
}

namespace {
// Diagonal hatching drawn as lines: pattern brushes do not survive the SVG round trip.
void hatch(QPainter &p, const QRectF &r, const QColor &colour, double spacing, bool forward,
           bool cross = false)
{
    p.save();
    p.setClipRect(r);
    p.setPen(QPen(colour, 1));
    const double h = r.height();
    for (double x = r.left() - h; x < r.right() + h; x += spacing) {
        if (forward || cross) p.drawLine(QPointF(x, r.bottom()), QPointF(x + h, r.top()));
        if (!forward || cross) p.drawLine(QPointF(x, r.top()), QPointF(x + h, r.bottom()));
    }
    p.restore();
}

struct HeatmapLayout {
    QRectF titleRect, grid, colourBar, xTitle, yTitle;
    double cellW = 0, cellH = 0;
};

HeatmapLayout layoutFor(const QRectF &area, int rows, int columns, double fontScale)
{
    HeatmapLayout l;
    const double titleH = 30 * fontScale, xLabelH = 22 * fontScale, xTitleH = 22 * fontScale;
    const double yLabelW = 64 * fontScale, yTitleW = 22 * fontScale, barW = 90 * fontScale;
    l.titleRect = QRectF(area.left(), area.top() + 4, area.width(), titleH);
    const double top = area.top() + titleH + 8;
    const double bottom = area.bottom() - xLabelH - xTitleH - 6;
    const double left = area.left() + yTitleW + yLabelW;
    const double right = area.right() - barW - 10;
    QRectF grid(left, top, std::max(10.0, right - left), std::max(10.0, bottom - top));
    // Square-ish cells look like a heatmap, not a table: cap the aspect ratio.
    l.cellW = grid.width() / std::max(1, columns);
    l.cellH = grid.height() / std::max(1, rows);
    if (l.cellW > 2.2 * l.cellH) l.cellW = 2.2 * l.cellH;
    if (l.cellH > 1.2 * l.cellW) l.cellH = 1.2 * l.cellW;
    l.grid = QRectF(left, top, l.cellW * columns, l.cellH * rows);
    l.xTitle = QRectF(l.grid.left(), l.grid.bottom() + xLabelH, l.grid.width(), xTitleH);
    l.yTitle = QRectF(area.left(), l.grid.top(), yTitleW, l.grid.height());
    l.colourBar =
        QRectF(l.grid.right() + 24 * fontScale, l.grid.top(), 16 * fontScale, l.grid.height());
    return l;
}

// A split cell's mark: an orange triangle of side k in the top right corner of `r` (the cells and
// their key draw the same one).
void paintSplitCorner(QPainter &p, const QRectF &r, double k, const ChartTheme &t)
{
    QPolygonF corner;
    corner << r.topRight() << r.topRight() - QPointF(k, 0) << r.topRight() + QPointF(0, k);
    p.setPen(Qt::NoPen);
    p.setBrush(t.dark ? QColor(255, 170, 60) : QColor(230, 110, 0));
    p.drawPolygon(corner);
}

// A cell's fill (a colour, hatching or an outline by its state) and what it says: its value and,
// below, its spread, a note or why it has none.
struct CellText {
    QString text, sub;
    QColor colour;
};
CellText paintCell(QPainter &p, const QRectF &inner, const HeatmapCell &cell,
                   const HeatmapData &data, const ChartTheme &t, int sharedCount)
{
    // A fraction learned is drawn with the scale reversed, so that learned looks the same as a
    // low loss does (dark), and not learned as the plateau (bright).
    const bool fraction = data.stat == HeatmapStat::LearnedFraction;
    const bool critical = data.stat == HeatmapStat::CriticalLr;
    auto colourOf = [&](double v) {
        const double f = (v - data.vmin) / std::max(1e-12, data.vmax - data.vmin);
        return viridis(fraction ? 1.0 - f : f);
    };
    CellText out;
    QString &text = out.text, &sub = out.sub;
    QColor &textColour = out.colour;
    textColour = t.foreground;
    using S = HeatmapCell::State;
    switch (cell.state) {
    case S::Value:
    case S::Running: {
        const QColor fill = colourOf(cell.value);
        p.fillRect(inner, fill);
        textColour = fill.lightnessF() > 0.55 ? QColor(20, 20, 20) : QColor(245, 245, 245);
        // The fraction with its count (2/3), or the loss with its replicates' spread.
        text = fraction   ? QStringLiteral("%1/%2").arg(cell.learned).arg(cell.verdicts)
               : critical ? QStringLiteral("η* %1").arg(std::pow(10.0, cell.value), 0, 'g', 2)
                          : formatLoss(cell.value);
        if (critical)
            sub = QStringLiteral("%1–%2, %3")
                      .arg(std::pow(10.0, cell.low), 0, 'g', 2)
                      .arg(std::pow(10.0, cell.high), 0, 'g', 2)
                      .arg(cell.note);
        // The median with its range; the mean with its standard deviation and standard error.
        // Their count only where cells differ in it (else the title says it once).
        if (!fraction && !critical && cell.replicates > 1) {
            sub = data.stat == HeatmapStat::Mean
                      ? QStringLiteral("± %1 sd, ± %2 se")
                            .arg(formatLoss(cell.sd), formatLoss(cell.se))
                      : QStringLiteral("%1–%2").arg(formatLoss(cell.low), formatLoss(cell.high));
            if (sharedCount != cell.replicates)
                sub += QStringLiteral(" (n %1)").arg(cell.replicates);
        }
        if (cell.state == S::Running) {
            if (!critical) sub = HeatmapView::tr("training…");
            p.setPen(QPen(textColour, 1.2, Qt::DashLine));
            p.setBrush(Qt::NoBrush);
            p.drawRect(inner.adjusted(2, 2, -2, -2));
        } else if (!cell.note.isEmpty() && !critical) {
            sub = cell.note;
        }
        if (cell.split() && !critical) { // replicates disagree: a corner mark, and said
            paintSplitCorner(p, inner, std::min(inner.width(), inner.height()) * 0.28, t);
            if (sub.isEmpty() || fraction) sub = HeatmapView::tr("split");
        }
        break;
    }
    case S::Diverged:
        p.fillRect(inner, t.dark ? QColor(110, 20, 25) : QColor(200, 50, 45));
        hatch(p, inner, t.dark ? QColor(255, 255, 255, 60) : QColor(255, 255, 255, 90), 7, true);
        textColour = QColor(255, 240, 240);
        text = HeatmapView::tr("diverged");
        sub = cell.note;
        break;
    case S::Failed:
        p.fillRect(inner, t.dark ? QColor(80, 40, 90) : QColor(170, 120, 190));
        hatch(p, inner, QColor(255, 255, 255, 80), 8, true, true);
        textColour = QColor(255, 255, 255);
        text = HeatmapView::tr("failed");
        break;
    case S::Skipped:
        hatch(p, inner, QColor(t.muted.red(), t.muted.green(), t.muted.blue(), 110), 7, false);
        p.setPen(QPen(t.muted, 1, Qt::DashLine));
        p.setBrush(Qt::NoBrush);
        p.drawRect(inner);
        text = HeatmapView::tr("skipped");
        textColour = t.foreground;
        break;
    case S::Stopped:
        p.setPen(QPen(t.muted, 1));
        p.setBrush(Qt::NoBrush);
        p.drawRect(inner);
        text = HeatmapView::tr("stopped");
        textColour = t.muted;
        break;
    case S::Queued:
        p.setPen(QPen(t.grid.darker(t.dark ? 70 : 120), 1));
        p.setBrush(Qt::NoBrush);
        p.drawRect(inner);
        text = QStringLiteral("·");
        textColour = t.muted;
        break;
    case S::Empty:
        break;
    }
    return out;
}

// The value labels along both axes, and the axes' titles (their rows in core/schema/Dimensions.h).
void paintAxisLabels(QPainter &p, const HeatmapLayout &l, const HeatmapData &data,
                     const ChartTheme &t)
{
    p.setPen(t.foreground);
    p.setFont(t.font(9));
    for (int c = 0; c < data.columns(); ++c)
        p.drawText(
            QRectF(l.grid.left() + c * l.cellW, l.grid.bottom() + 2, l.cellW, 20 * t.fontScale),
            Qt::AlignCenter, displayLabel(data.xLabels[c]));
    for (int r = 0; r < data.rows(); ++r) {
        const int drawRow = data.rows() - 1 - r;
        p.drawText(QRectF(l.yTitle.right(), l.grid.top() + drawRow * l.cellH,
                          l.grid.left() - l.yTitle.right() - 6, l.cellH),
                   Qt::AlignRight | Qt::AlignVCenter, displayLabel(data.yLabels[r]));
    }
    p.setFont(t.font(10, true));
    auto axisTitle = [](const std::string &axis) { // the axis's row (core/schema/Dimensions.h)
        return QString::fromStdString(dimensionTitle(axis));
    };
    p.drawText(l.xTitle, Qt::AlignCenter, axisTitle(data.xAxis));
    if (!data.yAxis.empty()) {
        p.save();
        p.translate(l.yTitle.center());
        p.rotate(-90);
        p.drawText(QRectF(-l.yTitle.height() / 2, -l.yTitle.width() / 2, l.yTitle.height(),
                          l.yTitle.width()),
                   Qt::AlignCenter, axisTitle(data.yAxis));
        p.restore();
    }
}

// The split cell's key, under the colour bar: a cell with the corner mark, "split", and what it
// means (issue 52 item 4).
void paintSplitKey(QPainter &p, const QRectF &area, const ChartTheme &t)
{
    const double side = 14 * t.fontScale;
    const QRectF swatch(area.left(), area.top(), side, side);
    p.setPen(QPen(t.muted, 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(swatch);
    paintSplitCorner(p, swatch, side * 0.5, t);
    p.setPen(t.foreground);
    drawFittedText(
        p, QRectF(swatch.right() + 4, area.top() - 2, area.right() - swatch.right() - 4, side + 4),
        HeatmapView::tr("split"), t.font(8, true), 6.0, Qt::AlignLeft | Qt::AlignVCenter);
    drawFittedText(
        p, QRectF(area.left(), swatch.bottom() + 2, area.width(), area.bottom() - swatch.bottom()),
        HeatmapView::tr("seeds disagree"), t.font(8), 5.5, Qt::AlignLeft | Qt::AlignTop);
}

// Colour bar with ticks, plateau marks for the addition task, and what its scale is.
void paintColourBar(QPainter &p, const QRectF &bar, const HeatmapData &data, const ChartTheme &t,
                    const Session &session)
{
    const bool fraction = data.stat == HeatmapStat::LearnedFraction;
    const bool critical = data.stat == HeatmapStat::CriticalLr;
    // Colour bar with ticks, plateau marks for the addition task, and a legend of special
    // cells.
    const int steps = 64;
    for (int i = 0; i < steps; ++i) {
        const double f0 = double(i) / steps;
        QRectF seg(bar.left(), bar.bottom() - (f0 + 1.0 / steps) * bar.height(), bar.width(),
                   bar.height() / steps + 0.6);
        p.fillRect(seg, viridis(fraction ? 1.0 - (f0 + 0.5 / steps) : f0 + 0.5 / steps));
    }
    p.setPen(QPen(t.muted, 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(bar);
    p.setFont(t.font(8));
    auto yOf = [&](double v) {
        return bar.bottom() -
               (v - data.vmin) / std::max(1e-12, data.vmax - data.vmin) * bar.height();
    };
    QList<std::pair<double, QString>> ticks;
    if (fraction) {
        ticks << std::make_pair(0.0, QStringLiteral("0"))
              << std::make_pair(0.5, QStringLiteral("0.5"))
              << std::make_pair(1.0, QStringLiteral("1"));
    } else if (critical) { // whole decades of η
        for (double e = std::ceil(data.vmin - 1e-9); e <= data.vmax + 1e-9; e += 1)
            ticks << std::make_pair(e, QString::number(std::pow(10.0, e), 'g', 1));
    } else {
        // The plateaus name the levels that matter; the scale's ends in three figures ("0",
        // "3.09": the loss at initialisation, ln 22), each left out where a plateau's label
        // would overlap it.
        for (const auto &line : plateausOf(session))
            ticks << std::make_pair(line.loss, QString::fromStdString(line.label));
        const qsizetype plateaus = ticks.size();
        for (const double end : {data.vmin, data.vmax}) {
            bool clear = true;
            for (qsizetype k = 0; k < plateaus; ++k)
                clear = clear && std::abs(yOf(end) - yOf(ticks[k].first)) >= 14 * t.fontScale;
            if (clear) ticks << std::make_pair(end, QString::number(end, 'g', 3));
        }
    }
    for (const auto &[v, label] : ticks) {
        if (v < data.vmin || v > data.vmax) continue;
        const double y = yOf(v);
        p.setPen(QPen(t.foreground, 1));
        p.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 4, y));
        p.drawText(QRectF(bar.right() + 6, y - 8 * t.fontScale, 80 * t.fontScale, 16 * t.fontScale),
                   Qt::AlignLeft | Qt::AlignVCenter, label);
    }
    p.save();
    p.translate(bar.left() - 6 * t.fontScale, bar.center().y());
    p.rotate(-90);
    p.setFont(t.font(8.5));
    p.drawText(QRectF(-bar.height() / 2, -8 * t.fontScale, bar.height(), 14 * t.fontScale),
               Qt::AlignCenter,
               fraction   ? HeatmapView::tr("fraction learned")
               : critical ? HeatmapView::tr("critical η* (log scale)")
                          : HeatmapView::tr("test loss (%1)").arg(lossUnit(session)));
    p.restore();
}
} // namespace

QRectF HeatmapView::panelArea(const QRectF &area, int panel) const
{
    const int n = panelCount();
    const double w = area.width() / n;
    return QRectF(area.left() + panel * w, area.top(), w, area.height());
}

QRect HeatmapView::cellRect(int row, int column, int panel) const
{
    const auto &d = panelData(panel);
    const auto l = layoutFor(panelArea(QRectF(m_canvasWidget->rect()), panel), d.rows(),
                             d.columns(), m_theme.fontScale);
    // Row 0 is drawn at the bottom, as on a plot's y axis.
    const int drawRow = d.rows() - 1 - row;
    return QRectF(l.grid.left() + column * l.cellW, l.grid.top() + drawRow * l.cellH, l.cellW,
                  l.cellH)
        .toRect();
}

QPoint HeatmapView::cellAt(const QPoint &pos, int *panel) const
{
    for (int k = 0; k < panelCount(); ++k) {
        const auto &d = panelData(k);
        for (int r = 0; r < d.rows(); ++r)
            for (int c = 0; c < d.columns(); ++c)
                if (cellRect(r, c, k).contains(pos)) {
                    if (panel) *panel = k;
                    return QPoint(c, r);
                }
    }
    return QPoint(-1, -1);
}

void HeatmapView::onCellClicked(int panel, int row, int column)
{
    // A copy: whoever takes the signal may select the runs, which redraws this view and replaces
    // the cell (issue 50: the window read the freed list and crashed on the first click).
    const QList<int> runs = panelData(panel).cell(row, column).runs;
    if (!runs.isEmpty()) Q_EMIT runsActivated(runs);
}

void HeatmapView::paintHeatmap(QPainter &p, const QRectF &area) const
{
    m_elided = 0;
    m_splitKeyDrawn = false;
    p.fillRect(area, m_theme.background);
    if (m_panels.empty()) {
        paintPanel(p, area, m_data, title(), true);
        return;
    }
    for (int k = 0; k < int(m_panels.size()); ++k)
        paintPanel(p, panelArea(area, k), m_panels[size_t(k)],
                   title() + QStringLiteral(", ") + m_panelLabels[k],
                   k + 1 == int(m_panels.size()));
}

void HeatmapView::paintPanel(QPainter &p, const QRectF &area, const HeatmapData &data,
                             const QString &panelTitle, bool colourBar) const
{
    const ChartTheme &t = m_theme;
    p.fillRect(area, t.background);
    const auto l = layoutFor(area, data.rows(), data.columns(), t.fontScale);
    p.setPen(t.foreground);
    m_elided += drawFittedText(p, l.titleRect, panelTitle, t.font(11, true), 7.0, Qt::AlignCenter);

    QSet<int> selected(m_selected.begin(), m_selected.end());
    const int sharedCount = sharedReplicates();
    const QFont valueFont = t.font(std::clamp(l.cellH / 4.2 / t.fontScale, 6.5, 12.0));
    const QFont smallFont = t.font(std::clamp(l.cellH / 5.5 / t.fontScale, 6.0, 9.0));
    for (int r = 0; r < data.rows(); ++r) {
        for (int c = 0; c < data.columns(); ++c) {
            const auto &cell = data.cell(r, c);
            const int drawRow = data.rows() - 1 - r;
            QRectF rc(l.grid.left() + c * l.cellW, l.grid.top() + drawRow * l.cellH, l.cellW,
                      l.cellH);
            QRectF inner = rc.adjusted(1.5, 1.5, -1.5, -1.5);
            const auto [text, sub, textColour] = paintCell(p, inner, cell, data, t, sharedCount);
            bool isSelected = false;
            for (int i : cell.runs) isSelected = isSelected || selected.contains(i);
            if (isSelected) {
                p.setPen(QPen(t.foreground, t.line(2.5)));
                p.setBrush(Qt::NoBrush);
                p.drawRect(rc.adjusted(1, 1, -1, -1));
            }
            if (!text.isEmpty()) {
                p.setPen(textColour);
                p.setFont(valueFont);
                if (sub.isEmpty() || l.cellH < 34) {
                    p.drawText(inner, Qt::AlignCenter, text);
                } else {
                    QRectF top = inner, bottom = inner;
                    top.setBottom(inner.center().y() + 4);
                    bottom.setTop(inner.center().y() + 4);
                    p.drawText(top, Qt::AlignHCenter | Qt::AlignBottom, text);
                    m_elided += drawFittedText(p, bottom.adjusted(2, 0, -2, 0), sub, smallFont, 5.5,
                                               Qt::AlignHCenter | Qt::AlignTop);
                }
            }
        }
    }

    paintAxisLabels(p, l, data, t);
    bool anySplit = false;
    for (const auto &c : data.cells) anySplit = anySplit || c.split();
    anySplit = anySplit && data.stat != HeatmapStat::CriticalLr;
    if (colourBar) {
        QRectF bar = l.colourBar;
        const double keyH = 34 * t.fontScale;
        if (anySplit && bar.height() > 3 * keyH) bar.setBottom(bar.bottom() - keyH - 6);
        paintColourBar(p, bar, data, t, m_model->session());
        m_splitKeyDrawn = m_splitKeyDrawn || anySplit;
        if (anySplit)
            paintSplitKey(p,
                          QRectF(bar.left(), bar.bottom() + 8 * t.fontScale,
                                 area.right() - bar.left() - 2, keyH),
                          t);
    }
    bool anyTraining = false;
    for (const auto &c : data.cells)
        anyTraining = anyTraining || c.state == HeatmapCell::State::Running;
    if (data.filledCount() == 0 && !anyTraining) {
        p.setPen(t.muted);
        p.setFont(t.font(9));
        p.drawText(QRectF(l.grid.left(), l.titleRect.bottom() - 6 * t.fontScale, l.grid.width(),
                          14 * t.fontScale),
                   Qt::AlignCenter, tr("Cells fill in as runs finish."));
    }
}

FigureView::Pooling HeatmapView::pooling() const
{
    Pooling out;
    for (int panel = 0; panel < panelCount(); ++panel) {
        const HeatmapData &data = panelData(panel);
        for (int row = 0; row < data.rows(); ++row)
            for (int column = 0; column < data.columns(); ++column)
                if (!data.cell(row, column).runs.isEmpty())
                    out.groups.push_back(data.cell(row, column).runs);
    }
    // The fixed axes drawn neither as x, y nor side by side, set to "all (pooled)".
    const auto replicates = replicateAxes(m_model->session());
    const std::string x = m_data.xAxis, y = m_data.yAxis;
    const std::string side =
        m_panels.empty() ? std::string() : m_sideBySide->currentData().toString().toStdString();
    for (const auto &[axis, combo] : m_fixedCombos)
        if (axis != x && axis != y && axis != side && combo->currentData().toString().isEmpty() &&
            std::find(replicates.begin(), replicates.end(), axis) == replicates.end())
            out.pooledAxes << QString::fromStdString(axis);
    return out;
}

} // namespace headlab::ui
