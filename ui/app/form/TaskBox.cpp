// TaskBox.cpp — see TaskBox.h.
#include "ui/app/form/TaskBox.h"

#include "core/config/Yaml.h"
#include "core/schema/TaskSpec.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStackedWidget>

#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace headlab::ui {

TaskBox::TaskBox(QWidget *parent)
    : FormBox(tr("Task"), parent)
{
    auto *taskForm = new QFormLayout(this);
    m_name = new QLineEdit(this);
    taskForm->addRow(tr("Name"), m_name);
    // Every task of the task table; addition, nearest neighbour and text have pages of their own,
    // any other task a page of its option rows (TaskSpec::options) as YAML values.
    m_task = new QComboBox(this);
    for (const TaskSpec *spec : taskTable())
        m_task->addItem(QString::fromStdString(spec->title), QString::fromStdString(spec->id));
    taskForm->addRow(tr("Task"), m_task);
    m_pages = new QStackedWidget(this);
    {
        auto *w = new QWidget;
        auto *f = new QFormLayout(w);
        f->setContentsMargins(0, 0, 0, 0);
        m_trainPairs = new QSpinBox;
        m_trainPairs->setRange(1, 10000000);
        m_trainPairs->setToolTip(tr("Operand pairs in the training set; 3 samples per pair"));
        m_testPairs = new QSpinBox;
        m_testPairs->setRange(1, 1000000);
        f->addRow(tr("Train pairs"), m_trainPairs);
        f->addRow(tr("Test pairs"), m_testPairs);
        m_pages->addWidget(w);
        m_ownPages["addition"] = w;
    }
    {
        auto *w = new QWidget;
        auto *f = new QFormLayout(w);
        f->setContentsMargins(0, 0, 0, 0);
        m_pointDim = new QSpinBox;
        m_pointDim->setRange(1, 100000);
        m_numPoints = new QSpinBox;
        m_numPoints->setRange(2, 100000);
        f->addRow(tr("Point dim d"), m_pointDim);
        f->addRow(tr("Points N"), m_numPoints);
        m_pages->addWidget(w);
        m_ownPages["nearest_neighbour"] = w;
    }
    {
        auto *w = new QWidget;
        auto *f = new QFormLayout(w);
        f->setContentsMargins(0, 0, 0, 0);
        auto *row = new QHBoxLayout;
        m_textPath = new QLineEdit;
        m_textPath->setPlaceholderText(tr("built-in children's stories"));
        auto *browse = new QPushButton(tr("…"));
        browse->setMaximumWidth(30);
        row->addWidget(m_textPath);
        row->addWidget(browse);
        connect(browse, &QPushButton::clicked, this, [this] {
            const QString f = QFileDialog::getOpenFileName(this, tr("Text corpus"), QString(),
                                                           tr("Text (*.txt);;All files (*)"));
            if (!f.isEmpty()) m_textPath->setText(f);
        });
        m_context = new QSpinBox;
        m_context->setRange(2, 100000);
        f->addRow(tr("Text file"), row);
        f->addRow(tr("Context length"), m_context);
        m_pages->addWidget(w);
        m_ownPages["text"] = w;
    }
    {
        m_genericPage = new QWidget;
        m_genericOptions = new QFormLayout(m_genericPage);
        m_genericOptions->setContentsMargins(0, 0, 0, 0);
        m_pages->addWidget(m_genericPage);
    }
    taskForm->addRow(m_pages);
    // Every edit says so; another task shows its page.
    connect(m_name, &QLineEdit::textChanged, this, &TaskBox::edited);
    connect(m_textPath, &QLineEdit::textChanged, this, &TaskBox::edited);
    for (auto *s : {m_trainPairs, m_testPairs, m_pointDim, m_numPoints, m_context})
        connect(s, &QSpinBox::valueChanged, this, &TaskBox::edited);
    connect(m_task, &QComboBox::currentIndexChanged, this, [this] {
        showTaskPage();
        Q_EMIT edited();
    });
}

void TaskBox::load(const Session &session)
{
    const QSignalBlocker block(this); // edited() is for the person's edits
    const TaskConfig &task = session.base.task;
    m_name->setText(QString::fromStdString(session.name));
    m_task->setCurrentIndex(std::max(0, m_task->findData(QString::fromStdString(task.kind))));
    showTaskPage();
    loadGenericOptions(task);
    m_trainPairs->setValue(int(task.trainPairs));
    m_testPairs->setValue(int(task.testPairs));
    m_pointDim->setValue(int(task.pointDim));
    m_numPoints->setValue(int(task.numPoints));
    m_textPath->setText(QString::fromStdString(task.textPath));
    m_context->setValue(int(task.contextLength));
}

void TaskBox::build(Session &def, const Session &, QStringList &errors) const
{
    def.name = m_name->text().trimmed().toStdString();
    TaskConfig &task = def.base.task;
    task.kind = taskId();
    buildGenericOptions(task, errors);
    task.trainPairs = m_trainPairs->value();
    task.testPairs = m_testPairs->value();
    task.pointDim = m_pointDim->value();
    task.numPoints = m_numPoints->value();
    task.textPath = m_textPath->text().trimmed().toStdString();
    task.contextLength = m_context->value();
}

QLineEdit *TaskBox::optionEdit(const std::string &key) const
{
    for (const auto &[name, edit] : m_optionEdits)
        if (name == key) return edit;
    return nullptr;
}

std::string TaskBox::taskId() const
{
    return m_task->currentData().toString().toStdString();
}

void TaskBox::showTaskPage()
{
    const std::string id = taskId();
    if (const auto own = m_ownPages.find(id); own != m_ownPages.end()) {
        m_pages->setCurrentWidget(own->second);
        return;
    }
    m_pages->setCurrentWidget(m_genericPage);
    if (m_genericTask == id) return;
    // One line edit per option row, holding its YAML value; the row reads it back (build).
    m_genericTask = id;
    while (m_genericOptions->rowCount() > 0) m_genericOptions->removeRow(0);
    m_optionEdits.clear();
    const TaskSpec *spec = findTaskSpec(id);
    if (!spec) return;
    for (const auto &row : spec->options) {
        auto *edit = new QLineEdit;
        edit->setToolTip(QString::fromStdString(row.help));
        edit->setPlaceholderText(QString::fromStdString(row.help));
        connect(edit, &QLineEdit::textChanged, this, [this] { Q_EMIT edited(); });
        m_genericOptions->addRow(QString::fromStdString(row.keys.front()), edit);
        m_optionEdits.push_back({row.keys.front(), edit});
    }
}

void TaskBox::loadGenericOptions(const TaskConfig &task)
{
    const TaskSpec *spec = findTaskSpec(task.kind);
    if (!spec) return;
    for (const auto &row : spec->options) {
        YAML::Emitter out;
        out << YAML::Flow << YAML::BeginMap;
        row.write(out, task);
        out << YAML::EndMap;
        const YAML::Node node = YAML::Load(out.c_str());
        for (auto &[key, edit] : m_optionEdits) {
            if (key != row.keys.front() || !node[key]) continue;
            const QSignalBlocker block(edit);
            edit->setText(QString::fromStdString(node[key].as<std::string>()));
        }
    }
}

void TaskBox::buildGenericOptions(TaskConfig &task, QStringList &errors) const
{
    const TaskSpec *spec = findTaskSpec(task.kind);
    if (!spec) return;
    std::string text;
    for (const auto &[key, edit] : m_optionEdits) {
        const std::string value = edit->text().trimmed().toStdString();
        if (!value.empty()) text += key + ": " + value + "\n";
    }
    try {
        const yaml::YamlField map = yaml::parseDocument(text.empty() ? "{}" : text, "task");
        readFields(map, spec->options, task);
    } catch (const std::exception &e) {
        const auto *error = dynamic_cast<const SessionError *>(&e);
        errors << (error ? QStringLiteral("task.%1: %2")
                               .arg(QString::fromStdString(error->keyPath()),
                                    QString::fromStdString(error->message()))
                         : QString::fromStdString(e.what()));
    }
}

} // namespace headlab::ui
