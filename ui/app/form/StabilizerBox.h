// StabilizerBox.h — the form's stabilizer box: one line per row of stabilizerFields()
// (core/schema/RunConfigFields.h). One value sets the stabilizer; several, separated by commas,
// sweep it (an axis named by its key, or `stabilizers.KEY` where the session named it so).
#pragma once

#include "ui/app/form/FormBox.h"

#include <string>
#include <utility>
#include <vector>

class QLineEdit;

namespace headlab::ui {

class StabilizerBox : public FormBox {
    Q_OBJECT
public:
    explicit StabilizerBox(QWidget *parent = nullptr);
    void load(const Session &session) override;
    void build(Session &definition, const Session &loaded, QStringList &errors) const override;
    // The line of a row of stabilizerFields(), or nullptr.
    QLineEdit *edit(const std::string &key) const;
    // Whether a line edits the sweep axis `name` (a stabilizer's key, or stabilizers.KEY).
    bool editsAxis(const std::string &name) const;

private:
    std::vector<std::pair<std::string, QLineEdit *>> m_edits; // in the table's order
};

} // namespace headlab::ui
