// ParallelCoordinatesView.h — every finished run as one line across the session's swept axes (η,
// n_H, m, seed, a stabilizer, ...) to its outcomes, its metric axes (the final test loss unless
// asked otherwise: each axis a statistic of a curve, chosen above the figure), coloured by its verdict
// (learned, not learned, diverged): more than two axes at once, as the Optuna dashboard shows a
// study's trials (issue 52 item 2). An axis's values are spaced evenly in the sweep's order; the
// outcome axis is linear from 0, with the task's plateaus marked. Hovering a line names its run;
// clicking it selects the run, clicking a value on an axis selects every run of that value (the
// run table and the other figures follow). Painted with QPainter, so the screen, PNG and SVG are
// one drawing.
#pragma once

#include "ui/figures/FigureView.h"

#include "core/session/Session.h"

#include <QImage>
#include <QPointF>
#include <QRectF>

#include <algorithm>

#include <optional>
#include <vector>

class QPainter;

namespace headlab::ui {

class ParallelCoordinatesView : public FigureView {
    Q_OBJECT
public:
    explicit ParallelCoordinatesView(SessionModel *model, QWidget *parent = nullptr);
    QString title() const override;
    QString csv() const override;
    void refresh() override;
    void saveViewState(ViewState &state) const override;
    void restoreViewState(const ViewState &state) override;

    // The axes drawn, left to right: the configuration axes (the swept ones and any a run carries,
    // a search's η and seed among them; d_model and heads first), then the metric axes.
    QStringList axes() const;
    // The metric axes: each a run value, STAT(CURVE) (core/metrics/RunValues.h), whose statistic
    // (final, min, max, best, mean_last) and curve are chosen above the figure; "final(test_loss)"
    // alone unless set. An empty list or a key that is not STAT(CURVE) is refused (false).
    bool setMetricAxes(const QStringList &keys);
    QStringList metricAxes() const { return m_metrics; }
    // The run whose line passes nearest `at` (canvas pixels) within `radius`, or -1; and what its
    // tooltip says (the run, its values, its outcome), "" for none.
    int runAt(const QPointF &at, double radius = 6) const;
    QString hoverText(const QPointF &at) const;
    // The runs a click at `at` selects: the line's run, or every run of the value whose label
    // was clicked; empty for neither.
    QList<int> runsAtClick(const QPointF &at) const;
    // Each drawn run's points, canvas pixels, one per axis (tests).
    std::vector<std::pair<int, std::vector<QPointF>>> drawnLines() const;
    // The legend's entries as drawn: each verdict with its runs ("learned (3)", "non-finite loss
    // (1)"), then how many lines end outside the loss axis.
    QStringList legend() const;

private:
    struct Layout {
        QRectF plot;            // between the first and the last axis, tick to tick
        std::vector<double> xs; // each axis's x
    };
    struct Line {
        int run = -1;
        std::vector<QPointF> points;
        // NonFinite: finished (not diverged) with a final loss that is not a number.
        enum class Verdict { Learned, NotLearned, Unknown, Diverged, NonFinite };
        Verdict verdict = Verdict::Unknown;
        // Per metric axis: its value is above (+1) or below (-1) the axis, drawn at its end.
        std::vector<int> clipped;
        bool anyClipped() const
        {
            return std::any_of(clipped.begin(), clipped.end(), [](int c) { return c != 0; });
        }
    };
    // A metric axis's range: from 0 to the loss at initialisation for a loss (with the task's
    // plateaus marked), else over the runs' values (a blow-up cannot flatten it: AxisRange.h).
    struct MetricScale {
        double lo = 0, hi = 1;
        bool loss = false;
    };
    std::vector<MetricScale> metricScales() const;
    QStringList configurationAxesShown() const; // axes() less the metric axes
    void rebuildMetricControls();
    // One configuration axis's scale: its values evenly spaced in the sweep's order, or, for a
    // numeric axis of many values (a search's η), by value (on a log scale where they span more
    // than a factor of 20) with round ticks.
    struct Scale {
        QStringList labels;
        bool continuous = false, log = false;
        double lo = 0, hi = 1;
        double position(const QString &label) const; // 0 (bottom) … 1 (top)
        QList<std::pair<double, QString>> ticks() const;
    };
    std::vector<Scale> scales() const;
    Layout layoutFor(const QRectF &area) const;
    std::vector<Line> lines(const Layout &layout, const std::vector<Scale> &axisScales) const;
    // The legend of `drawn`: each verdict drawn (its line's style) with its count, then the lines
    // outside the axis (no verdict: text alone).
    static std::vector<std::pair<std::optional<Line::Verdict>, QString>>
    legendOf(const std::vector<Line> &drawn);
    double lossTop() const;
    void paint(QPainter &p, const QRectF &area) const;

    PaintedCanvas *m_canvasWidget;
    QStringList m_metrics = {QStringLiteral("final(test_loss)")};
    QWidget *m_metricBar;                    // a statistic and a curve per metric axis, + and ×
    std::vector<std::string> m_curveChoices; // the curves m_metricBar offers
    quint64 m_curvesRevision = ~quint64(0);  // the session's revision they were read at
    // On screen, every run's faint line as drawn last, and what it was drawn from (paint).
    mutable QImage m_faintLines;
    mutable size_t m_faintKey = 0;
};

} // namespace headlab::ui
