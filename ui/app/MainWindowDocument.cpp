// MainWindowDocument.cpp — the main window's session document: new, open, presets, save, autosave,
// recent files, the view saved in the session, results other processes write, and what is discarded
// at close.
#include "ui/app/MainWindow.h"

#include "core/report/HtmlReport.h"
#include "core/session/Presets.h"
#include "core/session/RunFiles.h"
#include "core/session/SessionStore.h"
#include "ui/app/ExperimentForm.h"
#include "ui/app/window/SessionFiles.h"
#include "ui/figures/FigureTable.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"
#include "ui/model/TrainingController.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>

#include <cstdio>
#include <set>

#include <unistd.h>

namespace headlab::ui {

void MainWindow::newSession()
{
    Session s;
    try {
        s = loadPreset(kDefaultPreset);
    } catch (const std::exception &) {
        s.name = "untitled";
    }
    s.name = "untitled";
    expandSweep(s);
    m_model->setSession(std::move(s));
    m_files->discardAutosave();
    m_form->loadFrom(m_model->session());
    restoreView();
    updateTitle();
    updateActions();
    updateStatus();
}

bool MainWindow::openPreset(const QString &name)
{
    try {
        Session s = loadPreset(name.toStdString());
        expandSweep(s);
        m_model->setSession(std::move(s));
        m_files->discardAutosave();
    } catch (const SessionError &e) {
        showError(tr("Preset"), QString::fromUtf8(e.what()));
        return false;
    }
    m_form->loadFrom(m_model->session());
    m_form->setPendingRuns(runsToStart());
    restoreView();
    updateTitle();
    updateActions();
    updateStatus();
    statusBar()->showMessage(
        tr("Preset %1: %2").arg(name, QString::fromStdString(m_model->session().description)),
        8000);
    return true;
}

bool MainWindow::openSession(const QString &path)
{
    try {
        m_model->load(path);
    } catch (const std::exception &e) {
        showError(tr("Open session"), QString::fromUtf8(e.what()));
        return false;
    }
    m_files->discardAutosave();
    m_form->loadFrom(m_model->session());
    m_form->setPendingRuns(runsToStart());
    restoreView();
    if (const std::string missing = missingResultsMessage(m_model->session(), path.toStdString());
        !missing.empty()) {
        statusBar()->showMessage(tr("Results missing: finished runs are not trained again"), 0);
        showError(tr("Open session"), QString::fromStdString(missing));
    }
    if (const auto &unreadable = m_model->session().unreadableRunFiles; !unreadable.empty()) {
        QStringList lines;
        for (const auto &line : unreadable) lines << QString::fromStdString(line);
        showError(tr("Open session"),
                  tr("%n run file(s) could not be read; every other run is open:\n", "",
                     int(lines.size())) +
                      lines.join('\n'));
    }
    m_files->addRecentFile(path);
    updateTitle();
    updateActions();
    updateStatus();
    offerResume();
    return true;
}

void MainWindow::offerResume()
{
    const auto pending = pendingRuns(m_model->session());
    if (pending.empty()) return;
    bool started = false;
    for (const auto &run : m_model->session().runs)
        started = started || isFinished(run.result.status) ||
                  run.result.status == RunStatus::Stopped ||
                  run.result.status == RunStatus::Running || !run.result.train.empty();
    if (!started) return; // a fresh session: nothing to resume
    if (!m_interactive) return;
    const auto answer = QMessageBox::question(
        this, tr("Resume sweep"),
        tr("%n run(s) of this session did not finish. Resume them now?\nFinished runs are kept.",
           "", int(pending.size())),
        QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes);
    if (answer == QMessageBox::Yes) startSweep();
}

bool MainWindow::saveSession()
{
    if (m_model->filePath().isEmpty()) {
        if (!m_interactive) return false;
        QString path = QFileDialog::getSaveFileName(
            this, tr("Save session"), QString::fromStdString(m_model->session().name) + ".yaml",
            tr("HeadLab sessions (*.yaml)"));
        if (path.isEmpty()) return false;
        if (QFileInfo(path).suffix().isEmpty()) path += ".yaml";
        return saveSessionAs(path);
    }
    return saveSessionAs(m_model->filePath());
}

bool MainWindow::saveSessionAs(const QString &path)
{
    saveView();
    try {
        m_model->save(path);
    } catch (const std::exception &e) {
        showError(tr("Save session"), QString::fromUtf8(e.what()));
        return false;
    }
    m_files->addRecentFile(path);
    statusBar()->showMessage(tr("Saved %1").arg(path), 4000);
    updateTitle();
    // Its results now live beside the file (checkpoints hard-linked); while a sweep still writes
    // checkpoints into the autosave's folder, that folder stays.
    if (!m_controller->isRunning()) m_files->discardAutosave();
    return true;
}

bool MainWindow::exportReport(const QString &path)
{
    saveView();
    try {
        // A session its file alone holds, unchanged, goes in as that file holds it (it comes
        // back byte for byte); otherwise as Save would write it.
        HtmlReportOptions options;
        options.sessionText =
            sessionFileText(m_model->session(), m_model->filePath().toStdString());
        const HtmlReportSummary summary =
            writeHtmlReport(m_model->session(), path.toStdString(), options);
        statusBar()->showMessage(tr("Exported the report %1 (%2 MiB, %3 figures)")
                                     .arg(path)
                                     .arg(double(summary.bytes) / (1 << 20), 0, 'f', 1)
                                     .arg(summary.figures.size()),
                                 8000);
        return true;
    } catch (const std::exception &e) {
        showError(tr("Export report"), QString::fromUtf8(e.what()));
        return false;
    }
}

QString MainWindow::offerRecovery()
{
    const QStringList crashed = SessionFiles::crashedSessions();
    if (crashed.isEmpty()) return {};
    for (auto it = crashed.rbegin(); it != crashed.rend(); ++it) m_files->addRecentFile(*it);
    const QString path = crashed.front();
    const QString when =
        QFileInfo(path).lastModified().toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    QMessageBox::StandardButton answer = QMessageBox::Yes;
    if (m_interactive) {
        QMessageBox box(QMessageBox::Warning, tr("Recover a session"),
                        tr("HeadLab did not close properly last time. Reopen the session it "
                           "showed, as saved at %1?\n\n%2\n\nFinished runs are all there; "
                           "runs that were training resume from their last checkpoint.")
                            .arg(when, path),
                        QMessageBox::Yes | QMessageBox::Discard | QMessageBox::Cancel, this);
        box.button(QMessageBox::Yes)->setText(tr("Reopen"));
        box.button(QMessageBox::Cancel)->setText(tr("Later"));
        answer = QMessageBox::StandardButton(box.exec());
    }
    if (answer == QMessageBox::Cancel) return {};
    if (answer == QMessageBox::Discard) {
        SessionFiles::forgetCrashed(path, true);
        statusBar()->showMessage(tr("Discarded the session of the last run: %1").arg(path), 8000);
        return {};
    }
    if (!openSession(path)) return {};
    SessionFiles::forgetCrashed(path, false);
    statusBar()->showMessage(
        tr("Recovered %1 (HeadLab did not close properly last time)").arg(path), 10000);
    return path;
}

void MainWindow::rebuildRecentMenu()
{
    if (!m_recentMenu) return;
    m_recentMenu->clear();
    const QStringList files = SessionFiles::recentFiles();
    for (const auto &f : files) {
        auto *a = m_recentMenu->addAction(QFileInfo(f).fileName());
        a->setToolTip(f);
        connect(a, &QAction::triggered, this, [this, f] {
            if (confirmDiscard()) openSession(f);
        });
    }
    m_recentMenu->setEnabled(!files.isEmpty());
}

bool MainWindow::confirmDiscard()
{
    if (!m_model->isModified() || !m_interactive) return true;
    const auto answer = QMessageBox::warning(
        this, tr("Unsaved changes"), tr("The session has unsaved changes. Save them first?"),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel) return false;
    if (answer == QMessageBox::Save) return saveSession();
    return true;
}

void MainWindow::saveView()
{
    if (m_restoring) return;
    ViewState state;
    m_figureTabs->saveViewState(state);
    // The lesson strip: said where it is on, or where the session said it was.
    if (m_lessonAction->isChecked() || m_model->session().view.count("lesson"))
        state["lesson"] = m_lessonAction->isChecked() ? "true" : "false";
    for (const auto &[k, v] : state) m_model->setViewState(k, v);
}

void MainWindow::restoreView()
{
    if (m_learnedGroup)
        for (auto *a : m_learnedGroup->actions())
            a->setChecked(a->data().toInt() == int(m_model->session().learnedRule));
    m_restoring = true;
    QString problem;
    m_figureTabs->restoreViewState(m_model->session(), &problem);
    if (!problem.isEmpty()) {
        const QString where =
            m_model->filePath().isEmpty() ? tr("the session") : m_model->filePath();
        statusBar()->showMessage(tr("%1: %2").arg(where, problem), 15000);
    }
    // A lesson (the classroom presets) opens with its strip: the buttons and what to look for.
    const ViewState &view = m_model->session().view;
    if (const auto lesson = view.find("lesson"); lesson != view.end())
        m_lessonAction->setChecked(lesson->second == "true");
    m_restoring = false;
    if (auto *f = currentFigure()) f->refresh();
}

} // namespace headlab::ui
