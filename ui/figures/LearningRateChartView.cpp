// LearningRateChartView.cpp — see LearningRateChartView.h.
#include "ui/figures/LearningRateChartView.h"

#include "core/config/Yaml.h"
#include "core/session/search/SearchReport.h"
#include "ui/model/SessionModel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>

#include <cmath>

namespace headlab::ui {

LearningRateChartView::LearningRateChartView(SessionModel *model, QWidget *parent)
    : FigureChartView(model, parent)
{
    offerReplicatePoint();
    m_xMode = new QComboBox(this);
    m_xMode->addItem(tr("against η"), "lr");
    m_xMode->addItem(QString::fromUtf8("against η·√m_H"), "lr_sqrt_mh");
    // A boundary search's law: the collapse with the fitted exponent (offered once it is fitted).
    m_xMode->addItem(tr("against η·m_H^α (α fitted, or chosen)"), "lr_mh_alpha");
    // A grid has no fitted law: α is chosen here (½, the paper's, by default).
    m_alpha = new QDoubleSpinBox(this);
    m_alpha->setRange(0.0, 3.0);
    m_alpha->setSingleStep(0.05);
    m_alpha->setDecimals(2);
    m_alpha->setValue(0.5);
    m_alpha->setPrefix(QStringLiteral("α = "));
    m_alpha->setToolTip(tr("The exponent of m_H in η·m_H^α, where no boundary search fitted one"));
    m_alpha->setVisible(false);
    m_y = new QComboBox(this);
    for (const auto &[title, y] : figureYChoices()) m_y->addItem(title, figureYName(y));
    m_y->setToolTip(tr("What is plotted: the final test loss, or a per-head statistic averaged "
                       "over each run's heads"));
    controlsLayout()->addWidget(m_y);
    controlsLayout()->addWidget(m_xMode);
    controlsLayout()->addWidget(m_alpha);
    controlsLayout()->addWidget(
        new QLabel(tr("Filled: learned (by the session's rule, View ▸ Learned means). Hollow: not "
                      "learned."),
                   this));
    controlsLayout()->addStretch(1);
    connect(m_xMode, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
    connect(m_y, &QComboBox::currentIndexChanged, this, &FigureView::controlChanged);
    connect(m_alpha, &QDoubleSpinBox::valueChanged, this, &FigureView::controlChanged);
}

void LearningRateChartView::setChosenExponent(double alpha)
{
    m_alpha->setValue(alpha);
}

void LearningRateChartView::setScaled(bool on)
{
    m_xMode->setCurrentIndex(on ? 1 : 0);
}

void LearningRateChartView::refresh()
{
    const Session &session = m_model->session();
    const QString mode = m_xMode->currentData().toString();
    // The search's α, for the η·m_H^α axis only (the report refits as a search's runs change).
    double alpha = NAN;
    if (session.search && mode == "lr_mh_alpha") {
        const LawFit law = m_model->searchReport()->law;
        if (law.ok && law.x == "head_dim" && law.also.empty()) alpha = law.alpha;
    }
    const bool fitted = mode == "lr_mh_alpha" && std::isfinite(alpha);
    const bool chosen = mode == "lr_mh_alpha" && !fitted;
    m_alpha->setVisible(chosen);
    showData(learningRateFigure(session, mode != "lr", replicatePoint(),
                                figureYFromName(m_y->currentData().toString()),
                                fitted   ? alpha
                                : chosen ? m_alpha->value()
                                         : 0.5,
                                !chosen),
             10.0);
}

void LearningRateChartView::saveViewState(ViewState &state) const
{
    FigureChartView::saveViewState(state);
    setStateValue(state, "x", m_xMode->currentData().toString().toStdString());
    setStateValue(state, "y", m_y->currentData().toString().toStdString());
    if (m_alpha->value() != 0.5)
        setStateValue(state, "alpha", yaml::formatNumber(m_alpha->value()));
}

void LearningRateChartView::restoreViewState(const ViewState &state)
{
    FigureChartView::restoreViewState(state);
    const QSignalBlocker block(m_xMode);
    m_xMode->setCurrentIndex(
        std::max(0, m_xMode->findData(QString::fromStdString(stateValue(state, "x", "lr")))));
    const QSignalBlocker blockY(m_y), blockAlpha(m_alpha);
    bool ok = false; // a hand-edited view's value that is not a number keeps ½
    const double alpha = QString::fromStdString(stateValue(state, "alpha", "0.5")).toDouble(&ok);
    m_alpha->setValue(ok && std::isfinite(alpha) ? alpha : 0.5);
    m_y->setCurrentIndex(std::max(
        0, m_y->findData(QString::fromStdString(stateValue(state, "y", "final_test_loss")))));
    refresh();
}

} // namespace headlab::ui
