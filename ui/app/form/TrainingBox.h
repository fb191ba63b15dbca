// TrainingBox.h — the form's training box: the phases (a row of the phase table each, its cells
// read by the phase rows of the field table), the learning rates η (a list, or a log-spaced
// generator the session keeps as `lr: {logspace: …}` while the list is its expansion), the seeds,
// the evaluation interval, the device and the CPU threads.
#pragma once

#include "ui/app/form/FormBox.h"

#include "core/train/SweepRunner.h"

#include <map>
#include <string>

class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTableWidget;
class QVBoxLayout;

namespace headlab::ui {

class TrainingBox : public FormBox {
    Q_OBJECT
public:
    explicit TrainingBox(QWidget *parent = nullptr);
    void load(const Session &session) override;
    void build(Session &definition, const Session &loaded, QStringList &errors) const override;

    QLineEdit *learningRatesEdit() const { return m_lrs; }
    QLineEdit *generatorFromEdit() const { return m_lrFrom; }
    QLineEdit *generatorToEdit() const { return m_lrTo; }
    QSpinBox *generatorCountBox() const { return m_lrCount; }
    QLineEdit *seedsEdit() const { return m_seeds; }
    QTableWidget *phasesTable() const { return m_phases; }
    // The device and threads chosen, for the sweep (the session keeps the device too).
    SweepOptions sweepOptions() const;
    // Whether one of its widgets edits the sweep axis `name` (lr, seed).
    bool editsAxis(const std::string &name) const { return name == "lr" || name == "seed"; }
    // Disables the widgets of the axes in `locked` (the search runs along η, or gives the seeds).
    void lockAxes(const std::map<std::string, QString> &locked);
    // Shows, at each field, the errors under its key path.
    void showErrors(const QStringList &fieldErrors);

private:
    void addPhaseRows(QVBoxLayout *layout);
    void addLearningRateRows(QFormLayout *form);
    void addPhaseRow(const PhaseConfig &phase);
    std::vector<PhaseConfig> buildPhases(const Session &loaded, QStringList &errors) const;
    void generateLearningRates();
    void loadLearningRateGenerator(const Session &session);

    QTableWidget *m_phases;
    QLabel *m_phasesError;
    QLineEdit *m_lrs;
    QLabel *m_lrsError;
    QLineEdit *m_lrFrom, *m_lrTo; // the log-spaced generator's range, exact numbers
    QSpinBox *m_lrCount;
    // The generator that gave the list (lr: {logspace: …}), as flow YAML; "" when the list was
    // typed. Kept on the lr axis, it is what a save writes while the list is still its expansion.
    std::string m_lrForm;
    QLineEdit *m_seeds;
    QLabel *m_seedsError;
    QSpinBox *m_evalEvery;
    QComboBox *m_device;
    QSpinBox *m_threads;
};

} // namespace headlab::ui
