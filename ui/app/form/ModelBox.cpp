// ModelBox.cpp — see ModelBox.h.
#include "ui/app/form/ModelBox.h"

#include "ui/app/HeadScheduleEditor.h"
#include "ui/app/form/FormParts.h"

#include "core/schema/Dimensions.h"
#include "core/schema/RunConfigFields.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRadioButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <yaml-cpp/yaml.h>

#include <map>

namespace headlab::ui {

using form::errorLabel;
using form::findAxis;
using form::joinNumbers;
using form::keepsAxis;
using form::parseNumbers;
using form::setAxis;

namespace {

// What a session file's reader says of `value` as one value of the sweep axis `name`: "" when it
// takes it, else its message ("must be at least 1, got 0").
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

// A line's title: its dimension's where the row is one ("d_model (m)"), else its key.
QString lineTitle(const std::string &key)
{
    const std::string name = modelAxisName(key);
    if (name != "model." + key)
        if (const auto row = findDimension(name)) return QString::fromStdString(row->title);
    return QString::fromStdString(key);
}

QString headsToolTip()
{
    return ModelBox::tr("Head counts n_H to sweep, e.g. 1, 2, 3, 6, 12. Each must divide d_model.");
}

} // namespace

ModelBox::ModelBox(QWidget *parent)
    : FormBox(tr("Model"), parent)
{
    // The rows of the model table with an editor of their own, by key; every other one-key row is
    // a line.
    const std::map<std::string, void (ModelBox::*)(QFormLayout *)> ownEditors = {
        {"heads", &ModelBox::addHeadsRows}};
    auto *form = new QFormLayout(this);
    for (const auto &row : modelFields()) {
        const std::string &key = row.keys.front();
        if (const auto own = ownEditors.find(key); own != ownEditors.end())
            (this->*own->second)(form);
        else if (row.keys.size() == 1)
            addLine(form, key, row.help, row.choices);
    }
    addQkRuleRow(form);
}

void ModelBox::addLine(QFormLayout *form, const std::string &key, const std::string &help,
                       const std::vector<std::string> &choices)
{
    auto *edit = new QLineEdit(this);
    edit->setObjectName(QString::fromStdString("model." + key));
    edit->setPlaceholderText(QString::fromStdString(help));
    QString tip = QString::fromStdString(help);
    if (!choices.empty()) {
        QStringList names;
        for (const auto &c : choices) names << QString::fromStdString(c);
        tip += tr(": %1").arg(names.join(QStringLiteral(", ")));
    }
    tip += tr(". Several values, separated by commas, are compared as a sweep axis.");
    edit->setToolTip(tip);
    auto *error = errorLabel(this);
    form->addRow(lineTitle(key), edit);
    form->addRow(error);
    m_lines.push_back({key, edit, error, tip});
    connect(edit, &QLineEdit::textChanged, this, &ModelBox::edited);
    if (key == "d_model")
        connect(edit, &QLineEdit::textChanged, this, &ModelBox::updateScheduleEditor);
}

void ModelBox::addHeadsRows(QFormLayout *form)
{
    m_layers = new QSpinBox(this);
    m_layers->setRange(1, int(RunLimits::kMaxLayers));
    form->addRow(tr("Layers"), m_layers);
    m_headsSame = new QRadioButton(tr("Same count in every layer"), this);
    m_headsSchedule = new QRadioButton(tr("Per-layer schedules"), this);
    m_headsSame->setChecked(true);
    auto *modes = new QVBoxLayout; // one above the other: side by side they widened the dock
    modes->addWidget(m_headsSame);
    modes->addWidget(m_headsSchedule);
    form->addRow(tr("Heads"), modes);
    m_heads = new QLineEdit(this);
    m_heads->setToolTip(headsToolTip());
    form->addRow(QString(), m_heads);
    m_schedules = new HeadScheduleEditor(this);
    m_schedules->setVisible(false);
    form->addRow(QString(), m_schedules);
    m_headsError = errorLabel(this);
    form->addRow(m_headsError);

    connect(m_layers, &QSpinBox::valueChanged, this, [this] {
        updateScheduleEditor();
        Q_EMIT edited();
    });
    connect(m_heads, &QLineEdit::textChanged, this, &ModelBox::edited);
    connect(m_headsSame, &QRadioButton::toggled, this, [this] {
        m_heads->setVisible(m_headsSame->isChecked());
        m_schedules->setVisible(!m_headsSame->isChecked());
        Q_EMIT edited();
    });
    connect(m_schedules, &HeadScheduleEditor::edited, this, &ModelBox::edited);
}

void ModelBox::addQkRuleRow(QFormLayout *form)
{
    auto *row = new QHBoxLayout;
    m_qkRule = new QCheckBox(QString::fromUtf8("η_QK = η·√(m_ref/m_H)"), this);
    m_qkRule->setToolTip(tr("Give W_Q and W_K their own learning rate scaled by the head dimension "
                            "(EXPERIMENTS.md §4)"));
    m_qkRef = new QDoubleSpinBox(this);
    m_qkRef->setRange(1, 100000);
    m_qkRef->setPrefix(tr("m_ref "));
    m_qkRef->setDecimals(0);
    row->addWidget(m_qkRule);
    row->addWidget(m_qkRef);
    form->addRow(tr("QK rule"), row);
    connect(m_qkRule, &QCheckBox::toggled, this, &ModelBox::edited);
    connect(m_qkRef, &QDoubleSpinBox::valueChanged, this, &ModelBox::edited);
}

void ModelBox::updateScheduleEditor()
{
    if (!m_schedules) return;
    if (m_layers) m_schedules->setLayers(m_layers->value());
    std::vector<int64_t> widths;
    if (QLineEdit *dModels = edit("d_model")) {
        QStringList ignored;
        for (double d : parseNumbers(dModels->text(), QString(), &ignored, true))
            if (d >= 1) widths.push_back(int64_t(d));
    }
    m_schedules->setDModels(widths);
}

void ModelBox::load(const Session &session)
{
    const RunConfig &base = session.base;
    for (const auto &line : m_lines) {
        QStringList values;
        if (const auto *axis = findAxis(session, modelAxisName(line.key)))
            for (const auto &v : axis->values) values << QString::fromStdString(v.label());
        else if (const auto field = findConfigField("model." + line.key))
            values << QString::fromStdString(field->text(base));
        const QSignalBlocker block(line.edit);
        line.edit->setText(values.join(QStringLiteral(", ")));
    }
    {
        const QSignalBlocker block(m_layers);
        m_layers->setValue(int(std::max<int64_t>(1, base.model.layers())));
    }
    loadHeads(session);
    const QSignalBlocker blockRule(m_qkRule), blockRef(m_qkRef);
    m_qkRule->setChecked(base.qkRule.enabled);
    m_qkRef->setValue(base.qkRule.referenceHeadDim);
    updateScheduleEditor();
}

// The head counts: a list of counts, or per-layer schedules (either from the heads axis, else
// the experiment's own heads).
void ModelBox::loadHeads(const Session &session)
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
    const QSignalBlocker blockHeads(m_heads), blockSchedules(m_schedules);
    const QSignalBlocker blockSame(m_headsSame), blockSchedule(m_headsSchedule);
    m_heads->setText(joinNumbers(heads));
    m_schedules->setSchedules(schedules);
    const bool scheduleMode = !schedules.empty() && heads.empty();
    m_headsSchedule->setChecked(scheduleMode);
    m_headsSame->setChecked(!scheduleMode);
    m_heads->setVisible(!scheduleMode);
    m_schedules->setVisible(scheduleMode);
}

void ModelBox::build(Session &def, const Session &loaded, QStringList &errors) const
{
    // The table's order: d_model before the heads that must divide it.
    for (const auto &line : m_lines) buildLine(line, def, loaded, errors);
    buildHeads(def, loaded, errors);
    def.base.qkRule.enabled = m_qkRule->isChecked();
    def.base.qkRule.referenceHeadDim = m_qkRef->value();
}

// One value sets the field (or, where the loaded session swept it, the axis); several sweep it.
// Each is read by the axis's row, as a session file's value, with its message.
void ModelBox::buildLine(const Line &line, Session &def, const Session &loaded,
                         QStringList &errors) const
{
    const std::string name = modelAxisName(line.key);
    const std::optional<Dimension> row = findDimension(name);
    if (!row) return; // every one-key model row is an axis; a row that is not stays as loaded
    const QString key = QStringLiteral("sweep.") + QString::fromStdString(name);
    const QStringList items = line.edit->text().split(QLatin1Char(','), Qt::SkipEmptyParts);
    if (items.isEmpty()) errors << tr("%1: give at least one value").arg(key);
    std::vector<AxisValue> values;
    for (int i = 0; i < items.size(); ++i) {
        const QString item = items[i].trimmed();
        const QString at = items.size() > 1 ? QStringLiteral("%1[%2]").arg(key).arg(i) : key;
        try {
            values.push_back(row->read(
                yaml::YamlField{"form", at.toStdString(), YAML::Load(item.toStdString()), {}, {}}));
        } catch (const SessionError &e) {
            errors << at + QStringLiteral(": ") + QString::fromStdString(e.message());
        } catch (const std::exception &) {
            errors << tr("%1: '%2' is not a value").arg(at, item);
        }
    }
    const SweepAxis *had = findAxis(loaded, name);
    if (values.size() == 1 && !had) {
        row->apply(def.base, values.front(), {});
        return;
    }
    setAxis(def, name, std::move(values), had != nullptr);
}

// The head counts: one count per layer swept as a list, or per-layer schedules (an IntList axis).
void ModelBox::buildHeads(Session &def, const Session &loaded, QStringList &errs) const
{
    RunConfig &b = def.base;
    const int layers = m_layers->value();
    std::vector<AxisValue> headValues;
    if (m_headsSame->isChecked()) {
        const auto heads =
            parseNumbers(m_heads->text(), QStringLiteral("sweep.heads"), &errs, true);
        for (double h : heads) {
            if (const std::string why = axisValueProblem("heads", h); !why.empty())
                errs << tr("sweep.heads: %1").arg(QString::fromStdString(why));
            headValues.push_back(AxisValue::ofNumber(h));
        }
        const bool swept = keepsAxis(headValues.size(), findAxis(loaded, "heads") != nullptr);
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
            headValues.push_back(AxisValue::ofInts(schedules[i]));
        }
        if (!schedules.empty() && b.model.heads.size() != size_t(layers))
            b.model.heads = schedules.front();
    }
    const bool hadHeads = findAxis(loaded, "heads") != nullptr;
    setAxis(def, "heads", headValues, hadHeads || !m_headsSame->isChecked());
}

QLineEdit *ModelBox::edit(const std::string &key) const
{
    for (const auto &line : m_lines)
        if (line.key == key) return line.edit;
    return nullptr;
}

bool ModelBox::editsAxis(const std::string &name) const
{
    if (name == "heads") return true;
    for (const auto &line : m_lines)
        if (modelAxisName(line.key) == name) return true;
    return false;
}

void ModelBox::lockAxes(const std::map<std::string, QString> &locked)
{
    for (const auto &line : m_lines) {
        const auto lock = locked.find(modelAxisName(line.key));
        line.edit->setEnabled(lock == locked.end());
        line.edit->setToolTip(lock != locked.end() && !lock->second.isEmpty() ? lock->second
                                                                              : line.toolTip);
    }
    const auto heads = locked.find("heads");
    m_heads->setEnabled(heads == locked.end());
    m_schedules->setEnabled(heads == locked.end());
    m_heads->setToolTip(heads != locked.end() && !heads->second.isEmpty() ? heads->second
                                                                          : headsToolTip());
}

void ModelBox::showErrors(const QStringList &fieldErrors, const QStringList &allErrors,
                          const QStringList &headNotices)
{
    for (const auto &line : m_lines)
        form::showFieldError(line.error, fieldErrors,
                             QStringLiteral("sweep.") +
                                 QString::fromStdString(modelAxisName(line.key)));
    form::showFieldError(m_headsError, allErrors, QStringLiteral("sweep.heads"), headNotices);
}

} // namespace headlab::ui
