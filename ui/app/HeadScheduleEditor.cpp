// HeadScheduleEditor.cpp — see HeadScheduleEditor.h.
#include "ui/app/HeadScheduleEditor.h"

#include "core/config/HeadSchedule.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>
#include <numeric>

namespace headlab::ui {

HeadScheduleEditor::HeadScheduleEditor(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_list = new QListWidget(this);
    m_list->setMaximumHeight(96);
    m_list->setToolTip(tr("One schedule per row: the head count of each layer, e.g. 12, 24, 48, "
                          "96. Double-click to edit."));
    layout->addWidget(m_list);
    auto *row = new QHBoxLayout();
    m_shape = new QComboBox(this);
    m_shape->addItem(tr("constant"));
    m_shape->addItem(tr("ascending"));
    m_shape->addItem(tr("descending"));
    m_total = new QSpinBox(this);
    m_total->setRange(1, 100000);
    m_total->setValue(12);
    m_total->setPrefix(tr("total "));
    auto *add = new QPushButton(tr("Add"), this);
    add->setToolTip(tr("Generate a schedule with this shape and about this many heads in total"));
    auto *remove = new QPushButton(tr("Remove"), this);
    row->addWidget(m_shape);
    row->addWidget(m_total);
    row->addWidget(add);
    row->addWidget(remove);
    layout->addLayout(row);

    connect(add, &QPushButton::clicked, this, [this] {
        const auto s =
            generate(ScheduleShape(m_shape->currentIndex()), m_layers, m_total->value(), m_dModels);
        QStringList parts;
        for (auto h : s) parts << QString::number(h);
        auto *item = new QListWidgetItem(parts.join(", "), m_list);
        item->setFlags(item->flags() | Qt::ItemIsEditable);
        Q_EMIT edited();
    });
    connect(remove, &QPushButton::clicked, this, [this] {
        delete m_list->currentItem();
        Q_EMIT edited();
    });
    connect(m_list, &QListWidget::itemChanged, this, [this] { Q_EMIT edited(); });
}

std::vector<int64_t> HeadScheduleEditor::generate(ScheduleShape shape, int layers,
                                                  int64_t totalHeads,
                                                  const std::vector<int64_t> &dModels)
{
    // Core's generator (the one the head_schedule sweep axis uses), snapped to divisors of the
    // greatest common divisor of the swept widths so the schedule runs at every d_model.
    int64_t g = 0;
    for (auto d : dModels) g = std::gcd(g, d);
    const HeadScheme scheme = shape == ScheduleShape::Ascending    ? HeadScheme::Ascending
                              : shape == ScheduleShape::Descending ? HeadScheme::Descending
                                                                   : HeadScheme::Constant;
    return headSchedule(scheme, double(totalHeads), std::max(1, layers), g);
}

void HeadScheduleEditor::setSchedules(const std::vector<std::vector<int64_t>> &schedules)
{
    const QSignalBlocker block(m_list);
    m_list->clear();
    for (const auto &s : schedules) {
        QStringList parts;
        for (auto h : s) parts << QString::number(h);
        auto *item = new QListWidgetItem(parts.join(", "), m_list);
        item->setFlags(item->flags() | Qt::ItemIsEditable);
    }
}

std::vector<std::vector<int64_t>> HeadScheduleEditor::schedules(QStringList *errors) const
{
    std::vector<std::vector<int64_t>> out;
    for (int i = 0; i < m_list->count(); ++i) {
        QString text = m_list->item(i)->text();
        text.remove('[').remove(']');
        std::vector<int64_t> s;
        bool ok = true;
        for (const auto &part : text.split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts)) {
            bool isInt = false;
            const qlonglong v = part.toLongLong(&isInt);
            if (!isInt || v < 1) {
                ok = false;
                if (errors)
                    *errors
                        << tr("sweep.heads[%1]: '%2' is not a positive integer").arg(i).arg(part);
                break;
            }
            s.push_back(v);
        }
        if (ok && s.empty()) {
            if (errors) *errors << tr("sweep.heads[%1]: the schedule is empty").arg(i);
            continue;
        }
        if (ok) out.push_back(s);
    }
    return out;
}

} // namespace headlab::ui
