// RunsPanel.cpp — see RunsPanel.h.
#include "ui/app/window/RunsPanel.h"

#include "core/session/RunFilter.h"
#include "ui/app/ProgressBarDelegate.h"
#include "ui/model/RunTableModel.h"
#include "ui/model/SessionModel.h"

#include <QAction>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPalette>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace headlab::ui {

namespace {

// The run table's sorting and its filter (core/session/RunFilter.h): a row shows when its run
// meets every term of the filter typed above the table.
class RunFilterProxy : public QSortFilterProxyModel {
public:
    RunFilterProxy(SessionModel *model, QObject *parent)
        : QSortFilterProxyModel(parent)
        , m_model(model)
    {}
    // Sets the filter; "" when it parsed, else why not (then every run shows).
    QString setFilterText(const QString &text)
    {
        const Session &session = m_model->session();
        m_filter = RunFilter::parse(text.toStdString(), session);
        m_selected = m_filter.overRuns() ? m_filter.select(session) : std::vector<bool>{};
        invalidateFilter();
        return filterError();
    }
    // Whether the filter ranks the runs together (best:K, worst:K, !outliers): which runs it
    // shows moves with their curves.
    bool overRuns() const { return m_filter.overRuns(); }
    // Selects again by the runs' curves now (a filter over the runs together, live); true when
    // the runs shown changed.
    bool reselect()
    {
        if (!m_filter.overRuns()) return false;
        std::vector<bool> now = m_filter.select(m_model->session());
        if (now == m_selected) return false;
        m_selected = std::move(now);
        invalidateFilter();
        return true;
    }
    // Why the text is not a filter; "" when it is (then every run is shown).
    QString filterError() const { return QString::fromStdString(m_filter.error); }
    // What the filter asks that no run has ("" when nothing): RunFilter::note.
    QString filterNote() const { return QString::fromStdString(m_filter.note); }

protected:
    bool filterAcceptsRow(int row, const QModelIndex &) const override
    {
        const Session &session = m_model->session();
        if (m_filter.empty() || row < 0 || size_t(row) >= session.runs.size() ||
            size_t(row) >= m_filter.labels.size())
            return true;
        if (m_filter.overRuns())
            return size_t(row) < m_selected.size() ? bool(m_selected[size_t(row)]) : true;
        return m_filter.accepts(session, size_t(row), m_filter.labels[size_t(row)]);
    }

private:
    SessionModel *m_model;
    RunFilter m_filter;
    std::vector<bool> m_selected; // select()'s, for a filter over the runs together
};

} // namespace

RunsPanel::RunsPanel(SessionModel *model, const QList<QAction *> &actions, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
{
    m_runModel = new RunTableModel(m_model, this);
    auto *proxy = new RunFilterProxy(m_model, this);
    m_runProxy = proxy;
    m_runProxy->setSourceModel(m_runModel);
    m_runProxy->setSortRole(RunTableModel::SortRole);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("runTable"));
    m_table->setModel(m_runProxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->setDefaultSectionSize(22);
    // Columns as wide as they need, the space beyond them left empty: a stretched last column put
    // the final losses a screen's width from the runs they belong to.
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_table->addActions(actions);
    auto *delegate = new ProgressBarDelegate(m_table);
    auto placeDelegate = [this, delegate] {
        for (int c = 0; c < m_runModel->columnCount(); ++c)
            m_table->setItemDelegateForColumn(c, nullptr);
        m_table->setItemDelegateForColumn(m_runModel->progressColumn(), delegate);
        m_table->setColumnWidth(m_runModel->progressColumn(), 150);
        const int finalLoss = m_runModel->finalLossColumn();
        const QString title = m_runModel->headerData(finalLoss, Qt::Horizontal).toString();
        m_table->setColumnWidth(finalLoss, m_table->fontMetrics().horizontalAdvance(title) + 40);
    };
    placeDelegate();
    connect(m_runModel, &QAbstractItemModel::modelReset, this, placeDelegate);
    // Columns on request: the header's context menu shows or hides each (run ID and start time
    // are hidden until asked for).
    auto hideOnRequestColumns = [this] {
        for (int c = 0; c < m_runModel->columnCount(); ++c)
            m_table->setColumnHidden(
                c,
                m_runModel->hiddenByDefault(c) &&
                    !m_shownColumns.contains(m_runModel->headerData(c, Qt::Horizontal).toString()));
    };
    hideOnRequestColumns();
    connect(m_runModel, &QAbstractItemModel::modelReset, this, hideOnRequestColumns);
    m_table->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table->horizontalHeader(), &QWidget::customContextMenuRequested, this,
            [this](const QPoint &at) {
                QMenu menu(this);
                for (int c = 0; c < m_runModel->columnCount(); ++c) {
                    const QString title = m_runModel->headerData(c, Qt::Horizontal).toString();
                    QAction *action = menu.addAction(title);
                    action->setCheckable(true);
                    action->setChecked(!m_table->isColumnHidden(c));
                    connect(action, &QAction::toggled, this, [this, c, title](bool on) {
                        m_table->setColumnHidden(c, !on);
                        if (m_runModel->hiddenByDefault(c)) {
                            if (on)
                                m_shownColumns.insert(title);
                            else
                                m_shownColumns.remove(title);
                        }
                    });
                }
                menu.exec(m_table->horizontalHeader()->mapToGlobal(at));
            });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { Q_EMIT selectionChanged(selectedRuns()); });
    // The filter above the table: which runs to show (RunFilter.h); they are selected, and the
    // figures follow the selection.
    m_runFilter = new QLineEdit(this);
    m_runFilter->setObjectName(QStringLiteral("runFilter"));
    m_runFilter->setClearButtonEnabled(true);
    m_runFilter->setPlaceholderText(
        tr("Filter runs: heads=12 lr>=1e-3 status=done learned final_test_loss<1.5"));
    m_runFilter->setToolTip(QString::fromUtf8(runFilterHelp()));
    // The status never widens the window, whatever was typed (a 40,000-character word once made
    // it 32,767 px wide): plain text on a row of its own, wrapped to the panel's width (its width
    // is the panel's, not its text's), and the filter's messages shorten long terms
    // (core/session/RunFilter.cpp).
    m_runFilterStatus = new QLabel(this);
    m_runFilterStatus->setObjectName(QStringLiteral("runFilterStatus"));
    m_runFilterStatus->setTextFormat(Qt::PlainText);
    m_runFilterStatus->setWordWrap(true);
    m_runFilterStatus->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    // The line under the filter: how many runs it shows, or what is wrong (in red).
    auto showStatus = [this](const QString &text, bool problem) {
        QPalette palette = this->palette();
        if (problem) palette.setColor(QPalette::WindowText, QColor(0xc0, 0x39, 0x2b));
        m_runFilterStatus->setPalette(palette);
        m_runFilterStatus->setText(text);
        m_runFilterStatus->setVisible(!text.isEmpty());
    };
    auto showCount = [this, proxy, showStatus] {
        const QString error = proxy->filterError();
        const int shown = m_runProxy->rowCount(), all = m_runModel->rowCount();
        const QString text =
            !error.isEmpty() ? error
            : m_runFilter->text().trimmed().isEmpty()
                ? QString()
                : tr("%1 of %2 runs shown").arg(shown).arg(all) +
                      (proxy->filterNote().isEmpty() ? QString()
                                                     : QStringLiteral("; ") + proxy->filterNote());
        showStatus(text, !error.isEmpty());
    };
    auto applyFilter = [this, proxy, showCount] {
        proxy->setFilterText(m_runFilter->text());
        showCount();
    };
    connect(m_runFilter, &QLineEdit::textChanged, this, applyFilter);
    // A tag typed in the table's Tags column that is not one word: said under the filter.
    connect(m_runModel, &RunTableModel::annotationRefused, this,
            [this, showStatus](const QString &why) {
                showStatus(tr("Tags not changed: %1").arg(why), true);
            });
    connect(m_model, &SessionModel::runsReset, this, applyFilter);
    // Typed, a filter selects the runs it shows, so that every figure follows it (the loss curves
    // draw them alone, the heatmap and the other figures mark them); cleared, it clears the
    // selection. A filter that does not parse leaves the selection as it was.
    connect(m_runFilter, &QLineEdit::textChanged, this, [this, proxy](const QString &text) {
        if (text.trimmed().isEmpty())
            m_table->clearSelection();
        else if (proxy->filterError().isEmpty())
            m_table->selectAll();
    });
    // best:K, worst:K and !outliers follow the curves as they train: at most twice a second, the
    // runs they show are chosen again, and selected, so that the loss figure draws the K best
    // runs of now.
    auto *live = new QTimer(this);
    live->setSingleShot(true);
    live->setInterval(500);
    connect(m_model, &SessionModel::dataChanged, live, [live, proxy] {
        if (proxy->overRuns() && !live->isActive()) live->start();
    });
    connect(live, &QTimer::timeout, this, [this, proxy, showCount] {
        if (!proxy->reselect()) return; // chosen once: the count and the selection follow it
        showCount();
        m_table->selectAll();
    });
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_runFilter);
    layout->addWidget(m_runFilterStatus);
    layout->addWidget(m_table, 1);
}

QList<int> RunsPanel::selectedRuns() const
{
    QList<int> runs;
    for (const auto &index : m_table->selectionModel()->selectedRows())
        runs << m_runProxy->mapToSource(index).row();
    std::sort(runs.begin(), runs.end());
    return runs;
}

void RunsPanel::selectRuns(const QList<int> &runs)
{
    QItemSelection selection;
    for (int i : runs) {
        const QModelIndex left = m_runProxy->mapFromSource(m_runModel->index(i, 0));
        const QModelIndex right =
            m_runProxy->mapFromSource(m_runModel->index(i, m_runModel->columnCount() - 1));
        selection.select(left, right);
    }
    m_table->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect |
                                                     QItemSelectionModel::Rows);
    if (!runs.isEmpty())
        m_table->scrollTo(m_runProxy->mapFromSource(m_runModel->index(runs.first(), 0)));
}

void RunsPanel::setDarkTheme(bool dark)
{
    m_runModel->setDarkTheme(dark);
}

} // namespace headlab::ui
