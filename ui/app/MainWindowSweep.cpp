// MainWindowSweep.cpp — the main window's lesson strip (its choices start their runs at once, the
// old ones stay faintly) and the rerun of the selected runs; what trains is SweepControl's.
#include "ui/app/MainWindow.h"

#include "core/schema/RunConfigFields.h"
#include "core/session/SweepCheck.h"
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
    // From here on a head count keeps its colour through the lesson's presses.
    m_model->setViewState(kLessonColoursKey, m_lessonStrip->headColours().toStdString());
    // As tall as its buttons (which presenter mode enlarges) and its text need, and a scroll bar
    // where needed.
    m_lessonScroll->fit();
    // Again once the new type and the window's new size are laid out (presenter mode).
    QTimer::singleShot(0, m_lessonScroll, [area = m_lessonScroll] { area->fit(); });
}

void MainWindow::startLesson()
{
    const Session &shown = m_model->session();
    Session lesson = m_lessonStrip->lesson(shown);
    // A press that would leave the session unable to start is undone, and says why on screen
    // (a head count beside a swept head schedule, one that divides no width, ...); what trains
    // goes on.
    if (const SweepCheck check = checkSweep(lesson); !check.startable()) {
        m_lessonStrip->setSession(shown);
        const QString why =
            tr("That choice was undone: %1").arg(QString::fromStdString(check.refusal()));
        m_lessonStrip->showRefusal(why);
        statusBar()->showMessage(why, 10000);
        m_lessonScroll->fit();
        return;
    }
    m_lessonStrip->showRefusal({});
    // A running sweep stops first (its runs keep what they reached); the choice applies then,
    // as the strip's buttons are then (presses meanwhile included).
    if (m_controller->isRunning()) {
        m_lessonPressPending = true;
        m_sweep->stopThen([this] {
            m_lessonPressPending = false;
            startLesson();
        });
        return;
    }
    // The runs the choice leaves out become faint curves, in their colours, beside those of the
    // earlier presses; a configuration pressed again is a run again, not a ghost.
    m_model->setViewState(kLessonColoursKey, lesson.view.at(kLessonColoursKey));
    const ColourTable colours = colourTable(m_model->session());
    std::set<std::string> kept;
    {
        Session expanded = lesson;
        expandSweep(expanded);
        for (const auto &run : expanded.runs) kept.insert(yaml::canonicalYaml(run.config));
    }
    std::vector<LossChartView::Ghost> ghosts;
    for (const auto &run : shown.runs) {
        std::string key = yaml::canonicalYaml(run.config);
        if (!run.result.test.empty()) m_lessonCurves[key] = run.result.test;
        const auto drawn = m_lessonCurves.find(key);
        if (drawn != m_lessonCurves.end() && !kept.count(key))
            ghosts.push_back(
                {runLabel(shown, run), drawn->second, std::max(0, colours.indexOf(run)),
                 QStringLiteral("η = %1").arg(displayLabel(exactNumber(run.config.lr))),
                 std::move(key)});
    }
    m_model->setSweep(lesson);
    m_form->loadFrom(m_model->session());
    if (auto *loss = qobject_cast<LossChartView *>(figure("loss")))
        loss->addGhosts(std::move(ghosts), kept);
    m_lessonScroll->fit();
    updateTitle();
    if (startSweep()) showFigure(QStringLiteral("loss"));
}

void MainWindow::clearLessonGhosts()
{
    if (auto *loss = qobject_cast<LossChartView *>(figure("loss"))) loss->setGhosts({});
    m_lessonCurves.clear();
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
