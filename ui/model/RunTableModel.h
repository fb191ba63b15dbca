// RunTableModel.h — the run table: one row per run, one column per swept axis, then status,
// progress, steps/s, ETA, final test loss, and the run's tags and note (editable). A view over
// SessionModel; it holds no data.
#pragma once

#include <QAbstractTableModel>

namespace headlab::ui {

class SessionModel;

class RunTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Role { RunIndexRole = Qt::UserRole + 1, ProgressRole, SortRole };
    // The columns after the swept axes', in order. RunId and Started (the run's identity and time,
    // RunOrigin) are hidden until the user asks for them (the header's context menu).
    enum FixedColumn {
        Status,
        Progress,
        StepsPerSecond,
        Eta,
        FinalLoss,
        RunId,
        Started,
        Tags, // the run's tags and note (Annotation): edited in place, kept by the run's run_id
        Note,
        FixedCount
    };
    explicit RunTableModel(SessionModel *session, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    // Tags (words separated by spaces or commas) and Note are edited here; a tag that is not one
    // word is refused, and annotationRefused says why.
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;
    int tagsColumn() const { return axisCount() + Tags; }
    int noteColumn() const { return axisCount() + Note; }

    int progressColumn() const { return axisCount() + Progress; }
    int statusColumn() const { return axisCount() + Status; }
    int finalLossColumn() const { return axisCount() + FinalLoss; }
    // The columns shown only on request.
    bool hiddenByDefault(int column) const
    {
        return column == axisCount() + RunId || column == axisCount() + Started;
    }
    void setDarkTheme(bool dark) { m_dark = dark; }

Q_SIGNALS:
    void annotationRefused(const QString &why);

private:
    int axisCount() const;
    void rebuild();
    SessionModel *m_session;
    std::vector<std::string> m_axes; // the swept axes shown as columns
    bool m_dark = false;
};

} // namespace headlab::ui
