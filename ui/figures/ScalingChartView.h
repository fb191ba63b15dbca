// ScalingChartView.h — Figure 3: final test loss against m (d_model), or against the head
// dimension m_H = m / n_H where the lines for different n_H collapse; one line per n_H, at one η.
#pragma once

#include "ui/figures/FigureChartView.h"

class QComboBox;

namespace headlab::ui {

class ScalingChartView : public FigureChartView {
    Q_OBJECT
public:
    explicit ScalingChartView(SessionModel *model, QWidget *parent = nullptr);
    void refresh() override;
    void saveViewState(ViewState &state) const override;
    void restoreViewState(const ViewState &state) override;
    void setByHeadDim(bool on);

private:
    QComboBox *m_y = nullptr; // final test loss, or a per-head statistic (FigureY)
    QComboBox *m_xMode;
    QComboBox *m_lr;
    std::string m_pendingLr;
};

} // namespace headlab::ui
