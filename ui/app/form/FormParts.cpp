// FormParts.cpp — see FormParts.h.
#include "ui/app/form/FormParts.h"

#include "ui/model/RunMetrics.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QLabel>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace headlab::ui::form {

namespace {

// Sends a wheel over an unfocused control on to its parent (guardWheel).
class UnfocusedWheelGuard : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        auto *widget = qobject_cast<QWidget *>(watched);
        if (event->type() != QEvent::Wheel || !widget || widget->hasFocus()) return false;
        if (QWidget *parent = widget->parentWidget()) QCoreApplication::sendEvent(parent, event);
        return true;
    }
};

} // namespace

QString joinNumbers(const std::vector<double> &values)
{
    QStringList parts;
    for (double v : values) parts << exactNumber(v);
    return parts.join(", ");
}

void guardWheel(QWidget *root)
{
    // Found by name: the guard has no meta-object of its own, so findChild<UnfocusedWheelGuard *>
    // would return any QObject child.
    QObject *guard =
        root->findChild<QObject *>(QStringLiteral("headlabWheelGuard"), Qt::FindDirectChildrenOnly);
    if (!guard) {
        guard = new UnfocusedWheelGuard(root);
        guard->setObjectName(QStringLiteral("headlabWheelGuard"));
    }
    QList<QWidget *> controls;
    for (QWidget *w : root->findChildren<QAbstractSpinBox *>()) controls << w;
    for (QWidget *w : root->findChildren<QComboBox *>()) controls << w;
    for (QWidget *w : controls) {
        if (w->property("headlabWheelGuard").toBool()) continue;
        w->setProperty("headlabWheelGuard", true);
        w->setFocusPolicy(Qt::StrongFocus);
        w->installEventFilter(guard);
    }
}

QComboBox *enumCombo(const QStringList &items, int current)
{
    auto *c = new QComboBox();
    c->addItems(items);
    c->setCurrentIndex(current);
    return c;
}

const SweepAxis *findAxis(const Session &s, const std::string &name)
{
    for (const auto &a : s.axes)
        if (a.name == name) return &a;
    return nullptr;
}

bool keepsAxis(size_t values, bool hadAxis)
{
    return values > 1 || hadAxis;
}

void setAxis(Session &s, const std::string &name, std::vector<AxisValue> values, bool hadAxis)
{
    auto it = std::find_if(s.axes.begin(), s.axes.end(),
                           [&](const SweepAxis &a) { return a.name == name; });
    if (values.size() <= 1 && !hadAxis) {
        if (it != s.axes.end()) s.axes.erase(it);
        return;
    }
    if (it != s.axes.end())
        it->values = std::move(values);
    else
        s.axes.push_back(SweepAxis{name, std::move(values)});
}

namespace {

// The items of a list typed into a field ("1e-3, 3e-4 1e-2"), each read by `read` (false: the
// item is bad, `why` says how); errors name the key and the bad item.
template <typename T, typename Read>
std::vector<T> parseList(const QString &text, const QString &key, QStringList *errors, Read read)
{
    std::vector<T> out;
    const auto parts =
        text.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
    for (int i = 0; i < parts.size(); ++i) {
        T value{};
        QString why;
        if (read(parts[i], &value, &why))
            out.push_back(value);
        else
            *errors << QObject::tr("%1[%2]: %3").arg(key).arg(i).arg(why);
    }
    if (parts.isEmpty()) *errors << QObject::tr("%1: give at least one value").arg(key);
    return out;
}

} // namespace

QLabel *errorLabel(QWidget *parent)
{
    auto *l = new QLabel(parent);
    l->setWordWrap(true);
    l->setStyleSheet(QStringLiteral("color: #d03030;"));
    l->setVisible(false);
    return l;
}

void showFieldError(QLabel *label, const QStringList &errors, const QString &prefix,
                    const QStringList &notices)
{
    QStringList mine;
    for (const auto &e : errors)
        if (e.startsWith(prefix) &&
            (e.size() == prefix.size() || QStringLiteral(":[. ").contains(e[prefix.size()])))
            mine << e;
    if (notices.isEmpty()) {
        label->setTextFormat(Qt::PlainText);
        label->setText(mine.join('\n'));
    } else { // errors in the label's red, then the notices in amber
        QString html;
        for (const auto &e : mine) html += QStringLiteral("<div>%1</div>").arg(e.toHtmlEscaped());
        for (const auto &n : notices)
            html += QStringLiteral("<div style='color:#a07000'>⤼ %1</div>").arg(n.toHtmlEscaped());
        label->setTextFormat(Qt::RichText);
        label->setText(html);
    }
    label->setVisible(!mine.isEmpty() || !notices.isEmpty());
}

QComboBox *namedChoice(QWidget *parent,
                       std::initializer_list<std::pair<QString, QString>> textAndName,
                       const QString &toolTip)
{
    auto *c = new QComboBox(parent);
    for (const auto &[text, name] : textAndName) c->addItem(text, name);
    c->setToolTip(toolTip);
    return c;
}

std::vector<double> parseNumbers(const QString &text, const QString &key, QStringList *errors,
                                 bool integers)
{
    return parseList<double>(text, key, errors,
                             [integers](const QString &item, double *v, QString *why) {
                                 bool ok = false;
                                 *v = item.toDouble(&ok);
                                 if (!ok || !std::isfinite(*v)) {
                                     *why = QObject::tr("'%1' is not a number").arg(item);
                                     return false;
                                 }
                                 if (integers && *v != std::floor(*v)) {
                                     *why = QObject::tr("%1 is not an integer").arg(item);
                                     return false;
                                 }
                                 return true;
                             });
}

std::vector<uint64_t> parseSeeds(const QString &text, const QString &key, QStringList *errors)
{
    return parseList<uint64_t>(
        text, key, errors, [](const QString &item, uint64_t *v, QString *why) {
            bool ok = false;
            *v = item.toULongLong(&ok);
            if (!ok) *why = QObject::tr("'%1' is not a whole number from 0 to 2^64 - 1").arg(item);
            return ok;
        });
}

} // namespace headlab::ui::form
