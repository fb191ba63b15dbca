// FormBox.h — one box of the experiment form (ExperimentForm.h): its widgets, how a session
// loads into them, and what they write into a session's definition. The form holds one box of
// each kind, in order, and checks the definition they build together; a box that edits a sweep
// axis keeps it as the loaded session had it where its field still says the same (FormParts.h).
#pragma once

#include "core/session/Session.h"

#include <QGroupBox>
#include <QStringList>

namespace headlab::ui {

class FormBox : public QGroupBox {
    Q_OBJECT
public:
    using QGroupBox::QGroupBox;
    // Shows `session` in the box's widgets, without emitting edited().
    virtual void load(const Session &session) = 0;
    // Writes what the widgets say into `definition` (a copy of `loaded`, the session last
    // loaded); a field that does not read adds "key.path: message" to `errors`.
    virtual void build(Session &definition, const Session &loaded, QStringList &errors) const = 0;

Q_SIGNALS:
    void edited(); // the person changed one of its widgets
};

} // namespace headlab::ui
