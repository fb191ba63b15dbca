// TaskBox.h — the form's first box: the session's name and its task, with the task's options.
// Addition, nearest neighbour and text have pages of their own, registered by task id; any other
// task of the task table (core/schema/TaskSpec.h) gets a page of its option rows, each a line
// holding its YAML value, which the row itself reads back.
#pragma once

#include "ui/app/form/FormBox.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

class QComboBox;
class QFormLayout;
class QLineEdit;
class QSpinBox;
class QStackedWidget;

namespace headlab::ui {

class TaskBox : public FormBox {
    Q_OBJECT
public:
    explicit TaskBox(QWidget *parent = nullptr);
    void load(const Session &session) override;
    void build(Session &definition, const Session &loaded, QStringList &errors) const override;
    QComboBox *kindBox() const { return m_task; }
    // The line of a task option on the page of a task with no page of its own, or nullptr.
    QLineEdit *optionEdit(const std::string &key) const;

private:
    std::string taskId() const;
    void showTaskPage();
    void loadGenericOptions(const TaskConfig &task);
    void buildGenericOptions(TaskConfig &task, QStringList &errors) const;

    QLineEdit *m_name;
    QComboBox *m_task;
    QStackedWidget *m_pages;
    // A task's own page of options, registered by its id where it is built.
    std::map<std::string, QWidget *> m_ownPages;
    QWidget *m_genericPage;
    QFormLayout *m_genericOptions;
    std::string m_genericTask; // the task whose rows the generic page holds
    std::vector<std::pair<std::string, QLineEdit *>> m_optionEdits;
    QSpinBox *m_trainPairs, *m_testPairs, *m_pointDim, *m_numPoints, *m_context;
    QLineEdit *m_textPath;
};

} // namespace headlab::ui
