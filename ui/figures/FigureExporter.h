// FigureExporter.h — writes figures to PNG, SVG and CSV, one at a time or all at once.
//
// Export renders a fresh, never-shown copy of the figure at the requested size with the same view
// state and selection, without its controls, through QWidget::render: the one painting path that
// draws the screen draws the SVG and the PNG. Works headless (QT_QPA_PLATFORM=offscreen).
#pragma once

#include "ui/figures/FigureTable.h"
#include "ui/figures/FigureView.h"

#include <QSize>
#include <QString>
#include <QStringList>

#include <memory>

namespace headlab::ui {

class SessionModel;

class FigureExporter {
public:
    // Every figure "Export all" can write: the paper's Figures 1–5 and their variants, the
    // nearest-neighbour rank figure and the head-schedule figure.
    static QList<FigureExport> allFigures();

    static bool writePng(FigureView *figure, const QString &path, QSize size,
                         QString *error = nullptr);
    static bool writeSvg(FigureView *figure, const QString &path, QSize size,
                         QString *error = nullptr);
    static bool writeCsv(FigureView *figure, const QString &path, QString *error = nullptr);

    // A copy of a figure laid out at `size`, ready to render; never shown on screen.
    static std::unique_ptr<FigureView> offscreenCopy(SessionModel *model, const QString &figureId,
                                                     const ViewState &state,
                                                     const QList<int> &selectedRuns, QSize size);

    // Writes <stem>.png, <stem>.svg and <stem>.csv for every figure that applies to the session's
    // task into `dir` (created if needed). Returns the files written; on failure returns what was written and sets *error.
    static QStringList exportAll(SessionModel *model, const QString &dir, QSize size,
                                 const ViewState &state, QString *error = nullptr);
};

} // namespace headlab::ui
