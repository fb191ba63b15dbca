// ExperimentForm.cpp — see ExperimentForm.h.
#include "ui/app/ExperimentForm.h"

#include "core/schema/RunConfigFields.h"
#include "core/session/Session.h"
#include "core/session/SweepCheck.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"

#include "ui/app/form/FormParts.h"
#include "ui/app/form/ModelBox.h"
#include "ui/app/form/SearchBox.h"
#include "ui/app/form/StabilizerBox.h"
#include "ui/app/form/TaskBox.h"
#include "ui/app/form/TrainingBox.h"
#include "ui/model/RunMetrics.h"

#include <QGroupBox>
#include <QLabel>
#include <QRegularExpression>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace headlab::ui {

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
    m_modelBox = new ModelBox(this);
    m_stabilizerBox = new StabilizerBox(this);
    m_trainingBox = new TrainingBox(this);
    m_searchBox = new SearchBox(this);
    m_boxes = {m_taskBox, m_modelBox, m_stabilizerBox, m_trainingBox, m_searchBox};
    for (FormBox *box : m_boxes) {
        outer->addWidget(box);
        connect(box, &FormBox::edited, this, [this] { edited(); });
    }
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

    loadFrom(Session{});
    form::guardWheel(this);
}

void ExperimentForm::loadFrom(const Session &session)
{
    m_loading = true;
    m_loaded = session;
    m_loaded.runs.clear();
    m_loaded.skipped.clear();
    for (FormBox *box : m_boxes) box->load(session);
    showAxesNotEdited(session);
    m_pendingOverride = -1;
    m_loading = false;
    check();
}

bool ExperimentForm::editsAxis(const std::string &name) const
{
    return m_modelBox->editsAxis(name) || m_trainingBox->editsAxis(name) ||
           m_stabilizerBox->editsAxis(name);
}

// What the form does not edit stays as loaded, and is shown so nothing is hidden: the other
// axes and sweep.combinations; a field that combinations set cannot be edited here.
void ExperimentForm::showAxesNotEdited(const Session &session)
{
    QStringList other;
    for (const auto &axis : session.axes) {
        if (editsAxis(axis.name)) continue; // edited in a widget of its own
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
}

bool ExperimentForm::buildDefinition(Session &def, QStringList *errors) const
{
    QStringList local;
    QStringList &errs = errors ? *errors : local;
    const int before = int(errs.size());
    def = m_loaded;
    def.runs.clear();
    def.skipped.clear();
    for (const FormBox *box : m_boxes) box->build(def, m_loaded, errs);
    return int(errs.size()) == before;
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
        const SweepCheck checked = checkSweep(def, [](const Session &s, const SessionRun &run) {
            return runLabel(s, run).toStdString();
        });
        for (const auto &e : checked.errors) c.errors << QString::fromStdString(e);
        for (const auto &skip : checked.skipped) {
            QStringList labels;
            for (const auto &[k, v] : skip.labels) labels << QString::fromStdString(k + "=" + v);
            c.skipped << labels.join(' ') + QStringLiteral(": ") +
                             QString::fromStdString(skip.reason);
        }
        def.skipped = checked.skipped; // grouped below, by field
        c.runs = checked.runs;
        c.pending = checked.pending;
    }
    if (m_pendingOverride >= 0) c.pending = std::min(c.pending, m_pendingOverride);
    m_check = c;

    QStringList headNotices, otherSkips;
    for (const auto &g : groupSkipped(def.skipped)) {
        const QString line = g.runs == 1 ? tr("%1: 1 run skipped").arg(g.reason)
                                         : tr("%1: %2 runs skipped").arg(g.reason).arg(g.runs);
        (g.field == QLatin1String("model.heads") ? headNotices : otherSkips) << line;
    }
    m_modelBox->showErrors(fieldErrors, c.errors, headNotices);
    m_trainingBox->showErrors(fieldErrors);
    form::showFieldError(m_searchBox->errorLine(), c.errors, QStringLiteral("search"));

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
    std::map<std::string, QString> locked;
    // A field that combinations set cannot be edited here without contradicting them.
    for (const auto &name : m_comboKeys) locked[name] = tr("Set by the session's combinations");
    if (m_searchBox->searching()) {
        locked.emplace(m_searchBox->axis(), tr("The boundary search chooses its values"));
        locked.emplace("seed", tr("The boundary search gives its runs their seeds"));
    }
    m_modelBox->lockAxes(locked);
    m_trainingBox->lockAxes(locked);
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
    return m_trainingBox->sweepOptions();
}

QLineEdit *ExperimentForm::learningRatesEdit() const
{
    return m_trainingBox->learningRatesEdit();
}
QLineEdit *ExperimentForm::dModelsEdit() const
{
    return m_modelBox->edit("d_model");
}
QLineEdit *ExperimentForm::headsEdit() const
{
    return m_modelBox->headsEdit();
}
QLabel *ExperimentForm::headsMessage() const
{
    return m_modelBox->headsMessage();
}
QLineEdit *ExperimentForm::generatorFromEdit() const
{
    return m_trainingBox->generatorFromEdit();
}
QLineEdit *ExperimentForm::generatorToEdit() const
{
    return m_trainingBox->generatorToEdit();
}
QSpinBox *ExperimentForm::generatorCountBox() const
{
    return m_trainingBox->generatorCountBox();
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
