// ExperimentForm.h — the experiment form: task, model, head schedules, head-dimension rule,
// stabilizers, training phases, learning rates, seeds, the boundary search, steps and device.
// The task, stabilizer and search boxes are widgets of their own (ui/app/form/), each loading a
// session and building its part of the definition; the model and training boxes are still built
// here.
//
// Every edit is checked at once with core's own rules — expandSweep, validate() and a round trip
// through the YAML loader — so the form shows exactly the messages the loader would give, lists
// the combinations that will be skipped and why, and says why Start is disabled when it is.
#pragma once

#include "core/session/Session.h"
#include "core/train/SweepRunner.h"

#include <QWidget>

#include <map>
#include <set>
#include <string>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QRadioButton;
class QSpinBox;
class QStackedWidget;
class QFormLayout;
class QLineEdit;
class QTableWidget;
class QTimer;

namespace headlab::ui {

class HeadScheduleEditor;
class SearchBox;
class StabilizerBox;
class TaskBox;

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
    QLineEdit *learningRatesEdit() const { return m_lrs; }
    QLineEdit *dModelsEdit() const { return m_dModels; }
    QLineEdit *headsEdit() const { return m_heads; }
    QLabel *headsMessage() const { return m_headsError; } // errors and skips the heads caused
    QLabel *messagesLabel() const { return m_messages; }  // the rest, at the panel's bottom
    QLineEdit *generatorFromEdit() const { return m_lrFrom; }
    QLineEdit *generatorToEdit() const { return m_lrTo; }
    QSpinBox *generatorCountBox() const { return m_lrCount; }
    QLabel *validationLabel() const { return m_messages; }
    TaskBox *taskBox() const { return m_taskBox; }
    StabilizerBox *stabilizerBox() const { return m_stabilizerBox; }
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
    // The constructor's parts: each box of the form, then the connections of every edit.
    QGroupBox *buildModelBox();
    QGroupBox *buildTrainingBox(); // phases, learning rates, seeds, the boundary search, device
    void addLearningRateRows(QFormLayout *form);
    void connectEdits();
    // loadFrom's parts.
    void loadHeads(const headlab::Session &session);
    void showAxesNotEdited(const headlab::Session &session);
    // buildDefinition's parts.
    void buildHeads(headlab::Session &def, int layers, QStringList &errs) const;
    std::vector<headlab::PhaseConfig> buildPhases(QStringList &errs) const;
    // Enables the fields a search takes over: its axis's list, η's list when it searches η, and
    // the seeds (a search gives its runs their seeds); and those sweep.combinations set.
    void updateAxisEditors();
    void addPhaseRow(const headlab::PhaseConfig &phase);
    // The errors whose key path starts with `prefix`, then `notices` (skipped combinations the
    // field caused, in amber), at the field's label.
    void showFieldError(QLabel *label, const QStringList &errors, const QString &prefix,
                        const QStringList &notices = {});

    headlab::Session m_loaded; // base, axes, name as last loaded or applied
    bool m_loading = false;
    bool m_running = false;
    FormCheck m_check;
    bool m_canStart = false;
    QString m_blockReason;
    int m_pendingOverride = -1;
    QTimer *m_debounce;

    TaskBox *m_taskBox;             // name, task and its options
    StabilizerBox *m_stabilizerBox; // a line per stabilizer row
    SearchBox *m_searchBox;         // the boundary search
    // The sweep axes the form edits in a widget of its own, registered by name where each is
    // built; the session's other axes are shown as loaded (showAxesNotEdited).
    std::map<std::string, QWidget *> m_axisEditors;
    QSpinBox *m_layers;
    QLineEdit *m_dModels;
    QRadioButton *m_headsSame, *m_headsSchedule;
    QLineEdit *m_heads;
    HeadScheduleEditor *m_schedules;
    QComboBox *m_headDimRule;
    QSpinBox *m_headDim;
    QComboBox *m_logitScale;
    QCheckBox *m_qkRule;
    QDoubleSpinBox *m_qkRef;
    QTableWidget *m_phases;
    QLineEdit *m_lrs;
    QLineEdit *m_lrFrom, *m_lrTo; // the log-spaced generator's range, exact numbers
    QSpinBox *m_lrCount;
    // The generator that gave the list (lr: {logspace: …}), as flow YAML; "" when the list was
    // typed. Kept on the lr axis, it is what a save writes while the list is still its expansion.
    std::string m_lrForm;
    void generateLearningRates();
    void loadLearningRateGenerator(const headlab::Session &session);
    QLineEdit *m_seeds;
    std::set<std::string> m_comboKeys; // axes the loaded session's combinations set
    QSpinBox *m_evalEvery;
    QComboBox *m_device;
    QSpinBox *m_threads;
    QLabel *m_dModelsError, *m_headsError, *m_lrsError, *m_seedsError, *m_phasesError;
    QLabel *m_otherAxes;
    QLabel *m_summary;
    QLabel *m_messages;
};

} // namespace headlab::ui
