// FormParts.h — what the boxes of the experiment form share: how a field's values become a sweep
// axis of the definition, or the base's value where the loaded session never swept it; how a
// typed list is read, with messages naming the key and the item; the red label under a field;
// a choice of a spec's named values.
#pragma once

#include "core/session/Session.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

class QComboBox;
class QLabel;
class QWidget;

namespace headlab::ui::form {

const SweepAxis *findAxis(const Session &s, const std::string &name);
// Whether setAxis keeps an axis for these values: more than one, or the session swept it before.
// While it does, the base's value of that field is not touched: every run takes the axis' value,
// and rewriting the base from the first value changed a saved session for no reason.
bool keepsAxis(size_t values, bool hadAxis);
// Sets an axis' values, or, when there is one value and the session never swept it, the base.
void setAxis(Session &s, const std::string &name, std::vector<AxisValue> values, bool hadAxis);

// A field's error line: red, wrapped, hidden until it has something to say.
QLabel *errorLabel(QWidget *parent);
// Shows at a field's error line the errors whose key path is `prefix` or under it ("sweep.lr",
// "sweep.lr[2]", "sweep.lr (from)", "phases[0].steps" under "phases"), then `notices` (skipped combinations the field
// caused) in amber; hides the line when there is neither.
void showFieldError(QLabel *label, const QStringList &errors, const QString &prefix,
                    const QStringList &notices = {});
// Editable lists show every number exactly (exactNumber): a field that rounded for display wrote
// the rounded value back on the next save (0.000316227766 became 0.000316, 16384 became 16380).
QString joinNumbers(const std::vector<double> &values);
// Spin boxes and combo boxes under `root` take the mouse wheel only when they have the keyboard
// focus (again after rows are added): a wheel turned to scroll the form passed over a choice and
// changed it with no sign. Unfocused, the wheel goes on to the scroll area around the form.
void guardWheel(QWidget *root);
// A combo box of `items`, showing item `current`.
QComboBox *enumCombo(const QStringList &items, int current);
// A choice of a spec's named values: each item's text and the name it stands for.
QComboBox *namedChoice(QWidget *parent,
                       std::initializer_list<std::pair<QString, QString>> textAndName,
                       const QString &toolTip);
// The numbers of a list typed into a field ("1e-3, 3e-4 1e-2"); each bad item adds
// "KEY[i]: why" to `errors` (an empty list: "KEY: give at least one value"). `integers`: whole
// numbers only.
std::vector<double> parseNumbers(const QString &text, const QString &key, QStringList *errors,
                                 bool integers);
// Seeds are exact over all 64 bits (a double is not): "0, 1, 18446744073709551615".
std::vector<uint64_t> parseSeeds(const QString &text, const QString &key, QStringList *errors);

} // namespace headlab::ui::form
