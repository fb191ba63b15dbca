// ElidedLabel.cpp — see ElidedLabel.h.
#include "ui/app/window/ElidedLabel.h"

#include <QPaintEvent>
#include <QPainter>

#include <algorithm>

namespace headlab::ui {

void ElidedLabel::setText(const QString &text)
{
    QLabel::setText(text);
    setToolTip(text.size() > kChars || fontMetrics().horizontalAdvance(text) > width() ? text
                                                                                       : QString());
    updateGeometry();
}

QSize ElidedLabel::minimumSizeHint() const
{
    return {fontMetrics().averageCharWidth() * 4, QLabel::minimumSizeHint().height()};
}

QSize ElidedLabel::sizeHint() const
{
    const QSize whole = QLabel::sizeHint();
    return {std::min(whole.width(), fontMetrics().averageCharWidth() * kChars), whole.height()};
}

void ElidedLabel::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const QRect room = contentsRect();
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(room, int(alignment()),
               fontMetrics().elidedText(text(), Qt::ElideMiddle, room.width()));
}

} // namespace headlab::ui
