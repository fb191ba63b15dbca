// FigureTabs.cpp — see FigureTabs.h.
#include "ui/app/window/FigureTabs.h"

#include "ui/figures/FigureExporter.h"
#include "ui/figures/FigureTable.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <set>

namespace headlab::ui {

namespace {
constexpr int kFrameMs = 40; // redraws are coalesced to at most one per 40 ms

QString figureTabName(const QString &id)
{
    const FigureSpec *spec = findFigure(id);
    return spec ? QCoreApplication::translate("Figure", spec->tab) : id;
}
} // namespace

FigureTabs::FigureTabs(SessionModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
{
    m_frameTimer = new QTimer(this);
    m_frameTimer->setSingleShot(true);
    m_frameTimer->setInterval(kFrameMs);
    connect(m_frameTimer, &QTimer::timeout, this, &FigureTabs::redraw);

    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tabs);
    for (const auto &id : figureIds()) {
        FigureView *f = createFigure(id, m_model, m_tabs);
        m_figures << f;
        m_tabs->addTab(f, figureTabName(id));
        // `runs` by value: selecting them redraws the figure that sent them.
        connect(f, &FigureView::runsActivated, this,
                [this](QList<int> runs) { Q_EMIT runsActivated(runs); });
        connect(f, &FigureView::viewStateChanged, this, &FigureTabs::viewStateChanged);
    }
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        if (auto *f = currentFigure()) f->refresh();
        // A tab hidden because the new session's task has no such figure moves the current tab:
        // that is not the user's choice, and must not overwrite the session's saved figure.
        if (!m_updatingTabs && !m_restoring) Q_EMIT viewStateChanged();
    });
    connect(m_model, &SessionModel::dataChanged, this, &FigureTabs::scheduleRedraw);
    connect(m_model, &SessionModel::runsReset, this, &FigureTabs::updateTabs);
}

FigureView *FigureTabs::figure(const QString &id) const
{
    for (auto *f : m_figures)
        if (f->figureId() == id) return f;
    return nullptr;
}

FigureView *FigureTabs::currentFigure() const
{
    return qobject_cast<FigureView *>(m_tabs->currentWidget());
}

void FigureTabs::showFigure(const QString &name)
{
    const FigureSpec *spec = findFigure(name);
    auto *f = spec ? figure(spec->id) : nullptr;
    if (f && m_tabs->isTabVisible(m_tabs->indexOf(f))) {
        m_tabs->setCurrentWidget(f);
        m_wantedFigure.clear();
    } else if (f) {
        m_wantedFigure =
            spec->id; // shown as soon as it applies (Inside the heads: once runs train)
    }
}

void FigureTabs::showTab(int index)
{
    if (index >= 0 && index < m_tabs->count() && m_tabs->isTabVisible(index))
        m_tabs->setCurrentIndex(index); // hidden: not this task's
}

void FigureTabs::updateTabs()
{
    m_updatingTabs = true;
    for (auto *f : m_figures) {
        const int i = m_tabs->indexOf(f);
        const bool applies = f->applies();
        if (m_tabs->isTabVisible(i) != applies) m_tabs->setTabVisible(i, applies);
    }
    m_updatingTabs = false;
    if (!m_wantedFigure.isEmpty()) showFigure(m_wantedFigure);
}

void FigureTabs::scheduleRedraw()
{
    if (!m_frameTimer->isActive()) m_frameTimer->start();
}

void FigureTabs::redraw()
{
    // Only the figure on screen is redrawn; the others catch up when their tab is shown.
    QElapsedTimer clock;
    clock.start();
    updateTabs();
    if (auto *f = currentFigure()) f->refresh();
    Q_EMIT redrawn();
    const double ms = double(clock.nsecsElapsed()) / 1e6;
    ++m_redrawStats.frames;
    m_redrawStats.totalMs += ms;
    m_redrawStats.maxMs = std::max(m_redrawStats.maxMs, ms);
}

void FigureTabs::setSelectedRuns(const QList<int> &runs)
{
    for (auto *f : m_figures) f->setSelectedRuns(runs);
}

void FigureTabs::applyTheme(const ChartTheme &theme)
{
    for (auto *f : m_figures) f->applyTheme(theme);
}

void FigureTabs::saveViewState(ViewState &state) const
{
    for (auto *f : m_figures) f->saveViewState(state);
    if (auto *f = currentFigure()) state["chart"] = f->figureId().toStdString();
}

void FigureTabs::restoreViewState(const Session &session, QString *problem)
{
    m_restoring = true;
    const ViewState &view = session.view;
    for (auto *f : m_figures) {
        f->setSelectedRuns({});
        f->restoreViewState(view);
    }
    auto it = view.find("chart");
    QString chart = it == view.end() ? QStringLiteral("loss") : QString::fromStdString(it->second);
    // A session that names no figure and scans η over several head dimensions opens on the
    // paper's collapse (issue 52 item 1): P(learned) against η·√m_H, from its grid, or the
    // Boundary tab's collapse for a search along η.
    if (it == view.end()) {
        std::set<double> rates;
        std::set<int64_t> headDims;
        for (const auto &run : session.runs) {
            rates.insert(run.config.lr);
            headDims.insert(headDimension(run.config));
        }
        if (headDims.size() > 1 && session.search && session.search->axis == "lr") {
            chart = QStringLiteral("boundary");
            if (auto *f = figure(chart)) f->restoreViewState({{"boundary.mode", "collapse_half"}});
        } else if (headDims.size() > 1 && rates.size() > 1) {
            chart = QStringLiteral("lr");
            if (auto *f = figure(chart))
                f->restoreViewState({{"lr.x", "lr_sqrt_mh"}, {"lr.y", "p_learned"}});
        }
    }
    // An id or an alias of the figure table; an unknown name is said, with the nearest one, and
    // the loss curves are shown instead.
    QString why;
    const QString id = resolveFigure(chart, &why);
    if (id.isEmpty()) {
        if (problem) *problem = tr("view.chart: %1").arg(why);
        chart = QStringLiteral("loss");
    } else {
        chart = id;
    }
    updateTabs();
    showFigure(chart);
    m_restoring = false;
}

void FigureTabs::exportCurrentFigure()
{
    FigureView *f = currentFigure();
    if (!f) return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export figure"), f->figureId() + ".png",
        tr("PNG image (*.png);;SVG drawing (*.svg);;CSV data (*.csv)"));
    if (path.isEmpty()) return;
    ViewState state;
    f->saveViewState(state);
    auto copy = FigureExporter::offscreenCopy(m_model, f->figureId(), state, f->selectedRuns(),
                                              m_exportSize);
    QString error;
    bool ok = false;
    if (path.endsWith(".svg", Qt::CaseInsensitive))
        ok = FigureExporter::writeSvg(copy.get(), path, m_exportSize, &error);
    else if (path.endsWith(".csv", Qt::CaseInsensitive))
        ok = FigureExporter::writeCsv(copy.get(), path, &error);
    else
        ok = FigureExporter::writePng(
            copy.get(), path.endsWith(".png", Qt::CaseInsensitive) ? path : path + ".png",
            m_exportSize, &error);
    if (ok)
        Q_EMIT message(tr("Exported %1").arg(path), 4000);
    else
        Q_EMIT failed(tr("Export"), error);
}

void FigureTabs::exportCurrentFigureCsv()
{
    FigureView *f = currentFigure();
    if (!f) return;
    const QString path = QFileDialog::getSaveFileName(this, tr("Export CSV"),
                                                      f->figureId() + ".csv", tr("CSV (*.csv)"));
    QString error;
    if (!path.isEmpty() && !FigureExporter::writeCsv(f, path, &error))
        Q_EMIT failed(tr("Export"), error);
}

void FigureTabs::exportAllFigures()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export all figures to"));
    if (dir.isEmpty()) return;
    ViewState state;
    for (auto *f : m_figures) f->saveViewState(state);
    QString error;
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const QStringList files = FigureExporter::exportAll(m_model, dir, m_exportSize, state, &error);
    QApplication::restoreOverrideCursor();
    if (!error.isEmpty())
        Q_EMIT failed(tr("Export all"), error);
    else
        Q_EMIT message(tr("Wrote %n file(s) to %1", "", int(files.size())).arg(dir), 6000);
}

} // namespace headlab::ui
