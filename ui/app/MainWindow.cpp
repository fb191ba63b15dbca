// MainWindow.cpp — the main window's construction: actions, menus, docks and tabs, status, theme and
// presenter mode. The session document (MainWindowDocument.cpp), sweep control
// (MainWindowSweep.cpp) and the figure tabs (MainWindowFigures.cpp) are in files of their own.
#include "ui/app/MainWindow.h"

#include "core/session/Presets.h"
#include "core/session/Replicates.h"
#include "core/session/RunFilter.h"
#include "core/session/SessionStore.h"
#include "core/session/search/SearchReport.h"
#include "ui/app/ExperimentForm.h"
#include "ui/app/LessonStrip.h"
#include "ui/app/ProgressBarDelegate.h"
#include "ui/app/SamplesView.h"
#include "ui/app/window/ElidedLabel.h"
#include "ui/app/window/RunsPanel.h"
#include "ui/app/window/SessionFiles.h"
#include "ui/app/window/SweepControl.h"
#include "ui/figures/FigureExporter.h"
#include "ui/figures/FigureTable.h"
#include "ui/figures/HeatmapView.h"
#include "ui/figures/LossChartView.h"
#include "ui/model/ColourTable.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/RunTableModel.h"
#include "ui/model/SessionModel.h"
#include "ui/model/TrainingController.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include <cstdio>
#include <functional>

#include <cstring>
#include <random>
#include <unistd.h>

namespace headlab::ui {

namespace {

QPalette darkPalette()
{
    QPalette p;
    p.setColor(QPalette::Window, QColor(37, 37, 42));
    p.setColor(QPalette::WindowText, QColor(225, 225, 230));
    p.setColor(QPalette::Base, QColor(28, 28, 32));
    p.setColor(QPalette::AlternateBase, QColor(44, 44, 50));
    p.setColor(QPalette::ToolTipBase, QColor(50, 50, 56));
    p.setColor(QPalette::ToolTipText, QColor(230, 230, 235));
    p.setColor(QPalette::Text, QColor(225, 225, 230));
    p.setColor(QPalette::Button, QColor(48, 48, 54));
    p.setColor(QPalette::ButtonText, QColor(225, 225, 230));
    p.setColor(QPalette::Highlight, QColor(60, 110, 190));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(110, 160, 240));
    p.setColor(QPalette::PlaceholderText, QColor(140, 140, 150));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(120, 120, 128));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(120, 120, 128));
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(120, 120, 128));
    return p;
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
{
    m_systemPalette = QApplication::palette();
    m_normalFont = QApplication::font();
    m_model = new SessionModel(this);
    m_controller = new TrainingController(this);
    m_files = new SessionFiles(m_model, m_controller, this);
    m_watchTimer = new QTimer(this);
    m_watchTimer->setInterval(2000);
    connect(m_watchTimer, &QTimer::timeout, m_files, &SessionFiles::watchDisk);
    m_watchTimer->start();

    buildActions();
    buildLayout();
    m_sweep = new SweepControl(m_model, m_controller, m_form, m_files, this);
    buildMenus();

    // The session's files: the view is written into the session before each save; what other
    // processes wrote, and a run that could not be written, are said.
    connect(m_files, &SessionFiles::aboutToSave, this, &MainWindow::saveView);
    connect(m_files, &SessionFiles::recentFilesChanged, this, &MainWindow::rebuildRecentMenu);
    connect(m_files, &SessionFiles::resultsArrived, this,
            [this] { m_form->setPendingRuns(runsToStart()); });
    connect(m_files, &SessionFiles::watchingChanged, this, &MainWindow::updateStatus);
    connect(m_files, &SessionFiles::storeFailed, this, [this](const QString &why) {
        if (m_interactive)
            QMetaObject::invokeMethod(
                this, [this, why] { showError(tr("Results could not be saved"), why); },
                Qt::QueuedConnection);
        else
            std::fprintf(stderr, "headlab: %s\n", qPrintable(why));
    });
    connect(m_sweep, &SweepControl::stateChanged, this, [this] {
        updateActions();
        updateStatus();
    });
    auto say = [this](const QString &text, int ms) { statusBar()->showMessage(text, ms); };
    connect(m_files, &SessionFiles::message, this, say);
    connect(m_sweep, &SweepControl::message, this, say);
    connect(m_sweep, &SweepControl::failed, this, &MainWindow::showError);

    // Training → model (queued, GUI thread) → coalesced redraw.
    connect(m_controller, &TrainingController::progress, m_model, &SessionModel::applyProgress);
    connect(m_controller, &TrainingController::runFinished, this,
            [this](int run, const RunResult &r) {
                m_model->applyResult(run, r);
                if (selectedRuns().contains(run)) m_samples->refresh();
                m_files->storeFinishedRun(run);
            });
    connect(m_controller, &TrainingController::stateChanged, this, &MainWindow::updateActions);
    // The Heads view's live attention maps: what it wants goes to the training thread, what comes
    // back to the model.
    connect(m_model, &SessionModel::attentionRequestChanged, m_controller,
            &TrainingController::setAttentionWanted);
    connect(m_controller, &TrainingController::attentionMaps, m_model,
            &SessionModel::setLiveAttention);
    // Another session (opened, a preset, the form): the strip offers its values. Deferred: a
    // strip button's own click may have led here, and its button must outlive the click.
    connect(m_model, &SessionModel::runsReset, this, [this] {
        // Not while a press waits for the sweep to stop: the buttons hold that press.
        QTimer::singleShot(0, this, [this] {
            if (m_lessonScroll->isVisible() && !m_lessonPressPending) showLessonStrip();
        });
    });
    m_figureTabs->updateTabs(); // the default session's task
    updateSamplesDock();
    connect(m_model, &SessionModel::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_model, &SessionModel::filePathChanged, this, &MainWindow::updateTitle);
    connect(m_model, &SessionModel::filePathChanged, m_files, &SessionFiles::markShown);

    // Form → session: the sweep is re-expanded; finished runs whose configuration did not change
    // keep their results.
    connect(m_form, &ExperimentForm::definitionChanged, this, [this](const Session &def) {
        if (m_controller->isRunning()) return;
        m_model->setSweep(def);
        m_form->setPendingRuns(runsToStart());
        updateTitle();
    });
    connect(m_form, &ExperimentForm::startAllowedChanged, this, [this] { updateActions(); });

    setWindowIcon(QIcon::fromTheme(QStringLiteral("applications-science")));
    // 1440 x 900, or less where the screen's available area is smaller.
    const QRect available = screen() ? screen()->availableGeometry() : QRect(0, 0, 1440, 900);
    resize(std::min(1440, int(available.width() * 0.95)),
           std::min(900, int(available.height() * 0.92)));
    // The form as wide as it wants (its phase table whole), up to 40 % of the window; narrower
    // windows scroll it sideways rather than squeeze the figures.
    resizeDocks({m_formDock}, {std::min(m_form->sizeHint().width() + 24, int(width() * 0.4))},
                Qt::Horizontal);
    newSession();
}

MainWindow::~MainWindow()
{
    m_controller->stop();
    m_controller->waitForFinished();
}

void MainWindow::buildActions()
{
    m_new = new QAction(tr("&New"), this);
    m_new->setShortcut(QKeySequence::New);
    m_open = new QAction(tr("&Open…"), this);
    m_open->setShortcut(QKeySequence::Open);
    m_save = new QAction(tr("&Save"), this);
    m_save->setShortcut(QKeySequence::Save);
    m_saveAs = new QAction(tr("Save &As…"), this);
    m_saveAs->setShortcut(QKeySequence::SaveAs);
    m_quit = new QAction(tr("&Quit"), this);
    m_quit->setShortcut(QKeySequence::Quit);
    m_start = new QAction(tr("&Start sweep"), this);
    m_start->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_start->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
    m_pause = new QAction(tr("&Pause"), this);
    m_pause->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    m_pause->setIcon(style()->standardIcon(QStyle::SP_MediaPause));
    m_stop = new QAction(tr("S&top"), this);
    m_stop->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    m_stop->setIcon(style()->standardIcon(QStyle::SP_MediaStop));
    m_runSelected = new QAction(tr("Run selected"), this);
    m_runSelected->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    m_stopSelected = new QAction(tr("Stop selected"), this);
    m_pauseSelected = new QAction(tr("Pause selected"), this);
    m_pauseSelected->setToolTip(
        tr("Pauses the selected runs; runs trained with them in one ensemble hold too"));
    m_rerun = new QAction(tr("Rerun selected"), this);
    m_rerunSeed = new QAction(tr("Rerun with another seed…"), this);
    m_exportFigure = new QAction(tr("&Export figure…"), this);
    m_exportFigure->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    m_exportAll = new QAction(tr("Export &all figures…"), this);
    m_exportAll->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    m_exportSizeAction = new QAction(tr("Export size…"), this);
    m_presenterAction = new QAction(tr("&Presenter mode"), this);
    m_presenterAction->setCheckable(true);
    m_presenterAction->setShortcuts({QKeySequence(Qt::Key_F11), QKeySequence(Qt::Key_F5)});

    connect(m_new, &QAction::triggered, this, [this] {
        if (confirmDiscard()) newSession();
    });
    connect(m_open, &QAction::triggered, this, [this] {
        if (!confirmDiscard()) return;
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open session"), QString(),
            tr("HeadLab sessions (*.yaml *.yml *.yaml.gz);;HeadLab reports (*.html)"));
        if (!path.isEmpty()) openSession(path);
    });
    connect(m_save, &QAction::triggered, this, &MainWindow::saveSession);
    connect(m_saveAs, &QAction::triggered, this, [this] {
        QString path = QFileDialog::getSaveFileName(this, tr("Save session"), m_model->filePath(),
                                                    tr("HeadLab sessions (*.yaml)"));
        if (path.isEmpty()) return;
        if (QFileInfo(path).suffix().isEmpty()) path += ".yaml";
        saveSessionAs(path);
    });
    connect(m_quit, &QAction::triggered, this, &QWidget::close);
    connect(m_start, &QAction::triggered, this, &MainWindow::startSweep);
    connect(m_pause, &QAction::triggered, this, &MainWindow::pauseOrResume);
    connect(m_stop, &QAction::triggered, this, &MainWindow::stopSweep);
    connect(m_runSelected, &QAction::triggered, this, [this] {
        std::vector<int> runs;
        for (int i : selectedRuns()) runs.push_back(i);
        startRuns(runs);
    });
    connect(m_stopSelected, &QAction::triggered, this, [this] {
        for (int i : selectedRuns()) m_controller->stopRun(i);
    });
    connect(m_pauseSelected, &QAction::triggered, this, [this] {
        const auto runs = selectedRuns();
        bool anyPaused = false;
        for (int i : runs) anyPaused = anyPaused || m_controller->isRunPaused(i);
        for (int i : runs) {
            if (anyPaused)
                m_controller->resumeRun(i);
            else
                m_controller->pauseRun(i);
        }
        updateActions();
    });
    connect(m_rerun, &QAction::triggered, this, [this] { rerunSelected(false); });
    connect(m_rerunSeed, &QAction::triggered, this, [this] { rerunSelected(true); });
    // The figure panel is built after the actions.
    connect(m_exportFigure, &QAction::triggered, this,
            [this] { m_figureTabs->exportCurrentFigure(); });
    connect(m_exportAll, &QAction::triggered, this, [this] { m_figureTabs->exportAllFigures(); });
    connect(m_exportSizeAction, &QAction::triggered, this, [this] {
        bool ok = false;
        const QString text = QInputDialog::getText(
            this, tr("Export size"), tr("Width × height in pixels:"), QLineEdit::Normal,
            QStringLiteral("%1x%2").arg(exportSize().width()).arg(exportSize().height()), &ok);
        if (!ok) return;
        const auto parts =
            text.split(QRegularExpression(QStringLiteral("[x×, ]+")), Qt::SkipEmptyParts);
        if (parts.size() == 2 && parts[0].toInt() >= 100 && parts[1].toInt() >= 100)
            m_figureTabs->setExportSize(QSize(parts[0].toInt(), parts[1].toInt()));
        else
            showError(
                tr("Export size"),
                tr("'%1' is not a size such as 1600x1000 (at least 100 each way).").arg(text));
    });
    connect(m_presenterAction, &QAction::toggled, this, &MainWindow::setPresenterMode);
}

void MainWindow::buildMenus()
{
    buildFileMenu();
    buildPresetMenu();
    buildRunMenu();
    buildViewMenu();
    buildHelpMenu();
}

// Help: the shortcuts, the presets and what each shows, the tour, about.
void MainWindow::buildHelpMenu()
{
    auto *help = menuBar()->addMenu(tr("&Help"));
    auto page = [this](const QString &title, const QString &markdown) {
        if (!m_interactive) return;
        auto *dialog = new QDialog(this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->setWindowTitle(title);
        auto *text = new QTextBrowser(dialog);
        text->setMarkdown(markdown);
        text->setOpenExternalLinks(true);
        auto *layout = new QVBoxLayout(dialog);
        layout->addWidget(text);
        auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
        connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
        layout->addWidget(buttons);
        dialog->resize(760, 560);
        dialog->show();
    };
    auto *shortcuts = help->addAction(tr("&Keyboard shortcuts"));
    shortcuts->setShortcut(QKeySequence::HelpContents);
    connect(shortcuts, &QAction::triggered, this,
            [this, page] { page(tr("Keyboard shortcuts"), shortcutsText()); });
    connect(help->addAction(tr("&Presets and what each shows")), &QAction::triggered, this,
            [this, page] { page(tr("Presets"), presetsText()); });
    connect(help->addAction(tr("&Tour")), &QAction::triggered, this,
            [page] { page(tr("Tour"), tourText()); });
    help->addSeparator();
    connect(help->addAction(tr("&About HeadLab")), &QAction::triggered, this, [this, page] {
        page(tr("About HeadLab"),
             tr("**HeadLab %1** — how attention heads, head dimension and learning rate decide "
                "whether a transformer trains.\n\nLibTorch %2, Qt %3.")
                 .arg(QStringLiteral(HEADLAB_VERSION), QStringLiteral(HEADLAB_TORCH_VERSION),
                      QString::fromLatin1(qVersion())));
    });
}

QString MainWindow::shortcutsText() const
{
    QString out = tr("| action | shortcut |\n| --- | --- |\n");
    std::function<void(const QMenu *, const QString &)> walk = [&](const QMenu *menu,
                                                                   const QString &path) {
        for (QAction *a : menu->actions()) {
            const QString name = path + QString(a->text()).remove('&');
            if (a->menu()) {
                walk(a->menu(), name + QStringLiteral(" ▸ "));
                continue;
            }
            if (a->shortcut().isEmpty()) continue;
            out += QStringLiteral("| %1 | %2 |\n")
                       .arg(name, a->shortcut().toString(QKeySequence::NativeText));
        }
    };
    for (QAction *a : menuBar()->actions())
        if (a->menu()) walk(a->menu(), QString(a->text()).remove('&') + QStringLiteral(" ▸ "));
    return out;
}

QString MainWindow::presetsText() const
{
    QString out;
    for (const auto &preset : builtinPresets()) {
        // The opening comment of the preset's file says what it shows and how it was chosen.
        QStringList comment;
        for (const QString &line : QString::fromStdString(preset.yaml).split('\n')) {
            if (!line.startsWith('#')) break;
            comment << line.mid(1).trimmed();
        }
        out += QStringLiteral("### %1\n\n**%2**\n\n%3\n\n")
                   .arg(QString::fromStdString(preset.name),
                        QString::fromStdString(preset.description), comment.join(' '));
    }
    return out;
}

QString MainWindow::tourText()
{
    QFile file(QStringLiteral(":/headlab/TOUR.md"));
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

// File: new, open, recent, save, export, prune, quit.
void MainWindow::buildFileMenu()
{
    auto *file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_new);
    file->addAction(m_open);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    file->addAction(m_save);
    file->addAction(m_saveAs);
    file->addSeparator();
    file->addAction(m_exportFigure);
    auto *csv = file->addAction(tr("Export figure data as CSV…"));
    connect(csv, &QAction::triggered, m_figureTabs, &FigureTabs::exportCurrentFigureCsv);
    file->addAction(m_exportAll);
    file->addAction(m_exportSizeAction);
    // The session with every result inline, one self-contained YAML file (headlab-cli export-yaml).
    auto *single = file->addAction(tr("Export session as one YAML file…"));
    connect(single, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export session as one file"),
            QString::fromStdString(m_model->session().name) + "-all.yaml",
            tr("HeadLab sessions (*.yaml)"));
        if (path.isEmpty()) return;
        try {
            saveSessionAtomic(m_model->session(), path.toStdString());
            statusBar()->showMessage(tr("Exported %1").arg(path), 4000);
        } catch (const std::exception &e) {
            showError(tr("Export session"), QString::fromUtf8(e.what()));
        }
    });
    // The session as one web page that opens offline in any browser (headlab-cli report).
    m_exportReport = file->addAction(tr("Export report (web page)…"));
    m_exportReport->setToolTip(tr("One HTML file with every figure, the runs table and its filter, "
                                  "notes and tags, and the session itself: it opens offline in "
                                  "any browser, and HeadLab opens it as the session"));
    connect(m_exportReport, &QAction::triggered, this, [this] {
        QString path = QFileDialog::getSaveFileName(
            this, tr("Export report"), QString::fromStdString(m_model->session().name) + ".html",
            tr("Web pages (*.html)"));
        if (path.isEmpty()) return;
        if (QFileInfo(path).suffix().isEmpty()) path += ".html";
        exportReport(path);
    });
    // The session's own note and tags (each run's are the run table's Tags and Note columns).
    m_sessionNoteAction = file->addAction(tr("Session note and tags…"));
    connect(m_sessionNoteAction, &QAction::triggered, this, &MainWindow::editSessionNote);
    // Frees the disk finished runs' checkpoints take (headlab-cli prune): the final and plateau
    // checkpoints stay, for Inside the heads.
    auto *prune = file->addAction(tr("Prune checkpoints of finished runs…"));
    connect(prune, &QAction::triggered, this, [this] {
        if (m_controller->isRunning()) {
            showError(tr("Prune checkpoints"),
                      tr("Stop training first: the runs in training use their checkpoints."));
            return;
        }
        if (m_model->filePath().isEmpty()) {
            showError(tr("Prune checkpoints"), tr("Save the session first: it has no checkpoints "
                                                  "until it has a file."));
            return;
        }
        const auto answer = QMessageBox::question(
            this, tr("Prune checkpoints"),
            tr("Remove the checkpoints of finished runs, keeping each run's final checkpoint and "
               "those where its test loss entered or left a plateau? Unfinished runs keep "
               "theirs."));
        if (answer != QMessageBox::Yes) return;
        try {
            const auto p = m_model->pruneCheckpoints({"final", "plateau_entry", "plateau_exit"});
            statusBar()->showMessage(tr("Removed %1 checkpoint files of %2 finished runs (%3 MB); "
                                        "kept %4 (%5 MB)")
                                         .arg(p.removed)
                                         .arg(p.runs)
                                         .arg(double(p.bytesFreed) / 1e6, 0, 'f', 1)
                                         .arg(p.kept)
                                         .arg(double(p.bytesKept) / 1e6, 0, 'f', 1),
                                     8000);
            // Files it could not remove, then the links and foreign files it left alone.
            std::vector<std::string> lines = p.problems;
            lines.insert(lines.end(), p.leftAlone.begin(), p.leftAlone.end());
            if (!lines.empty())
                showError(tr("Prune checkpoints"),
                          QString::fromStdString(lines.front()) +
                              (lines.size() > 1 ? tr(" (and %1 more)").arg(lines.size() - 1)
                                                : QString()));
        } catch (const std::exception &e) {
            showError(tr("Prune checkpoints"), QString::fromUtf8(e.what()));
        }
    });
    file->addSeparator();
    file->addAction(m_quit);
    rebuildRecentMenu();
}

void MainWindow::editSessionNote()
{
    QDialog dialog(this);
    dialog.setObjectName(QStringLiteral("sessionNote"));
    dialog.setWindowTitle(tr("Session note and tags"));
    auto *form = new QFormLayout(&dialog);
    const Annotation &now = m_model->session().annotation;
    QStringList tags;
    for (const auto &tag : now.tags) tags << QString::fromStdString(tag);
    auto *tagsField = new QLineEdit(tags.join(' '), &dialog);
    tagsField->setObjectName(QStringLiteral("sessionTags"));
    tagsField->setPlaceholderText(tr("lesson-3 cpu draft"));
    tagsField->setToolTip(tr("Words separated by spaces: letters, digits and _ . : + - /"));
    auto *note = new QPlainTextEdit(QString::fromStdString(now.note), &dialog);
    note->setObjectName(QStringLiteral("sessionNoteText"));
    note->setPlaceholderText(tr("What this session is for, what to look at, what is left"));
    auto *problem = new QLabel(&dialog);
    problem->setObjectName(QStringLiteral("sessionNoteProblem"));
    problem->setStyleSheet(QStringLiteral("color: #c0392b"));
    problem->setWordWrap(true);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    form->addRow(tr("Tags"), tagsField);
    form->addRow(tr("Note"), note);
    form->addRow(problem);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, [&] {
        Annotation edited;
        edited.note = note->toPlainText().trimmed().toStdString();
        edited.tags = tagsFromText(tagsField->text().toStdString());
        QString why;
        if (!m_model->setSessionAnnotation(edited, &why)) {
            problem->setText(why); // the dialog stays, with what was typed
            return;
        }
        dialog.accept();
    });
    dialog.resize(520, 320);
    dialog.exec();
}

// Presets: the built-in sessions.
void MainWindow::buildPresetMenu()
{
    m_presetMenu = menuBar()->addMenu(tr("&Presets"));
    for (const auto &preset : builtinPresets()) {
        auto *a = m_presetMenu->addAction(QString::fromStdString(preset.name));
        a->setToolTip(QString::fromStdString(preset.description));
        a->setStatusTip(QString::fromStdString(preset.description));
        const QString name = QString::fromStdString(preset.name);
        connect(a, &QAction::triggered, this, [this, name] {
            if (confirmDiscard()) openPreset(name);
        });
    }
    m_presetMenu->setToolTipsVisible(true);
}

// Run: start, pause, stop, and the selected runs.
void MainWindow::buildRunMenu()
{
    auto *run = menuBar()->addMenu(tr("&Run"));
    run->addAction(m_start);
    run->addAction(m_pause);
    run->addAction(m_stop);
    run->addSeparator();
    run->addAction(m_runSelected);
    run->addAction(m_stopSelected);
    run->addAction(m_pauseSelected);
    run->addAction(m_rerun);
    run->addAction(m_rerunSeed);
}

// View: figures, presenter mode, the lesson strip, what learned means, the theme.
void MainWindow::buildViewMenu()
{
    auto *view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_presenterAction);
    m_lessonAction = view->addAction(tr("&Lesson strip"));
    m_lessonAction->setCheckable(true);
    m_lessonAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    m_lessonAction->setToolTip(tr("Large buttons for heads and η above the figures: a choice "
                                  "starts its runs at once, the old ones stay faintly"));
    connect(m_lessonAction, &QAction::toggled, this, [this](bool on) {
        if (on) showLessonStrip();
        m_lessonScroll->setVisible(on);
    });
    for (int i = 0; i < m_figureTabs->figures().size(); ++i) {
        auto *a = view->addAction(m_figureTabs->tabs()->tabText(i));
        a->setShortcut(QKeySequence(Qt::ALT | (Qt::Key_1 + i)));
        connect(a, &QAction::triggered, this, [this, i] { m_figureTabs->showTab(i); });
    }
    view->addSeparator();
    view->addAction(m_formDock->toggleViewAction());
    view->addAction(m_runsDock->toggleViewAction());
    auto *learnedMenu = view->addMenu(tr("Learned means"));
    m_learnedGroup = new QActionGroup(this);
    for (const auto &row : kLearnedRuleRows) { // every rule, as LearnedRule.h lists them
        const LearnedRule rule = row.rule;
        auto *a = learnedMenu->addAction(QString::fromUtf8(row.description));
        a->setCheckable(true);
        a->setData(int(rule));
        m_learnedGroup->addAction(a);
        connect(a, &QAction::triggered, this, [this, rule] { m_model->setLearnedRule(rule); });
    }
    auto *theme = view->addMenu(tr("Theme"));
    m_themeGroup = new QActionGroup(this);
    const QStringList names = {tr("Follow the system"), tr("Light"), tr("Dark")};
    for (int i = 0; i < 3; ++i) {
        auto *a = theme->addAction(names[i]);
        a->setCheckable(true);
        a->setChecked(i == 0);
        m_themeGroup->addAction(a);
        connect(a, &QAction::triggered, this, [this, i] { setThemeMode(i); });
    }

    auto *tools = addToolBar(tr("Run"));
    tools->setObjectName(QStringLiteral("runToolbar"));
    tools->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    tools->addAction(m_start);
    tools->addAction(m_pause);
    tools->addAction(m_stop);
    tools->addSeparator();
    tools->addAction(m_exportFigure);
    tools->addAction(m_exportAll);
    tools->addSeparator();
    tools->addAction(m_presenterAction);
}

void MainWindow::buildLayout()
{
    m_figureTabs = new FigureTabs(m_model, this);
    // The status bar says how many a click selected (issue 50), and where their curves are.
    connect(m_figureTabs, &FigureTabs::runsActivated, this, [this](QList<int> runs) {
        selectRuns(runs);
        statusBar()->showMessage(
            currentFigure() != figure("loss") && runs.size() <= 12
                ? tr("Selected %n run(s); their curves are on the Loss curves tab", "",
                     int(runs.size()))
                : tr("Selected %n run(s)", "", int(runs.size())),
            4000);
    });
    connect(m_figureTabs, &FigureTabs::viewStateChanged, this, &MainWindow::saveView);
    connect(m_figureTabs, &FigureTabs::redrawn, this, &MainWindow::updateStatus);
    connect(m_figureTabs, &FigureTabs::message, this,
            [this](const QString &text, int ms) { statusBar()->showMessage(text, ms); });
    connect(m_figureTabs, &FigureTabs::failed, this, &MainWindow::showError);
    // The lesson strip above the figures (View ▸ Lesson strip): kept in presenter mode.
    // It scrolls sideways where the window is narrower than its buttons: the window must not
    // grow past the screen for it.
    m_lessonStrip = new LessonStrip(this);
    connect(m_lessonStrip, &LessonStrip::lessonChanged, this, &MainWindow::startLesson);
    connect(m_lessonStrip, &LessonStrip::clearEarlier, this, &MainWindow::clearLessonGhosts);
    m_lessonScroll = new LessonStripArea(m_lessonStrip, this);
    m_lessonScroll->hide();
    auto *central = new QWidget(this);
    auto *centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(0);
    centralLayout->addWidget(m_lessonScroll);
    centralLayout->addWidget(m_figureTabs, 1);
    setCentralWidget(central);

    m_form = new ExperimentForm(this);
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(m_form);
    scroll->setWidgetResizable(true);
    // As wide as the form wants where the screen allows; on a small screen narrower, scrolled
    // sideways (its 530 px were part of a minimum window width past 1280 px).
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    scroll->setMinimumWidth(std::min(m_form->sizeHint().width() + 24, 340));
    m_formDock = new QDockWidget(tr("Experiment"), this);
    m_formDock->setObjectName(QStringLiteral("experimentDock"));
    m_formDock->setWidget(scroll);
    addDockWidget(Qt::LeftDockWidgetArea, m_formDock);

    buildRunDocks();

    m_sweepProgress = new QProgressBar(this);
    m_sweepProgress->setRange(0, 1000);
    m_sweepProgress->setMaximumWidth(260);
    m_sweepProgress->setTextVisible(true);
    m_sweepLabel = new ElidedLabel(this); // "host-a, host-b, … running elsewhere": elided
    statusBar()->addPermanentWidget(m_sweepLabel);
    statusBar()->addPermanentWidget(m_sweepProgress);
}

// The run table and, beside it, the samples the selected text runs write: the bottom docks.
void MainWindow::buildRunDocks()
{
    m_runs = new RunsPanel(
        m_model, {m_runSelected, m_stopSelected, m_pauseSelected, m_rerun, m_rerunSeed}, this);
    connect(m_runs, &RunsPanel::selectionChanged, this, [this](const QList<int> &runs) {
        m_figureTabs->setSelectedRuns(runs);
        m_samples->setRuns(runs);
        updateActions();
    });
    m_runsDock = new QDockWidget(tr("Runs"), this);
    m_runsDock->setObjectName(QStringLiteral("runsDock"));
    m_runsDock->setWidget(m_runs);
    addDockWidget(Qt::BottomDockWidgetArea, m_runsDock);
    // Text runs: what the selected runs' trained models write, beside the run table.
    m_samples = new SamplesView(m_model, this);
    m_samplesDock = new QDockWidget(tr("Samples"), this);
    m_samplesDock->setObjectName(QStringLiteral("samplesDock"));
    m_samplesDock->setWidget(m_samples);
    addDockWidget(Qt::BottomDockWidgetArea, m_samplesDock);
    splitDockWidget(m_runsDock, m_samplesDock, Qt::Horizontal);
    connect(m_model, &SessionModel::runsReset, this, &MainWindow::updateSamplesDock);
    resizeDocks({m_runsDock}, {230}, Qt::Vertical);
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

void MainWindow::updateTitle()
{
    QString name = m_model->filePath().isEmpty() ? QString::fromStdString(m_model->session().name)
                                                 : QFileInfo(m_model->filePath()).fileName();
    if (name.isEmpty()) name = tr("untitled");
    setWindowTitle(QStringLiteral("%1[*] — HeadLab").arg(name));
    setWindowModified(m_model->isModified());
}

void MainWindow::updateActions()
{
    const bool running = m_controller->isRunning();
    const bool paused = m_controller->isPaused();
    const bool canStart = !running && m_form->canStart();
    m_start->setEnabled(canStart);
    m_start->setToolTip(canStart ? tr("Start every pending run (Ctrl+R)") : m_form->blockReason());
    m_start->setStatusTip(m_start->toolTip());
    m_pause->setEnabled(running);
    m_pause->setText(paused ? tr("&Resume") : tr("&Pause"));
    m_pause->setIcon(style()->standardIcon(paused ? QStyle::SP_MediaPlay : QStyle::SP_MediaPause));
    m_stop->setEnabled(running);
    const bool hasSelection = !selectedRuns().isEmpty();
    m_runSelected->setEnabled(!running && hasSelection);
    m_stopSelected->setEnabled(running && hasSelection);
    m_pauseSelected->setEnabled(running && hasSelection);
    {
        bool anyPaused = false;
        for (int i : selectedRuns()) anyPaused = anyPaused || m_controller->isRunPaused(i);
        m_pauseSelected->setText(anyPaused ? tr("Resume selected") : tr("Pause selected"));
    }
    m_rerun->setEnabled(!running && hasSelection);
    m_rerunSeed->setEnabled(!running && hasSelection);
    m_new->setEnabled(!running);
    m_open->setEnabled(!running);
    if (m_presetMenu) m_presetMenu->setEnabled(!running);
    if (m_recentMenu) m_recentMenu->setEnabled(!running);
}

void MainWindow::updateStatus()
{
    const bool running = m_controller->isRunning();
    int done = 0, total = int(m_model->activeRuns().size());
    for (int i : m_model->activeRuns())
        if (i < m_model->runCount() && isFinished(m_model->run(i).result.status)) ++done;
    if (total == 0) {
        int64_t steps = 0, allSteps = 0;
        for (int i = 0; i < m_model->runCount(); ++i) {
            const auto &run = m_model->run(i);
            done += isFinished(run.result.status);
            allSteps += run.config.totalSteps();
            steps += isFinished(run.result.status)
                         ? run.config.totalSteps()
                         : std::min(run.result.stepsDone, run.config.totalSteps());
        }
        total = m_model->runCount();
        if (!m_files->watching()
                 .isEmpty()) { // a sweep trained elsewhere: its steps so far, from run files and checkpoints
            m_sweepProgress->setValue(allSteps ? int(steps * 1000 / allSteps) : 0);
            m_sweepProgress->setFormat(tr("%1 / %2 runs · %p%").arg(done).arg(total));
            m_sweepLabel->setText(m_files->watching());
            return;
        }
        m_sweepProgress->setValue(total ? done * 1000 / total : 0);
        m_sweepProgress->setFormat(tr("%1 / %2 runs").arg(done).arg(total));
        m_sweepLabel->setText(QString());
        return;
    }
    m_sweepProgress->setValue(int(m_model->sweepFraction() * 1000));
    m_sweepProgress->setFormat(tr("%1 / %2 runs · %p%").arg(done).arg(total));
    // "ETA ≤": a run may still end early (stop_after_learned), so the sweep may end sooner.
    if (running)
        m_sweepLabel->setText(m_controller->isPaused()
                                  ? tr("Paused")
                                  : (m_model->sweepEtaIsAtMost() ? tr("ETA ≤ %1") : tr("ETA %1"))
                                        .arg(formatDuration(m_model->sweepEtaSeconds())));
    else
        m_sweepLabel->setText(QString());
}

QTableView *MainWindow::runTable() const
{
    return m_runs->table();
}
QLineEdit *MainWindow::runFilter() const
{
    return m_runs->filter();
}
QLabel *MainWindow::runFilterStatus() const
{
    return m_runs->filterStatus();
}

QList<int> MainWindow::selectedRuns() const
{
    return m_runs->selectedRuns();
}

void MainWindow::selectRuns(const QList<int> &runs)
{
    m_runs->selectRuns(runs);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (m_controller->isRunning() && m_interactive) {
        const auto answer =
            QMessageBox::question(this, tr("A sweep is running"),
                                  tr("Stop the sweep and close? Finished runs are kept; the runs "
                                     "in progress are stopped."),
                                  QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
        if (answer != QMessageBox::Yes) {
            event->ignore();
            return;
        }
    }
    if (m_controller->isRunning()) {
        m_controller->stop();
        m_controller->waitForFinished();
        m_controller->deliverPosted(); // the Stopped results
        m_model->settleAfterSweep();
    }
    if (!confirmDiscard()) {
        event->ignore();
        return;
    }
    if (m_model->filePath().isEmpty()) { // an untitled session left unsaved: its autosave goes too
        m_model->setSession(Session{});
        m_files->discardAutosave();
    }
    event->accept();
}

void MainWindow::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange ||
        event->type() == QEvent::ApplicationPaletteChange || event->type() == QEvent::ThemeChange)
        applyTheme();
    QMainWindow::changeEvent(event);
}

void MainWindow::applyTheme()
{
    const ChartTheme theme = ChartTheme::current();
    m_runs->setDarkTheme(theme.dark);
    m_figureTabs->applyTheme(theme);
}

void MainWindow::setThemeMode(int mode)
{
    if (mode == 0) {
        QApplication::setPalette(m_systemPalette);
    } else {
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(mode == 2 ? darkPalette()
                                           : QApplication::style()->standardPalette());
    }
    applyTheme();
}

void MainWindow::setPresenterMode(bool on)
{
    if (on == m_presenter) return;
    m_presenter = on;
    {
        const QSignalBlocker block(m_presenterAction);
        m_presenterAction->setChecked(on);
    }
    // One switch, drawn once: no frame shows the new fonts in the old layout (F11 mid-run gave
    // about a second of it).
    setUpdatesEnabled(false);
    const double scale =
        ChartTheme::presenterScaleFor(screen() ? screen()->geometry().height() : 1080);
    ChartTheme::setPresenterMode(on, scale);
    if (on) {
        m_layoutBeforePresenter = saveState();
        // The figure's own controls stay (a teacher changes the view in front of the class); the
        // form and the run table make room for the figure.
        // Every control at the figures' scale: twice the desk size at 1080 lines.
        QFont big = m_normalFont;
        big.setPointSizeF(m_normalFont.pointSizeF() * scale);
        QApplication::setFont(big);
        m_formDock->hide();
        m_runsDock->hide();
        // A panel with nothing to show gives its room to the figure: the samples dock before a
        // text run has samples (it says "Select runs…", and the run table is hidden).
        m_samplesShownBeforePresenter = m_samplesDock->isVisible();
        if (!m_samples->hasSamples()) m_samplesDock->hide();
        for (auto *tb : findChildren<QToolBar *>()) tb->setIconSize(QSize(32, 32));
        // The whole screen even where no window manager acts on the full-screen request (a
        // kiosk session on a projector; Xvfb, where the screenshots are taken): the window
        // stayed at its normal 1440 × 900 there.
        m_geometryBeforePresenter = saveGeometry();
        if (screen()) setGeometry(screen()->geometry());
        showFullScreen();
    } else {
        QApplication::setFont(m_normalFont);
        restoreState(m_layoutBeforePresenter);
        m_formDock->show();
        m_runsDock->show();
        m_samplesDock->setVisible(m_samplesShownBeforePresenter);
        for (auto *tb : findChildren<QToolBar *>()) tb->setIconSize(QSize(22, 22));
        showNormal();
        restoreGeometry(m_geometryBeforePresenter);
    }
    applyTheme();
    if (m_lessonScroll->isVisible()) showLessonStrip(); // its buttons in the new type size
    QTimer::singleShot(0, this, [this, on] {
        // Back at the desk, once the desk type has reached every widget: the layouts had grown
        // the window to what the presenter type needed (5 to 33 px taller than the screen).
        if (!on) restoreGeometry(m_geometryBeforePresenter);
        setUpdatesEnabled(true);
        update();
    });
}

void MainWindow::showError(const QString &title, const QString &text)
{
    if (m_interactive) QMessageBox::warning(this, title, text);
    statusBar()->showMessage(text, 10000);
    qWarning("%s: %s", qPrintable(title), qPrintable(text));
}

QString MainWindow::untitledAutosavePath() const
{
    return m_files->untitledAutosavePath();
}
bool MainWindow::startSweep()
{
    return m_sweep->startSweep();
}
int MainWindow::runsToStart() const
{
    return m_sweep->runsToStart();
}
bool MainWindow::startRuns(const std::vector<int> &runIndices)
{
    return m_sweep->startRuns(runIndices);
}
void MainWindow::pauseOrResume()
{
    m_sweep->pauseOrResume();
}
void MainWindow::stopSweep()
{
    m_sweep->stop();
}
void MainWindow::stopForSignal(int signal)
{
    m_sweep->stopForSignal(signal);
}

} // namespace headlab::ui
