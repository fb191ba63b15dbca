// LossChartView.cpp — see LossChartView.h.
#include "ui/figures/LossChartView.h"

#include "core/session/RunFilter.h"

#include "core/metrics/Metrics.h"
#include "ui/figures/ChartLifetime.h"
#include "ui/model/CsvCell.h"

#include "ui/model/AxisRange.h"
#include "ui/model/ColourTable.h"
#include "ui/model/CurveDecimator.h"
#include "ui/model/HeatmapData.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QGraphicsLayout>
#include <QHBoxLayout>
#include <QHash>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineEdit>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSet>
#include <QSlider>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

namespace headlab::ui {

namespace {

// A configuration's median series is keyed kMedianKey + its group, below every run's index and
// in the groups' order, so that the chart, and with it the legend, lists them by value.
constexpr int kMedianKey = std::numeric_limits<int>::min();

// The dashes that tell lines of one colour apart (the dash axis's values, a run's digit groups).
constexpr Qt::PenStyle kDashes[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                    Qt::DashDotDotLine};
constexpr int kLegendMax = 12;
constexpr size_t kPointBudget = 200'000; // points drawn over all curves of one frame
} // namespace

LossChartView::LossChartView(SessionModel *model, QWidget *parent)
    : FigureView(model, parent)
{
    auto *bar = controlsLayout();
    m_logX = new QCheckBox(tr("Log x"), this);
    m_logY = new QCheckBox(tr("Log y"), this);
    m_showTrain = new QCheckBox(tr("Train"), this);
    m_showTrain->setChecked(true);
    m_showTest = new QCheckBox(tr("Test"), this);
    m_showTest->setChecked(true);
    m_fullRange = new QCheckBox(tr("Full y range"), this);
    m_fullRange->setToolTip(tr("Show every point, also losses far above the rest (a run that "
                               "blew up); off, they are left off the chart and counted"));
    m_digits = new QCheckBox(tr("Per-digit test loss"), this); // named for the task in refresh()
    m_smoothing = new QSlider(Qt::Horizontal, this);
    m_smoothing->setRange(0, 99);
    m_smoothing->setMinimumWidth(100); // usable however full the row of controls is
    m_smoothing->setMaximumWidth(140);
    m_smoothing->setToolTip(
        tr("Smoothing of the train curve; the raw trace stays visible behind it"));
    m_info = new QLabel(this);
    m_median = new QCheckBox(tr("Median over seeds"), this);
    m_median->setChecked(true);
    m_median->setToolTip(
        tr("One test curve per configuration: the median over its replicates (seeds) with a band "
           "over them (inter-quartile range; min–max under 4). Select runs in the table to see "
           "them one by one."));
    m_colourBy = new QComboBox(this);
    m_colourBy->setToolTip(tr("Colour the curves by this axis; the legend lists its values"));
    m_show = new QComboBox(this);
    m_show->setObjectName(QStringLiteral("lossShow"));
    m_show->setEditable(true);
    m_show->setInsertPolicy(QComboBox::NoInsert);
    m_show->setMinimumContentsLength(14);
    m_show->lineEdit()->setPlaceholderText(tr("all runs"));
    m_show->lineEdit()->setClearButtonEnabled(true);
    // The common choices; any filter can be typed (RunFilter.h).
    for (const char *item :
         {"", "best:10", "worst:10", "!outliers", "best:10:min(test_loss)", "!outliers best:20"})
        m_show->addItem(QString::fromLatin1(item));
    m_show->setToolTip(tr("Which runs to draw, chosen again as they train: the K best or worst "
                          "by a value, without outliers, or any run filter.\n") +
                       QString::fromUtf8(runFilterHelp()));
    bar->addWidget(m_logX);
    bar->addWidget(m_logY);
    bar->addWidget(m_fullRange);
    bar->addSpacing(8);
    bar->addWidget(m_showTrain);
    bar->addWidget(m_showTest);
    bar->addWidget(m_digits);
    bar->addWidget(m_median);
    bar->addWidget(new QLabel(tr("colour"), this));
    bar->addWidget(m_colourBy);
    bar->addWidget(new QLabel(tr("show"), this));
    bar->addWidget(m_show);
    bar->addSpacing(8);
    bar->addWidget(new QLabel(tr("Smoothing"), this));
    bar->addWidget(m_smoothing);
    bar->addStretch(1);
    bar->addWidget(m_info);

    m_chart = new QChart();
    m_chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries); // dashes show in the legend
    m_view = setChartCanvas(m_chart);

    auto changed = [this] {
        m_axesDirty = true;
        m_stylesDirty = true;
        refresh();
        Q_EMIT viewStateChanged();
    };
    connect(m_logX, &QCheckBox::toggled, this, changed);
    connect(m_logY, &QCheckBox::toggled, this, changed);
    connect(m_fullRange, &QCheckBox::toggled, this, changed);
    connect(m_digits, &QCheckBox::toggled, this, changed);
    connect(m_showTrain, &QCheckBox::toggled, this, changed);
    connect(m_showTest, &QCheckBox::toggled, this, changed);
    connect(m_smoothing, &QSlider::valueChanged, this, changed);
    connect(m_median, &QCheckBox::toggled, this, changed);
    connect(m_colourBy, &QComboBox::currentIndexChanged, this, changed);
    connect(m_show, &QComboBox::editTextChanged, this, [this, changed](const QString &text) {
        m_showError =
            QString::fromStdString(RunFilter::parse(text.toStdString(), m_model->session()).error);
        changed();
    });
    rebuildAxes();
}

QString LossChartView::setShown(const QString &filter)
{
    m_show->setEditText(filter);
    return m_showError;
}

QString LossChartView::shown() const
{
    return m_show->currentText().trimmed();
}

void LossChartView::setMedianView(bool on)
{
    m_median->setChecked(on);
}

void LossChartView::setColourBy(const QString &axis)
{
    const int i = m_colourBy->findData(axis);
    m_colourBy->setCurrentIndex(i >= 0 ? i : 0);
}

bool LossChartView::medianMode() const
{
    if (!m_median->isChecked() || !m_selected.isEmpty() ||
        (m_digits->isChecked() && !groups().curves.empty()) ||
        (!shown().isEmpty() && m_showError.isEmpty()))
        return false;
    for (const auto &g : m_groups)
        if (g.runs.size() > 1) return true;
    return false;
}

QStringList LossChartView::colourValues() const
{
    const std::string axis = m_colourBy->currentData().toString().toStdString();
    if (axis.empty()) return {};
    // The session's colour table where it colours by that axis (a head count keeps its colour
    // through a lesson's presses: ColourTable's kLessonColoursKey); else the axis's values.
    const ColourTable table = colourTable(m_model->session());
    return axis == table.axis ? table.values : axisValueLabels(m_model->session(), axis);
}

int LossChartView::colourIndexOf(const std::map<std::string, std::string> &labels,
                                 const QStringList &values, QString *legendName) const
{
    const std::string axis = m_colourBy->currentData().toString().toStdString();
    if (axis.empty()) return -1;
    const auto it = labels.find(axis);
    const QString value = it == labels.end() ? QString() : QString::fromStdString(it->second);
    if (legendName) *legendName = axisValueText(axis, value);
    return std::max<int>(0, int(values.indexOf(value)));
}

int LossChartView::colourIndexOfRun(int run) const
{
    return colourIndexOf(m_model->run(run).labels, colourValues(), nullptr);
}

QString LossChartView::title() const
{
    const auto &name = m_model->session().name;
    const Groups g = groups();
    QString t = m_digits->isChecked() && !g.curves.empty() ? tr("Test loss per %1").arg(g.word)
                : medianMode() ? tr("Test loss, median and band over seeds")
                               : tr("Loss against step");
    if (!name.empty()) t += QStringLiteral(" — ") + QString::fromStdString(name);
    return t;
}

void LossChartView::setLogX(bool on)
{
    m_logX->setChecked(on);
}
void LossChartView::setLogY(bool on)
{
    m_logY->setChecked(on);
}
void LossChartView::setSmoothing(double weight)
{
    m_smoothing->setValue(int(std::lround(weight * 100)));
}
void LossChartView::setDigitView(bool on)
{
    m_digits->setChecked(on);
}

void LossChartView::saveViewState(ViewState &state) const
{
    setStateValue(state, "log_x", m_logX->isChecked() ? "true" : "false");
    setStateValue(state, "log_y", m_logY->isChecked() ? "true" : "false");
    setStateValue(state, "smoothing", std::to_string(m_smoothing->value() / 100.0));
    setStateValue(state, "digits", m_digits->isChecked() ? "true" : "false");
    setStateValue(state, "train", m_showTrain->isChecked() ? "true" : "false");
    setStateValue(state, "test", m_showTest->isChecked() ? "true" : "false");
    setStateValue(state, "median", m_median->isChecked() ? "true" : "false");
    setStateValue(state, "colour_by", m_colourBy->currentData().toString().toStdString());
    setStateValue(state, "show", shown().toStdString());
}

void LossChartView::restoreViewState(const ViewState &state)
{
    const QSignalBlocker b1(m_logX), b2(m_logY), b3(m_smoothing), b4(m_digits), b5(m_showTrain),
        b6(m_showTest), b7(m_median), b8(m_colourBy), b9(m_show);
    m_median->setChecked(stateValue(state, "median", "true") == "true");
    m_pendingColourBy = QString::fromStdString(stateValue(state, "colour_by", "\x01"));
    m_logX->setChecked(stateValue(state, "log_x") == "true");
    m_logY->setChecked(stateValue(state, "log_y") == "true");
    m_digits->setChecked(stateValue(state, "digits") == "true");
    m_showTrain->setChecked(stateValue(state, "train", "true") == "true");
    m_showTest->setChecked(stateValue(state, "test", "true") == "true");
    m_smoothing->setValue(
        int(std::lround(std::atof(stateValue(state, "smoothing", "0").c_str()) * 100)));
    m_show->setEditText(QString::fromStdString(stateValue(state, "show")));
    m_showError =
        QString::fromStdString(RunFilter::parse(shown().toStdString(), m_model->session()).error);
    m_axesDirty = true;
    m_stylesDirty = true;
    refresh();
}

void LossChartView::applyTheme(const ChartTheme &theme)
{
    m_theme = theme;
    m_stylesDirty = true;
    m_axesDirty = true;
    refresh();
}

QList<int> LossChartView::displayedRuns() const
{
    QList<int> runs;
    if (!m_selected.isEmpty()) {
        for (int i : m_selected)
            if (i >= 0 && i < m_model->runCount()) runs << i;
    } else {
        for (int i = 0; i < m_model->runCount(); ++i) {
            const auto &r = m_model->run(i).result;
            if (!r.train.empty() || !r.test.empty()) runs << i;
        }
    }
    // The show filter, among these runs: the K best of the selection, of every run otherwise.
    // Read again each time: a metric it names may have come with a run that finished since.
    const QString show = shown();
    if (!show.isEmpty()) {
        const Session &session = m_model->session();
        const RunFilter filter = RunFilter::parse(show.toStdString(), session);
        m_showError = QString::fromStdString(filter.error);
        if (m_showError.isEmpty()) {
            std::vector<bool> among(session.runs.size(), false);
            for (int i : runs) among[size_t(i)] = true;
            const std::vector<bool> in = filter.select(session, among);
            QList<int> kept;
            for (int i : runs)
                if (in[size_t(i)]) kept << i;
            runs = kept;
        }
    }
    if (!m_selected.isEmpty() || runs.size() <= kMaxDrawnRuns) return runs;
    // Thousands of QLineSeries (each with its legend marker) take Qt Charts minutes to lay out:
    // draw an even sample that covers the whole sweep, and say so (info label, title).
    QList<int> sample;
    const double stride = double(runs.size()) / kMaxDrawnRuns;
    for (int k = 0; k < kMaxDrawnRuns; ++k) sample << runs[int(k * stride)];
    return sample;
}

int LossChartView::runsWithCurves() const
{
    int n = 0;
    for (int i = 0; i < m_model->runCount(); ++i) {
        const auto &r = m_model->run(i).result;
        n += !r.train.empty() || !r.test.empty();
    }
    return n;
}

void LossChartView::addGhosts(std::vector<Ghost> more, const std::set<std::string> &current)
{
    std::set<std::string> replaced = current;
    for (const auto &g : more) replaced.insert(g.key);
    std::vector<Ghost> kept;
    for (auto &g : m_ghostData)
        if (g.key.empty() || !replaced.count(g.key)) kept.push_back(std::move(g));
    for (auto &g : more) kept.push_back(std::move(g));
    setGhosts(std::move(kept));
}

std::set<std::string> LossChartView::ghostKeys() const
{
    std::set<std::string> out;
    for (const auto &g : m_ghostData) out.insert(g.key);
    return out;
}

void LossChartView::setGhosts(std::vector<Ghost> ghosts)
{
    // Detached now, deleted once control is back in the event loop: nothing that draws or
    // dispatches this frame holds a deleted series.
    for (auto *line : m_ghosts) {
        retireSeries(m_chart, line);
    }
    m_ghosts.clear();
    m_ghostData = std::move(ghosts);
    for (const auto &ghost : m_ghostData) {
        auto *line = new QLineSeries();
        QList<QPointF> points;
        for (const auto &p : ghost.test)
            if (std::isfinite(p.value)) points << QPointF(double(p.step), p.value);
        line->replace(points);
        line->setProperty("colour", ghost.colour);
        line->setProperty("label", ghost.label);
        line->setProperty("group", ghost.group);
        m_chart->addSeries(line);
        attach(line);
        m_ghosts.push_back(line);
    }
    styleGhosts();
}

void LossChartView::styleGhosts()
{
    // Faint and thin; one legend entry per group (their η), a dash each where there are several.
    QStringList groups;
    for (auto *ghost : m_ghosts)
        if (const QString g = ghost->property("group").toString(); !groups.contains(g)) groups << g;
    QSet<QString> named;
    for (auto *ghost : m_ghosts) {
        const QString group = ghost->property("group").toString();
        QColor c = m_theme.seriesColor(ghost->property("colour").toInt());
        c.setAlphaF(0.3f);
        QPen pen(c, m_theme.line(1.8));
        if (groups.size() > 1) pen.setStyle(kDashes[groups.indexOf(group) % 5]);
        ghost->setPen(pen);
        const bool first = !named.contains(group);
        named.insert(group);
        ghost->setName(!first            ? QString()
                       : group.isEmpty() ? tr("earlier runs (faint)")
                                         : tr("earlier, %1 (faint)").arg(group));
        for (auto *m : m_chart->legend()->markers(ghost)) m->setVisible(first);
    }
    if (!m_ghosts.empty()) m_chart->legend()->setVisible(true);
}

void LossChartView::attach(QAbstractSeries *series)
{
    if (m_axisX) series->attachAxis(m_axisX);
    if (m_axisY) series->attachAxis(m_axisY);
}

void LossChartView::rebuildAxes()
{
    retireAllAxes(m_chart);
    m_axisX = makeValueAxis(m_logX->isChecked(), 10, "%.0f");
    m_axisY = makeValueAxis(m_logY->isChecked(), 10, "%.2f");
    m_axisX->setTitleText(tr("step"));
    const QString unit = lossUnit(m_model->session());
    m_axisY->setTitleText(m_digits->isChecked() && !groups().curves.empty()
                              ? tr("test loss per %1 (%2)").arg(groups().word, unit)
                              : tr("loss (%1)").arg(unit));
    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);
    for (auto *s : m_chart->series()) attach(s);
    m_theme.apply(m_axisX);
    m_theme.apply(m_axisY);
    m_axesDirty = false;
}

LossChartView::Groups LossChartView::groups() const
{
    Groups g;
    const TaskConfig &task = m_model->session().base.task;
    const TaskSpec *spec = findTaskSpec(task.kind);
    if (!spec || spec->groupCurvePrefix.empty() || !spec->groups) return g;
    const std::vector<std::string> names = spec->groups(task);
    for (size_t i = 0; i < names.size(); ++i) {
        g.curves.push_back(spec->groupCurvePrefix + std::to_string(i));
        g.names << QString::fromStdString(names[i]);
    }
    g.word = QString::fromStdString(spec->groupWord);
    return g;
}

QLineSeries *LossChartView::seriesFor(int run, int kindKey)
{
    auto key = std::make_pair(run, kindKey);
    auto it = m_series.find(key);
    if (it != m_series.end()) return it->second;
    auto *s = new QLineSeries();
    m_chart->addSeries(s);
    attach(s);
    m_series[key] = s;
    m_stylesDirty = true;
    return s;
}

void LossChartView::updatePlateaus(double xMin, double xMax)
{
    // The task's plateau lines (TaskSpec::plateaus), labelled at the right.
    const TaskConfig &task = m_model->session().base.task;
    const TaskSpec *spec = findTaskSpec(task.kind);
    const std::vector<PlateauLine> lines =
        spec && spec->plateaus ? spec->plateaus(task) : std::vector<PlateauLine>{};
    while (m_plateauLines.size() < qsizetype(lines.size())) {
        auto *line = new QLineSeries();
        m_chart->addSeries(line);
        attach(line);
        m_plateauLines << line;
        auto *label = new QScatterSeries();
        label->setName(QString());
        label->setMarkerSize(1);
        label->setPointLabelsVisible(true);
        label->setPointLabelsClipping(false);
        m_chart->addSeries(label);
        attach(label);
        m_plateauLabels << label;
        m_stylesDirty = true;
    }
    for (qsizetype k = 0; k < m_plateauLines.size(); ++k) {
        const bool shown = k < qsizetype(lines.size());
        m_plateauLines[k]->setVisible(shown);
        m_plateauLabels[k]->setVisible(shown);
        if (!shown) continue;
        const QString label = QString::fromStdString(lines[size_t(k)].label);
        if (m_plateauLines[k]->name() != label) {
            m_plateauLines[k]->setName(label);
            m_plateauLabels[k]->setPointLabelsFormat(label);
        }
        const double y = lines[size_t(k)].loss;
        m_plateauLines[k]->replace(QList<QPointF>{{xMin, y}, {xMax, y}});
        const double xl = m_logX->isChecked()
                              ? std::exp(std::log(xMin) + 0.9 * (std::log(xMax) - std::log(xMin)))
                              : xMin + 0.93 * (xMax - xMin);
        m_plateauLabels[k]->replace(QList<QPointF>{{xl, y}});
    }
}

void LossChartView::updatePhaseMarks(const QList<int> &runs, double yMin, double yMax)
{
    // Phase boundaries of the first run shown (a sweep's runs share their phases): the train
    // curve changes objective there (e.g. language warm-up, then answer-only).
    QList<std::pair<double, QString>> marks;
    if (!runs.isEmpty()) {
        const RunConfig &config = m_model->run(runs.first()).config;
        const std::vector<int64_t> starts = config.phaseStarts();
        for (size_t k = 1; k < starts.size(); ++k)
            if (starts[k] > 0)
                marks << std::make_pair(double(starts[k]),
                                        QString::fromStdString(config.phases[k].name));
    }
    while (m_phaseLines.size() < marks.size()) {
        auto *line = new QLineSeries();
        m_chart->addSeries(line);
        attach(line);
        auto *label = new QScatterSeries();
        label->setMarkerSize(1);
        label->setPointLabelsVisible(true);
        label->setPointLabelsClipping(false);
        m_chart->addSeries(label);
        attach(label);
        m_phaseLines << line;
        m_phaseLabels << label;
    }
    for (int k = 0; k < m_phaseLines.size(); ++k) {
        const bool used = k < marks.size();
        m_phaseLines[k]->setVisible(used);
        m_phaseLabels[k]->setVisible(used);
        for (auto *m : m_chart->legend()->markers(m_phaseLines[k])) m->setVisible(false);
        for (auto *m : m_chart->legend()->markers(m_phaseLabels[k])) m->setVisible(false);
        if (!used) continue;
        const double x = marks[k].first;
        m_phaseLines[k]->setPen(QPen(m_theme.muted, m_theme.line(1.0), Qt::DotLine));
        m_phaseLines[k]->replace(QList<QPointF>{{x, yMin}, {x, yMax}});
        m_phaseLabels[k]->setPen(Qt::NoPen);
        m_phaseLabels[k]->setBrush(Qt::transparent);
        m_phaseLabels[k]->setPointLabelsColor(m_theme.muted);
        m_phaseLabels[k]->setPointLabelsFont(m_theme.font(8.5));
        m_phaseLabels[k]->setPointLabelsFormat(QStringLiteral("%1 →").arg(marks[k].second));
        m_phaseLabels[k]->replace(QList<QPointF>{{x, yMin + 0.93 * (yMax - yMin)}});
    }
}

void LossChartView::refresh()
{
    if (m_axesDirty) rebuildAxes();
    const bool logX = m_logX->isChecked(), logY = m_logY->isChecked();
    const Groups groupCurves = groups();
    // The per-group view is the task's (the addition task's digits); hidden for tasks without.
    m_digits->setVisible(!groupCurves.curves.empty());
    if (!groupCurves.curves.empty()) {
        m_digits->setText(tr("Per-%1 test loss").arg(groupCurves.word));
        m_digits->setToolTip(
            tr("Test loss of each %1: %2").arg(groupCurves.word, groupCurves.names.join(", ")));
    }
    const bool digits = m_digits->isChecked() && !groupCurves.curves.empty();
    const double smoothing = m_smoothing->value() / 100.0;
    const Session &session = m_model->session();
    m_groups = groupReplicates(session);
    updateColourChoices(session);
    const bool median = medianMode();
    m_median->setVisible(std::any_of(m_groups.begin(), m_groups.end(),
                                     [](const ReplicateGroup &g) { return g.runs.size() > 1; }));
    const QList<int> runs = median ? QList<int>() : displayedRuns();

    // Which series are wanted this frame.
    Frame f;
    collectRunCurves(runs, digits, groupCurves, smoothing, f);
    if (median) collectMedians(f);
    updateBands(f, logX);
    dropUnwanted(f);
    double xMax = f.xMax, yMax = 0, yMinPositive = f.yMinPositive;
    const std::vector<double> &plotted = f.plotted;
    const auto &wanted = f.wanted;

    const double xMin = logX ? 1.0 : 0.0;
    CurveView view;
    view.logX = logX;
    view.logY = logY;
    view.xMin = xMin;
    view.xMax = xMax;
    // About two points per pixel, but at most kPointBudget points in all: 4,000 curves of a
    // 2,000-run sweep at full resolution were 1.2 million points and a 109 MB SVG.
    view.buckets = std::clamp(int(kPointBudget / 2 / std::max<size_t>(1, wanted.size())), 25,
                              std::max(100, int(m_chart->plotArea().width())));
    for (const auto &[key, curve] : wanted)
        seriesFor(key.first, key.second)->replace(CurveDecimator::decimate(*curve, view));

    if (m_stylesDirty) styleSeries(runs.size() == 1, smoothing);
    updatePlateaus(logX ? 1.0 : 0.0, xMax);
    for (auto *m : m_chart->legend()->markers()) {
        // New plateau series get markers after the style pass; keep them hidden.
        if (m_plateauLines.contains(static_cast<QLineSeries *>(m->series())) ||
            m_plateauLabels.contains(static_cast<QScatterSeries *>(m->series())))
            m->setVisible(false);
    }

    // Loss axes show at least the task's loss at initialisation (ln 22 for addition).
    const double initial = initialLossOf(m_model->session());
    const RobustRange range =
        robustTop(plotted, initial > 0 ? initial : 1.0, m_fullRange->isChecked());
    yMax = range.top;
    m_outliers = range.above;
    if (yMax <= 0) yMax = initial > 0 ? initial : 1.0;
    yMax = std::max(yMax, initial);
    setAxisRange(m_axisX, xMin, std::max(xMax, xMin + 1));
    double yLo = 0.0, yHi = yMax * 1.05;
    if (logY) {
        if (yMinPositive > yMax) yMinPositive = 1e-3;
        yLo = std::max(1e-6, yMinPositive * 0.8);
        yHi = yMax * 1.25;
    }
    setAxisRange(m_axisY, yLo, yHi);
    if (logY) std::tie(yLo, yHi) = decadeRange(yLo, yHi); // as the axis widened them
    updatePhaseMarks(median && !m_groups.empty() ? QList<int>{m_groups.front().runs.front()} : runs,
                     yLo, yHi);
    styleGhosts();
    m_chart->setTitle(title());
    updateInfo(median, runs, f.medians.size());
}

// The colour-by choices: "each run" and every swept axis; by default the session's colour axis.
void LossChartView::updateColourChoices(const Session &session)
{
    const QStringList axes = sweptAxes(session);
    if (axes != m_colourAxes || m_pendingColourBy != QStringLiteral("\x01")) {
        const QSignalBlocker block(m_colourBy);
        const QString current = m_pendingColourBy != QStringLiteral("\x01") ? m_pendingColourBy
                                : m_colourAxes.isEmpty()                    ? QStringLiteral("\x01")
                                                         : m_colourBy->currentData().toString();
        m_colourAxes = axes;
        m_pendingColourBy = QStringLiteral("\x01");
        m_colourBy->clear();
        m_colourBy->addItem(tr("each run"), QString());
        for (const auto &a : axes) m_colourBy->addItem(a, a);
        // By default the session's colour axis (heads, when swept): its colours are every figure's.
        const QString want = current == QStringLiteral("\x01")
                                 ? QString::fromStdString(colourTable(session).axis)
                                 : current;
        const int i = m_colourBy->findData(want);
        m_colourBy->setCurrentIndex(i >= 0 ? i : 0);
        m_stylesDirty = true;
    }
}

// The curves of the runs drawn: train (raw and smoothed) and test, or each group's test loss.
void LossChartView::collectRunCurves(const QList<int> &runs, bool digits, const Groups &groupCurves,
                                     double smoothing, Frame &f)
{
    for (int i : runs) {
        const auto &run = m_model->run(i);
        const auto &r = run.result;
        f.xMax = std::max<double>(f.xMax, double(run.config.totalSteps()));
        auto want = [&](Kind kind, const Curve *curve, int offset = 0) {
            if (!curve || curve->empty()) return;
            f.wanted[{i, int(kind) + offset}] = curve;
            for (const auto &p : *curve) {
                if (!std::isfinite(p.value)) continue;
                f.xMax = std::max<double>(f.xMax, double(p.step));
                f.plotted.push_back(p.value);
                if (p.value > 0) f.yMinPositive = std::min(f.yMinPositive, p.value);
            }
        };
        if (digits) {
            for (size_t g = 0; g < groupCurves.curves.size(); ++g) {
                auto it = r.extra.find(groupCurves.curves[g]);
                if (it != r.extra.end()) want(Kind(Group + int(g)), &it->second);
            }
        } else {
            if (m_showTrain->isChecked()) {
                // One piece per phase, each smoothed on its own: a smoothing carried over a
                // change of objective would blend the two losses. A run of one phase (most) is
                // drawn from its own curve, without a copy each frame.
                const bool cut = run.config.phases.size() > 1;
                std::vector<Curve> pieces =
                    cut ? CurveDecimator::phasePieces(r.train, run.config.phaseStarts())
                        : std::vector<Curve>();
                for (size_t p = 0; p < std::max<size_t>(1, pieces.size()); ++p) {
                    const int offset = int(p) * kPhaseKey;
                    const Curve *piece = &r.train;
                    if (pieces.size() > 1) {
                        piece = &(f.derived[{i, TrainRaw + offset}] = std::move(pieces[p]));
                        want(TrainRaw, piece, offset);
                    } else {
                        want(TrainRaw, piece);
                    }
                    if (smoothing > 0 && !piece->empty()) {
                        auto &s = f.derived[{i, TrainSmooth + offset}] =
                            CurveDecimator::smooth(*piece, smoothing);
                        f.wanted[{i, TrainSmooth + offset}] = &s;
                    }
                }
            }
            if (m_showTest->isChecked()) want(Test, &r.test);
        }
    }
}

// The median view: per configuration, the median test curve over its replicates and a band.
void LossChartView::collectMedians(Frame &f)
{
    for (size_t g = 0; g < m_groups.size(); ++g) {
        std::vector<const Curve *> curves;
        for (int i : m_groups[g].runs) {
            const auto &run = m_model->run(i);
            f.xMax = std::max<double>(f.xMax, double(run.config.totalSteps()));
            if (!run.result.test.empty()) curves.push_back(&run.result.test);
        }
        if (curves.empty()) continue;
        for (const Curve *c : curves) // every replicate's value counts for the y range
            for (const auto &p : *c)
                if (std::isfinite(p.value)) {
                    f.plotted.push_back(p.value);
                    if (p.value > 0) f.yMinPositive = std::min(f.yMinPositive, p.value);
                }
        Curve &m = f.medians[int(g)];
        auto &[upper, lower] = f.bands[int(g)];
        for (const auto &[step, st] : curveStats(curves)) {
            if (st.count == 0) continue;
            m.push_back({step, st.median});
            const auto [lo, hi] = replicateBand(st);
            upper << QPointF(double(step), hi);
            lower << QPointF(double(step), lo);
            f.xMax = std::max<double>(f.xMax, double(step));
        }
        if (!m.empty()) f.wanted[{kMedianKey + int(g), int(Median)}] = &m;
    }
}

// The bands of the median view: made, refilled or removed as the configurations change.
void LossChartView::updateBands(const Frame &f, bool logX)
{
    for (auto it = m_bands.begin(); it != m_bands.end();) { // bands no longer wanted
        if (!f.bands.count(it->first)) {
            retireSeries(m_chart, it->second);
            it = m_bands.erase(it);
        } else {
            ++it;
        }
    }
    for (const auto &[g, band] : f.bands) {
        auto it = m_bands.find(g);
        if (it == m_bands.end()) {
            auto *upper = new QLineSeries(), *lower = new QLineSeries();
            auto *area = new QAreaSeries(upper, lower);
            upper->setParent(area);
            lower->setParent(area);
            m_chart->addSeries(area);
            attach(area);
            it = m_bands.emplace(g, area).first;
            m_stylesDirty = true;
        }
        QList<QPointF> upper = band.first, lower = band.second;
        if (logX) { // a log axis cannot show step 0
            while (!upper.isEmpty() && upper.front().x() <= 0) upper.removeFirst();
            while (!lower.isEmpty() && lower.front().x() <= 0) lower.removeFirst();
        }
        it->second->upperSeries()->replace(upper);
        it->second->lowerSeries()->replace(lower);
    }
}

// Drops the series no longer wanted.
void LossChartView::dropUnwanted(const Frame &f)
{
    for (auto it = m_series.begin(); it != m_series.end();) {
        if (!f.wanted.count(it->first)) {
            retireSeries(m_chart, it->second);
            it = m_series.erase(it);
            m_stylesDirty = true;
        } else {
            ++it;
        }
    }
}

// Pens, names and legend entries of every series, when what is drawn changed: a configuration's
// median, a run's curves (its colour-by value's colour, its seeds as shades), the plateau lines.
void LossChartView::styleSeries(bool single, double smoothing)
{
    const QStringList groupNames = groups().names;
    // The legend lists series in the chart's order, which is the order they first had data: runs
    // and configurations still training came later. Re-added in key order, the legend lists the
    // colour axis's values by value.
    QList<QAbstractSeries *> inChart = m_chart->series();
    QList<QAbstractSeries *> ordered;
    for (const auto &entry : m_series) ordered << entry.second;
    QList<QAbstractSeries *> present;
    for (auto *series : inChart)
        if (ordered.contains(series)) present << series;
    if (present != ordered)
        for (auto *series : ordered) {
            m_chart->removeSeries(series);
            m_chart->addSeries(series);
            attach(series);
        }
    int legendShown = 0;
    // One pass over the legend: markers(series) scans every marker, once per series.
    QHash<QAbstractSeries *, QList<QLegendMarker *>> markersOf;
    for (auto *m : m_chart->legend()->markers()) markersOf[m->series()].append(m);
    QSet<int> coloursNamed; // the colour-by values the legend already lists
    const QStringList colours = colourValues();
    const std::string dash = dashAxis();
    const QStringList dashValues =
        dash.empty() ? QStringList() : axisValueLabels(m_model->session(), dash);
    QSet<int> dashesUsed; // the dash axis's values drawn
    auto dashIndexOf = [&](const std::map<std::string, std::string> &labels) {
        const auto it = labels.find(dash);
        return dash.empty() || it == labels.end()
                   ? -1
                   : int(dashValues.indexOf(QString::fromStdString(it->second)));
    };
    bool drewTrain = false, drewTest = false; // of several runs: their line weights need a key
    for (const auto &[key, s] : m_series) {
        const int run = key.first;
        const Kind kind = Kind(key.second % kPhaseKey);
        const bool laterPhase = key.second >= kPhaseKey; // its phase 0 carries the name
        QString colourName;
        if (run < 0) { // a configuration's median over its replicates
            const auto &g = m_groups[size_t(run - kMedianKey)];
            const int ci = colourIndexOf(g.labels, colours, &colourName);
            QColor c = m_theme.seriesColor(ci >= 0 ? ci : run - kMedianKey);
            QPen pen(c, m_theme.line(2.2));
            pen.setCapStyle(Qt::RoundCap);
            if (const int di = dashIndexOf(g.labels); di >= 0) {
                pen.setStyle(kDashes[di % 5]);
                dashesUsed.insert(di);
            }
            s->setPen(pen);
            QString name;
            if (ci < 0) {
                QStringList parts;
                for (const auto &[axis, value] : g.labels)
                    parts << axisValueText(axis, QString::fromStdString(value));
                name = parts.join(QStringLiteral(", "));
            } else if (!coloursNamed.contains(ci)) {
                coloursNamed.insert(ci);
                name = colourName;
            }
            s->setName(name);
            if (auto band = m_bands.find(run - kMedianKey); band != m_bands.end()) {
                QColor fill = c; // fainter the more bands overlap
                fill.setAlphaF(float(
                    std::clamp(1.2 / double(std::max<size_t>(1, m_bands.size())), 0.05, 0.16)));
                band->second->setBrush(fill);
                band->second->setPen(Qt::NoPen);
                for (auto *m : markersOf.value(band->second)) m->setVisible(false);
            }
            const bool show = !name.isEmpty() && legendShown < kLegendMax;
            if (show) ++legendShown;
            for (auto *m : markersOf.value(s)) m->setVisible(show);
            continue;
        }
        const int colourIndex = colourIndexOf(m_model->run(run).labels, colours, &colourName);
        QColor c = m_theme.seriesColor(colourIndex >= 0 ? colourIndex : run);
        if (colourIndex >= 0) // the seeds of one colour as shades of it
            c = shadedColour(c, replicateShade(m_model->session(), m_model->run(run)), m_theme.dark,
                             25);
        QPen pen(c);
        pen.setCapStyle(Qt::RoundCap);
        QString label = runLabel(m_model->session(), m_model->run(run));
        // The one series of a run that carries its name in the legend: its test curve (its
        // first group's in the per-group view). The legend lists the colour axis's values once
        // each; the slot was taken by the run's train curve, which shows no name, so with
        // several runs the legend stayed empty.
        const bool carriesName = kind == Test || kind == Group;
        if (colourIndex >= 0 && !single && carriesName) {
            label = coloursNamed.contains(colourIndex) ? QString() : colourName;
            coloursNamed.insert(colourIndex);
        }
        QString name = runSeriesStyle(kind, single, smoothing, run, label, groupNames, pen);
        if (laterPhase) name.clear();
        if (!single && s->isVisible() && s->count() > 0) {
            drewTrain |= kind == TrainRaw || kind == TrainSmooth;
            drewTest |= kind == Test;
        }
        // The dash axis's value, except where dashes already tell a run's digit groups apart.
        if (const int di = dashIndexOf(m_model->run(run).labels); di >= 0 && kind < Group) {
            pen.setStyle(kDashes[di % 5]);
            dashesUsed.insert(di);
        }
        s->setPen(pen);
        s->setName(name);
        const auto markers = markersOf.value(s);
        const bool show = !name.isEmpty() && legendShown < kLegendMax;
        if (show) ++legendShown;
        for (auto *m : markers) m->setVisible(show);
    }
    updateKeys(dash, dashValues, dashesUsed, drewTrain && drewTest, legendShown);
    stylePlateauLines();
    m_theme.apply(m_chart);
    m_chart->legend()->setVisible(legendShown > 0);
    m_stylesDirty = false;
}

std::string LossChartView::dashAxis() const
{
    const Session &session = m_model->session();
    const std::string colour = m_colourBy->currentData().toString().toStdString();
    const std::vector<std::string> replicates = replicateAxes(session);
    for (const QString &name : sweptAxes(session)) {
        const std::string axis = name.toStdString();
        if (axis == colour ||
            std::find(replicates.begin(), replicates.end(), axis) != replicates.end())
            continue;
        const auto n = axisValueLabels(session, axis).size();
        if (n >= 2 && n <= 5) return axis;
    }
    return {};
}

// The legend's keys, empty series in the text colour: one per value of the dash axis (with its
// dash), and, where several runs draw both, "test" thick and "train" thin in the curves' weights.
void LossChartView::updateKeys(const std::string &axis, const QStringList &values,
                               const QSet<int> &used, bool weights, int &legendShown)
{
    for (auto *key : m_keys) {
        retireSeries(m_chart, key);
    }
    m_keys.clear();
    auto addKey = [&](const QString &name, const QPen &pen) {
        auto *key = new QLineSeries();
        key->setName(name);
        key->setPen(pen);
        m_chart->addSeries(key);
        attach(key);
        m_keys << key;
        ++legendShown;
    };
    if (weights) {
        addKey(tr("test (thick)"), QPen(m_theme.foreground, m_theme.line(2.4)));
        addKey(tr("train (thin)"), QPen(m_theme.foreground, m_theme.line(1.0)));
    }
    if (axis.empty() || used.size() < 2) return; // one dash drawn tells nothing apart
    for (int i = 0; i < values.size(); ++i) {
        if (!used.contains(i)) continue;
        // Thinner than the curves: a dash scales with the pen, and the legend's short segment
        // must hold at least one gap of it, in presenter mode too.
        addKey(axisValueText(axis, values[i]),
               QPen(m_theme.foreground, m_theme.line(0.8), kDashes[i % 5]));
    }
}

// A run's series: its pen (width and dash by kind, the colour it was given) and the legend name
// it carries ("" for none).
QString LossChartView::runSeriesStyle(Kind kind, bool single, double smoothing, int run,
                                      const QString &label, const QStringList &groupNames,
                                      QPen &pen) const
{
    QColor c = pen.color();
    QString name;
    switch (kind) {
    case TrainRaw:
        if (smoothing > 0) c.setAlphaF(0.28f);
        pen.setColor(single && smoothing <= 0 ? c.darker(100) : c);
        pen.setWidthF(m_theme.line(smoothing > 0 ? 1.0 : 1.4));
        name = single ? tr("train") : QString();
        break;
    case TrainSmooth:
        pen.setWidthF(m_theme.line(1.6));
        name = single ? tr("train (smoothed)") : QString();
        break;
    case Test:
        pen.setWidthF(m_theme.line(2.4));
        if (single) pen.setColor(m_theme.seriesColor(run + 1));
        name = single ? tr("test") : label;
        break;
    case Median:
        break;
    default: { // a group's test loss: a colour each for one run, a dash each for several
        const int d = kind - Group;
        if (single)
            pen.setColor(m_theme.seriesColor(d));
        else
            pen.setStyle(kDashes[d % 5]);
        pen.setWidthF(m_theme.line(2.0));
        const QString groupName = d < groupNames.size() ? groupNames[d] : QString::number(d);
        name = single ? groupName : (d == 0 ? label : QString());
        break;
    }
    }
    return name;
}

// The plateau lines (dashed, muted) and their labels (bold, over every curve); not in the legend.
void LossChartView::stylePlateauLines()
{
    for (int k = 0; k < m_plateauLines.size(); ++k) {
        QPen pen(m_theme.muted, m_theme.line(1.2), Qt::DashLine);
        m_plateauLines[k]->setPen(pen);
        m_plateauLabels[k]->setPen(Qt::NoPen);
        m_plateauLabels[k]->setBrush(Qt::transparent);
        // Legible over many curves: the foreground colour, bold, drawn after every curve.
        m_plateauLabels[k]->setPointLabelsColor(m_theme.foreground);
        QFont font = m_theme.font(9);
        font.setBold(true);
        m_plateauLabels[k]->setPointLabelsFont(font);
        m_chart->removeSeries(m_plateauLabels[k]);
        m_chart->addSeries(m_plateauLabels[k]);
        attach(m_plateauLabels[k]);
        for (auto *m : m_chart->legend()->markers(m_plateauLines[k])) m->setVisible(false);
        for (auto *m : m_chart->legend()->markers(m_plateauLabels[k])) m->setVisible(false);
    }
}

// The line under the chart: what is drawn, and how much is not.
void LossChartView::updateInfo(bool median, const QList<int> &runs, size_t configurations)
{
    if (median)
        m_info->setText(
            tr("median and band over the seeds of %n configuration(s) — select rows to see runs",
               "", int(configurations)));
    else if (!m_showError.isEmpty())
        m_info->setText(tr("show: %1").arg(m_showError));
    else if (!shown().isEmpty())
        m_info->setText(tr("%n run(s) by '%1'", "", int(runs.size())).arg(shown()));
    else if (m_selected.isEmpty())
        m_info->setText(runs.isEmpty()
                            ? tr("no data yet")
                            : tr("%n run(s) — select rows to focus", "", int(runs.size())));
    else
        m_info->setText(tr("%n selected run(s)", "", int(runs.size())));
    if (m_outliers > 0)
        m_info->setText(m_info->text() + tr(" · %n point(s) above the range", "", m_outliers));
    if (m_selected.isEmpty() && runs.size() == kMaxDrawnRuns) {
        const int all = runsWithCurves();
        if (all > kMaxDrawnRuns) {
            m_info->setText(tr("%1 of %2 runs drawn, an even sample — select rows to see others")
                                .arg(kMaxDrawnRuns)
                                .arg(all));
            m_chart->setTitle(tr("%1 (%2 of %3 runs)").arg(title()).arg(kMaxDrawnRuns).arg(all));
        }
    }
}

QString LossChartView::csv() const
{
    if (medianMode()) { // what is drawn: per configuration, the median test curve and its band
        QString out = QStringLiteral("configuration,curve,step,value,replicates\n");
        for (size_t g = 0; g < m_groups.size(); ++g) {
            QStringList parts;
            for (const auto &[axis, value] : m_groups[g].labels)
                parts << QString::fromStdString(axis) + "=" + QString::fromStdString(value);
            std::vector<const Curve *> curves;
            for (int i : m_groups[g].runs) curves.push_back(&m_model->run(i).result.test);
            for (const auto &[step, st] : curveStats(curves)) {
                if (st.count == 0) continue;
                const auto [lo, hi] = replicateBand(st);
                for (const auto &[curve, v] :
                     {std::make_pair("test_median", st.median), std::make_pair("band_low", lo),
                      std::make_pair("band_high", hi)})
                    out += QStringLiteral("%1,%2,%3,%4,%5\n")
                               .arg(csvCell(parts.join(' ')), QString::fromLatin1(curve))
                               .arg(step)
                               .arg(v, 0, 'g', 10)
                               .arg(st.count);
            }
        }
        return out;
    }
    QString out = QStringLiteral("run,label,curve,step,value\n");
    const Groups groupCurves = groups();
    const bool digits = m_digits->isChecked() && !groupCurves.curves.empty();
    for (int i : displayedRuns()) {
        const auto &run = m_model->run(i);
        const QString label = csvCell(runLabel(m_model->session(), run));
        auto write = [&](const QString &name, const Curve &curve) {
            for (const auto &p : curve)
                out += QStringLiteral("%1,%2,%3,%4,%5\n")
                           .arg(i)
                           .arg(label, csvCell(name))
                           .arg(p.step)
                           .arg(p.value, 0, 'g', 10);
        };
        if (digits) {
            for (const auto &d : groupCurves.curves) {
                auto it = run.result.extra.find(d);
                if (it != run.result.extra.end()) write(QString::fromStdString(d), it->second);
            }
        } else {
            write(QStringLiteral("train"), run.result.train);
            write(QStringLiteral("test"), run.result.test);
        }
    }
    return out;
}

FigureView::Pooling LossChartView::pooling() const
{
    Pooling out;
    if (!medianMode()) return out;
    for (const auto &g : m_groups) out.groups.emplace_back(g.runs.begin(), g.runs.end());
    return out;
}

} // namespace headlab::ui
