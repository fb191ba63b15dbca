// ModelBox.h — the form's model box, generated from the model rows of the field table
// (core/schema/RunConfigFields.h, modelFields()): one line per one-key row, titled by its
// dimension where the row is one (Dimensions.h), its help as the placeholder and its choices to
// complete. One value sets the field; several, separated by commas, sweep it along the row's axis
// (modelAxisName: d_model, head_dim, model.ffn_width, ...). A row with an editor of its own is
// registered by key in ModelBox.cpp: the heads row (layer count, one count per layer or per-layer
// schedules). The QK rule, a table of its own, closes the box.
#pragma once

#include "ui/app/form/FormBox.h"

#include <map>
#include <string>
#include <vector>

class QCheckBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QRadioButton;
class QSpinBox;

namespace headlab::ui {

class HeadScheduleEditor;

class ModelBox : public FormBox {
    Q_OBJECT
public:
    explicit ModelBox(QWidget *parent = nullptr);
    void load(const Session &session) override;
    void build(Session &definition, const Session &loaded, QStringList &errors) const override;

    // The line of a one-key model row ("d_model", "ffn_width"), or nullptr.
    QLineEdit *edit(const std::string &key) const;
    QLineEdit *headsEdit() const { return m_heads; }
    QLabel *headsMessage() const { return m_headsError; } // errors and skips the heads caused
    // Whether one of its widgets edits the sweep axis `name` (d_model, heads, model.bias, ...).
    bool editsAxis(const std::string &name) const;
    // Disables the widgets of the axes in `locked` (sweep.combinations set them, or the search runs
    // along them), each with its reason as the tooltip where it has one.
    void lockAxes(const std::map<std::string, QString> &locked);
    // Shows, at each field, the errors under its key path; at the heads, `headNotices` too.
    void showErrors(const QStringList &fieldErrors, const QStringList &allErrors,
                    const QStringList &headNotices);

private:
    // A line per one-key row; its axis name is asked of the dimension table when used (a row
    // added by a test after the box was built is found).
    struct Line {
        std::string key;
        QLineEdit *edit;
        QLabel *error;
        QString toolTip;
    };
    void addLine(QFormLayout *form, const std::string &key, const std::string &help,
                 const std::vector<std::string> &choices);
    // The heads row's own editor: the layer count, then a count per layer or per-layer schedules.
    void addHeadsRows(QFormLayout *form);
    void addQkRuleRow(QFormLayout *form);
    void loadHeads(const Session &session);
    void buildHeads(Session &def, const Session &loaded, QStringList &errors) const;
    void buildLine(const Line &line, Session &def, const Session &loaded,
                   QStringList &errors) const;
    // The schedule editor's generator needs the layer count and the widths typed.
    void updateScheduleEditor();

    std::vector<Line> m_lines; // in the table's order
    QSpinBox *m_layers = nullptr;
    QRadioButton *m_headsSame = nullptr, *m_headsSchedule = nullptr;
    QLineEdit *m_heads = nullptr;
    HeadScheduleEditor *m_schedules = nullptr;
    QLabel *m_headsError = nullptr;
    QCheckBox *m_qkRule = nullptr;
    QDoubleSpinBox *m_qkRef = nullptr;
};

} // namespace headlab::ui
