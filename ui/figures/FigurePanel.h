// FigurePanel.h — one chart of a figure that has several: a FigureChartView that draws the
// FigureData its owner gives it, with no controls of its own. The owner is the FigureView that
// exports, saves state and refreshes; the panels are children of its canvas.
#pragma once

#include "ui/figures/FigureChartView.h"

namespace headlab::ui {

class FigurePanel : public FigureChartView {
    Q_OBJECT
public:
    FigurePanel(SessionModel *model, double logBase, QWidget *parent = nullptr);
    void refresh() override;          // redraws the data last given (after a theme change, say)
    void showFigure(FigureData data); // one replace() per series

private:
    double m_logBase;
};

} // namespace headlab::ui
