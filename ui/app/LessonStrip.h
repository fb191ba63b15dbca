// LessonStrip.h — the classroom's controls: a row of large buttons for the head counts to compare
// and one for the learning rate, above the figures and kept in presenter mode. Choosing a value
// asks for new runs at once (the main window replaces the old ones, which the loss curves keep
// faintly for comparison).
#pragma once

#include "core/session/Session.h"

#include <QList>
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
    // 3, 4, 6, 8, 12, 16; at most eight), learning rates around its own (at most six), pressed
    // where the session sweeps them.
    void setSession(const Session &session);
    QList<int64_t> heads() const;
    double learningRate() const;
    // As a click on the button of that value does (tests, presets).
    void chooseLearningRate(double lr);
    void toggleHeads(int64_t heads);

    // The lesson's sweep: `session` with heads over the pressed head counts and η the chosen one
    // (every other axis kept).
    Session lesson(const Session &session) const;

Q_SIGNALS:
    // A value was pressed: the lesson's runs should start, in place of the ones shown.
    void lessonChanged();

private:
    QPushButton *addButton(QHBoxLayout *row, const QString &text, QButtonGroup *group);
    QHBoxLayout *m_headsRow, *m_lrRow;
    QButtonGroup *m_headsGroup, *m_lrGroup;
    QList<int64_t> m_headValues;
    QList<double> m_lrValues;
};

} // namespace headlab::ui
