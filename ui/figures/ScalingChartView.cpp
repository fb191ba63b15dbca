// ScalingChartView.cpp — see ScalingChartView.h.
#include "ui/figures/ScalingChartView.h"

#include "ui/model/HeatmapData.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>

namespace headlab::ui {

ScalingChartView::ScalingChartView(SessionModel *model, QWidget *parent)
    : FigureChartView(model, parent)
{
    offerReplicatePoint();
    m_xMode = new QComboBox(this);
    m_xMode->addItem(tr("against d_model m"), "m");
    m_xMode->addItem(tr("against head dim m_H = m / n_H"), "m_H");
    m_lr = new QComboBox(this);
    m_y = new QComboBox(this);
    for (const auto &[title, y] : figureYChoices()) m_y->addItem(title, figureYName(y));
    m_y->setToolTip(tr("What is plotted: the final test loss, or a per-head statistic averaged "
                       "over each run's heads"));
    controlsLayout()->addWidget(m_y);
    controlsLayout()->addWidget(m_xMode);
    controlsLayout()->addWidget(new QLabel(tr("η"), this));
    controlsLayout()->addWidget(m_lr);
    controlsLayout()->addStretch(1);
    connect(m_xMode, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
    connect(m_lr, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
    connect(m_y, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
}

void ScalingChartView::setByHeadDim(bool on)
{
    m_xMode->setCurrentIndex(on ? 1 : 0);
}

void ScalingChartView::refresh()
{
    const QStringList lrs = axisValueLabels(m_model->session(), "lr");
    QStringList current;
    for (int i = 0; i < m_lr->count(); ++i) current << m_lr->itemData(i).toString();
    if (current != lrs) {
        const QSignalBlocker block(m_lr);
        const QString keep = m_pendingLr.empty() ? m_lr->currentData().toString()
                                                 : QString::fromStdString(m_pendingLr);
        m_lr->clear();
        for (const auto &l : lrs) m_lr->addItem(displayLabel(l), l);
        const int i = m_lr->findData(keep);
        m_lr->setCurrentIndex(i >= 0 ? i : int(lrs.size()) - 1); // the largest η by default
        m_pendingLr.clear();
    }
    m_lr->setEnabled(lrs.size() > 1);
    showData(scalingFigure(m_model->session(), m_xMode->currentIndex() == 1,
                           m_lr->currentData().toString(), replicatePoint(),
                           figureYFromName(m_y->currentData().toString())),
             2.0);
}

void ScalingChartView::saveViewState(ViewState &state) const
{
    FigureChartView::saveViewState(state);
    setStateValue(state, "x", m_xMode->currentData().toString().toStdString());
    setStateValue(state, "y", m_y->currentData().toString().toStdString());
    setStateValue(state, "lr",
                  m_pendingLr.empty() ? m_lr->currentData().toString().toStdString() : m_pendingLr);
}

void ScalingChartView::restoreViewState(const ViewState &state)
{
    FigureChartView::restoreViewState(state);
    const QSignalBlocker block(m_xMode);
    m_xMode->setCurrentIndex(stateValue(state, "x") == "m_H" ? 1 : 0);
    const QSignalBlocker blockY(m_y);
    m_y->setCurrentIndex(std::max(
        0, m_y->findData(QString::fromStdString(stateValue(state, "y", "final_test_loss")))));
    m_pendingLr = stateValue(state, "lr");
    m_lr->clear(); // forces the lr list (and the pending choice) to be rebuilt
    refresh();
}

} // namespace headlab::ui
