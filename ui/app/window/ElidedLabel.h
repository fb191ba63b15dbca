// ElidedLabel.h — a one-line label that never widens its window: it asks for little room, draws
// its text elided to the room it gets ("…" in the middle) and shows the whole text as its
// tooltip. For text the window does not choose: what runs elsewhere (a shard per host), paths.
#pragma once

#include <QLabel>

namespace headlab::ui {

class ElidedLabel : public QLabel {
    Q_OBJECT
public:
    using QLabel::QLabel;

    void setText(const QString &text); // the tooltip too, when the text does not fit
    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    // At most this many average characters wide when there is room; 4 when there is not.
    static constexpr int kChars = 60;
};

} // namespace headlab::ui
