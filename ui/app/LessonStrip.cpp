// LessonStrip.cpp — see LessonStrip.h.
#include "ui/app/LessonStrip.h"

#include "ui/model/RunMetrics.h"

#include <QApplication>
#include <QButtonGroup>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollBar>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <set>

namespace headlab::ui {

namespace {
std::vector<double> axisNumbers(const Session &session, const std::string &name)
{
    std::vector<double> out;
    for (const auto &axis : session.axes)
        if (axis.name == name)
            for (const auto &v : axis.values)
                if (v.kind == AxisValue::Kind::Number) out.push_back(v.number);
    return out;
}

void clearRow(QHBoxLayout *row, QButtonGroup *group)
{
    for (auto *b : group->buttons()) {
        group->removeButton(b);
        delete b;
    }
    while (row->count() > 1) delete row->takeAt(1); // the row's label stays
}
} // namespace

LessonStrip::LessonStrip(QWidget *parent)
    : QWidget(parent)
{
    // The buttons on one line; below them, what to look for: the session's description (a
    // preset's says what the lesson shows), wrapped to the strip's width.
    auto *column = new QVBoxLayout(this);
    column->setContentsMargins(8, 4, 8, 4);
    column->setSpacing(2);
    auto *layout = new QHBoxLayout;
    m_headsRow = new QHBoxLayout;
    m_lrRow = new QHBoxLayout;
    m_headsRow->addWidget(new QLabel(tr("Heads"), this));
    m_lrRow->addWidget(new QLabel(QStringLiteral("η"), this));
    layout->addLayout(m_headsRow);
    layout->addSpacing(24);
    layout->addLayout(m_lrRow);
    layout->addSpacing(24);
    // The faint earlier curves stay through the lesson's presses until the teacher clears them.
    // A short word, so that the row fits a 1280-pixel window beside the form; beside what to look
    // for it made that text wrap, and the strip too tall for a 720-line screen.
    m_clear = new QPushButton(tr("Clear"), this);
    m_clear->setObjectName(QStringLiteral("clearEarlier"));
    m_clear->setToolTip(tr("Clear the faint curves: remove the earlier runs' curves from the loss "
                           "figure"));
    connect(m_clear, &QPushButton::clicked, this, &LessonStrip::clearEarlier);
    layout->addWidget(m_clear);
    layout->addStretch(1);
    column->addLayout(layout);
    // Why the last press was refused, where the class can read it (a press that would leave the
    // session unable to start is undone).
    m_refusal = new QLabel(this);
    m_refusal->setWordWrap(true);
    m_refusal->setObjectName(QStringLiteral("refusal"));
    m_refusal->setStyleSheet(QStringLiteral("color: #c03020; font-weight: bold;"));
    m_refusal->hide();
    column->addWidget(m_refusal);
    m_lookFor = new QLabel(this);
    m_lookFor->setWordWrap(true);
    m_lookFor->setObjectName(QStringLiteral("lookFor"));
    column->addWidget(m_lookFor);
    m_headsGroup = new QButtonGroup(this);
    m_headsGroup->setExclusive(false); // several head counts side by side
    m_lrGroup = new QButtonGroup(this);
    // A press chooses one η, at which the figure compares heads; a session that sweeps several
    // lights each of them, so that the strip shows what is on screen.
    m_lrGroup->setExclusive(false);
    connect(m_headsGroup, &QButtonGroup::buttonClicked, this, [this](QAbstractButton *b) {
        if (heads().isEmpty()) b->setChecked(true); // at least one head count
        Q_EMIT lessonChanged();
    });
    connect(m_lrGroup, &QButtonGroup::buttonClicked, this, [this](QAbstractButton *pressed) {
        for (auto *b : m_lrGroup->buttons()) b->setChecked(b == pressed);
        Q_EMIT lessonChanged();
    });
    // A pressed value must read as pressed from the back of the room.
    setStyleSheet(
        QStringLiteral("QPushButton { padding: 4px 8px; } QPushButton:checked { "
                       "background: palette(highlight); color: palette(highlighted-text); "
                       "border: 1px solid palette(highlight); border-radius: 3px; }"));
    setToolTip(tr("Press a head count to add or remove it, or a learning rate: the new runs start "
                  "at once, and the loss curves keep the previous ones faintly"));
}

QPushButton *LessonStrip::addButton(QHBoxLayout *row, const QString &text, QButtonGroup *group)
{
    auto *b = new QPushButton(text, this);
    b->setCheckable(true);
    group->addButton(b, int(group->buttons().size()));
    row->addWidget(b);
    return b;
}

// Type 1.3 times the application's (read from the back of a room), which presenter mode
// enlarges: the rows' labels and every button.
void LessonStrip::applyType()
{
    QFont f = QApplication::font();
    f.setPointSizeF(f.pointSizeF() * 1.3);
    f.setBold(true);
    for (auto *row : {m_headsRow, m_lrRow})
        if (auto *label = qobject_cast<QLabel *>(row->itemAt(0)->widget())) label->setFont(f);
    QFont look = QApplication::font();
    look.setPointSizeF(look.pointSizeF() * 1.15);
    m_lookFor->setFont(look);
    m_refusal->setFont(look);
    m_clear->setFont(look);
    for (auto *group : {m_headsGroup, m_lrGroup})
        for (auto *b : group->buttons()) {
            b->setFont(f);
            b->setMinimumWidth(b->fontMetrics().horizontalAdvance(b->text()) + 20);
            b->setMinimumHeight(b->fontMetrics().height() + 14);
        }
}

void LessonStrip::setSession(const Session &session)
{
    const auto widths = axisNumbers(session, "d_model");
    const int64_t width = widths.empty() ? session.base.model.dModel : int64_t(widths.front());
    std::vector<double> sweptHeads = axisNumbers(session, "heads");
    if (sweptHeads.empty()) sweptHeads = {double(session.base.model.heads.front())};
    std::vector<double> sweptLr = axisNumbers(session, "lr");
    if (sweptLr.empty()) sweptLr = {session.base.lr};
    // The buttons stay where they are while the session's values are among them (a press
    // replaced the runs): only a session with other values, or another width, lays them out anew.
    bool same = width == m_width && !m_headValues.isEmpty();
    for (double h : sweptHeads) same = same && m_headValues.contains(int64_t(h));
    for (double lr : sweptLr) same = same && m_lrValues.contains(lr);
    if (!same) layOut(width, sweptHeads, sweptLr);
    m_lookFor->setText(QString::fromStdString(session.description));
    m_lookFor->setVisible(!session.description.empty());
    applyType();
    for (int i = 0; i < m_headValues.size(); ++i)
        m_headsGroup->button(i)->setChecked(std::find(sweptHeads.begin(), sweptHeads.end(),
                                                      double(m_headValues[i])) != sweptHeads.end());
    for (int i = 0; i < m_lrValues.size(); ++i)
        m_lrGroup->button(i)->setChecked(std::find(sweptLr.begin(), sweptLr.end(), m_lrValues[i]) !=
                                         sweptLr.end());
}

// The buttons: head counts that divide the width (the session's and the usual ones, at most
// eight), learning rates around the session's (at most six).
void LessonStrip::layOut(int64_t width, const std::vector<double> &sweptHeads,
                         const std::vector<double> &sweptLr)
{
    clearRow(m_headsRow, m_headsGroup);
    clearRow(m_lrRow, m_lrGroup);
    m_width = width;
    std::set<int64_t> headSet;
    for (double h : sweptHeads) headSet.insert(int64_t(h));
    // Few enough to fit a 1280-pixel screen beside the form, with the text below them.
    for (int64_t h : {1, 2, 3, 4, 6, 8, 12, 16})
        if (width % h == 0 && headSet.size() < 6) headSet.insert(h);
    m_headValues.clear();
    for (int64_t h : headSet)
        if (width % h == 0) m_headValues << h;
    std::set<double> lrSet(sweptLr.begin(), sweptLr.end());
    for (double lr : {1e-3, 3e-3, 1e-2, 2e-3, 6e-3})
        if (lrSet.size() < 4) lrSet.insert(lr);
    m_lrValues = QList<double>(lrSet.begin(), lrSet.end());
    for (int64_t h : m_headValues) addButton(m_headsRow, QString::number(h), m_headsGroup);
    for (double lr : m_lrValues) addButton(m_lrRow, displayLabel(exactNumber(lr)), m_lrGroup);
}

QString LessonStrip::lookFor() const
{
    return m_lookFor->isVisibleTo(this) ? m_lookFor->text() : QString();
}

void LessonStrip::setTextWidth(int width)
{
    m_lookFor->setMaximumWidth(std::max(120, width));
}

QList<int64_t> LessonStrip::heads() const
{
    QList<int64_t> out;
    for (int i = 0; i < m_headValues.size(); ++i)
        if (m_headsGroup->button(i) && m_headsGroup->button(i)->isChecked()) out << m_headValues[i];
    return out;
}

double LessonStrip::learningRate() const
{
    const QList<double> lrs = learningRates();
    return lrs.size() == 1 ? lrs.front() : NAN;
}

QList<double> LessonStrip::learningRates() const
{
    QList<double> out;
    for (int i = 0; i < m_lrValues.size(); ++i)
        if (m_lrGroup->button(i) && m_lrGroup->button(i)->isChecked()) out << m_lrValues[i];
    return out;
}

void LessonStrip::chooseLearningRate(double lr)
{
    for (int i = 0; i < m_lrValues.size(); ++i)
        if (m_lrValues[i] == lr) m_lrGroup->button(i)->click();
}

void LessonStrip::toggleHeads(int64_t heads)
{
    for (int i = 0; i < m_headValues.size(); ++i)
        if (m_headValues[i] == heads) m_headsGroup->button(i)->click();
}

Session LessonStrip::lesson(const Session &session) const
{
    Session out = session;
    // An axis' values still pressed keep their place (the sweep's order is the order runs train
    // in, and the contrast a preset puts first stays first); values pressed now follow them.
    auto setAxis = [&](const std::string &name, const std::vector<double> &pressed) {
        const std::vector<double> had = axisNumbers(session, name);
        SweepAxis axis{name, {}};
        auto add = [&](double v) {
            AxisValue a;
            a.number = v;
            axis.values.push_back(a);
        };
        for (double v : had)
            if (std::find(pressed.begin(), pressed.end(), v) != pressed.end()) add(v);
        for (double v : pressed)
            if (std::find(had.begin(), had.end(), v) == had.end()) add(v);
        for (auto &existing : out.axes)
            if (existing.name == name) {
                existing = axis;
                return;
            }
        out.axes.push_back(axis);
    };
    std::vector<double> h;
    for (int64_t v : heads()) h.push_back(double(v));
    setAxis("heads", h);
    std::vector<double> lrs;
    for (double v : learningRates()) lrs.push_back(v);
    if (!lrs.empty()) setAxis("lr", lrs);
    // One colour per head count for the whole lesson: its place among the buttons, which stay
    // while the lesson goes on (ColourTable reads the key).
    out.view[std::string(kLessonColoursKey)] = headColours().toStdString();
    return out;
}

QString LessonStrip::headColours() const
{
    QStringList values;
    for (int64_t v : m_headValues) values << QString::number(v);
    return values.join(QLatin1Char(','));
}

void LessonStrip::showRefusal(const QString &why)
{
    m_refusal->setText(why);
    m_refusal->setVisible(!why.isEmpty());
}

QString LessonStrip::refusal() const
{
    return m_refusal->isVisibleTo(this) ? m_refusal->text() : QString();
}

LessonStripArea::LessonStripArea(LessonStrip *strip, QWidget *parent)
    : QScrollArea(parent)
{
    setWidget(strip);
    setWidgetResizable(true);
    setFrameShape(QFrame::NoFrame);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
}

void LessonStripArea::fit()
{
    QWidget *strip = widget();
    if (!strip) return;
    // Not laid out yet (a session opened before the window shows), the viewport's width is a
    // default of a hundred pixels: the text fitted to it took eight lines, and the window grew to
    // hold them and stayed taller than the screen. Until then the text is measured on one line;
    // the area is refitted when it gets its width (resizeEvent).
    const int visible = isVisible() ? viewport()->width() : QWIDGETSIZE_MAX / 2;
    if (auto *lesson = qobject_cast<LessonStrip *>(strip)) lesson->setTextWidth(visible - 16);
    // The strip is as wide as the area, or its buttons' width where that is more (then it
    // scrolls sideways); its height is what its wrapped text needs at that width.
    if (strip->layout()) strip->layout()->invalidate(); // new type (presenter mode) resizes it
    const int width = std::max(std::min(visible, 4096), strip->minimumSizeHint().width());
    const int height =
        strip->hasHeightForWidth() ? strip->heightForWidth(width) : strip->sizeHint().height();
    const bool scrolls = isVisible() && strip->minimumSizeHint().width() > viewport()->width();
    setFixedHeight(height + (scrolls ? horizontalScrollBar()->sizeHint().height() : 0));
}

void LessonStripArea::resizeEvent(QResizeEvent *event)
{
    QScrollArea::resizeEvent(event);
    if (event->size().width() != event->oldSize().width()) fit();
}

} // namespace headlab::ui
