// FigureChartView.h — a Qt Charts figure drawn from FigureData: one line with markers per series,
// filled markers where the model learned and hollow ones where it did not, diverged points as
// diamonds along the top, and a dashed "learned below ln 10" line (or the figure's own reference
// line). Base of the Figure 3 and 4, rank and total-heads views; series persist and get one
// replace() per frame.
#pragma once

#include "ui/figures/FigureView.h"
#include "ui/figures/Highlight.h"
#include "ui/model/FigureData.h"

#include <map>

class QChart;
class QChartView;
class QLineSeries;
class QScatterSeries;
class QAbstractAxis;
class QCheckBox;
class QComboBox;
class QGraphicsTextItem;

namespace headlab::ui {

class FigureChartView : public FigureView {
    Q_OBJECT
public:
    explicit FigureChartView(SessionModel *model, QWidget *parent = nullptr);
    QString title() const override { return m_data.title; }
    QString csv() const override { return m_data.csv(); }
    void applyTheme(const ChartTheme &theme) override;
    Pooling pooling() const override; // the series' points' runs
    const FigureData &data() const { return m_data; }
    QChart *chart() const { return m_chart; }
    void saveViewState(ViewState &state) const override;    // subclasses call it
    void restoreViewState(const ViewState &state) override; // from theirs, before refresh()

    // The Highlight (Highlight.h): one configuration, or the lines of one colour or shade of
    // the short legend, drawn thick and the rest faint.
    Highlight *highlight() const { return m_highlight; }
    bool isLit(const QString &seriesName) const; // drawn as highlighted (or nothing is)

protected:
    void resizeEvent(QResizeEvent *event) override;
    // Subclasses compute the data and call this from refresh().
    void showData(FigureData data, double logBase);
    // Figures of replicates (loss against m, m_H, η) offer the point's statistic: median and
    // min–max, mean ± sd, mean ± se.
    void offerReplicatePoint();
    ReplicatePoint replicatePoint() const;

private:
    void ensureAxes(bool logX, bool logY, double logBase);
    // A line's colour: its series' colour of the palette, in its shade.
    QColor lineColour(const QLineSeries *line) const;
    void placeEmptyText();
    // showData's steps.
    struct YRange {
        double bottom = 0, top = 1;
        int above = 0; // finite points above the range (Full y range shows them)
    };
    struct Marks {
        QList<QPointF> learned, notLearned, diverged, dots;
        std::vector<std::pair<QPointF, QPointF>> whiskers;
        std::vector<QLineSeries *> whiskerSeries; // which line each whisker belongs to
        std::vector<QLineSeries *> learnedSeries; // which line each learned marker belongs to
        std::vector<QLineSeries *> notLearnedSeries, dotSeries; // and each hollow one, each dot
        double xMin = 1e300, xMax = -1e300;
    };
    void dropLinesNoLongerShown();
    YRange yRange(double initial, bool reference);
    Marks updateLines(double top);
    void restoreLegendOrder();
    void updateMarkers(const Marks &marks);
    std::pair<double, double> xRange(const Marks &marks, double logBase) const;
    void styleLines();
    void showLegend();
    void fitTitle();
    // The highlight: its lines drawn thick, the others faint (called when it or the styles
    // change).
    QString activeHighlight() const; // found on the chart: once per pass, not per line
    // lineColour, faint when `active` leaves the line unlit.
    QColor shownColour(const QLineSeries *line, const QString &active) const;
    void applyHighlight();
    void penLines();
    QChartView *m_view;
    QChart *m_chart;
    QAbstractAxis *m_axisX = nullptr, *m_axisY = nullptr;
    bool m_axisLog = false;
    bool m_axisLogY = false;
    double m_axisBase = 0;
    std::map<QString, QLineSeries *> m_lines;
    bool m_legendOrderDirty = false; // a line was added: the legend goes back to the data's order
    QScatterSeries *m_learned = nullptr, *m_notLearned = nullptr, *m_diverged = nullptr;
    QScatterSeries *m_notLearnedFaint = nullptr;
    // Replicates: each one a faint dot, and a whisker over their range at every point with more
    // than one (one two-point line each, pooled and reused frame to frame).
    QScatterSeries *m_replicateDots = nullptr;
    std::vector<QLineSeries *> m_whiskers;
    QLineSeries *m_threshold = nullptr;
    QGraphicsTextItem *m_empty = nullptr;    // FigureData::empty, over the plot
    std::vector<QLineSeries *> m_legendOnly; // the short legend's entries, when shown
    FigureData m_data;
    bool m_stylesDirty = true;
    QComboBox *m_point = nullptr; // the replicate statistic, where offered
    Highlight *m_highlight;
    QString m_drawnHighlight; // the one the pens show
    Marks m_marks;            // the last drawn markers' owners, recoloured with the highlight
    QCheckBox
        *m_fullRange; // off: outliers (a blown-up loss) stay off the chart, counted in the title
};

} // namespace headlab::ui
