// ExperimentForm.cpp — see ExperimentForm.h.
#include "ui/app/ExperimentForm.h"

#include "core/schema/Dimensions.h"
#include "core/session/Session.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"

#include "ui/app/HeadScheduleEditor.h"
#include "ui/app/form/FormParts.h"
#include "ui/app/form/SearchBox.h"
#include "ui/app/form/StabilizerBox.h"
#include "ui/app/form/TaskBox.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/TrainingController.h"

#include "core/schema/RunConfigFields.h"
#include "core/schema/TaskSpec.h"

#include <QAbstractSpinBox>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <set>

namespace headlab::ui {

using form::errorLabel;
using form::findAxis;
using form::keepsAxis;
using form::namedChoice;
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

// Editable lists show every number exactly (exactNumber): a field that rounded for display wrote
// the rounded value back on the next save (0.000316227766 became 0.000316, 16384 became 16380).
QString joinNumbers(const std::vector<double> &values)
{
    QStringList parts;
    for (double v : values) parts << exactNumber(v);
    return parts.join(", ");
}

// Spin boxes and combo boxes take the mouse wheel only when they have the keyboard focus: a wheel
// turned to scroll the form passed over "Head dim" and switched it to "fixed 8" with no sign.
// Unfocused, the wheel goes on to the scroll area around the form.
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

// Guards every spin box and combo box under `root` once (again after rows are added).
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

// What a session file's reader says of `value` as one value of the sweep axis `name` (its row
// in Dimensions.h): "" when it takes it, else its message ("must be at least 1, got 0").
std::string axisValueProblem(const std::string &name, double value)
{
    const std::optional<Dimension> axis = findDimension(name);
    if (!axis) return "no sweep axis " + name;
    try {
        axis->read(yaml::YamlField{"", name, YAML::Node(yaml::formatNumber(value)), YAML::Mark(),
                                   nullptr});
    } catch (const SessionError &e) {
        return e.message();
    }
    return {};
}

AxisValue number(double v)
{
    AxisValue a;
    a.kind = AxisValue::Kind::Number;
    a.number = v;
    return a;
}

QComboBox *enumCombo(const QStringList &items, int current)
{
    auto *c = new QComboBox();
    c->addItems(items);
    c->setCurrentIndex(current);
    return c;
}

} // namespace

ExperimentForm::ExperimentForm(QWidget *parent)
    : QWidget(parent)
{
    m_debounce = new QTimer(this);
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(150);
    connect(m_debounce, &QTimer::timeout, this, [this] {
        check();
        {
            Session def;
            QStringList fieldErrors;
            if (buildDefinition(def, &fieldErrors)) {
                m_loaded.name = def.name;
                m_loaded.base = def.base;
                m_loaded.axes = def.axes;
                Q_EMIT definitionChanged(def);
            }
        }
    });

    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);

    m_taskBox = new TaskBox(this);
    outer->addWidget(m_taskBox);
    outer->addWidget(buildModelBox());
    m_stabilizerBox = new StabilizerBox(this);
    outer->addWidget(m_stabilizerBox);
    outer->addWidget(buildTrainingBox());
    m_searchBox = new SearchBox(this);
    outer->addWidget(m_searchBox);
    for (FormBox *box : std::initializer_list<FormBox *>{m_taskBox, m_stabilizerBox, m_searchBox})
        connect(box, &FormBox::edited, this, [this] { edited(); });
    connect(m_searchBox, &SearchBox::searchChanged, this, &ExperimentForm::updateAxisEditors);

    // Axes the form does not edit (kept as they are), and sweep.combinations.
    m_otherAxes = new QLabel(this);
    m_otherAxes->setWordWrap(true);
    m_otherAxes->setVisible(false);
    outer->addWidget(m_otherAxes);

    // Validation summary.
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    QFont bold = m_summary->font();
    bold.setBold(true);
    m_summary->setFont(bold);
    outer->addWidget(m_summary);
    m_messages = new QLabel(this);
    m_messages->setWordWrap(true);
    m_messages->setTextFormat(Qt::RichText);
    m_messages->setTextInteractionFlags(Qt::TextSelectableByMouse);
    outer->addWidget(m_messages);
    outer->addStretch(1);

    connectEdits();

    loadFrom(Session{});
    guardWheel(this);
}

QGroupBox *ExperimentForm::buildModelBox()
{
    // Model.
    auto *modelBox = new QGroupBox(tr("Model"), this);
    auto *modelForm = new QFormLayout(modelBox);
    m_layers = new QSpinBox(this);
    m_layers->setRange(1, 64);
    modelForm->addRow(tr("Layers"), m_layers);
    m_dModels = new QLineEdit(this);
    m_axisEditors["d_model"] = m_dModels;
    m_dModels->setToolTip(tr("Embedding widths m to sweep, e.g. 24, 48, 96, 192, 384"));
    m_dModelsError = errorLabel(this);
    modelForm->addRow(tr("d_model (m)"), m_dModels);
    modelForm->addRow(m_dModelsError);
    m_headsSame = new QRadioButton(tr("Same count in every layer"), this);
    m_headsSchedule = new QRadioButton(tr("Per-layer schedules"), this);
    m_headsSame->setChecked(true);
    auto *headsModes = new QHBoxLayout;
    headsModes->addWidget(m_headsSame);
    headsModes->addWidget(m_headsSchedule);
    modelForm->addRow(tr("Heads"), headsModes);
    m_heads = new QLineEdit(this);
    m_axisEditors["heads"] = m_heads;
    m_heads->setToolTip(
        tr("Head counts n_H to sweep, e.g. 1, 2, 3, 6, 12. Each must divide d_model."));
    modelForm->addRow(QString(), m_heads);
    m_schedules = new HeadScheduleEditor(this);
    m_schedules->setVisible(false);
    modelForm->addRow(QString(), m_schedules);
    m_headsError = errorLabel(this);
    modelForm->addRow(m_headsError);
    auto *headDimRow = new QHBoxLayout;
    m_headDimRule = enumCombo({tr("m_H = m / n_H"), tr("fixed")}, 0);
    m_headDim = new QSpinBox(this);
    m_headDim->setRange(1, 100000);
    m_headDim->setEnabled(false);
    headDimRow->addWidget(m_headDimRule);
    headDimRow->addWidget(m_headDim);
    modelForm->addRow(tr("Head dim (rank)"), headDimRow);
    m_logitScale = enumCombo(
        {QString::fromUtf8("1/√m_H (standard)"), tr("1/m_H (μP)"), tr("none (GPT-Neo)")}, 0);
    modelForm->addRow(tr("Logit scale"), m_logitScale);
    auto *qkRow = new QHBoxLayout;
    m_qkRule = new QCheckBox(QString::fromUtf8("η_QK = η·√(m_ref/m_H)"), this);
    m_qkRule->setToolTip(tr("Give W_Q and W_K their own learning rate scaled by the head dimension "
                            "(EXPERIMENTS.md §4)"));
    m_qkRef = new QDoubleSpinBox(this);
    m_qkRef->setRange(1, 100000);
    m_qkRef->setPrefix(tr("m_ref "));
    m_qkRef->setDecimals(0);
    qkRow->addWidget(m_qkRule);
    qkRow->addWidget(m_qkRef);
    modelForm->addRow(tr("QK rule"), qkRow);
    return modelBox;
}

QGroupBox *ExperimentForm::buildTrainingBox()
{
    // Training.
    auto *trainBox = new QGroupBox(tr("Training"), this);
    auto *trainLayout = new QVBoxLayout(trainBox);
    m_phases = new QTableWidget(0, PhaseColumns, this);
    m_phases->setHorizontalHeaderLabels({tr("Phase"), tr("Objective"), tr("Steps"), tr("Batch"),
                                         tr("LR"), tr("Optimizer"), tr("Schedule")});
    m_phases->verticalHeader()->setVisible(false);
    m_phases->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_phases->setMaximumHeight(110);
    m_phases->setToolTip(
        tr("LR 'scanned' uses the swept learning rate η; a number fixes the phase's rate"));
    trainLayout->addWidget(m_phases);
    auto *phaseButtons = new QHBoxLayout;
    auto *addPhase = new QPushButton(tr("Add phase"), this);
    auto *removePhase = new QPushButton(tr("Remove phase"), this);
    phaseButtons->addWidget(addPhase);
    phaseButtons->addWidget(removePhase);
    phaseButtons->addStretch(1);
    trainLayout->addLayout(phaseButtons);
    m_phasesError = errorLabel(this);
    trainLayout->addWidget(m_phasesError);
    auto *trainForm = new QFormLayout;
    addLearningRateRows(trainForm);
    m_seeds = new QLineEdit(this);
    m_axisEditors["seed"] = m_seeds;
    m_seeds->setToolTip(tr("Seeds for initialisation and data, e.g. 0, 1, 2"));
    trainForm->addRow(tr("Seeds"), m_seeds);
    m_seedsError = errorLabel(this);
    trainForm->addRow(m_seedsError);
    m_evalEvery = new QSpinBox(this);
    m_evalEvery->setRange(1, 1000000);
    trainForm->addRow(tr("Evaluate every"), m_evalEvery);
    m_device = new QComboBox(this);
    m_device->addItem(QStringLiteral("auto"));
    for (const auto &d : TrainingController::availableDevices()) m_device->addItem(d);
    trainForm->addRow(tr("Device"), m_device);
    m_threads = new QSpinBox(this);
    m_threads->setRange(0, 256);
    m_threads->setSpecialValueText(tr("default"));
    trainForm->addRow(tr("CPU threads"), m_threads);
    trainLayout->addLayout(trainForm);
    // Its buttons.
    connect(addPhase, &QPushButton::clicked, this, [this] {
        PhaseConfig p;
        p.name = "phase" + std::to_string(m_phases->rowCount() + 1);
        addPhaseRow(p);
        edited();
    });
    connect(removePhase, &QPushButton::clicked, this, [this] {
        const int row =
            m_phases->currentRow() >= 0 ? m_phases->currentRow() : m_phases->rowCount() - 1;
        if (row >= 0) m_phases->removeRow(row);
        edited();
    });
    return trainBox;
}

// The learning rates: a list, and a generator of log-spaced values.
void ExperimentForm::addLearningRateRows(QFormLayout *form)
{
    m_lrs = new QLineEdit(this);
    m_axisEditors["lr"] = m_lrs;
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
    form->addRow(QString(), genRow);
    connect(gen, &QPushButton::clicked, this, [this] { generateLearningRates(); });
}

// The generator row's values through the lr axis's own form (the session reader's expansion, so
// that the list shown is exactly what the session file's generator gives); a message at the field
// when from or to is not a positive number.
void ExperimentForm::generateLearningRates()
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
        showFieldError(m_lrsError, errs, QStringLiteral("sweep.lr"));
        return;
    }
    std::vector<double> numbers;
    for (const auto &v : values) numbers.push_back(v.number);
    m_lrs->setText(joinNumbers(numbers)); // edited() follows, and the form's check
}

void ExperimentForm::connectEdits()
{
    // Every edit: debounce, then check and apply.
    auto changed = [this] { edited(); };
    for (auto *e : {m_dModels, m_heads, m_lrs, m_seeds})
        connect(e, &QLineEdit::textChanged, this, changed);
    for (auto *s : {m_headDim, m_evalEvery, m_threads})
        connect(s, &QSpinBox::valueChanged, this, changed);
    connect(m_layers, &QSpinBox::valueChanged, this, changed);
    connect(m_qkRef, &QDoubleSpinBox::valueChanged, this, changed);
    connect(m_qkRule, &QCheckBox::toggled, this, changed);
    connect(m_headsSame, &QRadioButton::toggled, this, [this] {
        m_heads->setVisible(m_headsSame->isChecked());
        m_schedules->setVisible(!m_headsSame->isChecked());
        edited();
    });
    connect(m_schedules, &HeadScheduleEditor::edited, this, changed);
    connect(m_headDimRule, &QComboBox::currentIndexChanged, this, [this] {
        m_headDim->setEnabled(m_headDimRule->currentIndex() == 1);
        edited();
    });
    for (auto *c : {m_logitScale, m_device})
        connect(c, &QComboBox::currentIndexChanged, this, changed);
    connect(m_phases, &QTableWidget::itemChanged, this, changed);
}

void ExperimentForm::addPhaseRow(const PhaseConfig &phase)
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
    guardWheel(this);
    for (auto *c : {objective, optimizer, schedule})
        connect(c, &QComboBox::currentIndexChanged, this, [this] { edited(); });
}

void ExperimentForm::loadFrom(const Session &session)
{
    m_loading = true;
    m_loaded = session;
    m_loaded.runs.clear();
    m_loaded.skipped.clear();
    const RunConfig &b = session.base;
    m_taskBox->load(session);
    m_layers->setValue(int(std::max<int64_t>(1, b.model.layers())));

    std::vector<double> dModels;
    if (const auto *a = findAxis(session, "d_model"))
        for (const auto &v : a->values) dModels.push_back(v.number);
    if (dModels.empty()) dModels.push_back(double(b.model.dModel));
    m_dModels->setText(joinNumbers(dModels));

    loadHeads(session);

    m_headDimRule->setCurrentIndex(b.model.headDim > 0 ? 1 : 0);
    m_headDim->setEnabled(b.model.headDim > 0);
    m_headDim->setValue(int(b.model.headDim > 0 ? b.model.headDim : 8));
    m_logitScale->setCurrentIndex(int(b.model.logitScale));
    m_qkRule->setChecked(b.qkRule.enabled);
    m_qkRef->setValue(b.qkRule.referenceHeadDim);
    m_stabilizerBox->load(session);

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
    m_searchBox->load(session);
    m_evalEvery->setValue(int(b.evalEvery));
    const int di = m_device->findText(QString::fromStdString(b.device));
    m_device->setCurrentIndex(di >= 0 ? di : 0);
    showAxesNotEdited(session);

    m_pendingOverride = -1;
    m_loading = false;
    check();
}

// The generator row shows the session's own generator (lr: {logspace: …}) when it has one that
// still gives its list; else it keeps what it showed.
void ExperimentForm::loadLearningRateGenerator(const Session &session)
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

// The head counts: a list of counts, or per-layer schedules (either from the heads axis, else
// the experiment's own heads).
void ExperimentForm::loadHeads(const Session &session)
{
    const RunConfig &b = session.base;
    std::vector<double> heads;
    std::vector<std::vector<int64_t>> schedules;
    if (const auto *a = findAxis(session, "heads")) {
        for (const auto &v : a->values) {
            if (v.kind == AxisValue::Kind::IntList)
                schedules.push_back(v.ints);
            else
                heads.push_back(v.number);
        }
    }
    if (heads.empty() && schedules.empty()) {
        bool constant = true;
        for (auto h : b.model.heads) constant = constant && h == b.model.heads.front();
        if (constant && !b.model.heads.empty())
            heads.push_back(double(b.model.heads.front()));
        else
            schedules.push_back(b.model.heads);
    }
    m_heads->setText(joinNumbers(heads));
    m_schedules->setSchedules(schedules);
    const bool scheduleMode = !schedules.empty() && heads.empty();
    m_headsSchedule->setChecked(scheduleMode);
    m_headsSame->setChecked(!scheduleMode);
    m_heads->setVisible(!scheduleMode);
    m_schedules->setVisible(scheduleMode);
}

// The boundary search's fields: its axis and range (a new search's default range), replicates,
// interval and budget.
// What the form does not edit stays as loaded, and is shown so nothing is hidden: the other
// axes and sweep.combinations; a field that combinations set cannot be edited here.
void ExperimentForm::showAxesNotEdited(const Session &session)
{
    QStringList other;
    for (const auto &axis : session.axes) {
        if (m_axisEditors.count(axis.name)) continue; // edited in a widget of its own
        QStringList values;
        for (const auto &v : axis.values) values << displayLabel(QString::fromStdString(v.label()));
        other << tr("%1 ∈ {%2}").arg(QString::fromStdString(axis.name), values.join(", "));
    }
    std::set<std::string> comboKeys;
    QStringList combos;
    for (const auto &combination : session.combinations) {
        QStringList parts;
        for (const auto &[name, value] : combination) {
            comboKeys.insert(name);
            parts << QString::fromStdString(name) + " " +
                         displayLabel(QString::fromStdString(value.label()));
        }
        combos << "(" + parts.join(", ") + ")";
    }
    QString note;
    if (!other.isEmpty()) note += tr("Also swept: %1.").arg(other.join("; "));
    if (!combos.isEmpty())
        note += (note.isEmpty() ? QString() : QStringLiteral(" ")) +
                tr("Combinations, each × the axes above: %1. Edit them in the session file.")
                    .arg(combos.join(" "));
    m_otherAxes->setText(note);
    m_otherAxes->setVisible(!note.isEmpty());
    m_comboKeys = comboKeys;
    updateAxisEditors();
    if (comboKeys.count("d_model")) m_dModels->setToolTip(tr("Set by the session's combinations"));
    if (comboKeys.count("heads")) m_heads->setToolTip(tr("Set by the session's combinations"));
}

bool ExperimentForm::buildDefinition(Session &def, QStringList *errors) const
{
    QStringList local;
    QStringList &errs = errors ? *errors : local;
    const int before = int(errs.size());
    def = m_loaded;
    def.runs.clear();
    def.skipped.clear();
    RunConfig &b = def.base;
    m_taskBox->build(def, m_loaded, errs);
    const int layers = m_layers->value();

    const auto dModels =
        parseNumbers(m_dModels->text(), QStringLiteral("sweep.d_model"), &errs, true);
    for (double d : dModels)
        if (const std::string why = axisValueProblem("d_model", d); !why.empty())
            errs << tr("sweep.d_model: %1").arg(QString::fromStdString(why));
    std::vector<AxisValue> dValues;
    for (double d : dModels) dValues.push_back(number(d));
    const bool hadDModel = findAxis(m_loaded, "d_model") != nullptr;
    if (!dModels.empty() && !keepsAxis(dValues.size(), hadDModel))
        b.model.dModel = int64_t(dModels.front());
    setAxis(def, "d_model", dValues, hadDModel);

    buildHeads(def, layers, errs);

    b.model.headDim = m_headDimRule->currentIndex() == 1 ? m_headDim->value() : 0;
    b.model.logitScale = LogitScale(m_logitScale->currentIndex());
    b.qkRule.enabled = m_qkRule->isChecked();
    b.qkRule.referenceHeadDim = m_qkRef->value();
    m_stabilizerBox->build(def, m_loaded, errs);

    b.phases = buildPhases(errs);

    const auto lrs = parseNumbers(m_lrs->text(), QStringLiteral("sweep.lr"), &errs, false);
    std::vector<AxisValue> lrValues;
    for (double v : lrs) {
        RunConfig scratch; // read by the lr row of the config table, as a session file's value
        const std::string problem =
            readFieldText(runConfigFields(), "lr", yaml::formatNumber(v), scratch);
        if (!problem.empty()) errs << tr("sweep.lr: %1").arg(QString::fromStdString(problem));
        lrValues.push_back(number(v));
    }
    const bool hadLr = findAxis(m_loaded, "lr") != nullptr;
    if (!lrs.empty() && !keepsAxis(lrValues.size(), hadLr)) b.lr = lrs.front();
    setAxis(def, "lr", lrValues, hadLr || !m_lrForm.empty());
    // The generator, kept while the list is still its expansion (a save writes it then).
    for (auto &axis : def.axes)
        if (axis.name == "lr" && !m_lrForm.empty()) axis.form = m_lrForm;

    const auto seeds = parseSeeds(m_seeds->text(), QStringLiteral("sweep.seed"), &errs);
    std::vector<AxisValue> seedValues;
    for (uint64_t v : seeds) {
        AxisValue value;
        value.kind = AxisValue::Kind::Unsigned;
        value.unsignedValue = v;
        seedValues.push_back(value);
    }
    const bool hadSeed = findAxis(m_loaded, "seed") != nullptr;
    if (!seeds.empty() && !keepsAxis(seedValues.size(), hadSeed))
        b.initSeed = b.dataSeed = seeds.front();
    setAxis(def, "seed", seedValues, hadSeed);

    m_searchBox->build(def, m_loaded, errs);

    b.evalEvery = m_evalEvery->value();
    b.device = m_device->currentText().toStdString();
    return int(errs.size()) == before;
}

// The head counts: one count per layer swept as a list, or per-layer schedules (an IntList axis).
void ExperimentForm::buildHeads(Session &def, int layers, QStringList &errs) const
{
    RunConfig &b = def.base;
    std::vector<AxisValue> headValues;
    if (m_headsSame->isChecked()) {
        const auto heads =
            parseNumbers(m_heads->text(), QStringLiteral("sweep.heads"), &errs, true);
        for (double h : heads) {
            if (const std::string why = axisValueProblem("heads", h); !why.empty())
                errs << tr("sweep.heads: %1").arg(QString::fromStdString(why));
            headValues.push_back(number(h));
        }
        const bool swept = keepsAxis(headValues.size(), findAxis(m_loaded, "heads") != nullptr);
        if (!heads.empty() && !(swept && b.model.heads.size() == size_t(layers)))
            b.model.heads.assign(size_t(layers), int64_t(heads.front()));
        else if (heads.empty())
            b.model.heads.assign(size_t(layers), 1);
    } else {
        const auto schedules = m_schedules->schedules(&errs);
        if (schedules.empty()) errs << tr("sweep.heads: add at least one schedule");
        for (size_t i = 0; i < schedules.size(); ++i) {
            if (int(schedules[i].size()) != layers)
                errs << tr("sweep.heads[%1]: the schedule has %2 layers, the model %3")
                            .arg(i)
                            .arg(schedules[i].size())
                            .arg(layers);
            AxisValue v;
            v.kind = AxisValue::Kind::IntList;
            v.ints = schedules[i];
            headValues.push_back(v);
        }
        if (!schedules.empty() && b.model.heads.size() != size_t(layers))
            b.model.heads = schedules.front();
    }
    const bool hadHeads = findAxis(m_loaded, "heads") != nullptr;
    setAxis(def, "heads", headValues, hadHeads || !m_headsSame->isChecked());
}

// The phases, keeping the settings the table does not show (betas, eps, warm-up fraction).
std::vector<PhaseConfig> ExperimentForm::buildPhases(QStringList &errs) const
{
    std::vector<PhaseConfig> phases;
    for (int row = 0; row < m_phases->rowCount(); ++row) {
        PhaseConfig p = row < int(m_loaded.base.phases.size()) ? m_loaded.base.phases[size_t(row)]
                                                               : PhaseConfig{};
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

// The boundary search: its axis, range, replicates, interval and budget; the axis it searches and
// the seeds are then the search's, not the sweep's.
void ExperimentForm::showFieldError(QLabel *label, const QStringList &errors, const QString &prefix,
                                    const QStringList &notices)
{
    QStringList mine;
    for (const auto &e : errors)
        if (e.startsWith(prefix)) mine << e;
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

namespace {

// Skipped combinations grouped by why, with how many runs each reason skips: a head count that
// does not divide a width is one line ("5 heads do not divide d_model 24: 6 runs skipped") at the
// field it concerns, not one line per run (and per layer) at the bottom of the panel.
struct SkipGroup {
    QString field; // the reason's key path's head ("model.heads"); "" when it names none
    QString reason;
    int runs = 0;
};

std::vector<SkipGroup> groupSkipped(const std::vector<SkippedRun> &skipped)
{
    static const QRegularExpression keyPath(QStringLiteral("^(model\\.heads)\\[\\d+\\]: "));
    static const QRegularExpression layer(QStringLiteral(" \\(layer \\d+\\)$"));
    std::vector<SkipGroup> groups;
    for (const auto &skip : skipped) {
        QString field;
        QStringList parts;
        for (QString part : QString::fromStdString(skip.reason).split(QStringLiteral("; "))) {
            if (const auto m = keyPath.match(part); m.hasMatch()) {
                field = m.captured(1);
                part = part.mid(m.capturedLength());
                part.remove(layer); // the same count fails on every layer that has it
            }
            if (!parts.contains(part)) parts << part;
        }
        const QString reason = parts.join(QStringLiteral("; "));
        auto it = std::find_if(groups.begin(), groups.end(), [&](const SkipGroup &g) {
            return g.field == field && g.reason == reason;
        });
        if (it == groups.end()) it = groups.insert(groups.end(), SkipGroup{field, reason, 0});
        ++it->runs;
    }
    return groups;
}

} // namespace

FormCheck ExperimentForm::check()
{
    FormCheck c;
    Session def;
    buildDefinition(def, &c.errors);
    const QStringList fieldErrors = c.errors;
    if (c.errors.isEmpty()) {
        try {
            // A search's runs are those of its next round (round 0 before it starts); planning
            // expands them, else the sweep is expanded here.
            if (!def.search || planSearchRound(def) == 0) expandSweep(def);
            std::set<std::string> seen;
            for (const auto &run : def.runs) {
                const std::string why = validate(run.config);
                if (!why.empty() && seen.insert(why).second)
                    c.errors << runLabel(def, run) + QStringLiteral(": ") +
                                    QString::fromStdString(why);
            }
            for (const auto &skip : def.skipped) {
                QStringList labels;
                for (const auto &[k, v] : skip.labels)
                    labels << QString::fromStdString(k + "=" + v);
                c.skipped << labels.join(' ') + QStringLiteral(": ") +
                                 QString::fromStdString(skip.reason);
            }
            c.runs = int(def.runs.size());
            c.pending = int(pendingRuns(def).size());
            // The YAML loader's own checks (ranges, names): the same messages a file would get.
            sessionFromYaml(sessionToYaml(def), "<form>");
        } catch (const SessionError &e) {
            c.errors << (e.keyPath().empty()
                             ? QString()
                             : QString::fromStdString(e.keyPath()) + QStringLiteral(": ")) +
                            QString::fromStdString(e.message());
        } catch (const std::exception &e) {
            c.errors << QString::fromUtf8(e.what());
        }
    }
    if (m_pendingOverride >= 0) c.pending = std::min(c.pending, m_pendingOverride);
    m_check = c;

    showFieldError(m_dModelsError, fieldErrors, QStringLiteral("sweep.d_model"));
    QStringList headNotices, otherSkips;
    for (const auto &g : groupSkipped(def.skipped)) {
        const QString line = g.runs == 1 ? tr("%1: 1 run skipped").arg(g.reason)
                                         : tr("%1: %2 runs skipped").arg(g.reason).arg(g.runs);
        (g.field == QLatin1String("model.heads") ? headNotices : otherSkips) << line;
    }
    showFieldError(m_headsError, c.errors, QStringLiteral("sweep.heads"), headNotices);
    showFieldError(m_lrsError, fieldErrors, QStringLiteral("sweep.lr"));
    showFieldError(m_seedsError, fieldErrors, QStringLiteral("sweep.seed"));
    showFieldError(m_searchBox->errorLine(), c.errors, QStringLiteral("search"));
    showFieldError(m_phasesError, fieldErrors, QStringLiteral("phases"));

    QString html;
    for (const auto &e : c.errors)
        html += QStringLiteral("<div style='color:#d03030'>✖ %1</div>").arg(e.toHtmlEscaped());
    const int maxSkipped = 8; // the reasons the fields do not show, one line per reason
    for (int i = 0; i < otherSkips.size() && i < maxSkipped; ++i)
        html += QStringLiteral("<div style='color:#a07000'>⤼ %1</div>")
                    .arg(otherSkips[i].toHtmlEscaped());
    if (otherSkips.size() > maxSkipped)
        html += tr("<div style='color:#a07000'>… and %n more reason(s)</div>", "",
                   int(otherSkips.size() - maxSkipped));
    m_messages->setText(html);

    bool allowed = c.errors.isEmpty() && c.runs > 0 && c.pending > 0 && !m_running;
    QString reason;
    if (m_running)
        reason = tr("A sweep is running.");
    else if (!c.errors.isEmpty())
        reason = tr("Cannot start: %1").arg(c.errors.front());
    else if (c.runs == 0)
        reason =
            tr("Cannot start: no combination can run (%n skipped).", "", int(c.skipped.size()));
    else if (c.pending == 0)
        reason = tr("Every run is finished. Rerun a run from the table, or change the sweep.");
    m_summary->setText(
        c.errors.isEmpty()
            ? tr("%n run(s)", "", c.runs) + tr(", %1 to run").arg(c.pending) +
                  (c.skipped.isEmpty() ? QString() : tr(", %1 skipped").arg(c.skipped.size()))
            : tr("The sweep cannot start:"));
    if (allowed != m_canStart || reason != m_blockReason) {
        m_canStart = allowed;
        m_blockReason = reason;
        Q_EMIT startAllowedChanged(allowed, reason);
    }
    return c;
}

void ExperimentForm::updateAxisEditors()
{
    const bool on = m_searchBox->searching();
    const std::string axis = m_searchBox->axis();
    m_lrs->setEnabled(!(on && axis == "lr"));
    m_seeds->setEnabled(!on);
    // A field that combinations set cannot be edited here without contradicting them.
    m_dModels->setEnabled(!m_comboKeys.count("d_model") && !(on && axis == "d_model"));
    m_heads->setEnabled(!m_comboKeys.count("heads") && !(on && axis == "heads"));
    m_schedules->setEnabled(!m_comboKeys.count("heads") && !(on && axis == "heads"));
}

void ExperimentForm::edited()
{
    if (m_loading) return;
    m_pendingOverride = -1;
    m_debounce->start();
}

void ExperimentForm::setRunning(bool running)
{
    m_running = running;
    for (auto *child : findChildren<QGroupBox *>()) child->setEnabled(!running);
    check();
}

void ExperimentForm::setPendingRuns(int pending)
{
    m_pendingOverride = pending;
    check();
}

SweepOptions ExperimentForm::sweepOptions() const
{
    SweepOptions o;
    o.device = m_device->currentText().toStdString();
    o.threads = m_threads->value();
    return o;
}

QCheckBox *ExperimentForm::searchBox() const
{
    return m_searchBox->onBox();
}
QComboBox *ExperimentForm::searchAxisBox() const
{
    return m_searchBox->axisBox();
}
QLineEdit *ExperimentForm::searchFromEdit() const
{
    return m_searchBox->fromEdit();
}
QLineEdit *ExperimentForm::searchToEdit() const
{
    return m_searchBox->toEdit();
}
QComboBox *ExperimentForm::searchModelBox() const
{
    return m_searchBox->modelBox();
}
QDoubleSpinBox *ExperimentForm::searchLawWidthBox() const
{
    return m_searchBox->lawWidthBox();
}
QComboBox *ExperimentForm::searchSeedsBox() const
{
    return m_searchBox->seedsBox();
}
QSpinBox *ExperimentForm::searchReplicatesBox() const
{
    return m_searchBox->replicatesBox();
}

} // namespace headlab::ui
