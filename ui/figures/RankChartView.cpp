// RankChartView.cpp — see RankChartView.h.
#include "ui/figures/RankChartView.h"

#include "ui/model/SessionModel.h"

namespace headlab::ui {

RankChartView::RankChartView(SessionModel *model, QWidget *parent)
    : FigureChartView(model, parent)
{
    setControlsVisible(false); // nothing to choose: every (layers, w) line is drawn
}

void RankChartView::refresh()
{
    showData(rankFigure(m_model->session()), 2.0);
}

} // namespace headlab::ui
