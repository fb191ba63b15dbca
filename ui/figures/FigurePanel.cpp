// FigurePanel.cpp — see FigurePanel.h.
#include "ui/figures/FigurePanel.h"

namespace headlab::ui {

FigurePanel::FigurePanel(SessionModel *model, double logBase, QWidget *parent)
    : FigureChartView(model, parent)
    , m_logBase(logBase)
{
    setControlsVisible(false);
}

void FigurePanel::refresh()
{
    showData(data(), m_logBase);
}

void FigurePanel::showFigure(FigureData data)
{
    showData(std::move(data), m_logBase);
}

} // namespace headlab::ui
