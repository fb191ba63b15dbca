// UiTestWindows.h — what several UI tests do with a window: helpers over MainWindow's figures.
#pragma once

#include "ui/app/MainWindow.h"
#include "ui/figures/InsideHeadsView.h"

#include <QString>

namespace headlab::uitest {

// Inside the heads on `run` at its newest checkpoint, as a user opens it; nullptr (and *why)
// where the figure or the run's checkpoints are missing.
inline ui::InsideHeadsView *insideAtNewestCheckpoint(ui::MainWindow &window, int run, QString *why)
{
    window.showFigure(QStringLiteral("inside"));
    auto *view = window.findChild<ui::InsideHeadsView *>();
    if (!view) return (*why = QStringLiteral("no Inside the heads figure")), nullptr;
    view->setSelectedRuns({run});
    view->refresh();
    if (view->checkpoints().empty()) return (*why = view->message()), nullptr;
    view->setPosition(int(view->checkpoints().size()) - 1);
    return view;
}

} // namespace headlab::uitest
