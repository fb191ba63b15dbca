// TrainingBox.cpp — see TrainingBox.h.
#include "ui/app/form/TrainingBox.h"

#include "ui/app/form/FormParts.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/TrainingController.h"

#include "core/schema/Dimensions.h"
#include "core/schema/RunConfigFields.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <yaml-cpp/yaml.h>

namespace headlab::ui {

using form::enumCombo;
using form::errorLabel;
using form::findAxis;
using form::joinNumbers;
using form::keepsAxis;
using form::parseNumbers;
using form::parseSeeds;
using form::setAxis;

namespace {

enum PhaseColumn {
    PhaseName,
    PhaseObjective,
    PhaseSteps,
    PhaseBatch,
    PhaseLr,
    PhaseOptimizer,
    PhaseSchedule,
    PhaseColumns
};

} // namespace

TrainingBox::TrainingBox(QWidget *parent)
    : FormBox(tr("Training"), parent)
{
    auto *layout = new QVBoxLayout(this);
    addPhaseRows(layout);
    auto *form = new QFormLayout;
    addLearningRateRows(form);
    m_seeds = new QLineEdit(this);
    m_seeds->setToolTip(tr("Seeds for initialisation and data, e.g. 0, 1, 2"));
    form->addRow(tr("Seeds"), m_seeds);
    m_seedsError = errorLabel(this);
    form->addRow(m_seedsError);
    m_evalEvery = new QSpinBox(this);
    m_evalEvery->setRange(1, 1000000);
    form->addRow(tr("Evaluate every"), m_evalEvery);
    m_device = new QComboBox(this);
    m_device->addItem(QStringLiteral("auto"));
    for (const auto &d : TrainingController::availableDevices()) m_device->addItem(d);
    form->addRow(tr("Device"), m_device);
    m_threads = new QSpinBox(this);
    m_threads->setRange(0, 256);
    m_threads->setSpecialValueText(tr("default"));
    form->addRow(tr("CPU threads"), m_threads);
    layout->addLayout(form);

    for (auto *e : {m_lrs, m_seeds})
        connect(e, &QLineEdit::textChanged, this, &TrainingBox::edited);
    for (auto *s : {m_evalEvery, m_threads})
        connect(s, &QSpinBox::valueChanged, this, &TrainingBox::edited);
    connect(m_device, &QComboBox::currentIndexChanged, this, &TrainingBox::edited);
    connect(m_phases, &QTableWidget::itemChanged, this, &TrainingBox::edited);
}

void TrainingBox::addPhaseRows(QVBoxLayout *layout)
{
    m_phases = new QTableWidget(0, PhaseColumns, this);
    m_phases->setHorizontalHeaderLabels({tr("Phase"), tr("Objective"), tr("Steps"), tr("Batch"),
                                         tr("LR"), tr("Optimizer"), tr("Schedule")});
    m_phases->verticalHeader()->setVisible(false);
    m_phases->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_phases->setMaximumHeight(110);
    m_phases->setToolTip(
        tr("LR 'scanned' uses the swept learning rate η; a number fixes the phase's rate"));
    layout->addWidget(m_phases);
    auto *buttons = new QHBoxLayout;
    auto *addPhase = new QPushButton(tr("Add phase"), this);
    auto *removePhase = new QPushButton(tr("Remove phase"), this);
    buttons->addWidget(addPhase);
    buttons->addWidget(removePhase);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    m_phasesError = errorLabel(this);
    layout->addWidget(m_phasesError);
    connect(addPhase, &QPushButton::clicked, this, [this] {
        PhaseConfig p;
        p.name = "phase" + std::to_string(m_phases->rowCount() + 1);
        addPhaseRow(p);
        Q_EMIT edited();
    });
    connect(removePhase, &QPushButton::clicked, this, [this] {
        const int row =
            m_phases->currentRow() >= 0 ? m_phases->currentRow() : m_phases->rowCount() - 1;
        if (row >= 0) m_phases->removeRow(row);
        Q_EMIT edited();
    });
}

// The learning rates: a list, and a generator of log-spaced values.
void TrainingBox::addLearningRateRows(QFormLayout *form)
{
    m_lrs = new QLineEdit(this);
    m_lrs->setToolTip(tr("Learning rates η to sweep, e.g. 1e-5, 1e-4, 1e-3"));
    form->addRow(tr("Learning rates η"), m_lrs);
    m_lrsError = errorLabel(this);
    form->addRow(m_lrsError);
    // The generator: its values replace the list, and the session keeps it as a generator
    // (`lr: {logspace: …}`) until the list is edited by hand.
    auto *genRow = new QHBoxLayout;
    m_lrFrom = new QLineEdit(this);
    m_lrTo = new QLineEdit(this);
    for (auto *e : {m_lrFrom, m_lrTo}) {
        e->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("0.0000316x")) + 12);
        e->setToolTip(tr("The generator's range, log-spaced from → to (exact numbers)"));
    }
    m_lrFrom->setText(QStringLiteral("3e-5"));
    m_lrTo->setText(QStringLiteral("3e-3"));
    m_lrCount = new QSpinBox(this);
    m_lrCount->setRange(1, int(RunLimits::kMaxAxisValues));
    m_lrCount->setValue(10);
    auto *gen = new QPushButton(tr("Log-spaced"), this);
    gen->setObjectName(QStringLiteral("logspaceButton"));
    gen->setToolTip(tr("Replace the list with this many values log-spaced from → to; the session "
                       "keeps them as a generator until the list is edited"));
    genRow->addWidget(m_lrFrom, 1);
    genRow->addWidget(new QLabel(QStringLiteral("→"), this));
    genRow->addWidget(m_lrTo, 1);
    genRow->addWidget(m_lrCount);
    genRow->addWidget(gen);
    form->addRow(genRow); // the whole row: beside the labels' column it widened the dock
    connect(gen, &QPushButton::clicked, this, [this] { generateLearningRates(); });
}

// The generator row's values through the lr axis's own form (the session reader's expansion, so
// that the list shown is exactly what the session file's generator gives); a message at the field
// when from or to is not a positive number.
void TrainingBox::generateLearningRates()
{
    QStringList errs;
    const auto from =
        parseNumbers(m_lrFrom->text(), QStringLiteral("sweep.lr (from)"), &errs, false);
    const auto to = parseNumbers(m_lrTo->text(), QStringLiteral("sweep.lr (to)"), &errs, false);
    if (errs.isEmpty() && (from.size() != 1 || to.size() != 1))
        errs << tr("sweep.lr: the generator takes one number for from and one for to");
    std::vector<AxisValue> values;
    if (errs.isEmpty()) {
        const std::string form = logspaceForm(from.front(), to.front(), m_lrCount->value());
        try {
            values = *expandAxisForm(*findDimension("lr"), "lr", YAML::Load(form));
            m_lrForm = form;
        } catch (const SessionError &e) {
            errs << tr("sweep.lr: %1").arg(QString::fromStdString(e.message()));
        }
    }
    if (!errs.isEmpty()) {
        form::showFieldError(m_lrsError, errs, QStringLiteral("sweep.lr"));
        return;
    }
    std::vector<double> numbers;
    for (const auto &v : values) numbers.push_back(v.number);
    m_lrs->setText(joinNumbers(numbers)); // edited() follows, and the form's check
}

void TrainingBox::addPhaseRow(const PhaseConfig &phase)
{
    const QSignalBlocker block(m_phases);
    const int row = m_phases->rowCount();
    m_phases->insertRow(row);
    m_phases->setItem(row, PhaseName, new QTableWidgetItem(QString::fromStdString(phase.name)));
    auto *objective =
        enumCombo({tr("next token"), tr("answer"), tr("regression")}, int(phase.objective));
    m_phases->setCellWidget(row, PhaseObjective, objective);
    m_phases->setItem(row, PhaseSteps, new QTableWidgetItem(QString::number(phase.steps)));
    m_phases->setItem(row, PhaseBatch, new QTableWidgetItem(QString::number(phase.batchSize)));
    m_phases->setItem(
        row, PhaseLr,
        new QTableWidgetItem(phase.useScannedLr ? tr("scanned") : exactNumber(phase.lr)));
    auto *optimizer =
        enumCombo({QStringLiteral("Adam"), QStringLiteral("AdamW")}, int(phase.optimizer.kind));
    m_phases->setCellWidget(row, PhaseOptimizer, optimizer);
    auto *schedule = enumCombo({tr("constant"), tr("warm-up + cosine")}, int(phase.schedule.kind));
    m_phases->setCellWidget(row, PhaseSchedule, schedule);
    form::guardWheel(this);
    for (auto *c : {objective, optimizer, schedule})
        connect(c, &QComboBox::currentIndexChanged, this, &TrainingBox::edited);
}

void TrainingBox::load(const Session &session)
{
    const RunConfig &b = session.base;
    const QSignalBlocker blockLrs(m_lrs), blockSeeds(m_seeds), blockEval(m_evalEvery),
        blockDevice(m_device);
    m_phases->setRowCount(0);
    for (const auto &p : b.phases) addPhaseRow(p);

    std::vector<double> lrs;
    if (const auto *a = findAxis(session, "lr"))
        for (const auto &v : a->values) lrs.push_back(v.number);
    if (lrs.empty()) lrs.push_back(b.lr);
    m_lrs->setText(joinNumbers(lrs));
    loadLearningRateGenerator(session);
    QStringList seeds;
    if (const auto *a = findAxis(session, "seed"))
        for (const auto &v : a->values) seeds << QString::fromStdString(v.label());
    if (seeds.empty()) seeds << QString::number(qulonglong(b.initSeed));
    m_seeds->setText(seeds.join(QStringLiteral(", ")));
    m_evalEvery->setValue(int(b.evalEvery));
    const int di = m_device->findText(QString::fromStdString(b.device));
    m_device->setCurrentIndex(di >= 0 ? di : 0);
}

// The generator row shows the session's own generator (lr: {logspace: …}) when it has one that
// still gives its list; else it keeps what it showed.
void TrainingBox::loadLearningRateGenerator(const Session &session)
{
    m_lrForm.clear();
    const SweepAxis *axis = findAxis(session, "lr");
    const auto row = findDimension("lr");
    const auto form = axis && row ? axisFormHolds(*row, *axis) : std::nullopt;
    if (!form || !(*form)["logspace"]) return;
    const YAML::Node logspace = (*form)["logspace"];
    m_lrFrom->setText(exactNumber(logspace["from"].as<double>()));
    m_lrTo->setText(exactNumber(logspace["to"].as<double>()));
    m_lrCount->setValue(logspace["count"].as<int>());
    m_lrForm = axis->form;
}

void TrainingBox::build(Session &def, const Session &loaded, QStringList &errs) const
{
    RunConfig &b = def.base;
    b.phases = buildPhases(loaded, errs);

    const auto lrs = parseNumbers(m_lrs->text(), QStringLiteral("sweep.lr"), &errs, false);
    std::vector<AxisValue> lrValues;
    for (double v : lrs) {
        RunConfig scratch; // read by the lr row of the config table, as a session file's value
        const std::string problem =
            readFieldText(runConfigFields(), "lr", yaml::formatNumber(v), scratch);
        if (!problem.empty()) errs << tr("sweep.lr: %1").arg(QString::fromStdString(problem));
        lrValues.push_back(AxisValue::ofNumber(v));
    }
    const bool hadLr = findAxis(loaded, "lr") != nullptr;
    if (!lrs.empty() && !keepsAxis(lrValues.size(), hadLr)) b.lr = lrs.front();
    setAxis(def, "lr", lrValues, hadLr || !m_lrForm.empty());
    // The generator, kept while the list is still its expansion (a save writes it then).
    for (auto &axis : def.axes)
        if (axis.name == "lr" && !m_lrForm.empty()) axis.form = m_lrForm;

    const auto seeds = parseSeeds(m_seeds->text(), QStringLiteral("sweep.seed"), &errs);
    std::vector<AxisValue> seedValues;
    for (uint64_t v : seeds) seedValues.push_back(AxisValue::ofUnsigned(v));
    const bool hadSeed = findAxis(loaded, "seed") != nullptr;
    if (!seeds.empty() && !keepsAxis(seedValues.size(), hadSeed))
        b.initSeed = b.dataSeed = seeds.front();
    setAxis(def, "seed", seedValues, hadSeed);

    b.evalEvery = m_evalEvery->value();
    b.device = m_device->currentText().toStdString();
}

// The phases, keeping the settings the table does not show (betas, eps, warm-up fraction).
std::vector<PhaseConfig> TrainingBox::buildPhases(const Session &loaded, QStringList &errs) const
{
    std::vector<PhaseConfig> phases;
    for (int row = 0; row < m_phases->rowCount(); ++row) {
        PhaseConfig p =
            row < int(loaded.base.phases.size()) ? loaded.base.phases[size_t(row)] : PhaseConfig{};
        auto text = [&](int col) {
            return m_phases->item(row, col) ? m_phases->item(row, col)->text().trimmed()
                                            : QString();
        };
        auto combo = [&](int col) {
            return static_cast<QComboBox *>(m_phases->cellWidget(row, col))->currentIndex();
        };
        p.name = text(PhaseName).toStdString();
        p.objective = Objective(combo(PhaseObjective));
        // Each cell is read by its row of the phase table (phaseFields()), with the session
        // reader's checks and messages.
        auto readCell = [&](const char *key, const QString &cell) {
            const std::string problem = readFieldText(phaseFields(), key, cell.toStdString(), p);
            if (!problem.empty())
                errs << tr("phases[%1].%2: %3")
                            .arg(row)
                            .arg(QLatin1String(key), QString::fromStdString(problem));
        };
        readCell("steps", text(PhaseSteps));
        readCell("batch_size", text(PhaseBatch));
        const QString lr = text(PhaseLr);
        if (lr.compare(tr("scanned"), Qt::CaseInsensitive) == 0 || lr.isEmpty())
            p.useScannedLr = true;
        else
            readCell("lr", lr);
        p.optimizer.kind = OptimizerKind(combo(PhaseOptimizer));
        p.schedule.kind = ScheduleKind(combo(PhaseSchedule));
        phases.push_back(p);
    }
    if (phases.empty()) errs << tr("phases: add at least one training phase");
    return phases;
}

SweepOptions TrainingBox::sweepOptions() const
{
    SweepOptions o;
    o.device = m_device->currentText().toStdString();
    o.threads = m_threads->value();
    return o;
}

void TrainingBox::lockAxes(const std::map<std::string, QString> &locked)
{
    m_lrs->setEnabled(!locked.count("lr"));
    m_seeds->setEnabled(!locked.count("seed"));
}

void TrainingBox::showErrors(const QStringList &fieldErrors)
{
    form::showFieldError(m_lrsError, fieldErrors, QStringLiteral("sweep.lr"));
    form::showFieldError(m_seedsError, fieldErrors, QStringLiteral("sweep.seed"));
    form::showFieldError(m_phasesError, fieldErrors, QStringLiteral("phases"));
}

} // namespace headlab::ui
