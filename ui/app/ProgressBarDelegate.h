// ProgressBarDelegate.h — draws RunTableModel's ProgressRole as a progress bar in the run table.
#pragma once

#include <QStyledItemDelegate>

namespace headlab::ui {

class ProgressBarDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override;
};

} // namespace headlab::ui
