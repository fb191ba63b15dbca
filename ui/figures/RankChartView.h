// RankChartView.h — the nearest-neighbour figure (EXPERIMENTS.md §2): best epoch-mean loss against
// rank m_H on log-log axes, best over seeds, one line per (layers, w), with the "predict 0" line at
// 1. Only the nearest-neighbour task has it: applies() is false for the others.
#pragma once

#include "ui/figures/FigureChartView.h"

namespace headlab::ui {

class RankChartView : public FigureChartView {
    Q_OBJECT
public:
    explicit RankChartView(SessionModel *model, QWidget *parent = nullptr);
    void refresh() override;
};

} // namespace headlab::ui
