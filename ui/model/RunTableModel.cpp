// RunTableModel.cpp — see RunTableModel.h.
#include "ui/model/RunTableModel.h"

#include "core/metrics/Metrics.h"
#include "core/schema/Dimensions.h"
#include "core/session/RunFiles.h"

#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include <QFont>

#include <algorithm>
#include <cmath>

namespace headlab::ui {

RunTableModel::RunTableModel(SessionModel *session, QObject *parent)
    : QAbstractTableModel(parent)
    , m_session(session)
{
    rebuild();
    connect(m_session, &SessionModel::runsReset, this, [this] {
        beginResetModel();
        rebuild();
        endResetModel();
    });
    connect(m_session, &SessionModel::runChanged, this, [this](int row) {
        if (row < rowCount()) Q_EMIT dataChanged(index(row, 0), index(row, columnCount() - 1));
    });
}

void RunTableModel::rebuild()
{
    m_axes.clear();
    for (const auto &axis : m_session->session().axes) m_axes.push_back(axis.name);
    // Labels of runs added outside the sweep (rerun with another seed) get a column too.
    for (const auto &run : m_session->session().runs)
        for (const auto &[name, value] : run.labels)
            if (std::find(m_axes.begin(), m_axes.end(), name) == m_axes.end())
                m_axes.push_back(name);
    if (m_axes.empty()) m_axes = headlineDimensions(); // d_model, heads, lr (Dimensions.h)
}

int RunTableModel::axisCount() const
{
    return int(m_axes.size());
}

int RunTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_session->runCount();
}

int RunTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : axisCount() + FixedCount;
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole) return {};
    if (orientation == Qt::Vertical) return section + 1;
    if (section < axisCount()) return QString::fromStdString(m_axes[size_t(section)]);
    switch (section - axisCount()) {
    case Status:
        return tr("Status");
    case Progress:
        return tr("Progress");
    case StepsPerSecond:
        return tr("Steps/s");
    case Eta:
        return tr("ETA");
    case FinalLoss:
        return tr("Final test loss");
    case RunId:
        return tr("Run ID");
    case Started:
        return tr("Started (UTC)");
    case Tags:
        return tr("Tags");
    case Note:
        return tr("Note");
    }
    return {};
}

Qt::ItemFlags RunTableModel::flags(const QModelIndex &index) const
{
    Qt::ItemFlags f = QAbstractTableModel::flags(index);
    if (index.isValid() && (index.column() == tagsColumn() || index.column() == noteColumn()))
        f |= Qt::ItemIsEditable;
    return f;
}

bool RunTableModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (!index.isValid() || role != Qt::EditRole || index.row() >= rowCount()) return false;
    Annotation a = runAnnotation(m_session->session(), size_t(index.row()));
    if (index.column() == noteColumn()) {
        a.note = value.toString().trimmed().toStdString();
    } else if (index.column() == tagsColumn()) {
        a.tags = tagsFromText(value.toString().toStdString());
    } else {
        return false;
    }
    QString why;
    if (!m_session->setRunAnnotation(index.row(), a, &why)) {
        Q_EMIT annotationRefused(why);
        return false;
    }
    return true;
}

QVariant RunTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const int row = index.row();
    const auto &run = m_session->run(row);
    const auto &r = run.result;
    if (role == RunIndexRole) return row;
    const int col = index.column();
    if (col < axisCount()) {
        const auto &name = m_axes[size_t(col)];
        QString label = axisLabel(run, name);
        if (label.isEmpty()) // not swept for this run: the resolved value its axis's row gives
            if (const auto axis = findDimension(name))
                label = QString::fromStdString(axis->resolved(run.config));
        if (role == Qt::DisplayRole) return displayLabel(label);
        if (role == Qt::ToolTipRole) return label;
        if (role == SortRole) {
            bool ok = false;
            const double v = label.toDouble(&ok);
            return ok ? QVariant(v) : QVariant(label);
        }
        return {};
    }
    const int total = int(run.config.totalSteps());
    switch (col - axisCount()) {
    case Status:
        if (role == Qt::DisplayRole || role == SortRole) {
            QString s = statusText(r.status);
            if (r.status == RunStatus::Diverged && r.divergedAtStep >= 0)
                s += tr(" @ %1").arg(r.divergedAtStep);
            return s;
        }
        if (role == Qt::ForegroundRole) return statusColor(r.status, m_dark);
        if (role == Qt::ToolTipRole && !r.message.empty()) return QString::fromStdString(r.message);
        if (role == Qt::FontRole && r.status == RunStatus::Running) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case Progress: {
        const double fraction =
            isFinished(r.status) && r.status == RunStatus::Done
                ? 1.0
                : (total > 0 ? std::clamp(double(r.stepsDone) / total, 0.0, 1.0) : 0.0);
        if (role == ProgressRole || role == SortRole) return fraction;
        if (role == Qt::DisplayRole)
            return r.status == RunStatus::Done && r.stepsDone < total
                       ? tr("%1 of %2, stopped early").arg(r.stepsDone).arg(total)
                       : QStringLiteral("%1 / %2").arg(r.stepsDone).arg(total);
        if (role == Qt::ToolTipRole && r.status == RunStatus::Done && r.stepsDone < total)
            return tr("Done before its last step: a stopping rule (stop_after_learned) ended it "
                      "once its outcome was decided");
        return {};
    }
    case StepsPerSecond: {
        // Live while it trains; a finished run's own average (its steps over its wall time).
        double sps = m_session->stepsPerSecond(row);
        if (!(sps > 0) && isFinished(r.status)) {
            const auto it = r.metrics.find(metric::kStepsPerSecond);
            sps = it != r.metrics.end() && std::isfinite(it->second) ? it->second
                  : r.wallSeconds > 0 ? double(r.stepsDone) / r.wallSeconds
                                      : 0.0;
        }
        if (role == SortRole) return sps;
        if (role == Qt::DisplayRole)
            return sps > 0 ? QString::number(sps, 'f', sps < 10 ? 1 : 0) : QString();
        if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    }
    case Eta: {
        const double eta = m_session->etaSeconds(row);
        if (role == SortRole) return eta;
        if (role == Qt::DisplayRole)
            return r.status == RunStatus::Running || r.status == RunStatus::Paused
                       ? formatDuration(eta)
                       : QString();
        if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    }
    case FinalLoss: {
        const double loss = finalTestLoss(r);
        if (role == SortRole) return std::isfinite(loss) ? loss : 1e9;
        if (role == Qt::DisplayRole) {
            if (r.status == RunStatus::Diverged) return tr("diverged");
            if (r.status == RunStatus::Failed) return tr("failed");
            if (!std::isfinite(loss)) return QString();
            return formatLoss(loss) +
                   (isFinished(r.status)
                        ? (isLearned(m_session->session(), r) ? tr("  learned") : QString())
                        : tr(" …"));
        }
        if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
        if (role == Qt::ToolTipRole)
            return tr("Test loss %1; learned means: %2 (the session's learned_rule)")
                .arg(formatLoss(loss))
                .arg(QString::fromLatin1(describe(m_session->session().learnedRule)));
        return {};
    }
    case RunId:
        if (role == Qt::DisplayRole || role == SortRole || role == Qt::ToolTipRole)
            return QString::fromStdString(runId(run.config));
        return {};
    case Tags:
    case Note: {
        const Annotation &a = runAnnotation(m_session->session(), size_t(row));
        if (col - axisCount() == Note)
            return role == Qt::DisplayRole || role == Qt::EditRole || role == SortRole ||
                           role == Qt::ToolTipRole
                       ? QVariant(QString::fromStdString(a.note))
                       : QVariant();
        QStringList tags;
        for (const auto &tag : a.tags) tags << QString::fromStdString(tag);
        if (role == Qt::DisplayRole || role == Qt::EditRole || role == SortRole)
            return tags.join(' ');
        if (role == Qt::ToolTipRole)
            return tr("Tags: words; the run filter selects by them (tag=%1)")
                .arg(tags.value(0, QStringLiteral("T")));
        return {};
    }
    case Started: {
        const RunOrigin &o = r.origin;
        if (role == Qt::DisplayRole || role == SortRole) // "2026-12-02 03:42:17"
            return QString::fromStdString(o.startedAt).replace('T', ' ').remove('Z');
        if (role == Qt::ToolTipRole && !o.empty())
            return tr("Started %1, finished %2\non %3, HeadLab %4\n%5")
                .arg(QString::fromStdString(o.startedAt),
                     o.finishedAt.empty() ? tr("(not yet)") : QString::fromStdString(o.finishedAt),
                     QString::fromStdString(o.host),
                     o.commit.empty() ? tr("(commit unknown)") : QString::fromStdString(o.commit),
                     QString::fromStdString(o.command));
        return {};
    }
    }
    return {};
}

} // namespace headlab::ui
