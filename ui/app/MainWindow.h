// MainWindow.h — the HeadLab window: the experiment form (left), the figures (centre), the run
// table with its controls (bottom), the session menus, presets, export, presenter mode.
//
// The GUI thread never trains: TrainingController owns the sweep. Figures redraw from
// SessionModel on one ~40 ms single-shot frame timer, however fast progress arrives.
#pragma once

#include "ui/app/window/FigureTabs.h"

#include "core/config/RunResult.h"

#include <QMainWindow>
#include <QPalette>
#include <QSet>

#include <map>

class QAction;
class QActionGroup;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QScrollArea;
class QTabWidget;
class QTableView;
class QTimer;
class QLineEdit;
class QSortFilterProxyModel;

namespace headlab::ui {

class ElidedLabel;
class ExperimentForm;
class LessonStrip;
class LessonStripArea;
class SamplesView;
class SessionFiles;
class SweepControl;
class RunsPanel;
class SessionModel;
class TrainingController;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    SessionModel *model() const { return m_model; }
    TrainingController *controller() const { return m_controller; }
    ExperimentForm *form() const { return m_form; }
    LessonStrip *lessonStrip() const { return m_lessonStrip; }
    QAction *lessonAction() const { return m_lessonAction; }
    // File → Session note and tags…: a dialog (object name "sessionNote", its fields
    // "sessionNoteText" and "sessionTags") that edits the session's own note and tags.
    QAction *sessionNoteAction() const { return m_sessionNoteAction; }
    // File ▸ Export report: the session as one web page (core/report/HtmlReport.h); false with
    // the error shown when it could not be written.
    bool exportReport(const QString &path);
    // The Help menu's pages, as text (tests read them): every menu action that has a shortcut,
    // with it; every preset with its purpose (its file's opening comment); the tour.
    QString shortcutsText() const;
    QString presetsText() const;
    static QString tourText();
    QTableView *runTable() const;
    // The filter above the run table (core/session/RunFilter.h) and what it says: "12 of 75 runs
    // shown", or why the text is not a filter.
    QLineEdit *runFilter() const;
    QLabel *runFilterStatus() const;
    FigureTabs *figureTabs() const { return m_figureTabs; }
    FigureView *figure(const QString &id) const { return m_figureTabs->figure(id); }
    FigureView *currentFigure() const { return m_figureTabs->currentFigure(); }
    QAction *startAction() const { return m_start; }
    SamplesView *samplesView() const { return m_samples; }
    QDockWidget *samplesDock() const { return m_samplesDock; }

    // Without a person in front of it (tests, headless): no dialogs; questions take defaults.
    void setInteractive(bool interactive) { m_interactive = interactive; }

    bool openSession(const QString &path);
    bool openPreset(const QString &name);
    void newSession();
    // Where an untitled session's results go while it has no file: its own file, chosen when it
    // first needs one and never shared with another untitled session (a class's session found
    // the last class's checkpoints and resumed from them). Empty until then.
    QString untitledAutosavePath() const;
    bool saveSession();
    bool saveSessionAs(const QString &path);
    // After a crash: the sessions a HeadLab that is gone had shown (SessionFiles::crashedSessions)
    // go into Open recent, and the newest is offered: reopened on Yes (and by default without a
    // person), its untitled autosave removed on Discard, offered again next start on Later.
    // Returns the session reopened, or "".
    QString offerRecovery();

    // What trains: SweepControl.h.
    bool startSweep(); // every pending run (a boundary search: its next round first)
    // Runs Start would train: the pending ones, or a boundary search's next round.
    int runsToStart() const;
    bool startRuns(const std::vector<int> &runIndices);
    void pauseOrResume();
    void stopSweep();
    // SIGTERM/SIGHUP: stop the sweep, save, and leave the event loop with 128 + signal.
    void stopForSignal(int signal);
    SweepControl *sweepControl() const { return m_sweep; }
    SessionFiles *sessionFiles() const { return m_files; }
    void showFigure(const QString &id) { m_figureTabs->showFigure(id); }
    void setPresenterMode(bool on);
    bool presenterMode() const { return m_presenter; }
    QSize exportSize() const { return m_figureTabs->exportSize(); }

    // What the frame timer's redraws cost the GUI thread (tests report it).
    using RedrawStats = FigureTabs::RedrawStats;
    const RedrawStats &redrawStats() const { return m_figureTabs->redrawStats(); }

protected:
    void closeEvent(QCloseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void buildActions();
    void buildMenus(); // the four below
    void buildFileMenu();
    void buildPresetMenu();
    void buildRunMenu();
    void buildViewMenu();
    void buildHelpMenu();
    void buildLayout();
    void buildRunDocks();
    void updateTitle();
    void updateActions();
    void updateStatus();
    void applyTheme();
    void setThemeMode(int mode); // 0 system, 1 light, 2 dark
    void restoreView();
    void saveView();
    void rebuildRecentMenu();
    void offerResume();
    QList<int> selectedRuns() const;
    void selectRuns(const QList<int> &runs);
    bool confirmDiscard();
    void showError(const QString &title, const QString &text);
    void rerunSelected(bool newSeed);
    // The lesson strip's choice: stops what trains, keeps its curves faintly, sweeps the choice.
    void startLesson();
    void clearLessonGhosts(); // the strip's Clear
    bool m_samplesShownBeforePresenter = false;
    bool m_lessonPressPending = false; // a press waits for the running sweep to stop
    // Each lesson run's last drawn test curve, by configuration: a stopped run trained again
    // starts from nothing, and pressed away before its first evaluation its faint curve is this.
    std::map<std::string, headlab::Curve> m_lessonCurves;
    void showLessonStrip(); // its buttons for the session shown, its height for them
    QActionGroup *m_learnedGroup = nullptr; // View ▸ Learned means
    void updateSamplesDock();               // shown for text sessions only
    QTimer *m_watchTimer = nullptr;         // every 2 s: SessionFiles::watchDisk

    SessionModel *m_model;
    TrainingController *m_controller;
    SessionFiles *m_files; // the session's file, autosave, finished runs, other writers
    SweepControl *m_sweep; // start, stop, rerun, a search's rounds
    ExperimentForm *m_form;
    RunsPanel *m_runs;        // the run table and its filter
    FigureTabs *m_figureTabs; // the figure tabs, their redraws and export
    QDockWidget *m_formDock, *m_runsDock, *m_samplesDock;
    SamplesView *m_samples;
    QProgressBar *m_sweepProgress;
    // What trains elsewhere, or the ETA: elided, never widening the window.
    ElidedLabel *m_sweepLabel;
    QMenu *m_recentMenu = nullptr;
    QMenu *m_presetMenu = nullptr;
    QAction *m_new, *m_open, *m_save, *m_saveAs, *m_quit;
    QAction *m_start, *m_pause, *m_stop, *m_runSelected, *m_stopSelected, *m_rerun, *m_rerunSeed;
    QAction *m_pauseSelected; // pause / resume the selected runs
    QAction *m_exportFigure, *m_exportAll, *m_exportSizeAction, *m_presenterAction;
    QAction *m_lessonAction = nullptr;
    QAction *m_sessionNoteAction = nullptr;
    QAction *m_exportReport = nullptr;
    void editSessionNote();
    LessonStrip *m_lessonStrip = nullptr;
    LessonStripArea *m_lessonScroll = nullptr;
    QActionGroup *m_themeGroup;
    bool m_interactive = true;
    bool m_presenter = false;
    bool m_restoring = false;
    bool m_samplesTask = true; // the samples dock's visibility follows the task when it changes
    QPalette m_systemPalette;
    QFont m_normalFont;
    QByteArray m_layoutBeforePresenter;
    QByteArray m_geometryBeforePresenter; // the window's normal place and size
};

} // namespace headlab::ui
