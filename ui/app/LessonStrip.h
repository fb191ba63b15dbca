// LessonStrip.h — the classroom's controls: a row of large buttons for the head counts to compare
// and one for the learning rate, above the figures and kept in presenter mode. Choosing a value
// asks for new runs at once (the main window replaces the old ones, which the loss curves keep
// faintly for comparison).
#pragma once

#include "core/session/Session.h"
#include "ui/model/ColourTable.h"

#include <QList>
#include <QScrollArea>
#include <QWidget>

class QButtonGroup;
class QHBoxLayout;
class QLabel;
class QPushButton;

namespace headlab::ui {

class LessonStrip : public QWidget {
    Q_OBJECT
public:
    explicit LessonStrip(QWidget *parent = nullptr);

    // The buttons for `session`: head counts that divide its width (its own and the usual 1, 2,
    // 3, 4, 6, 8, 12, 16; at most six), learning rates around its own (at most four), pressed
    // where the session sweeps them (every η it sweeps: the strip shows what is on screen). The
    // buttons stay in place while the session's values are among them.
    void setSession(const Session &session);
    QList<int64_t> heads() const;
    // The η pressed: one after a press; each η of a session that sweeps several (then
    // learningRate() is NaN).
    double learningRate() const;
    QList<double> learningRates() const;
    QList<double> learningRateButtons() const { return m_lrValues; } // the buttons' values
    QString lookFor() const;                                         // what to look for, below them
    // The width its text wraps at: the visible width, where the buttons scroll sideways.
    void setTextWidth(int width);
    // As a click on the button of that value does (tests, presets).
    void chooseLearningRate(double lr);
    void toggleHeads(int64_t heads);

    // The lesson's sweep: `session` with heads over the pressed head counts and η over the
    // pressed ones (every other axis kept; values still pressed keep their place, new ones
    // follow), and the view's kLessonColoursKey naming the head counts' colours.
    Session lesson(const Session &session) const;
    // The head buttons' values, "1,2,3,4,6,12": their palette order for the lesson.
    QString headColours() const;
    // Why the last press was undone, shown under the buttons ("" hides it).
    void showRefusal(const QString &why);
    QString refusal() const;

Q_SIGNALS:
    // A value was pressed: the lesson's runs should start, in place of the ones shown.
    void lessonChanged();
    // Clear: the earlier runs' faint curves should go.
    void clearEarlier();

private:
    QPushButton *addButton(QHBoxLayout *row, const QString &text, QButtonGroup *group);
    void applyType();
    void layOut(int64_t width, const std::vector<double> &sweptHeads,
                const std::vector<double> &sweptLr);
    QHBoxLayout *m_headsRow, *m_lrRow;
    QButtonGroup *m_headsGroup, *m_lrGroup;
    QList<int64_t> m_headValues;
    QList<double> m_lrValues;
    int64_t m_width = 0; // the width the head buttons divide
    QLabel *m_lookFor;   // what to look for: the session's description
    QLabel *m_refusal;   // why the last press was undone
    QPushButton *m_clear;
};

// The strip's place above the figures: as tall as its buttons and its wrapped text need at its
// width (refitted when the width changes, and by fit() when the strip changed), scrolling
// sideways where the buttons are wider than the window.
class LessonStripArea : public QScrollArea {
    Q_OBJECT
public:
    LessonStripArea(LessonStrip *strip, QWidget *parent = nullptr);
    void fit();

protected:
    void resizeEvent(QResizeEvent *event) override;
};

} // namespace headlab::ui
