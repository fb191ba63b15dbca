// ParallelCoordinatesView.h — every finished run as one line across the session's swept axes (η,
// n_H, m, seed, a stabilizer, ...) to its outcome, the final test loss, coloured by its verdict
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

    // The axes drawn, left to right: the configuration axes (the swept ones and any a run carries,
    // a search's η and seed among them; d_model and heads first), then "final_test_loss".
    QStringList axes() const;
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
        int clipped = 0; // its loss is above (+1) or below (-1) the outcome axis, drawn at its end
    };
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
    // On screen, every run's faint line as drawn last, and what it was drawn from (paint).
    mutable QImage m_faintLines;
    mutable size_t m_faintKey = 0;
};

} // namespace headlab::ui
