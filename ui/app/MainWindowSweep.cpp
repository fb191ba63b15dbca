// MainWindowSweep.cpp — the main window's lesson strip (its choices start their runs at once, the
// old ones stay faintly) and the rerun of the selected runs; what trains is SweepControl's.
#include "ui/app/MainWindow.h"

#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "ui/app/ExperimentForm.h"
#include "ui/app/LessonStrip.h"
#include "ui/app/window/SweepControl.h"
#include "ui/figures/LossChartView.h"
#include "ui/model/ColourTable.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"
#include "ui/model/TrainingController.h"

#include <QApplication>
#include <QInputDialog>
#include <QScrollArea>
#include <QScrollBar>
#include <QStatusBar>
#include <QTimer>

#include <cstdio>

#include <random>

namespace headlab::ui {

void MainWindow::showLessonStrip()
{
    m_lessonStrip->setSession(m_model->session());
    // As tall as its buttons (which presenter mode enlarges) and its text need, and a scroll bar
    // where needed.
    m_lessonScroll->fit();
    // Again once the new type and the window's new size are laid out (presenter mode).
    QTimer::singleShot(0, m_lessonScroll, [area = m_lessonScroll] { area->fit(); });
}

void MainWindow::startLesson()
{
    // A running sweep stops first (its runs keep what they reached); the choice applies then.
    if (m_controller->isRunning()) {
        m_sweep->stopThen([this] { startLesson(); });
        return;
    }
    // The runs shown now become the faint comparison, in their colours.
    const Session &shown = m_model->session();
    const ColourTable colours = colourTable(shown);
    std::vector<LossChartView::Ghost> ghosts;
    for (const auto &run : shown.runs)
        if (!run.result.test.empty())
            ghosts.push_back(
                {runLabel(shown, run), run.result.test, std::max(0, colours.indexOf(run)),
                 QStringLiteral("η = %1").arg(displayLabel(exactNumber(run.config.lr)))});
    Session lesson = m_lessonStrip->lesson(shown);
    m_model->setSweep(lesson);
    m_form->loadFrom(m_model->session());
    if (auto *loss = qobject_cast<LossChartView *>(figure("loss"))) loss->setGhosts(ghosts);
    updateTitle();
    if (startSweep()) showFigure(QStringLiteral("loss"));
}

void MainWindow::rerunSelected(bool newSeed)
{
    const QList<int> runs = selectedRuns();
    if (runs.isEmpty() || m_controller->isRunning()) return;
    if (!newSeed) {
        m_sweep->rerun(runs, nullptr);
        return;
    }
    uint64_t seed = std::random_device{}() % 100000;
    if (m_interactive) {
        bool ok = false;
        seed = uint64_t(QInputDialog::getInt(this, tr("Rerun with another seed"), tr("Seed:"),
                                             int(seed), 0, 1 << 30, 1, &ok));
        if (!ok) return;
    }
    m_sweep->rerun(runs, &seed);
}

} // namespace headlab::ui
