// HeadScheduleChartView.h — the head-schedule figure (EXPERIMENTS.md §3), two panels side by side:
// final test loss against total heads, mean over seeds, one line per scheme (ascending, constant,
// descending); and training speed (steps/s) against total heads, labelled as the ensemble's when
// runs trained together share one clock. Applies to the text task and to any session that sweeps
// head_schedule.
#pragma once

#include "ui/figures/FigureView.h"

namespace headlab::ui {

class FigurePanel;

class HeadScheduleChartView : public FigureView {
    Q_OBJECT
public:
    explicit HeadScheduleChartView(SessionModel *model, QWidget *parent = nullptr);
    QString title() const override;
    QString csv() const override; // both panels, one block each
    void refresh() override;
    void applyTheme(const ChartTheme &theme) override;
    const FigurePanel *lossPanel() const { return m_loss; }
    const FigurePanel *speedPanel() const { return m_speed; }

private:
    FigurePanel *m_loss;
    FigurePanel *m_speed;
};

} // namespace headlab::ui
