// RunTableModel.h — the run table: one row per run, one column per swept axis, then status,
// progress, steps/s, ETA and final test loss. A view over SessionModel; it holds no data.
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
        FixedCount
    };
    explicit RunTableModel(SessionModel *session, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    int progressColumn() const { return axisCount() + Progress; }
    int statusColumn() const { return axisCount() + Status; }
    int finalLossColumn() const { return axisCount() + FinalLoss; }
    // The columns shown only on request.
    bool hiddenByDefault(int column) const
    {
        return column == axisCount() + RunId || column == axisCount() + Started;
    }
    void setDarkTheme(bool dark) { m_dark = dark; }

private:
    int axisCount() const;
    void rebuild();
    SessionModel *m_session;
    std::vector<std::string> m_axes; // the swept axes shown as columns
    bool m_dark = false;
};

} // namespace headlab::ui
