// ExperimentForm.h — the experiment form: task, model, head schedules, head-dimension rule,
// stabilizers, training phases, learning rates, seeds, the boundary search, steps and device.
// Each box is a widget of its own (ui/app/form/: task, model, stabilizers, training, search), loading
// a session and building its part of the definition; the form holds them in order, checks the
// definition they build together and shows the messages at the fields they concern.
//
// Every edit is checked at once with core's own rules — expandSweep, validate() and a round trip
// through the YAML loader — so the form shows exactly the messages the loader would give, lists
// the combinations that will be skipped and why, and says why Start is disabled when it is.
#pragma once

#include "core/session/Session.h"
#include "core/train/SweepRunner.h"

#include <QWidget>

#include <set>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTimer;

namespace headlab::ui {

class FormBox;
class ModelBox;
class SearchBox;
class StabilizerBox;
class TaskBox;
class TrainingBox;

struct FormCheck {
    QStringList errors;  // blocking: field errors and core validation messages
    QStringList skipped; // combinations expandSweep skips, with why
    int runs = 0;        // runnable combinations
    int pending = 0;     // of which still to run
};

class ExperimentForm : public QWidget {
    Q_OBJECT
public:
    explicit ExperimentForm(QWidget *parent = nullptr);

    // Shows a session's definition; emits nothing.
    void loadFrom(const headlab::Session &session);
    // The definition the widgets describe, built over the loaded one (axes the form does not
    // edit are kept). Field errors ("sweep.lr: 'abc' is not a number") go to *errors.
    bool buildDefinition(headlab::Session &definition, QStringList *errors) const;
    // Validates now (normally debounced after each edit) and updates the messages.
    FormCheck check();
    const FormCheck &lastCheck() const { return m_check; }
    bool canStart() const { return m_canStart; }
    QString blockReason() const { return m_blockReason; }
    headlab::SweepOptions sweepOptions() const;
    void setRunning(bool running);
    // Tells the form how many runs of the session are still pending (finished ones are kept).
    void setPendingRuns(int pending);

    // For tests and the main window.
    QLineEdit *learningRatesEdit() const;
    QLineEdit *dModelsEdit() const;
    QLineEdit *headsEdit() const;
    QLabel *headsMessage() const;                        // errors and skips the heads caused
    QLabel *messagesLabel() const { return m_messages; } // the rest, at the panel's bottom
    QLineEdit *generatorFromEdit() const;
    QLineEdit *generatorToEdit() const;
    QSpinBox *generatorCountBox() const;
    QLabel *validationLabel() const { return m_messages; }
    TaskBox *taskBox() const { return m_taskBox; }
    ModelBox *modelBox() const { return m_modelBox; }
    StabilizerBox *stabilizerBox() const { return m_stabilizerBox; }
    TrainingBox *trainingBox() const { return m_trainingBox; }
    // The boundary-search box's widgets (SearchBox.h).
    QCheckBox *searchBox() const;
    QComboBox *searchAxisBox() const;
    QLineEdit *searchFromEdit() const;
    QLineEdit *searchToEdit() const;
    QComboBox *searchModelBox() const;
    QDoubleSpinBox *searchLawWidthBox() const;
    QComboBox *searchSeedsBox() const;
    QSpinBox *searchReplicatesBox() const;

Q_SIGNALS:
    // A user edit that parses; the main window applies it to the session (runs re-expanded).
    void definitionChanged(const headlab::Session &definition);
    void startAllowedChanged(bool allowed, const QString &reason);

private:
    void edited();
    void showAxesNotEdited(const headlab::Session &session);
    // Disables the fields a search takes over (its axis's, and the seeds: a search gives its runs
    // their seeds) and those sweep.combinations set.
    void updateAxisEditors();
    bool editsAxis(const std::string &name) const;

    headlab::Session m_loaded; // base, axes, name as last loaded or applied
    bool m_loading = false;
    bool m_running = false;
    FormCheck m_check;
    bool m_canStart = false;
    QString m_blockReason;
    int m_pendingOverride = -1;
    QTimer *m_debounce;

    TaskBox *m_taskBox;                // name, task and its options
    ModelBox *m_modelBox;              // a line per model row, the heads, the QK rule
    StabilizerBox *m_stabilizerBox;    // a line per stabilizer row
    TrainingBox *m_trainingBox;        // phases, η, seeds, evaluation, device
    SearchBox *m_searchBox;            // the boundary search
    std::vector<FormBox *> m_boxes;    // the five, in the form's order
    std::set<std::string> m_comboKeys; // axes the loaded session's combinations set
    QLabel *m_otherAxes;
    QLabel *m_summary;
    QLabel *m_messages;
};

} // namespace headlab::ui
