// RunsPanel.h — the window's run table: a row per run of the session (RunTableModel.h), sorted by
// any column, its columns hidden or shown from the header's menu (run ID and start time hidden
// until asked for); above it, the filter (core/session/RunFilter.h), whose runs are selected so
// that every figure follows them, and how many it shows or why the text is not a filter. The
// selection is the window's: figures, samples and the run actions read it.
#pragma once

#include <QList>
#include <QSet>
#include <QWidget>

class QAction;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace headlab::ui {

class RunTableModel;
class SessionModel;

class RunsPanel : public QWidget {
    Q_OBJECT
public:
    // `actions`: the run table's context menu (run, stop, pause, rerun the selected runs).
    RunsPanel(SessionModel *model, const QList<QAction *> &actions, QWidget *parent = nullptr);

    QTableView *table() const { return m_table; }
    QLineEdit *filter() const { return m_runFilter; }
    QLabel *filterStatus() const { return m_runFilterStatus; } // "12 of 75 runs shown", or why not
    // The runs selected, by index in the session, ascending.
    QList<int> selectedRuns() const;
    void selectRuns(const QList<int> &runs);
    void setDarkTheme(bool dark);

Q_SIGNALS:
    void selectionChanged(const QList<int> &runs);

private:
    SessionModel *m_model;
    RunTableModel *m_runModel;
    QSortFilterProxyModel *m_runProxy;
    QLineEdit *m_runFilter = nullptr;
    QLabel *m_runFilterStatus = nullptr;
    QTableView *m_table;
    QSet<QString> m_shownColumns; // run-table columns hidden by default that the user showed
};

} // namespace headlab::ui
