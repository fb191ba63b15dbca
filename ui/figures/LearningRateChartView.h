// LearningRateChartView.h — Figure 4: final test loss, learned (filled) or not (hollow), against
// η or against η·sqrt(m_H), where trainability collapses onto one variable; one line per config.
#pragma once

#include "ui/figures/FigureChartView.h"

class QComboBox;
class QDoubleSpinBox;

namespace headlab::ui {

class LearningRateChartView : public FigureChartView {
    Q_OBJECT
public:
    explicit LearningRateChartView(SessionModel *model, QWidget *parent = nullptr);
    void refresh() override;
    void saveViewState(ViewState &state) const override;
    void restoreViewState(const ViewState &state) override;
    void setScaled(bool on);
    // The exponent of η·m_H^α where no search fitted one (a grid): chosen, ½ by default.
    void setChosenExponent(double alpha);

private:
    QComboBox *m_y = nullptr; // final test loss, or a per-head statistic (FigureY)
    QComboBox *m_xMode;
    QDoubleSpinBox *m_alpha; // the chosen α, shown in that mode when no law is fitted
};

} // namespace headlab::ui
