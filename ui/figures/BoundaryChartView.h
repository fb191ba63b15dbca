// BoundaryChartView.h — a boundary search's figures (docs/SEARCH.md), drawn live as rounds finish:
//  - "law": η* against m_H (or the law's axis) on log-log axes, each configuration's crossing with
//    its 95 % interval as a bar (hollow while its search goes on, an arrow-less open bar where the
//    data do not close a side), the fitted line log η* = log C − α log m_H with its 95 % band, and
//    the α = ½ line through the same centre for reference;
//  - "curves": P(learned) against η, one colour per configuration: each run a dot at 0 or 1
//    (spread a little so that replicates show), the fitted logistic curve, and the crossing's
//    interval as a bar at ½;
//  - "collapse_half", "collapse": the same against η·√m_H and η·m_H^α;
//  - "rounds": the search's history, one row per configuration: every run at its η, coloured by
//    the round that chose it (earliest on top of its row), filled where it learned, hollow where
//    it did not, grey while it trains, and the interval the rounds have narrowed to beneath it.
#pragma once

#include "core/session/search/SearchReport.h"
#include "ui/figures/FigureView.h"
#include "ui/figures/Highlight.h"

#include <functional>
#include <vector>

class QAbstractSeries;
class QChart;
class QScatterSeries;
class QComboBox;
class QGraphicsSimpleTextItem;
class QLabel;
class QLineEdit;

namespace headlab::ui {

class BoundaryChartView : public FigureView {
    Q_OBJECT
public:
    explicit BoundaryChartView(SessionModel *model, QWidget *parent = nullptr);
    QString title() const override { return m_title; }
    QString csv() const override { return m_csv; }
    void refresh() override;
    void applyTheme(const ChartTheme &theme) override;
    void saveViewState(ViewState &state) const override;
    void restoreViewState(const ViewState &state) override;
    // Each configuration's runs (its crossing, its fitted curve), pooled over the searched axis.
    Pooling pooling() const override;

    bool showsLaw() const;
    void setShowsLaw(bool law);
    // "law", "curves", "collapse_half" (P(learned) against η·√m_H), "collapse" (η·m_H^α, the
    // law's α and further exponents), "rounds" (each round's η per configuration).
    void setMode(const QString &mode);
    QString mode() const;
    QChart *chart() const { return m_chart; }
    // P(learned)'s curves: one configuration, or those of a colour or shade, drawn thick and
    // the others faint (Highlight.h).
    Highlight *highlight() const { return m_highlight; }

protected:
    void resizeEvent(QResizeEvent *event) override; // the title refitted to the new width

private:
    void drawLaw();
    void drawCurves(const QString &mode);
    void drawRounds();
    // drawLaw's parts; Attach adds a series to the chart on its two axes.
    using Attach = std::function<void(QAbstractSeries *)>;
    void drawGroupLines(const SearchReport &report, double x0, double x1, const Attach &attach,
                        QStringList &csv);
    void drawFit(const LawFit &law, double x0, double x1, const Attach &attach, QStringList &csv);
    QString lawTitle(const SearchReport &report) const;
    std::vector<QScatterSeries *> groupPointSeries(const SearchReport &report) const;
    void addRunDots(const ConfigurationSearch &c, size_t i, double factor, QScatterSeries *dots,
                    QScatterSeries *setAside, QStringList &csv) const;
    // Each configuration's curve, dots and bar faint where the highlight leaves them, the lit
    // curves thick; from the pens and brushes they were drawn with.
    void applyHighlight();
    QChart *m_chart;
    QComboBox *m_mode;
    Highlight *m_highlight;
    QLabel *m_hint;    // what the marks mean, for the mode shown
    QLabel *m_lawNote; // beneath the law: its readings in width and heads, and the bend
    // Beneath the law: η* predicted at the law axes' values typed (NAME=VALUE ...).
    QWidget *m_predictRow;
    QLineEdit *m_predictAt;
    QLabel *m_predicted;
    void updatePrediction();
    // The rounds' row labels, drawn over the chart (drawRounds says why); deleted at each redraw.
    std::vector<QGraphicsSimpleTextItem *> m_rowLabels;
    QString m_title, m_csv;
    QString m_drawnKey; // what was drawn last (mode, theme and the finished runs): redraw on change
};

} // namespace headlab::ui
