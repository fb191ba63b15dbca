// HeadScheduleChartView.cpp — see HeadScheduleChartView.h.
#include "ui/figures/HeadScheduleChartView.h"

#include "ui/figures/FigurePanel.h"
#include "ui/model/SessionModel.h"

#include <QHBoxLayout>

namespace headlab::ui {

HeadScheduleChartView::HeadScheduleChartView(SessionModel *model, QWidget *parent)
    : FigureView(model, parent)
{
    auto *canvas = new QWidget(this);
    auto *layout = new QHBoxLayout(canvas);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_loss = new FigurePanel(model, 2.0, canvas);
    m_speed = new FigurePanel(model, 2.0, canvas);
    layout->addWidget(m_loss, 3);
    layout->addWidget(m_speed, 2);
    setCanvas(canvas);
    setControlsVisible(false);
}

QString HeadScheduleChartView::title() const
{
    return m_loss->title();
}

QString HeadScheduleChartView::csv() const
{
    return QStringLiteral("# %1\n").arg(m_loss->title()) + m_loss->csv() +
           QStringLiteral("\n# %1\n").arg(m_speed->title()) + m_speed->csv();
}

void HeadScheduleChartView::refresh()
{
    m_loss->showFigure(totalHeadsLossFigure(m_model->session()));
    m_speed->showFigure(totalHeadsSpeedFigure(m_model->session()));
}

void HeadScheduleChartView::applyTheme(const ChartTheme &theme)
{
    m_theme = theme;
    m_loss->applyTheme(theme);
    m_speed->applyTheme(theme);
    refresh();
}

} // namespace headlab::ui
