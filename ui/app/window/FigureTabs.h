// FigureTabs.h — the window's figures: one tab per row of the figure table (FigureTable.h),
// shown where the row applies to the session's task; the frame timer that redraws the figure on
// screen at most every ~40 ms however fast progress arrives; the figures' part of a session's view
// state (each figure's settings and the figure shown); and export (the figure shown as PNG, SVG or
// CSV, or every figure into a folder).
#pragma once

#include "core/session/Session.h"
#include "ui/figures/FigureView.h"

#include <QList>
#include <QSize>
#include <QWidget>

class QTabWidget;
class QTimer;

namespace headlab::ui {

class SessionModel;

class FigureTabs : public QWidget {
    Q_OBJECT
public:
    explicit FigureTabs(SessionModel *model, QWidget *parent = nullptr);

    FigureView *figure(const QString &id) const;
    FigureView *currentFigure() const;
    const QList<FigureView *> &figures() const { return m_figures; }
    QTabWidget *tabs() const { return m_tabs; }
    // Shows the figure of an id or alias; one that does not apply yet (Inside the heads before
    // runs train) is shown as soon as it does.
    void showFigure(const QString &name);
    // Shows the tabs of the figures that apply to the session's task, hides the others.
    void updateTabs();
    // Shows the tab at `index` of the figure table, where it applies.
    void showTab(int index);
    void scheduleRedraw();
    void setSelectedRuns(const QList<int> &runs);
    void applyTheme(const ChartTheme &theme);

    // The figures' part of the view state: each figure's settings, and `chart`, the one shown.
    void saveViewState(ViewState &state) const;
    // Restores each figure's settings and shows the session's figure: its `chart`, or, where it
    // names none, the one that suits it (the collapse for η scanned over several head dimensions).
    // An unknown name is said in *problem, and the loss curves are shown.
    void restoreViewState(const Session &session, QString *problem);

    QSize exportSize() const { return m_exportSize; }
    void setExportSize(QSize size) { m_exportSize = size; }
    // Asks where, then writes the figure shown (PNG, SVG or CSV by the name's suffix) or every
    // figure into a folder; says what it wrote (message) or why not (failed).
    void exportCurrentFigure();
    void exportCurrentFigureCsv();
    void exportAllFigures();

    // What the frame timer's redraws cost the GUI thread (tests report it).
    struct RedrawStats {
        int frames = 0;
        double totalMs = 0;
        double maxMs = 0;
    };
    const RedrawStats &redrawStats() const { return m_redrawStats; }

Q_SIGNALS:
    void runsActivated(QList<int> runs); // a click in a figure chose these runs
    void viewStateChanged();             // a figure's settings, or the tab the user chose
    void redrawn();                      // after each frame
    void message(const QString &text, int milliseconds);
    void failed(const QString &title, const QString &text);

private:
    void redraw();

    SessionModel *m_model;
    QTabWidget *m_tabs;
    QList<FigureView *> m_figures;
    QTimer *m_frameTimer;
    QString m_wantedFigure;      // asked for (--figure, a session's view) before it applied
    bool m_updatingTabs = false; // tabs shown or hidden for the session's task, not by the user
    bool m_restoring = false;
    QSize m_exportSize{1600, 1000};
    RedrawStats m_redrawStats;
};

} // namespace headlab::ui
