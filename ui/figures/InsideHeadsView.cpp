// InsideHeadsView.cpp — attention maps, head statistics, importance and pruning of one run.
#include "ui/figures/InsideHeadsView.h"
#include "ui/model/CsvCell.h"

#include "ui/model/AxisRange.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include "core/lab/SweepSession.h"
#include "core/metrics/Metrics.h"
#include "core/metrics/PlateauDetector.h"
#include "core/schema/TaskSpec.h"
#include "core/session/SessionStore.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace headlab::ui {

class InsideHeadsCanvas : public QWidget {
public:
    explicit InsideHeadsCanvas(InsideHeadsView *view)
        : QWidget(view)
        , m_view(view)
    {
        setMinimumSize(480, 360);
        setMouseTracking(true);
    }

protected:
    void mouseMoveEvent(QMouseEvent *e) override
    {
        const QString text = m_view->hoverText(e->position());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(e->globalPosition().toPoint(), text, this);
    }
    void paintEvent(QPaintEvent *) override
    {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        m_view->m_theme.dark ? p.fillRect(rect(), m_view->m_theme.background)
                             : p.fillRect(rect(), m_view->m_theme.background);
        paint(p, QRectF(rect()));
    }

private:
    InsideHeadsView *m_view;
    void paint(QPainter &p, const QRectF &area) const;
    void paintMaps(QPainter &p, const QRectF &area) const;
    void paintFocusRows(QPainter &p, const QRectF &band, double rowHeight, double labelBand) const;
    void paintStatistics(QPainter &p, const QRectF &area) const;
    void paintImportance(QPainter &p, const QRectF &area) const;
    void paintPruning(QPainter &p, const QRectF &area) const;
    void paintTitle(QPainter &p, const QRectF &area, const QString &text) const;
    // Draws a label and notes the box it took (InsideHeadsView::drawnLabels).
    void label(QPainter &p, const QRectF &box, int flags, const QString &text) const
    {
        QRectF drawn;
        p.drawText(box, flags, text, &drawn);
        m_view->m_drawnLabels.push_back(
            {p.transform().mapRect(drawn), text, p.transform().mapRect(box)});
    }
    void paintAxes(QPainter &p, const QRectF &plot, double x0, double x1, double y0, double y1,
                   const QString &xLabel, const QString &yLabel) const;
    // The plot inside `area` that leaves room, measured in the theme's fonts, for the title
    // and `legendRows` rows of legend above it and the axes' numbers and titles beside it.
    QRectF plotArea(const QRectF &area, int legendRows) const;
};

namespace {

QString statTitle(const QString &name)
{
    for (const auto &s : headStatTable())
        if (name == s.name) return QString::fromUtf8(s.title);
    return name;
}

} // namespace

InsideHeadsView::InsideHeadsView(SessionModel *model, QWidget *parent)
    : FigureView(model, parent)
    , m_mailbox(new Mailbox(this))
{
    auto *row = controlsLayout();
    // Which run: the run table's selection sets it, and so does this box, which presenter mode
    // keeps while it hides the run table (issue 52 item 6).
    row->addWidget(new QLabel(tr("Run")));
    m_runPicker = new QComboBox;
    m_runPicker->setObjectName(QStringLiteral("insideRun"));
    m_runPicker->setMinimumWidth(140);
    m_runPicker->setToolTip(tr("The run whose heads are shown (as selecting it in the run table)"));
    row->addWidget(m_runPicker, 1);
    connect(m_runPicker, &QComboBox::activated, this, [this](int index) {
        if (index >= 0 && index < m_model->runCount()) Q_EMIT runsActivated({index});
    });
    row->addWidget(new QLabel(tr("Input")));
    m_input = new QLineEdit;
    // Its tooltip says what an input of the session's task is (refresh: from the task's row).
    m_input->setMinimumWidth(160);
    row->addWidget(m_input, 2);
    m_prediction = new QLabel;
    m_prediction->setToolTip(
        tr("The model's most probable output at the framed position, with its probability"));
    m_prediction->setTextFormat(Qt::PlainText);
    row->addWidget(m_prediction);
    row->addWidget(new QLabel(tr("Step")));
    m_slider = new QSlider(Qt::Horizontal);
    m_slider->setToolTip(
        tr("Scrub through the run's checkpoints; the right end is live while it trains"));
    m_slider->setMinimumWidth(140); // never squeezed to nothing by the row's other controls
    row->addWidget(m_slider, 3);
    m_stepLabel = new QLabel;
    m_stepLabel->setMinimumWidth(110);
    row->addWidget(m_stepLabel);
    m_keep = new QCheckBox(tr("Keep"));
    m_keep->setToolTip(tr("Keep this checkpoint when checkpoints are pruned (File ▸ Prune "
                          "checkpoints, the session's disk budget, `headlab-cli prune`); for "
                          "finished runs"));
    row->addWidget(m_keep);
    m_diskLabel = new QLabel;
    m_diskLabel->setToolTip(
        tr("Disk used by checkpoints: this run's, and the whole session's (the session's "
           "`checkpoints:` keep setting bounds it)"));
    row->addWidget(m_diskLabel);
    m_stat = new QComboBox;
    for (const auto &s : headStatTable())
        m_stat->addItem(QString::fromUtf8(s.title), QString::fromUtf8(s.name));
    m_stat->setToolTip(tr("The per-head statistic drawn against step"));
    row->addWidget(m_stat);
    m_mode = new QComboBox;
    for (const auto &mode : ablationModeTable())
        m_mode->addItem(tr(mode.label), QString::fromUtf8(mode.name));
    m_mode->setToolTip(tr("What a removed head outputs in the ablation and pruning"));
    row->addWidget(m_mode);
    m_ablate = new QPushButton(tr("Ablate"));
    m_ablate->setToolTip(tr("Remove each head in turn at this checkpoint, then prune in each "
                            "order (gradient importance, single-shot, greedy, three random), "
                            "one head kept per layer"));
    row->addWidget(m_ablate);
    m_retrain = new QCheckBox(tr("with retraining"));
    {
        const PruningDefaults r;
        m_retrain->setToolTip(
            tr("Ablate also fine-tunes each model of the gradient order's curve for %1 steps, "
               "trains the surviving heads from scratch at %2 counts (the control), and learns L0 "
               "gates at %3 values of λ: minutes on a CPU for a small model")
                .arg(r.fineTuneSteps)
                .arg(r.scratchPoints)
                .arg(r.lambdas.size()));
    }
    row->addWidget(m_retrain);
    m_canvasWidget = new InsideHeadsCanvas(this);
    setCanvas(m_canvasWidget);

    connect(m_input, &QLineEdit::editingFinished, this, [this] {
        updateMaps();
        Q_EMIT viewStateChanged();
    });
    connect(m_slider, &QSlider::valueChanged, this, [this](int v) {
        m_followLive = v == m_slider->maximum() && m_model->liveAttention(m_run);
        updateMaps();
    });
    connect(m_stat, &QComboBox::currentIndexChanged, this, [this] {
        m_canvasWidget->update();
        Q_EMIT viewStateChanged();
    });
    connect(m_ablate, &QPushButton::clicked, this, &InsideHeadsView::runAblation);
    connect(m_keep, &QCheckBox::clicked, this, [this](bool keep) {
        if (!setKeepShown(keep)) {
            const QSignalBlocker block(m_keep);
            m_keep->setChecked(!keep);
            QMessageBox::warning(this, tr("Keep checkpoint"), m_message);
        }
    });
    reloadRun();
}

InsideHeadsView::~InsideHeadsView()
{
    if (m_cancel) m_cancel->store(true);
    if (m_worker.joinable()) m_worker.join();
}

QString InsideHeadsView::title() const
{
    if (m_run < 0) return tr("Inside the heads");
    // Counted as the run table counts its rows (from 1; issue 50: "run 3" was row 4).
    return tr("Inside the heads — run %1").arg(m_run + 1);
}

QString InsideHeadsView::storePath() const
{
    return m_model->storePath();
}

void InsideHeadsView::selectionChanged()
{
    reloadRun();
}

// On another tab: the run it will show, its run box and the live maps' request follow now, so
// that a running run's maps are on their way when the tab is shown; its checkpoints are read then
// (FigureView::ensureCurrent). Reading them at every click took 190 ms a row of a 5-layer model.
void InsideHeadsView::selectionChangedWhileHidden()
{
    const int run = m_selected.isEmpty() ? -1 : m_selected.front();
    if (run < 0 || run >= m_model->runCount()) return; // the reload chooses one when shown
    m_runChangedWhileHidden = m_runChangedWhileHidden || run != m_run;
    m_run = run;
    if (run < m_runPicker->count()) {
        const QSignalBlocker block(m_runPicker);
        m_runPicker->setCurrentIndex(run);
    }
    const bool live = !isFinished(m_model->run(run).result.status);
    m_model->setAttentionRequest(live ? run : -1, m_input->text());
}

void InsideHeadsView::reloadRun()
{
    // The first selected run, else the first run that has checkpoints, else the first running one.
    const QString path = storePath();
    auto checkpointsOf = [&](int run) {
        if (path.isEmpty() || run < 0 || run >= m_model->runCount())
            return std::vector<CheckpointInfo>{};
        // Headers only: this runs at every refresh; HeadInspector verifies the one it loads.
        auto list = listCheckpoints(checkpointDirFor(path.toStdString(), m_model->run(run).config),
                                    nullptr, false);
        std::reverse(list.begin(), list.end());
        return list;
    };
    int run = m_selected.isEmpty() ? -1 : m_selected.front();
    if (run < 0)
        for (int i = 0; i < m_model->runCount() && run < 0; ++i)
            if (!checkpointsOf(i).empty() || m_model->liveAttention(i)) run = i;
    if (run < 0 && m_model->runCount() > 0) run = 0;
    const bool changed = run != m_run || std::exchange(m_runChangedWhileHidden, false);
    m_run = run;
    // The picker lists every run ("3: d_model=24 heads=12 seed=1"), the shown one current.
    {
        const QSignalBlocker block(m_runPicker);
        // Rebuilt when the runs change (another session, a new sweep), not on every frame.
        const int n = m_model->runCount();
        const QString key =
            QStringLiteral("%1|%2|%3")
                .arg(QString::fromStdString(m_model->session().name))
                .arg(n)
                .arg(n > 0 ? runLabel(m_model->session(), m_model->run(n - 1)) : QString());
        if (key != m_pickerKey) {
            m_pickerKey = key;
            m_runPicker->clear();
            for (int i = 0; i < m_model->runCount(); ++i)
                m_runPicker->addItem(QStringLiteral("%1: %2").arg(i + 1).arg(
                    runLabel(m_model->session(), m_model->run(i))));
        }
        m_runPicker->setCurrentIndex(run);
    }
    m_headCount = 1;
    if (run >= 0) {
        const auto &model = m_model->run(run).config.model;
        for (auto h : model.heads)
            m_headCount =
                std::max(m_headCount, int(h * std::max<int64_t>(1, model.widthMultiplier)));
    }
    m_checkpoints = checkpointsOf(run);
    if (changed) {
        m_ablation.clear();
        m_pruning.clear();
        m_ablationStep = -1;
        m_followLive = true;
    }
    if (changed ||
        m_checkpoints.size() != m_diskCounted) { // disk use, recounted when the list changes
        m_diskCounted = m_checkpoints.size();
        uint64_t run = 0;
        for (const auto &c : m_checkpoints) run += c.bytes;
        const double session =
            path.isEmpty()
                ? 0.0
                : double(directoryBytes(resultsDirFor(path.toStdString()) + "/checkpoints"));
        m_diskLabel->setText(tr("%1 checkpoints, %2 MB · session %3 MB")
                                 .arg(m_checkpoints.size())
                                 .arg(double(run) / 1e6, 0, 'f', 1)
                                 .arg(session / 1e6, 0, 'f', 1));
    }
    const bool live = m_run >= 0 && !isFinished(m_model->run(m_run).result.status);
    const int maximum = int(m_checkpoints.size()) - (live ? 0 : 1);
    const QSignalBlocker block(m_slider);
    m_slider->setRange(0, std::max(0, maximum));
    if (changed || m_followLive) m_slider->setValue(m_slider->maximum());
    if (const TaskSpec *spec = sessionTask(m_model->session()))
        m_input->setToolTip(tr("The input the maps are drawn for: %1")
                                .arg(QString::fromStdString(spec->inputHelp)));
    if (m_input->text().isEmpty() && m_run >= 0) {
        // The task's example, from the spec when no checkpoint can be read yet.
        const HeadInspector *inspector =
            m_checkpoints.empty() ? nullptr : inspectorAt(int(m_checkpoints.size()) - 1);
        if (inspector) {
            m_input->setText(QString::fromStdString(inspector->exampleInput()));
        } else if (const TaskSpec *spec = findTaskSpec(m_model->run(m_run).config.task.kind)) {
            // No checkpoint, or one that cannot be read (its message is shown): the example
            // all the same, never an empty input.
            m_input->setText(QString::fromStdString(spec->exampleInput)); // "" for data-bound
        }
    }
    m_model->setAttentionRequest(live ? m_run : -1, m_input->text());
    updateMaps();
}

const HeadInspector *InsideHeadsView::inspectorAt(int index)
{
    if (index < 0 || index >= int(m_checkpoints.size())) return nullptr;
    const std::string &path = m_checkpoints[size_t(index)].path;
    if (path != m_inspectorPath) {
        m_inspector.reset();
        m_inspectorPath.clear();
        try {
            const RunConfig *expected =
                m_run >= 0 && m_run < m_model->runCount() ? &m_model->run(m_run).config : nullptr;
            m_inspector = std::make_unique<HeadInspector>(path, "cpu", expected);
            m_inspectorPath = path;
        } catch (const std::exception &e) {
            m_message = QString::fromUtf8(e.what());
            return nullptr;
        }
    }
    return m_inspector.get();
}

int InsideHeadsView::position() const
{
    return m_slider->value();
}

void InsideHeadsView::setPosition(int index)
{
    m_slider->setValue(index);
    updateMaps();
}

void InsideHeadsView::setInput(const QString &input)
{
    m_input->setText(input);
    m_model->setAttentionRequest(m_model->attentionRequestRun(), input);
    updateMaps();
}

void InsideHeadsView::setStatistic(const QString &name)
{
    const int i = m_stat->findData(name);
    if (i >= 0) m_stat->setCurrentIndex(i);
}

void InsideHeadsView::updateMaps()
{
    m_message.clear();
    m_maps.reset();
    const int index = m_slider->value();
    // Ablation and pruning belong to one checkpoint: leaving it clears them (and cancels one
    // still running for it).
    const int64_t shownStep =
        index < int(m_checkpoints.size()) ? m_checkpoints[size_t(index)].step : int64_t(-2); // live
    if (m_ablationStep >= 0 && m_ablationStep != shownStep) {
        m_ablation.clear();
        m_pruning.clear();
        m_ablationStep = -1;
    }
    if (m_worker.joinable() && m_cancel && m_ablationRequestedStep != shownStep)
        m_cancel->store(true);
    if (m_run < 0) {
        m_message = tr("No run to look at");
    } else if (index >= int(m_checkpoints.size())) { // live
        m_model->setAttentionRequest(m_run, m_input->text());
        if (const auto *live = m_model->liveAttention(m_run)) {
            if (live->weights.empty())
                m_message = QString::fromStdString(live->description);
            else
                m_maps = *live;
        } else if (isFinished(m_model->run(m_run).result.status)) {
            m_message = tr("Run %1 has no checkpoint beside this session, so its attention cannot "
                           "be shown (the "
                           "checkpoints stay beside the session that trained it); its per-head "
                           "statistics are below")
                            .arg(m_run);
        } else {
            m_message = tr("Run %1 has no checkpoint yet; its attention appears here at its next "
                           "evaluation while it trains")
                            .arg(m_run);
        }
    } else {
        // A checkpoint's maps change only with the checkpoint or the input: computed once, not
        // at every refresh (the view refreshes with each frame while runs train).
        const std::string key =
            m_checkpoints[size_t(index)].path + '\n' + m_input->text().toStdString();
        if (key != m_checkpointMaps.key) {
            m_checkpointMaps = {key, std::nullopt, QString()};
            if (const auto *inspector = inspectorAt(index)) {
                try {
                    m_checkpointMaps.maps = inspector->attention(m_input->text().toStdString());
                } catch (const std::exception &e) {
                    m_checkpointMaps.message = QString::fromUtf8(e.what());
                }
            } else {
                m_checkpointMaps.message = m_message;
            }
        }
        m_maps = m_checkpointMaps.maps;
        m_message = m_checkpointMaps.message;
    }
    if (m_maps)
        m_stepLabel->setText(
            index >= int(m_checkpoints.size())
                ? tr("step %1 (live)").arg(m_maps->step)
                : tr("step %1 (%2)")
                      .arg(m_maps->step)
                      .arg(QString::fromStdString(m_checkpoints[size_t(index)].reason)));
    else
        m_stepLabel->setText(index < int(m_checkpoints.size())
                                 ? tr("step %1").arg(m_checkpoints[size_t(index)].step)
                                 : tr("live"));
    m_ablate->setEnabled(index < int(m_checkpoints.size()) || m_worker.joinable());
    {
        const QSignalBlocker block(m_keep);
        bool marked = false;
        if (index < int(m_checkpoints.size()))
            for (const auto &c : m_model->run(m_run).result.checkpoints)
                marked = marked || (c.step == m_checkpoints[size_t(index)].step && c.keep);
        m_keep->setChecked(marked);
        m_keep->setEnabled(index < int(m_checkpoints.size()) &&
                           isFinished(m_model->run(m_run).result.status));
    }
    m_prediction->setText(predictionText());
    m_canvasWidget->update();
}

QString InsideHeadsView::predictionText() const
{
    if (!m_maps || m_maps->probability < 0) return {};
    QString text = tr("predicts %1 (p = %2)")
                       .arg(QString::fromStdString(m_maps->prediction))
                       .arg(m_maps->probability, 0, 'f', 2);
    const std::string &d = m_maps->description;
    const size_t answer = d.rfind(": answer ");
    if (answer != std::string::npos)
        text += QStringLiteral(" · ") + QString::fromStdString(d.substr(answer + 2));
    return text;
}

Qt::PenStyle InsideHeadsView::layerStyle(int64_t layer)
{
    static const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                          Qt::DashDotDotLine};
    return styles[size_t(layer) % std::size(styles)];
}

bool InsideHeadsView::setKeepShown(bool keep)
{
    const int index = m_slider->value();
    if (m_run < 0 || index < 0 || index >= int(m_checkpoints.size())) {
        m_message = tr("No checkpoint is shown");
        return false;
    }
    try {
        m_model->markCheckpoint(m_run, m_checkpoints[size_t(index)].step, keep);
    } catch (const std::exception &e) {
        m_message = QString::fromUtf8(e.what());
        return false;
    }
    return true;
}

void InsideHeadsView::runAblation()
{
    if (m_worker.joinable()) { // the button cancels the running one
        m_cancel->store(true);
        return;
    }
    const int index = m_slider->value();
    if (index < 0 || index >= int(m_checkpoints.size())) return;
    const std::string path = m_checkpoints[size_t(index)].path;
    m_ablationRequestedStep = m_checkpoints[size_t(index)].step;
    std::shared_ptr<const RunConfig> expected;
    if (m_run >= 0 && m_run < m_model->runCount())
        expected = std::make_shared<RunConfig>(m_model->run(m_run).config);
    const AblationMode mode = ablationModeOf(m_mode->currentData().toString().toStdString());
    const bool retrain = m_retrain->isChecked();
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_ablate->setText(tr("Cancel"));
    auto cancel = m_cancel;
    auto letters = m_mailbox->letters();
    m_mailbox->open();
    // Its own inspector: the one the view draws maps with stays on the GUI thread. The worker
    // hands its values back through the mailbox; its calls run here, on the GUI thread.
    m_worker = std::thread([this, letters, path, expected, mode, cancel, retrain] {
        std::vector<HeadAblation> ablation;
        std::vector<PruningCurve> pruning;
        int64_t step = -1;
        QString error;
        try {
            const HeadInspector inspector(path, "cpu", expected.get());
            step = inspector.step();
            ablation = inspector.ablate(mode);
            // Every order; the random one's seeds give its spread.
            const PruningDefaults defaults;
            std::vector<PruningOptions> orders;
            for (const auto &row : pruningOrderTable())
                for (int seed = 0;
                     seed < (row.order == PruningOrder::Random ? defaults.randomOrders : 1); ++seed)
                    orders.push_back({mode, row.order, uint64_t(seed)});
            // Then, asked for, the retraining: on the first order's curve, and L0 gates.
            std::vector<PruningMethod> methods;
            if (retrain)
                for (const auto &row : pruningMethodTable())
                    if (row.method != PruningMethod::PostHoc) methods.push_back(row.method);
            const size_t jobs = orders.size() + methods.size();
            auto reporter = [&](const QString &name, size_t i) {
                return [&, name, i](int64_t done, int64_t total) {
                    letters->post([this, name, i, jobs, done, total] {
                        m_ablate->setText(tr("Cancel (%1 %2/%3, %4 of %5)")
                                              .arg(name)
                                              .arg(done)
                                              .arg(total)
                                              .arg(i + 1)
                                              .arg(jobs));
                    });
                    return !cancel->load();
                };
            };
            for (size_t i = 0; i < orders.size() && !cancel->load(); ++i)
                pruning.push_back(inspector.prune(
                    orders[i], reporter(QString::fromUtf8(toString(orders[i].order)), i)));
            const PruningDefaults r;
            for (size_t k = 0; k < methods.size() && !cancel->load() && !pruning.empty(); ++k) {
                const auto report =
                    reporter(QString::fromUtf8(toString(methods[k])), orders.size() + k);
                switch (methods[k]) {
                case PruningMethod::PostHoc:
                    break;
                case PruningMethod::FineTune:
                    pruning.push_back(inspector.fineTune(pruning.front(), r.fineTuneSteps, report));
                    break;
                case PruningMethod::Scratch:
                    try {
                        pruning.push_back(
                            inspector.fromScratch(pruning.front(), r.scratchPoints, report));
                    } catch (const std::invalid_argument &e) { // per-layer head dimensions
                        error = tr("No from-scratch control: %1").arg(QString::fromUtf8(e.what()));
                    }
                    break;
                case PruningMethod::L0Gates:
                    pruning.push_back(inspector.l0Gates(r.lambdas, r.fineTuneSteps, 0, report));
                    break;
                }
            }
        } catch (const std::exception &e) {
            error = QString::fromUtf8(e.what());
        }
        letters->post([this, ablation, pruning, step, error] {
            m_mailbox->stopAfterThis();
            finishAblation(ablation, pruning, step, error);
        });
    });
}

void InsideHeadsView::setRetraining(bool on)
{
    m_retrain->setChecked(on);
}

void InsideHeadsView::finishAblation(std::vector<HeadAblation> ablation,
                                     std::vector<PruningCurve> pruning, int64_t step, QString error)
{
    if (m_worker.joinable()) m_worker.join();
    m_ablate->setText(tr("Ablate"));
    m_ablationRequestedStep = -1;
    // The slider moved on while it ran: its numbers are of a step no longer shown.
    const int index = m_slider->value();
    if (index >= int(m_checkpoints.size()) || m_checkpoints[size_t(index)].step != step) {
        m_canvasWidget->update();
        return;
    }
    if (!error.isEmpty()) m_message = error;
    m_ablation = std::move(ablation);
    m_pruning = std::move(pruning);
    m_ablationStep = step;
    m_canvasWidget->update();
}

void InsideHeadsView::waitForAblation()
{
    while (m_worker.joinable()) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
}

void InsideHeadsView::refresh()
{
    // New checkpoints or live maps: follow them when the slider is at the right end.
    if (m_run >= m_model->runCount()) m_run = -1;
    const size_t before = m_checkpoints.size();
    const bool atEnd = m_slider->value() == m_slider->maximum();
    reloadRun();
    if (atEnd && m_checkpoints.size() != before) setPosition(m_slider->maximum());
}

void InsideHeadsView::saveViewState(ViewState &state) const
{
    setStateValue(state, "input", m_input->text().toStdString());
    setStateValue(state, "stat", m_stat->currentData().toString().toStdString());
}

void InsideHeadsView::restoreViewState(const ViewState &state)
{
    const std::string input = stateValue(state, "input");
    if (!input.empty()) m_input->setText(QString::fromStdString(input));
    setStatistic(QString::fromStdString(stateValue(state, "stat", "logit_rms")));
    updateMaps();
}

QString InsideHeadsView::csv() const
{
    QString out = QStringLiteral("table,layer,head,x,y,value\n");
    if (m_maps)
        for (size_t l = 0; l < m_maps->weights.size(); ++l)
            for (int64_t h = 0; h < m_maps->heads[l]; ++h)
                for (int64_t q = 0; q < m_maps->queries; ++q)
                    for (int64_t k = 0; k < m_maps->keys; ++k)
                        out += QStringLiteral("attention,%1,%2,%3,%4,%5\n")
                                   .arg(l)
                                   .arg(h)
                                   .arg(q)
                                   .arg(k)
                                   .arg(double(m_maps->at(l, h, q, k)), 0, 'g', 7);
    if (m_run >= 0) {
        const QString stat = m_stat->currentData().toString();
        for (const auto &[name, curve] : m_model->run(m_run).result.extra) {
            int64_t layer = 0, head = 0;
            std::string s;
            if (!parseHeadCurve(name, &layer, &head, &s) || QString::fromStdString(s) != stat)
                continue;
            for (const auto &p : curve)
                out += QStringLiteral("%1,%2,%3,%4,,%5\n")
                           .arg(csvCell(stat))
                           .arg(layer)
                           .arg(head)
                           .arg(p.step)
                           .arg(p.value, 0, 'g', 9);
        }
    }
    for (const auto &a : m_ablation)
        out += QStringLiteral("ablation_delta,%1,%2,%3,,%4\n")
                   .arg(a.layer)
                   .arg(a.head)
                   .arg(m_ablationStep)
                   .arg(a.delta, 0, 'g', 9);
    // The pruning curves: the order (and a random one's seed) in the table's name.
    for (const auto &c : m_pruning) {
        QString table = QStringLiteral("pruning_");
        if (c.method != PruningMethod::PostHoc)
            table += QString::fromUtf8(toString(c.method)) + QLatin1Char('_');
        if (c.method != PruningMethod::L0Gates) table += QString::fromUtf8(toString(c.order));
        if (c.order == PruningOrder::Random) table += QStringLiteral("_%1").arg(c.seed);
        for (const auto &s : c.steps)
            out += QStringLiteral("%1,%2,%3,%4,,%5\n")
                       .arg(table)
                       .arg(s.layer)
                       .arg(s.head)
                       .arg(s.fraction, 0, 'g', 6)
                       .arg(s.testLoss, 0, 'g', 9);
    }
    return out;
}

// --- painting ---------------------------------------------------------------------------------

void InsideHeadsCanvas::paintTitle(QPainter &p, const QRectF &area, const QString &text) const
{
    p.setPen(m_view->m_theme.foreground);
    p.setFont(m_view->m_theme.font(10, true));
    const QRectF box = area.adjusted(4, 0, -4, 0);
    label(p, box, Qt::AlignLeft | Qt::AlignTop,
          QFontMetricsF(p.font()).elidedText(text, Qt::ElideRight, box.width()));
}

void InsideHeadsCanvas::paint(QPainter &p, const QRectF &area) const
{
    const auto &v = *m_view;
    const double titleHeight = 22 * v.m_theme.fontScale;
    p.setPen(v.m_theme.foreground);
    p.setFont(v.m_theme.font(11, true));
    QString heading = v.title();
    if (v.m_maps) heading += QStringLiteral(" · ") + QString::fromStdString(v.m_maps->description);
    v.m_drawnLabels.clear();
    const QRectF headingBox = area.adjusted(6, 2, -6, 0);
    label(p, headingBox, Qt::AlignLeft | Qt::AlignTop,
          QFontMetricsF(p.font()).elidedText(heading, Qt::ElideRight, headingBox.width()));
    v.m_drawnMaps.clear();
    v.m_legendHeads = 0;
    const QRectF body = area.adjusted(0, titleHeight + 4, 0, 0);
    const QRectF maps(body.left(), body.top(), body.width(), body.height() * 0.52);
    const QRectF lower(body.left(), maps.bottom() + 6, body.width(),
                       body.bottom() - maps.bottom() - 6);
    paintMaps(p, maps);
    paintStatistics(p, QRectF(lower.left(), lower.top(), lower.width() * 0.44, lower.height()));
    paintImportance(p, QRectF(lower.left() + lower.width() * 0.45, lower.top(),
                              lower.width() * 0.24, lower.height()));
    paintPruning(p, QRectF(lower.left() + lower.width() * 0.70, lower.top(), lower.width() * 0.30,
                           lower.height()));
}

void InsideHeadsCanvas::paintMaps(QPainter &p, const QRectF &area) const
{
    const auto &v = *m_view;
    if (!v.m_maps) {
        p.setPen(v.m_theme.muted);
        p.setFont(v.m_theme.font(10));
        p.drawText(area, Qt::AlignCenter | Qt::TextWordWrap,
                   v.m_message.isEmpty() ? tr("No attention to show") : v.m_message);
        return;
    }
    const AttentionMaps &m = *v.m_maps;
    const size_t layers = m.weights.size();
    int64_t columns = 1;
    for (auto h : m.heads) columns = std::max(columns, h);
    const double labelBand = 14 * v.m_theme.fontScale; // "H1" above each map
    const double rowHeight = area.height() / double(layers);
    // Each layer's name left of its row; the heads' names above their maps.
    const QFont layerFont = v.m_theme.font(8, true);
    const double layerBand =
        QFontMetricsF(layerFont).horizontalAdvance(QStringLiteral("L%1").arg(layers - 1)) + 6;
    // Left: every head's full map; right: the focus row of every head with the tokens labelled.
    const bool strip = m.focusRow >= 0;
    const double mapsWidth = (strip ? area.width() * 0.5 : area.width()) - layerBand;
    // Token labels: the keys under each map (turned), the queries left of each layer's first
    // map, in a font that fits one map cell; left out where cells are under 5 px.
    const QFont tokenFont = v.m_theme.font(6);
    const QFontMetricsF tokenMetrics(tokenFont);
    double tokenWidth = 0;
    for (const auto &label : m.labels)
        tokenWidth =
            std::max(tokenWidth, tokenMetrics.horizontalAdvance(QString::fromStdString(label)));
    double side =
        std::max(8.0, std::min(mapsWidth / double(columns) - 8, rowHeight - labelBand - 4));
    const bool tokens = side / double(std::max(m.keys, m.queries)) >= tokenMetrics.height() * 0.8;
    const double keyBand = tokens ? tokenWidth + 3 : 0, queryBand = tokens ? tokenWidth + 3 : 0;
    if (tokens)
        side = std::max(8.0, std::min((mapsWidth - queryBand) / double(columns) - 8,
                                      rowHeight - labelBand - keyBand - 4));
    // The heads' names in the largest type (8 points down to 5) in which the widest fits over
    // its map; where even 5 points does not, every k-th head is named.
    double headPoints = 8;
    const QString widestHead = QStringLiteral("H%1").arg(columns - 1);
    while (headPoints > 5 &&
           QFontMetricsF(v.m_theme.font(headPoints, true)).horizontalAdvance(widestHead) > side + 6)
        headPoints -= 0.5;
    const QFont headFont = v.m_theme.font(headPoints, true);
    const int64_t headEvery = std::max<int64_t>(
        1, int64_t(std::ceil((QFontMetricsF(headFont).horizontalAdvance(widestHead) + 2) /
                             (side + 8))));
    const double left = area.left() + layerBand;
    for (size_t l = 0; l < layers; ++l) {
        p.setPen(v.m_theme.foreground);
        p.setFont(layerFont);
        label(p,
              QRectF(area.left(), area.top() + double(l) * rowHeight + labelBand, layerBand, side),
              Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("L%1").arg(l));
        for (int64_t h = 0; h < m.heads[l]; ++h) {
            const QRectF cell(left + queryBand + double(h) * (side + 8) + 4,
                              area.top() + double(l) * rowHeight + labelBand, side, side);
            if (h % headEvery == 0) {
                p.setPen(v.headColor(h));
                p.setFont(headFont);
                label(p, QRectF(cell.left(), cell.top() - labelBand, side + 6, labelBand),
                      Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("H%1").arg(h));
            }
            const double cw = side / double(m.keys), ch = side / double(m.queries);
            v.m_drawnMaps.push_back({cell, l, h});
            if (tokens) {
                p.setPen(v.m_theme.foreground);
                p.setFont(tokenFont);
                for (int64_t k = 0; k < m.keys && k < int64_t(m.labels.size()); ++k) {
                    p.save();
                    p.translate(cell.left() + (double(k) + 0.5) * cw + tokenMetrics.ascent() / 2 -
                                    1,
                                cell.bottom() + 2);
                    p.rotate(90);
                    label(
                        p, QRectF(0, -tokenMetrics.ascent(), tokenWidth + 1, tokenMetrics.height()),
                        Qt::AlignLeft | Qt::AlignTop, QString::fromStdString(m.labels[size_t(k)]));
                    p.restore();
                }
                if (h == 0) // the query rows: the same tokens, at the rows' starts
                    for (int64_t q = 0; q < m.queries && q < int64_t(m.labels.size()); ++q)
                        label(p,
                              QRectF(cell.left() - queryBand - 2, cell.top() + double(q) * ch,
                                     queryBand, ch),
                              Qt::AlignRight | Qt::AlignVCenter,
                              QString::fromStdString(m.labels[size_t(q)]));
            }
            p.setPen(Qt::NoPen);
            for (int64_t q = 0; q < m.queries; ++q)
                for (int64_t k = 0; k < m.keys; ++k) {
                    const double w = m.at(l, h, q, k);
                    p.setBrush(viridis(
                        std::sqrt(std::clamp(w, 0.0, 1.0)))); // sqrt: small weights stay visible
                    p.drawRect(QRectF(cell.left() + double(k) * cw, cell.top() + double(q) * ch,
                                      cw + 0.3, ch + 0.3));
                }
            if (strip) { // the focus row, framed
                p.setBrush(Qt::NoBrush);
                p.setPen(QPen(QColor(230, 60, 60), v.m_theme.line(1.2)));
                p.drawRect(QRectF(cell.left(), cell.top() + double(m.focusRow) * ch, side, ch));
            }
        }
    }
    if (!strip) return;
    // Right: the focus row of each layer (paintFocusRows), its heads named left of it.
    const double headNames =
        QFontMetricsF(v.m_theme.font(7)).horizontalAdvance(QStringLiteral("H%1").arg(columns - 1));
    const double bandLeft =
        left + queryBand + std::min(mapsWidth, double(columns) * (side + 8)) + headNames + 12;
    const QRectF band(bandLeft, area.top(), area.right() - bandLeft - 4, area.height());
    paintFocusRows(p, band, rowHeight, labelBand);
}

// The focus row of each layer: heads × keys, the weight written in each cell, tokens below.
void InsideHeadsCanvas::paintFocusRows(QPainter &p, const QRectF &band, double rowHeight,
                                       double labelBand) const
{
    const auto &v = *m_view;
    const AttentionMaps &m = *v.m_maps;
    const size_t layers = m.weights.size();
    const double cw = band.width() / double(m.keys);
    const double tokenBand = 16 * v.m_theme.fontScale;
    for (size_t l = 0; l < layers; ++l) {
        const double top = band.top() + double(l) * rowHeight + labelBand;
        const double ch = std::min(22.0 * v.m_theme.fontScale,
                                   (rowHeight - labelBand - tokenBand) / double(m.heads[l]));
        p.setPen(v.m_theme.foreground);
        p.setFont(v.m_theme.font(8, true));
        label(p, QRectF(band.left(), top - labelBand, band.width(), labelBand),
              Qt::AlignLeft | Qt::AlignVCenter,
              QFontMetricsF(p.font()).elidedText(
                  tr("layer %1: the row of position %2 (%3)")
                      .arg(l)
                      .arg(m.focusRow)
                      .arg(QString::fromStdString(m.labels[size_t(m.focusRow)])),
                  Qt::ElideRight, band.width()));
        p.setFont(v.m_theme.font(std::clamp(std::min(cw * 0.32, ch * 0.45), 5.0, 8.0)));
        const QFontMetricsF weights(p.font()); // a weight is written where it fits in its cell
        const bool written = weights.height() <= ch - 0.5 &&
                             weights.horizontalAdvance(QStringLiteral(".00")) <= cw - 2;
        for (int64_t h = 0; h < m.heads[l]; ++h)
            for (int64_t k = 0; k < m.keys; ++k) {
                const double w = m.at(l, h, m.focusRow, k);
                const QRectF cell(band.left() + double(k) * cw, top + double(h) * ch, cw - 0.5,
                                  ch - 0.5);
                const QColor fill = viridis(std::sqrt(std::clamp(w, 0.0, 1.0)));
                p.fillRect(cell, fill);
                if (written && w >= 0.05) {
                    p.setPen(fill.lightnessF() > 0.55 ? QColor(20, 20, 20) : QColor(245, 245, 245));
                    label(p, cell, Qt::AlignCenter,
                          w >= 0.995 ? QStringLiteral("1")
                                     : QString::number(w, 'f', 2).mid(1)); // ".42"
                }
            }
        // The tokens under their columns, each cut to its column (a long token such as "input"
        // ends in "…" rather than running into its neighbours).
        p.setPen(v.m_theme.foreground);
        p.setFont(v.m_theme.font(std::clamp(cw * 0.45, 5.0, 8.0)));
        const QFontMetricsF tokens(p.font());
        const double labelsTop = top + double(m.heads[l]) * ch + 1;
        for (int64_t k = 0; k < m.keys && cw >= 6; ++k) {
            const QString token = tokens.elidedText(QString::fromStdString(m.labels[size_t(k)]),
                                                    Qt::ElideRight, cw - 1);
            if (!token.isEmpty())
                label(p, QRectF(band.left() + double(k) * cw, labelsTop, cw, tokenBand),
                      Qt::AlignHCenter | Qt::AlignTop, token);
        }
        // The heads' names left of their rows; every k-th where the rows are lower than the type.
        p.setFont(v.m_theme.font(7));
        const QFontMetricsF names(p.font());
        const int64_t every = std::max<int64_t>(1, int64_t(std::ceil(names.height() / ch)));
        for (int64_t h = 0; h < m.heads[l]; h += every) {
            p.setPen(v.headColor(h));
            label(p,
                  QRectF(band.left() - 4 - names.horizontalAdvance(QStringLiteral("H%1").arg(h)),
                         top + (double(h) + 0.5) * ch - names.height() / 2,
                         names.horizontalAdvance(QStringLiteral("H%1").arg(h)), names.height()),
                  Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("H%1").arg(h));
        }
    }
}

QRectF InsideHeadsCanvas::plotArea(const QRectF &area, int legendRows) const
{
    const auto &t = m_view->m_theme;
    const QFontMetricsF title(t.font(10, true)), small(t.font(7)), label(t.font(8)),
        legend(t.font(8));
    const double top = title.height() + 4 + legendRows * (legend.height() + 4);
    const double left = small.horizontalAdvance(QStringLiteral("0.000")) + 6 + label.height() + 6;
    const double bottom = small.height() + 2 + label.height() + 4;
    // Right: room for half the widest number centred on the last tick ("1.0" left the canvas).
    const double right = std::max(8.0, small.horizontalAdvance(QStringLiteral("0.000")) / 2 + 4);
    return area.adjusted(left, top, -right, -bottom);
}

void InsideHeadsCanvas::paintAxes(QPainter &p, const QRectF &plot, double x0, double x1, double y0,
                                  double y1, const QString &xLabel, const QString &yLabel) const
{
    // Every offset is measured in the fonts, so nothing overlaps at any font scale (presenter
    // mode): tick numbers, then the axis title outside them.
    const auto &t = m_view->m_theme;
    p.setFont(t.font(7));
    const QFontMetricsF small(p.font());
    // As many numbers up the side as the plot's height holds two lines apart each (a short plot
    // under a legend of several rows had them on top of one another).
    const int yTicks = std::clamp(int(plot.height() / (2.0 * small.height())), 2, 5);
    const LinearTicks xt = niceTicks(x0, x1, 5), yt = niceTicks(y0, y1, yTicks);
    double previousRight = -1e300;
    for (int i = 0; i < xt.count; ++i) {
        const double x = xt.first + i * xt.step;
        const double px = plot.left() + (x - x0) / (x1 - x0) * plot.width();
        p.setPen(QPen(t.grid, 1));
        p.drawLine(QPointF(px, plot.top()), QPointF(px, plot.bottom()));
        const QString text = QString::fromStdString(tickLabel(xt, x));
        const double w = small.horizontalAdvance(text);
        if (px - w / 2 < previousRight + 4) continue; // a number that would touch the last
        previousRight = px + w / 2;
        p.setPen(t.foreground);
        label(p, QRectF(px - w / 2 - 2, plot.bottom() + 2, w + 4, small.height()),
              Qt::AlignHCenter | Qt::AlignTop, text);
    }
    double widest = 0;
    for (int i = 0; i < yt.count; ++i) {
        const double y = yt.first + i * yt.step;
        const double py = plot.bottom() - (y - y0) / (y1 - y0) * plot.height();
        p.setPen(QPen(t.grid, 1));
        p.drawLine(QPointF(plot.left(), py), QPointF(plot.right(), py));
        p.setPen(t.foreground);
        const QString text = QString::fromStdString(tickLabel(yt, y));
        widest = std::max(widest, small.horizontalAdvance(text));
        // The lowest number ends at the plot's bottom: centred on it, it ran into the x axis's
        // first number under the corner.
        const double top = std::min(py - small.height() / 2, plot.bottom() - small.height());
        label(p,
              QRectF(plot.left() - 4 - small.horizontalAdvance(text) - 1, top,
                     small.horizontalAdvance(text) + 2, small.height()),
              Qt::AlignRight | Qt::AlignVCenter, text);
    }
    p.setPen(QPen(t.foreground, 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(plot);
    p.setFont(t.font(8));
    const QFontMetricsF titles(p.font());
    label(
        p,
        QRectF(plot.left(), plot.bottom() + 2 + small.height() + 2, plot.width(), titles.height()),
        Qt::AlignHCenter | Qt::AlignTop, titles.elidedText(xLabel, Qt::ElideRight, plot.width()));
    p.save();
    p.translate(plot.left() - 4 - widest - 4 - titles.height(), plot.center().y());
    p.rotate(-90);
    label(p, QRectF(-plot.height() / 2, 0, plot.height(), titles.height()), Qt::AlignCenter,
          titles.elidedText(yLabel, Qt::ElideRight, plot.height()));
    p.restore();
}

void InsideHeadsCanvas::paintStatistics(QPainter &p, const QRectF &area) const
{
    const auto &v = *m_view;
    const QString stat = v.m_stat->currentData().toString();
    paintTitle(p, area, tr("%1 per head").arg(statTitle(stat)));
    if (v.m_run < 0) return;
    const RunResult &r = v.m_model->run(v.m_run).result;
    struct Line {
        int64_t layer, head;
        const Curve *curve;
    };
    std::vector<Line> lines;
    double x1 = 1, y0 = 0, y1 = 0;
    for (const auto &[name, curve] : r.extra) {
        int64_t layer = 0, head = 0;
        std::string s;
        if (!parseHeadCurve(name, &layer, &head, &s) || QString::fromStdString(s) != stat) continue;
        lines.push_back({layer, head, &curve});
        for (const auto &pt : curve)
            if (std::isfinite(pt.value)) {
                x1 = std::max(x1, double(pt.step));
                y1 = std::max(y1, pt.value);
            }
    }
    // The legend, laid out first: a colour per head, a line style per layer, then the plateau
    // marks, every entry shown. Above the plot while it takes at most two rows; else the heads
    // stand in columns right of the plot and the rest above it.
    int64_t maxHeads = 1, layers = 0;
    for (const auto &l : lines) {
        maxHeads = std::max(maxHeads, l.head + 1);
        layers = std::max(layers, l.layer + 1);
    }
    struct Entry {
        QPen pen;
        QString text;
        bool note = false; // text only, in the muted colour
        QPointF at;        // its top left, once laid out
        bool side = false; // in the columns right of the plot
    };
    std::vector<Entry> entries;
    for (int64_t h = 0; h < maxHeads && !lines.empty(); ++h)
        entries.push_back(
            {QPen(v.headColor(h), v.m_theme.line(2.4)), QStringLiteral("H%1").arg(h)});
    const size_t headEntries = entries.size();
    for (int64_t layer = 0; layer < layers && layers > 1; ++layer)
        entries.push_back(
            {QPen(v.m_theme.foreground, v.m_theme.line(1.3), InsideHeadsView::layerStyle(layer)),
             tr("layer %1").arg(layer)});
    if (!lines.empty())
        entries.push_back({QPen(), tr("grey: plateau entered (dashed), left (solid)"), true});
    const QFont legendFont = v.m_theme.font(8);
    const QFontMetricsF fm(legendFont);
    const double swatch = 12 * v.m_theme.fontScale, rowHeight = fm.height() + 4;
    auto entryWidth = [&](const Entry &e) {
        return (e.note ? 0 : swatch + 3) + fm.horizontalAdvance(e.text) + 8;
    };
    const double legendLeft = area.left() + 4, legendRight = area.right() - 4;
    // Flows entries [first, end) into rows above the plot: their rows' count; `at` holds the row
    // in y until the plot's top is known.
    auto flow = [&](size_t first) {
        int rows = 1;
        double x = 0;
        for (size_t i = first; i < entries.size(); ++i) {
            const double w = entryWidth(entries[i]);
            if (x > 0 && legendLeft + x + w > legendRight) {
                ++rows;
                x = 0;
            }
            entries[i].at = QPointF(legendLeft + x, rows - 1);
            x += w;
        }
        return rows;
    };
    int rows = flow(0);
    QRectF plot = plotArea(area, rows);
    if (rows > 2 && headEntries > 0) {
        rows = flow(headEntries);
        plot = plotArea(area, rows);
        const int perColumn = std::max(1, int(plot.height() / rowHeight));
        const double columnWidth =
            swatch + 3 + fm.horizontalAdvance(QStringLiteral("H%1").arg(maxHeads - 1)) + 8;
        const int columns = int((headEntries + size_t(perColumn) - 1) / size_t(perColumn));
        plot.adjust(0, 0, -double(columns) * columnWidth - 6, 0);
        for (size_t i = 0; i < headEntries; ++i) {
            entries[i].at = QPointF(plot.right() + 10 + double(i / size_t(perColumn)) * columnWidth,
                                    plot.top() + double(i % size_t(perColumn)) * rowHeight);
            entries[i].side = true;
        }
    }
    for (auto &e : entries) // the rows above the plot: each row's top
        if (!e.side) e.at.setY(plot.top() - double(rows - int(e.at.y())) * rowHeight);
    if (lines.empty()) {
        p.setPen(v.m_theme.muted);
        p.drawText(plot, Qt::AlignCenter | Qt::TextWordWrap,
                   tr("No per-head statistics logged (a run from before they were)"));
        return;
    }
    if (y1 <= y0) y1 = y0 + 1;
    const LinearTicks yt = niceTicks(y0, y1, 5);
    y1 = std::max(y1, yt.first + (yt.count - 1) * yt.step);
    paintAxes(p, plot, 0, x1, y0, y1, tr("step"), statTitle(stat));
    auto px = [&](double x) { return plot.left() + x / x1 * plot.width(); };
    auto py = [&](double y) { return plot.bottom() - (y - y0) / (y1 - y0) * plot.height(); };
    // Plateau entries (dashed) and exits (solid), from the run's test loss.
    if (taskSpec(v.m_model->run(v.m_run).config.task).plateauMetrics)
        for (const auto &pl : PlateauDetector().detect(r.test)) {
            for (const auto &[step, dash] :
                 {std::pair{pl.entered, Qt::DashLine}, std::pair{pl.left, Qt::SolidLine}}) {
                if (step < 0) continue;
                p.setPen(QPen(v.m_theme.muted, v.m_theme.line(1), dash));
                p.drawLine(QPointF(px(double(step)), plot.top()),
                           QPointF(px(double(step)), plot.bottom()));
            }
        }
    for (const auto &l : lines) {
        p.setPen(
            QPen(v.headColor(l.head), v.m_theme.line(1.3), InsideHeadsView::layerStyle(l.layer)));
        QPolygonF poly;
        for (const auto &pt : *l.curve)
            if (std::isfinite(pt.value)) poly << QPointF(px(double(pt.step)), py(pt.value));
        p.drawPolyline(poly);
    }
    if (v.m_maps) { // the step shown above
        p.setPen(QPen(QColor(230, 60, 60), v.m_theme.line(1.2)));
        p.drawLine(QPointF(px(double(v.m_maps->step)), plot.top()),
                   QPointF(px(double(v.m_maps->step)), plot.bottom()));
    }
    // The legend where it was laid out.
    p.setFont(legendFont);
    for (const Entry &e : entries) {
        const double middle = e.at.y() + fm.height() / 2;
        if (!e.note) {
            p.setPen(e.pen);
            p.drawLine(QPointF(e.at.x(), middle), QPointF(e.at.x() + swatch, middle));
        }
        p.setPen(e.note ? v.m_theme.muted : v.m_theme.foreground);
        label(p,
              QRectF(e.at.x() + (e.note ? 0 : swatch + 3), e.at.y(),
                     fm.horizontalAdvance(e.text) + 1, fm.height()),
              Qt::AlignLeft | Qt::AlignTop, e.text);
    }
    v.m_legendHeads = int(std::count_if(entries.begin(), entries.end(), [](const Entry &e) {
        return !e.note && e.text.startsWith(QLatin1Char('H'));
    }));
}

void InsideHeadsCanvas::paintImportance(QPainter &p, const QRectF &area) const
{
    const auto &v = *m_view;
    paintTitle(p, area,
               v.m_ablationStep >= 0
                   ? tr("Δ test loss, head removed (step %1)").arg(v.m_ablationStep)
                   : tr("Head importance"));
    const auto &t = v.m_theme;
    const QRectF grid =
        area.adjusted(QFontMetricsF(t.font(8)).horizontalAdvance(QStringLiteral("L00")) + 8,
                      QFontMetricsF(t.font(10, true)).height() + 6, -6,
                      -(QFontMetricsF(t.font(8)).height() + QFontMetricsF(t.font(7)).height() + 6));
    if (v.m_ablation.empty()) {
        p.setPen(v.m_theme.muted);
        p.setFont(v.m_theme.font(9));
        p.drawText(grid, Qt::AlignCenter | Qt::TextWordWrap,
                   tr("Ablate at a checkpoint to see what each head is worth"));
        return;
    }
    int64_t layers = 0, heads = 0;
    double top = 1e-6;
    for (const auto &a : v.m_ablation) {
        layers = std::max(layers, a.layer + 1);
        heads = std::max(heads, a.head + 1);
        top = std::max(top, std::abs(a.delta));
    }
    const double cw = grid.width() / double(heads), ch = grid.height() / double(layers);
    // Each cell's Δ written in it where it fits (down to 5 points); narrower cells keep their
    // colour, whose scale the key below gives (0 … the largest Δ).
    p.setFont(v.m_theme.font(std::clamp(std::min(cw, ch) * 0.22, 5.0, 9.0)));
    const QFontMetricsF values(p.font());
    for (const auto &a : v.m_ablation) {
        const QRectF cell(grid.left() + double(a.head) * cw, grid.top() + double(a.layer) * ch,
                          cw - 1, ch - 1);
        const QColor fill = viridis(std::clamp(a.delta / top, 0.0, 1.0));
        p.fillRect(cell, fill);
        const QString text = QString::asprintf("%+.3f", a.delta);
        if (values.horizontalAdvance(text) > cell.width() - 2 || values.height() > cell.height())
            continue;
        p.setPen(fill.lightnessF() > 0.55 ? QColor(20, 20, 20) : QColor(245, 245, 245));
        label(p, cell, Qt::AlignCenter, text);
    }
    p.setPen(v.m_theme.foreground);
    p.setFont(v.m_theme.font(8));
    const QFontMetricsF names(p.font());
    for (int64_t l = 0; l < layers; ++l)
        label(p,
              QRectF(area.left(), grid.top() + double(l) * ch, grid.left() - area.left() - 2, ch),
              Qt::AlignCenter, QStringLiteral("L%1").arg(l));
    const int64_t every = std::max<int64_t>(
        1, int64_t(std::ceil((names.horizontalAdvance(QStringLiteral("H%1").arg(heads - 1)) + 4) /
                             cw)));
    // Each name centred under its column, in the room of the `every` columns it stands for (a
    // column's width alone clipped "H10" at 12 heads).
    const double room = double(every) * cw;
    for (int64_t h = 0; h < heads; h += every)
        label(p,
              QRectF(grid.left() + (double(h) + 0.5) * cw - room / 2, grid.bottom() + 2, room,
                     names.height()),
              Qt::AlignCenter, QStringLiteral("H%1").arg(h));
    p.setPen(v.m_theme.muted);
    p.setFont(v.m_theme.font(7));
    label(p,
          QRectF(grid.left(), grid.bottom() + 2 + names.height(), grid.width(),
                 area.bottom() - grid.bottom() - 2 - names.height()),
          Qt::AlignLeft | Qt::AlignTop,
          QFontMetricsF(p.font()).elidedText(
              tr("colour: Δ from 0 (dark) to %1 (bright)").arg(QString::asprintf("%+.3f", top)),
              Qt::ElideRight, grid.width()));
}

void InsideHeadsCanvas::paintPruning(QPainter &p, const QRectF &area) const
{
    const auto &v = *m_view;
    paintTitle(p, area, tr("Pruning"));
    if (v.m_pruning.empty() || v.m_pruning.front().steps.empty()) return;
    // Post hoc: one colour per order of the table, the random orders drawn as the band between
    // the lowest and highest of their seeds with their median. With retraining: the fine-tuned
    // curve dashed in its order's colour, the control and the L0 gates in colours of their own.
    const auto &orders = pruningOrderTable();
    const auto &methods = pruningMethodTable();
    auto orderColour = [&](PruningOrder o) {
        for (size_t i = 0; i < orders.size(); ++i)
            if (orders[i].order == o) return v.m_theme.seriesColor(int(i));
        return v.m_theme.foreground;
    };
    auto methodIndex = [&](PruningMethod m) {
        for (size_t i = 0; i < methods.size(); ++i)
            if (methods[i].method == m) return i;
        return size_t(0);
    };
    auto penOf = [&](const PruningCurve &c) {
        switch (c.method) {
        case PruningMethod::PostHoc:
            return QPen(orderColour(c.order), v.m_theme.line(1.8),
                        c.order == PruningOrder::Random ? Qt::DashLine : Qt::SolidLine);
        case PruningMethod::FineTune:
            return QPen(orderColour(c.order), v.m_theme.line(1.8), Qt::DashDotLine);
        case PruningMethod::Scratch: // the control, in the axes' colour
            return QPen(v.m_theme.foreground, v.m_theme.line(1.8), Qt::SolidLine);
        default:
            // The colours after the orders', one per method.
            return QPen(v.m_theme.seriesColor(int(orders.size() + methodIndex(c.method))),
                        v.m_theme.line(1.8), Qt::SolidLine);
        }
    };
    double y0 = v.m_pruning.front().steps.front().testLoss, y1 = y0, x1 = 0.05;
    for (const auto &c : v.m_pruning)
        for (const auto &s : c.steps)
            if (std::isfinite(s.testLoss)) {
                y0 = std::min(y0, s.testLoss);
                y1 = std::max(y1, s.testLoss);
                x1 = std::max(x1, s.fraction);
            }
    // The legend: one entry per kind of curve drawn, flowed into as many rows above the plot as
    // the panel's width needs.
    struct Entry {
        QPen pen;
        QString text;
        QPointF at; // x, and the row in y until the plot's top is known
    };
    // The tables' labels, or (`brief`: where those would leave the plot less than half the
    // panel) their short names.
    auto entriesOf = [&](bool brief) {
        std::vector<Entry> out;
        for (const auto &row : orders)
            for (const auto &c : v.m_pruning)
                if (c.method == PruningMethod::PostHoc && c.order == row.order) {
                    const QString name = brief ? QString::fromUtf8(row.name) : tr(row.label);
                    out.push_back({penOf(c), row.order == PruningOrder::Random
                                                 ? tr("%1 (band: seeds)").arg(name)
                                                 : name});
                    break;
                }
        for (const auto &row : methods)
            for (const auto &c : v.m_pruning)
                if (c.method == row.method && c.method != PruningMethod::PostHoc) {
                    QString text = brief ? QString::fromUtf8(row.name) : tr(row.label);
                    if (c.method == PruningMethod::FineTune)
                        text = brief ? tr("%1 %2").arg(text).arg(c.trainedSteps)
                                     : tr("%1 %2 steps (%3)")
                                           .arg(text)
                                           .arg(c.trainedSteps)
                                           .arg(QString::fromUtf8(toString(c.order)));
                    out.push_back({penOf(c), text});
                    break;
                }
        return out;
    };
    p.setFont(v.m_theme.font(8));
    const QFontMetricsF fm(p.font());
    const double swatch = 14 * v.m_theme.fontScale, rowHeight = fm.height() + 4;
    // Flows `entries` into rows across the panel; the rows it takes.
    auto flow = [&](std::vector<Entry> &entries) {
        int rows = 1;
        double x = area.left() + 4;
        for (auto &e : entries) {
            const double w = swatch + 3 + fm.horizontalAdvance(e.text) + 10;
            if (x + w > area.right() - 4 && x > area.left() + 4) {
                ++rows;
                x = area.left() + 4;
            }
            e.at = QPointF(x, rows - 1);
            x += w;
        }
        return rows;
    };
    std::vector<Entry> entries = entriesOf(false);
    int rows = flow(entries);
    if (plotArea(area, rows).height() < area.height() / 2) {
        entries = entriesOf(true);
        rows = flow(entries);
    }
    const QRectF plot = plotArea(area, rows);
    for (const auto &e : entries) {
        const double y = plot.top() - double(rows - int(e.at.y())) * rowHeight;
        QPen pen = e.pen;
        pen.setWidthF(v.m_theme.line(2.2));
        p.setPen(pen);
        p.drawLine(QPointF(e.at.x(), y + fm.height() / 2),
                   QPointF(e.at.x() + swatch, y + fm.height() / 2));
        p.setPen(v.m_theme.foreground);
        label(p, QRectF(e.at.x() + swatch + 3, y, fm.horizontalAdvance(e.text) + 1, fm.height()),
              Qt::AlignLeft | Qt::AlignVCenter, e.text);
    }
    const LinearTicks yt = niceTicks(std::max(0.0, y0 - 0.05), y1 + 0.05, 5);
    const double lo = yt.first, hi = std::max(y1 + 0.05, yt.first + (yt.count - 1) * yt.step);
    const LinearTicks xt = niceTicks(0, x1, 5);
    const double xhi = std::max(x1, xt.first + (xt.count - 1) * xt.step);
    paintAxes(p, plot, 0, xhi, lo, hi, tr("share removed"), tr("test loss"));
    auto px = [&](double x) { return plot.left() + x / xhi * plot.width(); };
    auto py = [&](double y) { return plot.bottom() - (y - lo) / (hi - lo) * plot.height(); };
    // The bounds `inspect` counts heads within (lossBoundTable), above the model's own loss: a
    // dashed line each, labelled at the right; one whose line or label would touch another's is
    // left out (on a loss near zero, 1 % and 5 % lie on the intact model's line).
    const double intact = v.m_pruning.front().steps.front().testLoss;
    p.setFont(v.m_theme.font(7));
    const QFontMetricsF boundMetrics(p.font());
    const QString unit =
        v.m_run >= 0 ? QString::fromUtf8(taskSpec(v.m_model->run(v.m_run).config.task).lossUnit)
                     : QStringLiteral("nats");
    std::vector<double> lines = {py(intact)};
    std::vector<QRectF> labels;
    for (const auto &bound : lossBoundTable()) {
        const double at = py(bound.limit(intact));
        const QString text = bound.absolute ? tr("+%1 %2").arg(bound.value).arg(unit)
                                            : tr("+%1").arg(QString::fromUtf8(bound.label));
        // Above its line, or below it where the line runs along the plot's top (it ran into
        // the panel's title).
        double top = at - 2 - boundMetrics.height();
        if (top < plot.top() + 1) top = at + 2;
        const double w = boundMetrics.horizontalAdvance(text) + 1;
        const QRectF box(plot.right() - 3 - w, top, w, boundMetrics.height());
        const bool crowded =
            at < plot.top() ||
            std::any_of(lines.begin(), lines.end(),
                        [&](double y) { return std::abs(at - y) < boundMetrics.height(); }) ||
            std::any_of(labels.begin(), labels.end(),
                        [&](const QRectF &r) { return r.intersects(box); });
        if (crowded) continue;
        lines.push_back(at);
        labels.push_back(box);
        p.setPen(QPen(v.m_theme.muted, v.m_theme.line(1), Qt::DashLine));
        p.drawLine(QPointF(plot.left(), at), QPointF(plot.right(), at));
        p.setPen(v.m_theme.muted);
        label(p, box, Qt::AlignRight | Qt::AlignTop, text);
    }
    p.save();
    p.setClipRect(plot.adjusted(-3, -3, 3, 3));
    // The random orders: the band of their seeds at each count removed, and its median.
    std::map<int64_t, std::vector<double>> random;
    double perHead = 0;
    const PruningCurve *anyRandom = nullptr;
    for (const auto &c : v.m_pruning)
        if (c.method == PruningMethod::PostHoc && c.order == PruningOrder::Random) {
            anyRandom = &c;
            for (const auto &s : c.steps) {
                random[s.removed].push_back(s.testLoss);
                if (s.removed > 0) perHead = s.fraction / double(s.removed);
            }
        }
    if (anyRandom && perHead > 0) {
        QPolygonF upper, lower, median;
        for (auto &[n, losses] : random) {
            std::sort(losses.begin(), losses.end());
            const double x = px(double(n) * perHead);
            upper << QPointF(x, py(losses.back()));
            lower << QPointF(x, py(losses.front()));
            median << QPointF(x, py(losses[losses.size() / 2]));
        }
        QColor fill = orderColour(PruningOrder::Random);
        fill.setAlphaF(0.22);
        QPolygonF band = upper;
        for (auto it = lower.rbegin(); it != lower.rend(); ++it) band << *it;
        p.setPen(Qt::NoPen);
        p.setBrush(fill);
        p.drawPolygon(band);
        p.setBrush(Qt::NoBrush);
        p.setPen(penOf(*anyRandom));
        p.drawPolyline(median);
    }
    for (const auto &c : v.m_pruning) {
        if (c.method == PruningMethod::PostHoc && c.order == PruningOrder::Random) continue;
        QPolygonF poly;
        for (const auto &s : c.steps)
            if (std::isfinite(s.testLoss)) poly << QPointF(px(s.fraction), py(s.testLoss));
        const QPen pen = penOf(c);
        p.setPen(pen);
        p.setBrush(Qt::NoBrush);
        p.drawPolyline(poly);
        // Markers: filled dots post hoc, hollow ones after training.
        p.setPen(QPen(pen.color(), v.m_theme.line(1.2)));
        p.setBrush(c.method == PruningMethod::PostHoc ? QBrush(pen.color())
                                                      : QBrush(v.m_theme.plotBackground));
        const double r = c.method == PruningMethod::PostHoc ? 2.2 : 3.0;
        for (const auto &pt : poly) p.drawEllipse(pt, r, r);
    }
    p.restore();
}

QString InsideHeadsView::hoverText(const QPointF &at) const
{
    if (!m_maps) return {};
    const AttentionMaps &m = *m_maps;
    for (const auto &map : m_drawnMaps) {
        if (!map.box.contains(at)) continue;
        const auto k = std::clamp<int64_t>(
            int64_t((at.x() - map.box.left()) / map.box.width() * double(m.keys)), 0, m.keys - 1);
        const auto q = std::clamp<int64_t>(
            int64_t((at.y() - map.box.top()) / map.box.height() * double(m.queries)), 0,
            m.queries - 1);
        auto token = [&](int64_t i) {
            return i < int64_t(m.labels.size())
                       ? QStringLiteral(" (%1)").arg(QString::fromStdString(m.labels[size_t(i)]))
                       : QString();
        };
        return tr("run %1, step %2: layer %3, head %4\nquery %5%6 → key %7%8: weight %9")
            .arg(m_run + 1)
            .arg(m.step)
            .arg(map.layer)
            .arg(map.head)
            .arg(q)
            .arg(token(q))
            .arg(k)
            .arg(token(k))
            .arg(m.at(map.layer, map.head, q, k), 0, 'f', 3);
    }
    return {};
}

} // namespace headlab::ui
