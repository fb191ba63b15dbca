// BoundaryChartView.cpp — see BoundaryChartView.h.
#include "ui/figures/BoundaryChartView.h"
#include "ui/figures/ChartLifetime.h"
#include "ui/model/CsvCell.h"

#include "core/config/Files.h"
#include "core/config/Yaml.h"
#include "core/schema/Dimensions.h"
#include "core/session/search/SearchReport.h"
#include "ui/model/ColourTable.h"
#include "ui/model/SessionModel.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFontInfo>
#include <QFontMetricsF>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineEdit>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QValueAxis>
#include <QXYSeries>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace headlab::ui {

namespace {

QString labelsText(const std::map<std::string, std::string> &labels)
{
    QStringList parts;
    for (const auto &[key, value] : labels)
        parts << QString::fromStdString(dimensionLetter(key)) + QStringLiteral(" ") +
                     QString::fromStdString(value);
    return parts.isEmpty() ? QObject::tr("the experiment") : parts.join(QStringLiteral(", "));
}

QString axisTitle(const std::string &axis) // the axis's row (core/schema/Dimensions.h)
{
    return QString::fromStdString(dimensionTitle(axis));
}

QString number(double value)
{
    return QString::number(value, 'g', 3);
}

// Round log-axis limits: whole decades around [lo, hi].
std::pair<double, double> decades(double lo, double hi)
{
    return {std::pow(10.0, std::floor(std::log10(lo) + 1e-9)),
            std::pow(10.0, std::ceil(std::log10(hi) - 1e-9))};
}

} // namespace

BoundaryChartView::BoundaryChartView(SessionModel *model, QWidget *parent)
    : FigureView(model, parent)
{
    m_mode = new QComboBox(this);
    m_mode->addItem(tr("η* against m_H (the law)"), "law");
    m_mode->addItem(tr("P(learned) against η"), "curves");
    // Liu's claim is a collapse: the configurations' P(learned) curves fall on one curve against
    // η·m_H^α. With the paper's α = ½, and with the α the law fitted (issue 52).
    m_mode->addItem(tr("P(learned) against η·√m_H (the paper's collapse)"), "collapse_half");
    m_mode->addItem(tr("P(learned) against η·m_H^α, fitted α (the collapse)"), "collapse");
    m_mode->addItem(tr("The search's rounds: each round's η, per configuration"), "rounds");
    controlsLayout()->addWidget(m_mode);
    m_hint = new QLabel(this);
    controlsLayout()->addWidget(m_hint);
    m_highlight = new Highlight(this, controlsLayout());
    connect(m_highlight, &Highlight::changed, this, [this] { applyHighlight(); });
    m_lawNote = new QLabel(this);
    m_lawNote->setObjectName(QStringLiteral("lawNote"));
    m_lawNote->setWordWrap(true);
    m_lawNote->setContentsMargins(8, 2, 8, 4);
    m_lawNote->hide();
    connect(m_highlight, &Highlight::keptChanged, this, [this] { Q_EMIT viewStateChanged(); });
    controlsLayout()->addStretch(1);
    connect(m_mode, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
    m_chart = new QChart();
    m_chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries); // dashes show in the legend
    setChartCanvas(m_chart);
    addFooter(m_lawNote);
    // Beneath the law too: η* predicted for a configuration not searched (headlab-cli predict's).
    m_predictRow = new QWidget(this);
    auto *row = new QHBoxLayout(m_predictRow);
    row->setContentsMargins(8, 0, 8, 4);
    row->addWidget(new QLabel(tr("Predict η* at:"), m_predictRow));
    m_predictAt = new QLineEdit(m_predictRow);
    m_predictAt->setObjectName(QStringLiteral("predictAt"));
    m_predictAt->setClearButtonEnabled(true);
    m_predictAt->setMinimumWidth(200);
    m_predictAt->setMaximumWidth(280);
    row->addWidget(m_predictAt);
    m_predicted = new QLabel(m_predictRow);
    m_predicted->setObjectName(QStringLiteral("predicted"));
    m_predicted->setWordWrap(true);
    m_predicted->setTextInteractionFlags(Qt::TextSelectableByMouse);
    row->addWidget(m_predicted, 1);
    connect(m_predictAt, &QLineEdit::textChanged, this, [this] { updatePrediction(); });
    m_predictRow->hide();
    addFooter(m_predictRow);
}

void BoundaryChartView::updatePrediction()
{
    const auto report = m_model->searchReport();
    const LawFit &law = report->law;
    const QString text = m_predictAt->text().trimmed();
    if (text.isEmpty()) {
        m_predicted->clear();
        return;
    }
    if (!report->groups.empty()) {
        m_predicted->setText(tr("This search has a law per group: headlab-cli predict takes the "
                                "group's values."));
        return;
    }
    const std::vector<std::string> names = law.axes();
    std::map<std::string, double> given;
    for (const QString &item :
         text.split(QRegularExpression(QStringLiteral("[\\s,;]+")), Qt::SkipEmptyParts)) {
        const auto parts = item.split('=');
        bool number = false;
        const double value = parts.size() == 2 ? parts[1].toDouble(&number) : 0;
        const std::string name = parts.front().toStdString();
        if (parts.size() != 2 || !number || !(value > 0) ||
            std::find(names.begin(), names.end(), name) == names.end()) {
            m_predicted->setText(tr("'%1': give each law axis as NAME=VALUE, a positive number "
                                    "(%2)")
                                     .arg(item, QString::fromStdString(joinedNames(names, "and"))));
            return;
        }
        given[name] = value;
    }
    std::vector<double> log10Axes;
    for (const auto &name : names) {
        if (!given.count(name)) {
            m_predicted->setText(tr("Give %1 too.").arg(QString::fromStdString(name)));
            return;
        }
        log10Axes.push_back(std::log10(given[name]));
    }
    const CrossingPrediction p = predictCrossing(*report, law, log10Axes);
    if (!p.ok) {
        m_predicted->setText(QString::fromStdString(p.note));
        return;
    }
    QString beyond;
    for (const auto &axis : p.beyond)
        beyond += tr("; %1 beyond the span fitted: an extrapolation").arg(axisTitle(axis));
    m_predicted->setText(tr("η* = %1 [%2, %3] (%4 % prediction interval of the %8 law: its "
                            "uncertainty %5 and the scatter %6 decades)%7")
                             .arg(std::pow(10.0, p.estimate), 0, 'g', 3)
                             .arg(std::pow(10.0, p.low), 0, 'g', 3)
                             .arg(std::pow(10.0, p.high), 0, 'g', 3)
                             .arg(int(std::lround(law.level * 100)))
                             .arg(p.lawSe, 0, 'f', 3)
                             .arg(p.scatter, 0, 'f', 3)
                             .arg(beyond)
                             .arg(p.law == "bent" ? tr("bent") : tr("power")));
}

bool BoundaryChartView::showsLaw() const
{
    return m_mode->currentData().toString() == "law";
}

void BoundaryChartView::setShowsLaw(bool law)
{
    m_mode->setCurrentIndex(law ? 0 : 1);
}

void BoundaryChartView::setMode(const QString &mode)
{
    const int i = m_mode->findData(mode);
    m_mode->setCurrentIndex(i >= 0 ? i : 0);
}

QString BoundaryChartView::mode() const
{
    return m_mode->currentData().toString();
}

void BoundaryChartView::applyTheme(const ChartTheme &theme)
{
    FigureView::applyTheme(theme);
    m_drawnKey.clear();
    refresh();
}

void BoundaryChartView::saveViewState(ViewState &state) const
{
    setStateValue(state, "mode", mode().toStdString());
    if (!m_highlight->kept().isEmpty())
        setStateValue(state, "highlight", m_highlight->kept().toStdString());
}

void BoundaryChartView::restoreViewState(const ViewState &state)
{
    const QSignalBlocker block(m_mode), blockHighlight(m_highlight);
    setMode(QString::fromStdString(stateValue(state, "mode", "law")));
    m_highlight->keep(QString::fromStdString(stateValue(state, "highlight")));
    m_highlight->hover({});
    refresh();
    applyHighlight();
}

void BoundaryChartView::applyHighlight()
{
    const QString active = m_highlight->active(m_chart);
    for (auto *series : m_chart->series()) {
        auto *xy = qobject_cast<QXYSeries *>(series);
        if (!xy || !series->property("basePen").isValid()) continue;
        const bool on = m_highlight->shownLit(active, series);
        QPen pen = series->property("basePen").value<QPen>();
        QColor c = pen.color();
        if (!on) c.setAlphaF(c.alphaF() * 0.14f);
        pen.setColor(c);
        if (on && !active.isEmpty() && series->type() == QAbstractSeries::SeriesTypeLine)
            pen.setWidthF(pen.widthF() * 1.8);
        xy->setPen(pen);
        if (auto *dots = qobject_cast<QScatterSeries *>(series)) {
            QColor fill = series->property("baseBrush").value<QBrush>().color();
            if (!on) fill.setAlphaF(fill.alphaF() * 0.14f);
            dots->setBrush(fill);
        }
    }
    m_highlight->fadeLegend(m_chart, active, m_theme.foreground);
}

void BoundaryChartView::refresh()
{
    const Session &session = m_model->session();
    // Redraw only when something drawn changed: the mode, the theme, or a run's verdict.
    QString key = m_mode->currentData().toString() + QString::number(m_theme.fontScale) +
                  QString::number(m_theme.dark) + QString::number(session.runs.size()) +
                  // the height decides between the configurations' legend and the short one
                  QLatin1Char('h') + QString::number(int(m_chart->size().height() / 40));
    for (const auto &run : session.runs) key += QChar(isFinished(run.result.status) ? 'f' : '.');
    if (key == m_drawnKey) return;
    m_drawnKey = key;
    retireAllSeries(m_chart);
    for (auto *item : m_rowLabels) delete item; // the rounds' row labels (drawRounds)
    m_rowLabels.clear();
    retireAllAxes(m_chart);
    m_theme.apply(m_chart);
    m_highlight->offer({}, {}, {}); // drawCurves offers its configurations
    if (!session.search) {
        m_title = tr("Not a boundary search (a session with a search: block, docs/SEARCH.md)");
        m_csv.clear();
        m_chart->setTitle(m_title);
        fitChartTitle(m_chart, m_theme);
        return;
    }
    const bool rounds = mode() == QLatin1String("rounds");
    m_hint->setText(rounds ? tr("Filled: learned; hollow: did not; bar: the 95 % interval now.")
                           : tr("Bars: 95 % intervals, none on a side left open; dashed: "
                                "still searching; hollow: no closed interval."));
    // Beneath the law: its other readings (docs/SEARCH.md).
    QStringList readings;
    if (showsLaw()) {
        const auto report = m_model->searchReport();
        for (const auto &axis : report->law.leftOut)
            readings << tr("%1 is left out of the law: over these configurations it follows from "
                           "%2, so its exponent cannot be told apart.")
                            .arg(axisTitle(axis), axisTitle(report->law.x));
        if (const WidthAndHeads &wh = report->widthAndHeads; wh.ok)
            readings << tr("In width and heads: a = %1 [%2, %3], b = %4 [%5, %6] (η* ∝ m^−a "
                           "n_H^b; the paper's √m_H: a = b = ½; a width limit: b = 0).")
                            .arg(wh.a(), 0, 'f', 2)
                            .arg(wh.aLow(), 0, 'f', 2)
                            .arg(wh.aHigh(), 0, 'f', 2)
                            .arg(wh.b(), 0, 'f', 2)
                            .arg(wh.bLow(), 0, 'f', 2)
                            .arg(wh.bHigh(), 0, 'f', 2);
        if (const LawBend &bend = report->bend; bend.ok)
            readings
                << (bend.chosen
                        ? tr("The law bends (p = %1): local α %2 at %3 = %4, %5 at "
                             "%6.")
                              .arg(bend.p, 0, 'g', 2)
                              .arg(bend.alphaAtLow, 0, 'f', 2)
                              .arg(axisTitle(bend.x))
                              .arg(std::pow(10.0, bend.xLow), 0, 'g', 3)
                              .arg(bend.alphaAtHigh, 0, 'f', 2)
                              .arg(std::pow(10.0, bend.xHigh), 0, 'g', 3)
                        : tr("No bend (p = %1): the power law stands.").arg(bend.p, 0, 'g', 2));
    }
    m_lawNote->setText(readings.join(QStringLiteral("  ")));
    m_lawNote->setVisible(!readings.isEmpty());
    const LawFit &law = m_model->searchReport()->law;
    m_predictRow->setVisible(showsLaw() && law.ok);
    if (law.ok) {
        QStringList example;
        for (const auto &axis : law.axes())
            example << QString::fromStdString(axis) + QStringLiteral("=…");
        m_predictAt->setPlaceholderText(example.join(' '));
        updatePrediction();
    }
    if (showsLaw())
        drawLaw();
    else if (rounds)
        drawRounds();
    else
        drawCurves(mode());
    m_theme.apply(m_chart);
    if (rounds) // its row labels are drawn by drawRounds; the axis's only hold their place
        for (auto *axis : m_chart->axes(Qt::Vertical)) axis->setLabelsColor(Qt::transparent);
}

void BoundaryChartView::drawLaw()
{
    const auto held = m_model->searchReport(); // the model's, computed once per change
    const SearchReport &report = *held;
    const LawFit &law = report.law;
    const SearchSpec &spec = *m_model->session().search;
    auto *axisX = new QLogValueAxis(), *axisY = new QLogValueAxis();
    for (auto *axis : {axisX, axisY}) {
        axis->setBase(10);
        axis->setLabelFormat("%g");
        axis->setMinorTickCount(8);
        m_chart->addAxis(axis, axis == axisX ? Qt::AlignBottom : Qt::AlignLeft);
    }
    axisX->setTitleText(axisTitle(law.x));
    axisY->setTitleText(report.axis == "lr" ? tr("critical learning rate η*")
                                            : QString::fromStdString(report.axis) + "*");
    auto attach = [&](QAbstractSeries *series) {
        m_chart->addSeries(series);
        series->attachAxis(axisX);
        series->attachAxis(axisY);
    };
    double xLo = INFINITY, xHi = -INFINITY;
    double yLo = spec.low, yHi = spec.high;
    const QColor ink = m_theme.seriesColor(0);
    auto *closed = new QScatterSeries(), *open = new QScatterSeries();
    closed->setName(tr("η* with its 95 % interval"));
    int searching = 0, stoppedOpen = 0; // the configurations drawn hollow, named below
    for (auto *s : {closed, open}) {
        s->setMarkerSize(9 * m_theme.fontScale);
        s->setPen(QPen(ink, m_theme.line(1.5)));
    }
    closed->setBrush(ink);
    open->setBrush(Qt::NoBrush);
    QStringList csv = {QStringLiteral("configuration,%1,eta_star,low,high,state,runs")
                           .arg(QString::fromStdString(law.x))};
    const double yMin = toSearchUnits(spec, spec.low), yMax = toSearchUnits(spec, spec.high);
    // Groups (configurations that differ in a stabilizer, the QK rule, ...): each its own colour,
    // points and fitted line, side by side in x so that their bars do not hide each other.
    const bool grouped = !report.groups.empty();
    const std::vector<QScatterSeries *> groupPoints = groupPointSeries(report);
    auto groupIndex = [&](const ConfigurationSearch &c) {
        const auto key = lawGroupOf(c.configuration, law.x, law.askedAlso());
        for (size_t g = 0; g < report.groups.size(); ++g)
            if (report.groups[g].labels == key) return int(g);
        return 0;
    };
    const double spreadX = grouped ? 0.035 : 0.0; // decades between neighbouring groups
    // A law of x and one further axis (Figure 2's head_dim and heads) is a surface: drawn as one
    // line per value of the further axis, its configurations' points and bars in that line's
    // colour.
    const bool surface = !grouped && law.ok && law.also.size() == 1;
    std::set<double> values; // the further axis's values
    if (surface)
        for (const auto &c : report.configurations)
            if (c.interval.ok && c.runs > 0)
                values.insert(dimensionNumber(c.config, law.also.front()));
    const std::vector<double> slices(values.begin(), values.end()); // ascending
    std::vector<QScatterSeries *> slicePoints;
    std::vector<std::pair<double, double>> sliceSpan(slices.size(), {INFINITY, -INFINITY});
    for (size_t k = 0; k < slices.size(); ++k) {
        auto *points = new QScatterSeries();
        points->setMarkerSize(9 * m_theme.fontScale);
        points->setPen(QPen(m_theme.seriesColor(int(k)), m_theme.line(1.5)));
        points->setBrush(m_theme.seriesColor(int(k)));
        slicePoints.push_back(points);
    }
    auto sliceOf = [&](const ConfigurationSearch &c) {
        const double v = dimensionNumber(c.config, law.also.front());
        return int(std::find(slices.begin(), slices.end(), v) - slices.begin());
    };
    for (const auto &c : report.configurations) {
        if (!c.interval.ok || c.runs == 0) continue;
        const double x0 = dimensionNumber(c.config, law.x);
        if (!(x0 > 0)) continue;
        const int g = grouped ? groupIndex(c) : surface ? sliceOf(c) : 0;
        const double x =
            x0 * std::pow(10.0, spreadX * (g - (double(report.groups.size()) - 1) / 2));
        xLo = std::min(xLo, x);
        xHi = std::max(xHi, x);
        const double estimate = std::pow(10.0, std::clamp(c.interval.estimate, yMin, yMax));
        const double lo = std::pow(10.0, std::clamp(c.interval.low, yMin, yMax));
        const double hi = std::pow(10.0, std::clamp(c.interval.high, yMin, yMax));
        // Filled where the search stopped with a closed interval; hollow while it searches or
        // where it stopped with a side left open (a budget spent beside another boundary), whose
        // bar then runs from η* to its closed side only.
        const bool done = c.stopped() && !c.interval.lowOpen && !c.interval.highOpen;
        if (!done) (c.stopped() ? stoppedOpen : searching) += 1;
        if (grouped) {
            groupPoints[size_t(g)]->append(x, estimate);
        } else if (surface) {
            slicePoints[size_t(g)]->append(x, estimate);
            sliceSpan[size_t(g)] = {std::min(sliceSpan[size_t(g)].first, x),
                                    std::max(sliceSpan[size_t(g)].second, x)};
        } else {
            (done ? closed : open)->append(x, estimate);
        }
        const double barLow = c.interval.lowOpen ? estimate : lo;
        const double barHigh = c.interval.highOpen ? estimate : hi;
        if (barLow < barHigh) {
            auto *bar = new QLineSeries();
            bar->setPen(QPen(grouped || surface ? m_theme.seriesColor(g) : ink, m_theme.line(2),
                             c.stopped() ? Qt::SolidLine : Qt::DashLine));
            bar->append(x, barLow);
            bar->append(x, barHigh);
            attach(bar);
            m_chart->legend()->markers(bar).first()->setVisible(false);
        }
        csv << QStringLiteral("%1,%2,%3,%4,%5,%6,%7")
                   .arg(csvCell(labelsText(c.configuration)))
                   .arg(x0)
                   .arg(QString::fromStdString(
                       yaml::formatNumber(std::pow(10.0, c.interval.estimate))))
                   .arg(c.interval.lowOpen ? QString()
                                           : QString::fromStdString(yaml::formatNumber(
                                                 std::pow(10.0, c.interval.low))))
                   .arg(c.interval.highOpen ? QString()
                                            : QString::fromStdString(yaml::formatNumber(
                                                  std::pow(10.0, c.interval.high))))
                   .arg(QString::fromLatin1(toString(c.state)))
                   .arg(c.runs);
    }
    open->setName(stoppedOpen == 0 ? tr("η* so far (still searching)")
                  : searching == 0 ? tr("η* with a side left open (search stopped)")
                                   : tr("η* so far, or with a side left open"));
    if (!(xLo <= xHi)) {
        xLo = 1;
        xHi = 100;
    }
    const auto [x0, x1] = decades(xLo / 1.5, xHi * 1.5);
    drawGroupLines(report, x0, x1, attach, csv);
    if (law.ok && law.also.empty() && !grouped) drawFit(law, x0, x1, attach, csv);
    for (size_t k = 0; k < slices.size(); ++k) { // the surface: the law at each further value
        auto *line = new QLineSeries();
        const auto [from, to] = sliceSpan[k];
        for (int i = 0; i <= 20 && from <= to; ++i) {
            const double lx =
                std::log10(from / 1.3) + (std::log10(to * 1.3 / (from / 1.3))) * i / 20;
            line->append(std::pow(10.0, lx),
                         std::pow(10.0, law.log10At({lx, std::log10(slices[k])})));
        }
        line->setPen(QPen(m_theme.seriesColor(int(k)), m_theme.line(1.6)));
        line->setName(
            tr("%1 = %2: η* and the law").arg(axisTitle(law.also.front())).arg(slices[k]));
        attach(line);
        attach(slicePoints[k]);
        m_chart->legend()->markers(slicePoints[k]).first()->setVisible(false);
    }
    if (surface)
        csv << QStringLiteral("# law: log10 eta* = %1 - %2 log10 %3 - %4 log10 %5; alpha 95%% "
                              "[%6, %7], beta 95%% [%8, %9]")
                   .arg(law.log10C)
                   .arg(law.alpha)
                   .arg(QString::fromStdString(law.x))
                   .arg(law.beta.front())
                   .arg(QString::fromStdString(law.also.front()))
                   .arg(law.alphaLow)
                   .arg(law.alphaHigh)
                   .arg(law.betaLow.front())
                   .arg(law.betaHigh.front());
    // The bent law (docs/SEARCH.md, "The bend"), over the span it was fitted on, where the test
    // chooses it over the power law and the law has x alone.
    if (const LawBend &bend = report.bend; bend.ok && bend.chosen && law.also.empty() && !grouped) {
        auto *bent = new QLineSeries();
        for (int i = 0; i <= 40; ++i) {
            const double lx = bend.xLow + (bend.xHigh - bend.xLow) * i / 40;
            const double ly =
                bend.log10C - bend.alpha * lx + bend.gamma * (lx - bend.x0) * (lx - bend.x0);
            bent->append(std::pow(10.0, lx), std::pow(10.0, ly));
        }
        bent->setName(tr("bent law: local α %1 to %2 (p = %3)")
                          .arg(bend.alphaAtLow, 0, 'f', 2)
                          .arg(bend.alphaAtHigh, 0, 'f', 2)
                          .arg(bend.p, 0, 'g', 2));
        bent->setPen(QPen(m_theme.seriesColor(1), m_theme.line(2), Qt::DashDotLine));
        attach(bent);
        csv << QStringLiteral("# bent law: log10 eta* = %1 - %2 log10 %3 + %4 (log10 %3 - %5)^2; "
                              "gamma 95%% [%6, %7]; p %8")
                   .arg(bend.log10C)
                   .arg(bend.alpha)
                   .arg(QString::fromStdString(bend.x))
                   .arg(bend.gamma)
                   .arg(bend.x0)
                   .arg(bend.gammaLow)
                   .arg(bend.gammaHigh)
                   .arg(bend.p);
    }
    if (grouped || surface) { // each group or slice has its own points
        for (auto *points : groupPoints) attach(points);
        delete closed;
        delete open;
    } else {
        attach(closed);
        attach(open);
    }
    axisX->setRange(x0, x1);
    const auto [y0, y1] = decades(yLo, yHi);
    axisY->setRange(y0, y1);
    m_title = lawTitle(report);
    m_chart->setTitle(m_title);
    fitChartTitle(m_chart, m_theme);
    m_csv = csv.join('\n') + '\n';
}

// One series of points per group, in its colour, named with its fitted α.
std::vector<QScatterSeries *> BoundaryChartView::groupPointSeries(const SearchReport &report) const
{
    std::vector<QScatterSeries *> groupPoints;
    for (size_t g = 0; g < report.groups.size(); ++g) {
        const LawFit &gl = report.groups[g].law;
        auto *points = new QScatterSeries();
        const QColor colour = m_theme.seriesColor(int(g));
        points->setMarkerSize(9 * m_theme.fontScale);
        points->setPen(QPen(colour, m_theme.line(1.5)));
        points->setBrush(colour);
        points->setName(labelsText(report.groups[g].labels) +
                        (gl.ok ? tr(": α = %1 [%2, %3]")
                                     .arg(gl.alpha, 0, 'f', 2)
                                     .arg(gl.alphaLow, 0, 'f', 2)
                                     .arg(gl.alphaHigh, 0, 'f', 2)
                               : QString()));
        groupPoints.push_back(points);
    }
    return groupPoints;
}

// Each group's fitted line, with its fit in the CSV.
void BoundaryChartView::drawGroupLines(const SearchReport &report, double x0, double x1,
                                       const Attach &attach, QStringList &csv)
{
    const LawFit &law = report.law;
    for (size_t g = 0; g < report.groups.size(); ++g) { // each group's fitted line
        const LawFit &gl = report.groups[g].law;
        if (!gl.ok || !gl.also.empty()) continue;
        auto *line = new QLineSeries();
        for (int i = 0; i <= 40; ++i) {
            const double lx = std::log10(x0) + (std::log10(x1) - std::log10(x0)) * i / 40;
            line->append(std::pow(10.0, lx),
                         std::pow(10.0, gl.centerY - gl.alpha * (lx - gl.centerX)));
        }
        line->setPen(QPen(m_theme.seriesColor(int(g)), m_theme.line(1.6)));
        attach(line);
        m_chart->legend()->markers(line).first()->setVisible(false);
        csv << QStringLiteral("# %1: log10 eta* = %2 - %3 log10 %4; alpha 95%% [%5, %6]")
                   .arg(csvCell(labelsText(report.groups[g].labels)))
                   .arg(gl.log10C)
                   .arg(gl.alpha)
                   .arg(QString::fromStdString(law.x))
                   .arg(gl.alphaLow)
                   .arg(gl.alphaHigh);
    }
}

// The fit and its 95 % band, and α = ½ through the same centre (one law, no groups).
void BoundaryChartView::drawFit(const LawFit &law, double x0, double x1, const Attach &attach,
                                QStringList &csv)
{
    const QColor ink = m_theme.seriesColor(0);
    // The fit and its band, and α = ½ through the same centre.
    auto *line = new QLineSeries(), *upper = new QLineSeries(), *lower = new QLineSeries();
    auto *half = new QLineSeries();
    for (int i = 0; i <= 40; ++i) {
        const double lx = std::log10(x0) + (std::log10(x1) - std::log10(x0)) * i / 40;
        const double ly = law.centerY - law.alpha * (lx - law.centerX);
        const double band = law.bandHalfWidth(lx);
        line->append(std::pow(10.0, lx), std::pow(10.0, ly));
        upper->append(std::pow(10.0, lx), std::pow(10.0, ly + band));
        lower->append(std::pow(10.0, lx), std::pow(10.0, ly - band));
        half->append(std::pow(10.0, lx), std::pow(10.0, law.centerY - 0.5 * (lx - law.centerX)));
    }
    auto *area = new QAreaSeries(upper, lower);
    QColor fill = ink;
    fill.setAlphaF(0.18);
    area->setBrush(fill);
    area->setPen(Qt::NoPen);
    area->setName(tr("95 % band"));
    attach(area);
    line->setName(tr("fit: α = %1 [%2, %3]")
                      .arg(law.alpha, 0, 'f', 2)
                      .arg(law.alphaLow, 0, 'f', 2)
                      .arg(law.alphaHigh, 0, 'f', 2));
    line->setPen(QPen(ink, m_theme.line(2)));
    attach(line);
    half->setName(tr("α = ½ (the paper)"));
    half->setPen(QPen(m_theme.muted, m_theme.line(1.5), Qt::DashLine));
    attach(half);
    const QString misfit =
        law.model == "joint"
            ? QStringLiteral("joint model, scatter about the law tau %1 decades").arg(law.tau)
            : QStringLiteral("chi2 %1 on %2 dof").arg(law.chi2).arg(law.dof);
    csv << QStringLiteral("# fit: log10 eta* = %1 - %2 log10 %3; alpha 95%% [%4, %5]; %6")
               .arg(law.log10C)
               .arg(law.alpha)
               .arg(QString::fromStdString(law.x))
               .arg(law.alphaLow)
               .arg(law.alphaHigh)
               .arg(misfit);
}

// The figure's title: the fitted α with its interval, per group or for all, and the run count.
QString BoundaryChartView::lawTitle(const SearchReport &report) const
{
    const LawFit &law = report.law;
    const bool grouped = !report.groups.empty();
    return grouped ? tr("η* against %1 for %2 groups, each with its fitted α (95 %)%3, %4 runs")
                         .arg(axisTitle(law.x))
                         .arg(report.groups.size())
                         .arg(law.provisional ? tr(" so far") : QString())
                         .arg(report.runs)
           : law.ok
               ? tr("η* against %1: α = %2 [%3, %4] (95 %)%5, %6 runs")
                     .arg(axisTitle(law.x))
                     .arg(law.alpha, 0, 'f', 2)
                     .arg(law.alphaLow, 0, 'f', 2)
                     .arg(law.alphaHigh, 0, 'f', 2)
                     .arg((law.provisional ? tr(" so far") : QString()) +
                          (law.model == "joint" ? tr(", joint model, τ %1").arg(law.tau, 0, 'f', 2)
                                                : QString()) +
                          (report.seeds == "paired" ? tr(", paired seeds") : QString()))
                     .arg(report.runs)
               : tr("η* against %1 — no law yet (%2 runs)").arg(axisTitle(law.x)).arg(report.runs);
}

void BoundaryChartView::drawCurves(const QString &mode)
{
    const Session &session = m_model->session();
    const auto held = m_model->searchReport(); // the model's, computed once per change
    const SearchReport &report = *held;
    const SearchSpec &spec = *session.search;
    // The collapse: each configuration's values times m_H^α (and the law's further axes to their
    // fitted exponents), α = ½ or the law's; plain P(learned) against the axis otherwise.
    const LawFit &law = report.law;
    const bool collapse = mode.startsWith(QLatin1String("collapse")) && spec.logScale;
    const bool fitted = mode == QLatin1String("collapse") && law.ok;
    const double alpha = fitted ? law.alpha : 0.5;
    auto factor = [&](const ConfigurationSearch &c) {
        if (!collapse) return 1.0;
        double f = std::pow(dimensionNumber(c.config, law.x), alpha);
        for (size_t k = 0; fitted && k < law.also.size() && k < law.beta.size(); ++k)
            f *= std::pow(dimensionNumber(c.config, law.also[k]), law.beta[k]);
        return f;
    };
    QString xTitle = axisTitle(spec.axis);
    if (collapse) {
        const QString m = axisTitle(law.x).section(' ', -1).remove('(').remove(')');
        xTitle = fitted
                     ? QStringLiteral("%1 · %2^%3")
                           .arg(spec.axis == "lr" ? "η" : xTitle, m, QString::number(alpha, 'f', 2))
                     : QStringLiteral("%1 · √%2").arg(spec.axis == "lr" ? "η" : xTitle, m);
        for (size_t k = 0; fitted && k < law.also.size() && k < law.beta.size(); ++k)
            xTitle += QStringLiteral(" · %1^%2")
                          .arg(QString::fromStdString(law.also[k]))
                          .arg(law.beta[k], 0, 'f', 2);
    }
    auto *axisX = new QLogValueAxis();
    axisX->setBase(10);
    axisX->setLabelFormat("%g");
    axisX->setMinorTickCount(8);
    auto *axisY = new QValueAxis();
    axisY->setRange(-0.05, 1.05);
    axisY->setTickType(QValueAxis::TicksDynamic);
    axisY->setTickAnchor(0);
    axisY->setTickInterval(0.25);
    axisY->setLabelFormat("%.2f");
    m_chart->addAxis(axisX, Qt::AlignBottom);
    m_chart->addAxis(axisY, Qt::AlignLeft);
    axisX->setTitleText(xTitle);
    axisY->setTitleText(tr("P(learned)"));
    auto attach = [&](QAbstractSeries *series, bool inLegend) {
        m_chart->addSeries(series);
        series->attachAxis(axisX);
        series->attachAxis(axisY);
        if (!inLegend) m_chart->legend()->markers(series).first()->setVisible(false);
    };
    QStringList csv = {
        QStringLiteral("configuration,%1,runs,learned,in_fit")
            .arg(collapse ? QStringLiteral("%1_times_%2_pow_%3")
                                .arg(QString::fromStdString(spec.axis),
                                     QString::fromStdString(law.x), QString::number(alpha, 'g', 4))
                          : QString::fromStdString(spec.axis))};
    // Runs a known direction leaves out of the fit (another boundary, docs/SEARCH.md): drawn hollow
    // in the text colour, so that what the fit ignores is seen, not hidden.
    auto *setAside = new QScatterSeries();
    setAside->setName(spec.direction == SearchSpec::Direction::Decreasing
                          ? tr("left out of the fit (below the first η that learned)")
                          : tr("left out of the fit (above the last value that learned)"));
    setAside->setMarkerSize(8 * m_theme.fontScale);
    setAside->setBrush(Qt::NoBrush);
    setAside->setPen(QPen(m_theme.muted, m_theme.line(1.4)));
    const double xMin = toSearchUnits(spec, spec.low), xMax = toSearchUnits(spec, spec.high);
    double shownLow = HUGE_VAL, shownHigh = -HUGE_VAL; // the collapse's range, over what is drawn
    // With groups (a stabilizer, the QK rule), a group's colour is the one it has against m_H, and
    // its configurations (the model's shapes) are told apart by the line's style.
    static const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                          Qt::DashDotDotLine};
    // Without groups, a configuration has the colour it has in every figure of configurations
    // (ColourTable.h: Loss vs η too).
    const ConfigurationColours colourOf = configurationColours(session, spec.axis);
    std::map<std::map<std::string, std::string>, int> placeInGroup;
    // The configurations' own legend entries while they fit the chart's height, else the short
    // legend (a colour per head count, a shade per width): 25 ran off the bottom at 1920×1080.
    const std::vector<LegendEntry> legend =
        report.groups.empty() ? shortLegendOf(colourOf) : std::vector<LegendEntry>{};
    const bool shortLegend =
        !legend.empty() && !Highlight::legendFits(m_chart, int(report.configurations.size()) + 2);
    if (shortLegend)
        for (const auto &entry : legend) { // empty lines: only their legend entries show
            auto *line = Highlight::legendEntryLine(entry);
            line->setPen(QPen(m_theme.shadedSeriesColor(entry.colour, entry.shade, entry.shades),
                              m_theme.line(2.5)));
            line->setProperty("basePen", QVariant::fromValue(line->pen()));
            attach(line, true);
        }
    QStringList configurations;
    for (size_t i = 0; i < report.configurations.size(); ++i) {
        const ConfigurationSearch &c = report.configurations[i];
        int style = 0;
        QColor color;
        if (!report.groups.empty()) {
            int colour = int(i);
            const auto key = lawGroupOf(c.configuration, report.law.x, report.law.askedAlso());
            for (size_t g = 0; g < report.groups.size(); ++g)
                if (report.groups[g].labels == key) colour = int(g);
            style = placeInGroup[key]++ % int(std::size(styles));
            color = m_theme.seriesColor(colour);
        } else {
            const auto s = colourOf.styleOf(c.configuration);
            color = m_theme.shadedSeriesColor(s.colour >= 0 ? s.colour : int(i), s.shade,
                                              colourOf.shades);
        }
        const double f = factor(c);
        // The configuration's curve, dots and bar carry its name and colour for the highlight.
        const QString name = labelsText(c.configuration);
        const auto styleOf = colourOf.styleOf(c.configuration);
        auto tag = [&](QXYSeries *series) {
            series->setProperty("key", name);
            series->setProperty("colour", styleOf.colour);
            series->setProperty("shade", styleOf.shade);
            series->setProperty("shades", colourOf.shades);
            series->setProperty("basePen", QVariant::fromValue(series->pen()));
            series->setProperty("baseBrush", QVariant::fromValue(series->brush()));
        };
        configurations << name;
        auto *curve = new QLineSeries();
        curve->setName(labelsText(c.configuration) +
                       (c.interval.ok
                            ? tr(": η* %1").arg(number(std::pow(10.0, c.interval.estimate)))
                            : QString()));
        curve->setPen(QPen(color, m_theme.line(2), styles[style]));
        if (c.fit.ok)
            for (int k = 0; k <= 80; ++k) {
                const double x = xMin + (xMax - xMin) * k / 80;
                curve->append(fromSearchUnits(spec, x) * f, c.fit.probability(x));
            }
        tag(curve);
        connect(curve, &QLineSeries::hovered, this, [this, name](QPointF, bool on) {
            m_highlight->hover(on ? Highlight::lineKey(name) : QString());
        });
        attach(curve, !shortLegend);
        shownLow = std::min(shownLow, spec.low * f);
        shownHigh = std::max(shownHigh, spec.high * f);
        auto *dots = new QScatterSeries();
        dots->setMarkerSize(7 * m_theme.fontScale);
        QColor fill = color;
        fill.setAlphaF(0.6);
        dots->setBrush(fill);
        dots->setPen(QPen(color, 1));
        addRunDots(c, i, f, dots, setAside, csv);
        tag(dots);
        attach(dots, false);
        if (c.interval.ok) {
            auto *bar = new QLineSeries();
            bar->setPen(QPen(color, m_theme.line(3), c.stopped() ? Qt::SolidLine : Qt::DashLine));
            // Each configuration's bar a little above or below ½, so that they do not hide each
            // other.
            const double y =
                spec.target + 0.025 * (int(i) - int(report.configurations.size() - 1) / 2.0);
            bar->append(fromSearchUnits(spec, std::clamp(c.interval.low, xMin, xMax)) * f, y);
            bar->append(fromSearchUnits(spec, std::clamp(c.interval.high, xMin, xMax)) * f, y);
            tag(bar);
            attach(bar, false);
        }
    }
    attach(setAside, setAside->count() > 0);
    m_highlight->offer(legend, configurations, configurations);
    m_highlight->wireLegend(m_chart);
    applyHighlight();
    const auto [x0, x1] = collapse && shownLow < shownHigh ? decades(shownLow, shownHigh)
                                                           : decades(spec.low, spec.high);
    axisX->setRange(x0, x1);
    m_title = collapse
                  ? (fitted ? tr("P(learned) against %1 (α fitted by the law, [%2, %3]): "
                                 "%4 configurations, %5 runs")
                                  .arg(xTitle)
                                  .arg(law.alphaLow, 0, 'f', 2)
                                  .arg(law.alphaHigh, 0, 'f', 2)
                            : tr("P(learned) against %1 (the paper's α = ½%2): "
                                 "%3 configurations, %4 runs")
                                  .arg(xTitle)
                                  .arg(mode == QLatin1String("collapse") ? tr("; no law fitted yet")
                                                                         : QString()))
                        .arg(report.configurations.size())
                        .arg(report.runs)
                  : tr("P(learned) against %1: %2 configurations, %3 runs, round %4")
                        .arg(axisTitle(spec.axis))
                        .arg(report.configurations.size())
                        .arg(report.runs)
                        .arg(std::max(0, report.rounds - 1));
    m_chart->setTitle(m_title);
    fitChartTitle(m_chart, m_theme);
    m_csv = csv.join('\n') + '\n';
}

namespace {
// Which round chose each run of a search: the probe (SearchProbe) whose configuration, value and
// replicates' seeds are the run's (SweepExpansion gives replicate j of a probe the seed
// initSeed + first_replicate + j); -1 for a run no probe asks for.
std::vector<int> roundOfRuns(const Session &session)
{
    const SearchSpec &spec = *session.search;
    std::vector<int> rounds(session.runs.size(), -1);
    for (size_t k = 0; k < session.runs.size(); ++k) {
        const auto &labels = session.runs[k].labels;
        const auto value = labels.find(spec.axis), seed = labels.find("seed");
        double x = 0;
        int64_t s = 0;
        if (value == labels.end() || seed == labels.end() ||
            !yaml::parseNumber(value->second, &x) || !yaml::parseInt(seed->second, &s))
            continue;
        const ConfigurationKey configuration = configurationOf(session, session.runs[k], spec.axis);
        for (const auto &probe : spec.probes) {
            const int64_t replicate = s - int64_t(session.base.initSeed) - probe.firstReplicate;
            if (replicate >= 0 && replicate < probe.replicates &&
                std::abs(x - probe.value) <= 1e-9 * std::abs(probe.value) &&
                probe.configuration == configuration) {
                rounds[k] = probe.round;
                break;
            }
        }
    }
    return rounds;
}
} // namespace

void BoundaryChartView::resizeEvent(QResizeEvent *event)
{
    FigureView::resizeEvent(event);
    refresh(); // redrawn only where the legend's room changed
    fitChartTitle(m_chart, m_theme);
}

void BoundaryChartView::drawRounds()
{
    const Session &session = m_model->session();
    const auto held = m_model->searchReport(); // the model's, computed once per change
    const SearchReport &report = *held;
    const SearchSpec &spec = *session.search;
    const int rows = int(report.configurations.size());
    const int rounds = std::max(1, report.rounds);
    auto *axisX = new QLogValueAxis();
    axisX->setBase(10);
    axisX->setLabelFormat("%g");
    axisX->setMinorTickCount(8);
    const auto [x0, x1] = decades(spec.low, spec.high);
    axisX->setRange(x0, x1);
    axisX->setTitleText(axisTitle(spec.axis));
    // One row per configuration, the first on top; its runs spread over the row by round.
    auto *axisY = new QCategoryAxis();
    axisY->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
    axisY->setStartValue(-0.5);
    // Rows labelled by their values alone ("24 × 12"), the axes' names in the axis title, so that
    // 25 rows keep their labels on a 720-line screen.
    QStringList names;
    if (rows > 0)
        for (const auto &[key, value] : report.configurations[0].configuration)
            names << QString::fromStdString(dimensionLetter(key));
    axisY->setTitleText(names.join(QStringLiteral(" × ")));
    for (int i = 0; i < rows; ++i) {
        QStringList values;
        for (const auto &[key, value] : report.configurations[size_t(rows - 1 - i)].configuration)
            values << QString::fromStdString(value);
        axisY->append(values.join(QStringLiteral(" × ")), i + 0.5);
    }
    axisY->setRange(-0.5, rows - 0.5);
    // Qt Charts gives a category label its row's height less 2 × its padding, and elides it to
    // "..." below that: 25 rows on a 720-line screen lose every label. So the axis keeps its
    // labels only to reserve their width (drawn transparent), and each row's label is drawn here,
    // at its row's centre, in a size that fits the row (6 px at least; beyond that every k-th).
    // refresh deleted the previous drawing's labels.
    for (const auto &text : axisY->categoriesLabels()) {
        auto *item = new QGraphicsSimpleTextItem(text, m_chart);
        item->setZValue(10);
        m_rowLabels.push_back(item);
    }
    auto placeRowLabels = [this, rows](const QRectF &area) {
        if (rows <= 0 || int(m_rowLabels.size()) != rows) return;
        QFont font = m_theme.font(8.5);
        const double rowPx = area.height() / rows;
        font.setPixelSize(std::max(6, std::min(QFontInfo(font).pixelSize(), int(0.85 * rowPx))));
        const int every = std::max(1, int(std::ceil(QFontMetricsF(font).height() / rowPx)));
        for (int i = 0; i < rows; ++i) {
            auto *item = m_rowLabels[size_t(i)];
            item->setFont(font);
            item->setBrush(m_theme.foreground);
            item->setVisible((rows - 1 - i) % every == 0);
            const QRectF box = item->boundingRect();
            const double y = area.bottom() - (i + 0.5) * area.height() / rows;
            item->setPos(area.left() - box.width() - 6, y - box.height() / 2);
        }
    };
    connect(m_chart, &QChart::plotAreaChanged, axisY, placeRowLabels);
    placeRowLabels(m_chart->plotArea());
    axisY->setGridLineVisible(false);
    m_chart->addAxis(axisX, Qt::AlignBottom);
    m_chart->addAxis(axisY, Qt::AlignLeft);
    auto attach = [&](QAbstractSeries *series, bool inLegend) {
        m_chart->addSeries(series);
        series->attachAxis(axisX);
        series->attachAxis(axisY);
        if (!inLegend) m_chart->legend()->markers(series).first()->setVisible(false);
    };
    std::map<ConfigurationKey, int> rowOf;
    for (int i = 0; i < rows; ++i)
        rowOf[report.configurations[size_t(i)].configuration] = rows - 1 - i;
    auto yOf = [&](int row, int round) {
        return row + 0.32 - 0.64 * (rounds > 1 ? double(round) / (rounds - 1) : 0.5);
    };
    const double marker = 7 * m_theme.fontScale;
    std::vector<QScatterSeries *> learned(static_cast<size_t>(rounds)),
        stuck(static_cast<size_t>(rounds));
    for (int r = 0; r < rounds; ++r) {
        const QColor colour = viridis(rounds > 1 ? 0.9 * r / (rounds - 1) : 0.0);
        learned[size_t(r)] = new QScatterSeries();
        stuck[size_t(r)] = new QScatterSeries();
        learned[size_t(r)]->setBrush(colour);
        stuck[size_t(r)]->setBrush(Qt::NoBrush);
        for (auto *s : {learned[size_t(r)], stuck[size_t(r)]}) {
            s->setMarkerSize(marker);
            s->setPen(QPen(colour, m_theme.line(1.5)));
        }
    }
    auto *pending = new QScatterSeries();
    pending->setName(tr("still to train"));
    pending->setMarkerSize(marker * 0.7);
    pending->setBrush(Qt::NoBrush);
    pending->setPen(QPen(m_theme.muted, m_theme.line(1.2)));
    QStringList csv = {QStringLiteral("configuration,round,%1,seed,outcome")
                           .arg(QString::fromStdString(spec.axis))};
    const std::vector<int> roundOf = roundOfRuns(session);
    std::vector<int> runsOfRound(size_t(rounds), 0);
    for (size_t k = 0; k < session.runs.size(); ++k) {
        const SessionRun &run = session.runs[k];
        const int round = roundOf[k];
        const ConfigurationKey configuration = configurationOf(session, run, spec.axis);
        const auto row = rowOf.find(configuration);
        if (round < 0 || round >= rounds || row == rowOf.end()) continue;
        ++runsOfRound[size_t(round)];
        double x = 0;
        yaml::parseNumber(run.labels.at(spec.axis), &x);
        // 1 learned, 0 did not, -1 finished without a verdict, -2 still to train.
        int verdict = -2;
        if (isFinished(run.result.status)) {
            const std::optional<bool> learnedOrNot = runLearned(session, run.result);
            verdict = learnedOrNot ? int(*learnedOrNot) : -1;
        }
        QScatterSeries *series = verdict == -2  ? pending
                                 : verdict == 1 ? learned[size_t(round)]
                                                : stuck[size_t(round)];
        series->append(x, yOf(row->second, round));
        const char *outcome = verdict == -2   ? "to_train"
                              : verdict == -1 ? "no_verdict"
                              : verdict == 1  ? "learned"
                                              : "not_learned";
        csv << QStringLiteral("%1,%2,%3,%4,%5")
                   .arg(csvCell(labelsText(configuration)))
                   .arg(round)
                   .arg(QString::fromStdString(yaml::formatNumber(x)))
                   .arg(QString::fromStdString(run.labels.at("seed")))
                   .arg(QLatin1String(outcome));
    }
    for (int r = 0; r < rounds; ++r) {
        // Where a round sits in its row, said at the first and the last.
        const QString where = rounds < 2        ? QString()
                              : r == 0          ? tr(", top of each row")
                              : r == rounds - 1 ? tr(", foot of each row")
                                                : QString();
        learned[size_t(r)]->setName(
            tr("round %1 (%2 runs%3)").arg(r).arg(runsOfRound[size_t(r)]).arg(where));
        attach(learned[size_t(r)], true);
        attach(stuck[size_t(r)], false);
    }
    // The interval each configuration's rounds have narrowed to, as a bar along the foot of its row.
    bool first = true;
    for (int i = 0; i < rows; ++i) {
        const ConfigurationSearch &c = report.configurations[size_t(i)];
        if (!c.interval.ok) continue;
        const double lo = std::clamp(c.interval.low, toSearchUnits(spec, spec.low),
                                     toSearchUnits(spec, spec.high)),
                     hi = std::clamp(c.interval.high, toSearchUnits(spec, spec.low),
                                     toSearchUnits(spec, spec.high));
        auto *bar = new QLineSeries();
        bar->setName(tr("95 % interval now (dashed: still searching)"));
        bar->setPen(QPen(m_theme.foreground, m_theme.line(2.5),
                         c.stopped() ? Qt::SolidLine : Qt::DashLine));
        const double y = rowOf[c.configuration] - 0.42;
        bar->append(fromSearchUnits(spec, lo), y);
        bar->append(fromSearchUnits(spec, hi), y);
        attach(bar, first);
        first = false;
    }
    attach(pending, pending->count() > 0);
    m_title = tr("The search's rounds: %1 runs, %2 rounds, %3 configurations")
                  .arg(report.runs)
                  .arg(report.rounds)
                  .arg(rows);
    m_chart->setTitle(m_title);
    fitChartTitle(m_chart, m_theme);
    m_csv = csv.join('\n') + '\n';
}

// A configuration's runs as dots at 0 (not learned) and 1 (learned), those the fit leaves out in
// `setAside`, each with its CSV row (in_fit 1 or 0). Replicates spread a little inward from 0 and
// 1, by configuration and replicate, so that coinciding runs show and no dot leaves [0, 1].
void BoundaryChartView::addRunDots(const ConfigurationSearch &c, size_t i, double factor,
                                   QScatterSeries *dots, QScatterSeries *setAside,
                                   QStringList &csv) const
{
    const SearchSpec &spec = *m_model->session().search;
    auto add = [&](const auto &points, QScatterSeries *series, int inFit) {
        for (const auto &p : points) {
            for (int t = 0; t < p.trials; ++t) {
                const double jitter = std::min(0.2, 0.012 * double(i) + 0.008 * t);
                series->append(fromSearchUnits(spec, p.x) * factor,
                               t < p.successes ? 1 - jitter : jitter);
            }
            csv << QStringLiteral("%1,%2,%3,%4,%5")
                       .arg(csvCell(labelsText(c.configuration)))
                       .arg(QString::fromStdString(
                           yaml::formatNumber(fromSearchUnits(spec, p.x) * factor)))
                       .arg(p.trials)
                       .arg(p.successes)
                       .arg(inFit);
        }
    };
    add(c.points, dots, 1);
    add(c.setAsidePoints, setAside, 0);
}

FigureView::Pooling BoundaryChartView::pooling() const
{
    Pooling out;
    const Session &session = m_model->session();
    if (!session.search) return out;
    const auto held = m_model->searchReport();
    for (const auto &c : held->configurations) {
        QList<int> runs;
        for (int i = 0; i < int(session.runs.size()); ++i) {
            bool matches = true;
            for (const auto &[axis, label] : c.configuration) {
                const auto it = session.runs[size_t(i)].labels.find(axis);
                matches =
                    matches && it != session.runs[size_t(i)].labels.end() && it->second == label;
            }
            if (matches) runs << i;
        }
        if (!runs.isEmpty()) out.groups.push_back(runs);
    }
    out.pooledAxes << QString::fromStdString(session.search->axis);
    return out;
}

} // namespace headlab::ui
