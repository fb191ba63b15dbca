// ProgressBarDelegate.cpp — see ProgressBarDelegate.h.
#include "ui/app/ProgressBarDelegate.h"

#include "ui/model/RunTableModel.h"

#include <QApplication>
#include <QPainter>
#include <QStyleOptionProgressBar>

namespace headlab::ui {

void ProgressBarDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option,
                                const QModelIndex &index) const
{
    const QVariant v = index.data(RunTableModel::ProgressRole);
    if (!v.isValid()) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    if (option.state & QStyle::State_Selected)
        painter->fillRect(option.rect, option.palette.highlight());
    QStyleOptionProgressBar bar;
    bar.rect = option.rect.adjusted(2, 3, -2, -3);
    bar.minimum = 0;
    bar.maximum = 1000;
    bar.progress = int(v.toDouble() * 1000);
    // One line, elided to the bar: "1300 of 4500, stopped early" wrapped onto two lines in a
    // 140-pixel column and was cut at the top and the bottom (the tooltip has the whole text).
    bar.text = option.fontMetrics.elidedText(index.data(Qt::DisplayRole).toString(), Qt::ElideRight,
                                             bar.rect.width() - 6);
    bar.textVisible = true;
    bar.textAlignment = Qt::AlignCenter;
    bar.state = option.state | QStyle::State_Horizontal;
    bar.palette = option.palette;
    const QWidget *w = option.widget;
    (w ? w->style() : QApplication::style())->drawControl(QStyle::CE_ProgressBar, &bar, painter, w);
}

} // namespace headlab::ui
