// MainWindowFigures.cpp — the main window's figure tabs: which apply to the session, the frame
// timer's redraws, and export.
#include "ui/app/MainWindow.h"

#include "ui/app/SamplesView.h"
#include "ui/figures/FigureExporter.h"
#include "ui/figures/FigureTable.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include <QApplication>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QStatusBar>
#include <QTimer>

namespace headlab::ui {

FigureView *MainWindow::figure(const QString &id) const
{
    for (auto *f : m_figures)
        if (f->figureId() == id) return f;
    return nullptr;
}

FigureView *MainWindow::currentFigure() const
{
    return qobject_cast<FigureView *>(m_tabs->currentWidget());
}

void MainWindow::showFigure(const QString &name)
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

void MainWindow::updateFigureTabs()
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

void MainWindow::updateSamplesDock()
{
    // The samples dock belongs to tasks that generate text; shown when one is opened, hidden for
    // the others.
    const TaskSpec *spec = sessionTask(m_model->session());
    const bool text = spec && spec->producesSamples;
    if (text != m_samplesTask) {
        m_samplesTask = text;
        m_samplesDock->setVisible(text);
    }
    m_samples->refresh();
}

void MainWindow::scheduleRedraw()
{
    if (!m_frameTimer->isActive()) m_frameTimer->start();
}

void MainWindow::redraw()
{
    // Only the figure on screen is redrawn; the others catch up when their tab is shown.
    QElapsedTimer clock;
    clock.start();
    updateFigureTabs();
    if (auto *f = currentFigure()) f->refresh();
    updateStatus();
    const double ms = double(clock.nsecsElapsed()) / 1e6;
    ++m_redrawStats.frames;
    m_redrawStats.totalMs += ms;
    m_redrawStats.maxMs = std::max(m_redrawStats.maxMs, ms);
}

void MainWindow::exportCurrentFigure()
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
        statusBar()->showMessage(tr("Exported %1").arg(path), 4000);
    else
        showError(tr("Export"), error);
}

void MainWindow::exportAllFigures()
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
        showError(tr("Export all"), error);
    else
        statusBar()->showMessage(tr("Wrote %n file(s) to %1", "", int(files.size())).arg(dir),
                                 6000);
}

} // namespace headlab::ui
