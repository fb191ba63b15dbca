// HeadScheduleEditor.h — edits the list of per-layer head schedules a sweep runs, e.g.
// [12, 24, 48, 96] (ascending), [45, 45, 45, 45] (constant), [96, 48, 24, 12] (descending),
// with generators around a target total head count. Every count is rounded to a divisor of the
// swept d_model values so that the generated schedules can run.
#pragma once

#include <QWidget>

#include <cstdint>
#include <vector>

class QComboBox;
class QListWidget;
class QSpinBox;

namespace headlab::ui {

enum class ScheduleShape { Constant, Ascending, Descending };

class HeadScheduleEditor : public QWidget {
    Q_OBJECT
public:
    explicit HeadScheduleEditor(QWidget *parent = nullptr);

    // Each layer's share grows (ascending) or shrinks (descending) by 2× per layer, or is equal;
    // counts are rounded to the nearest divisor of every value in dModels (none: any integer ≥ 1).
    static std::vector<int64_t> generate(ScheduleShape shape, int layers, int64_t totalHeads,
                                         const std::vector<int64_t> &dModels);

    void setSchedules(const std::vector<std::vector<int64_t>> &schedules);
    // Parses every row; a row that is not a list of positive integers gives an error naming it.
    std::vector<std::vector<int64_t>> schedules(QStringList *errors = nullptr) const;
    void setLayers(int layers) { m_layers = layers; }
    void setDModels(const std::vector<int64_t> &dModels) { m_dModels = dModels; }

Q_SIGNALS:
    void edited();

private:
    QListWidget *m_list;
    QComboBox *m_shape;
    QSpinBox *m_total;
    int m_layers = 2;
    std::vector<int64_t> m_dModels;
};

} // namespace headlab::ui
