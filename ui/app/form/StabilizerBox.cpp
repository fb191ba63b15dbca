// StabilizerBox.cpp — see StabilizerBox.h.
#include "ui/app/form/StabilizerBox.h"

#include "ui/app/form/FormParts.h"

#include "core/schema/RunConfigFields.h"

#include <QFormLayout>
#include <QLineEdit>
#include <QSignalBlocker>

#include <yaml-cpp/yaml.h>

namespace headlab::ui {

namespace {

// The sweep axis that sets stabilizer `key`, under either of its names.
const SweepAxis *stabilizerAxis(const Session &s, const std::string &key)
{
    for (const auto &a : s.axes)
        if (a.name == key || a.name == "stabilizers." + key) return &a;
    return nullptr;
}

// Each stabilizer's value as its row writes it ({qk_norm: off, softcap: 0, ...}).
YAML::Node stabilizerTexts(const StabilizerConfig &stabilizers)
{
    YAML::Emitter out;
    out << YAML::Flow << YAML::BeginMap;
    writeFields(out, stabilizerFields(), stabilizers);
    out << YAML::EndMap;
    return YAML::Load(out.c_str());
}

} // namespace

StabilizerBox::StabilizerBox(QWidget *parent)
    : FormBox(tr("Stabilizers"), parent)
{
    // Stabilizers: one line per row of their field table; a list compares values (an axis).
    setToolTip(tr("What moves the trainability boundary (docs/STABILIZERS.md). One "
                  "value sets it; several, separated by commas, compare them as a "
                  "sweep axis (e.g. qk_norm: off, gain)."));
    auto *stabilizerForm = new QFormLayout(this);
    for (const auto &row : stabilizerFields()) {
        auto *edit = new QLineEdit(this);
        edit->setPlaceholderText(QString::fromStdString(row.help));
        edit->setToolTip(QString::fromStdString(row.help) +
                         tr(". Several values separated by commas are compared."));
        stabilizerForm->addRow(QString::fromStdString(row.keys.front()), edit);
        m_edits.push_back({row.keys.front(), edit});
        connect(edit, &QLineEdit::textChanged, this, &StabilizerBox::edited);
    }
}

void StabilizerBox::load(const Session &session)
{
    const YAML::Node node = stabilizerTexts(session.base.stabilizers);
    for (auto &[key, edit] : m_edits) {
        QStringList values;
        if (const auto *axis = stabilizerAxis(session, key))
            for (const auto &v : axis->values) values << QString::fromStdString(v.label());
        else
            values << QString::fromStdString(node[key].as<std::string>());
        const QSignalBlocker block(edit);
        edit->setText(values.join(QStringLiteral(", ")));
    }
}

void StabilizerBox::build(Session &def, const Session &loaded, QStringList &errors) const
{
    for (const auto &[key, edit] : m_edits) {
        const auto field = findFieldAxis(key);
        std::vector<AxisValue> values;
        for (const auto &item : edit->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const std::string text = item.trimmed().toStdString();
            try {
                YAML::Node node = YAML::Load(text);
                AxisValue v;
                v.kind = AxisValue::Kind::Text;
                v.text = field->read(yaml::YamlField{"form", "stabilizers." + key, node, {}, {}});
                values.push_back(v);
            } catch (const std::exception &e) {
                const auto *error = dynamic_cast<const SessionError *>(&e);
                errors << QStringLiteral("stabilizers.%1: %2")
                              .arg(QString::fromStdString(key),
                                   QString::fromStdString(error ? error->message() : e.what()));
            }
        }
        const SweepAxis *had = stabilizerAxis(loaded, key);
        const std::string name = had ? had->name : key;
        if (values.size() == 1 && !had) {
            field->apply(def.base, values.front().text);
            continue;
        }
        if (values.empty()) // an empty line: off
            field->apply(def.base, stabilizerTexts(StabilizerConfig{})[key].as<std::string>());
        form::setAxis(def, name, values, had != nullptr && !values.empty());
    }
}

bool StabilizerBox::editsAxis(const std::string &name) const
{
    const std::string key = name.rfind("stabilizers.", 0) == 0 ? name.substr(12) : name;
    return edit(key) != nullptr;
}

QLineEdit *StabilizerBox::edit(const std::string &key) const
{
    for (const auto &[name, line] : m_edits)
        if (name == key) return line;
    return nullptr;
}

} // namespace headlab::ui
