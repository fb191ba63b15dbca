// GroupPanelsView.h — the test loss of each of the task's groups (addition's answer digits) in a
// panel of its own, one line per configuration at its seeds' median (or every run), in the
// configuration's colour of every figure (ColourTable.h). On the 75-run Figure 2 grid the loss
// curves' per-digit view drew 225 thin curves in one chart with a legend for heads only; here each
// digit is a panel and each of the 25 configurations one line (issue 52 item 4). Painted with
// QPainter on shared axes (the screen, PNG and SVG are one drawing); the plateau of a digit not
// learned (ln of the task's vocabulary) is marked. Hover says the configuration, the group, the
// step and the loss; a click on a line selects its runs.
#pragma once

#include "ui/figures/FigureView.h"

#include "core/session/Session.h"

#include <QPointF>
#include <QRectF>

#include <map>
#include <optional>
#include <vector>

class QCheckBox;
class QPainter;

namespace headlab::ui {

class GroupPanelsView : public FigureView {
    Q_OBJECT
public:
    explicit GroupPanelsView(SessionModel *model, QWidget *parent = nullptr);
    QString title() const override;
    QString csv() const override;
    void refresh() override;
    void saveViewState(ViewState &state) const override;
    void restoreViewState(const ViewState &state) override;
    Pooling pooling() const override; // each line's runs

    // One drawn line: a configuration's median over its seeds (or one run), in one group.
    struct Line {
        QString name;    // "d_model = 24, heads = 2" (the run's label when every run is drawn)
        QList<int> runs; // the runs it stands for
        int group = 0;   // the panel
        int colour = -1; // palette index; shade of shades
        int shade = 0, shades = 1;
        std::vector<std::pair<int64_t, double>> points; // step, loss
        int replicates = 0;
    };
    std::vector<Line> lines() const;
    QStringList groupNames() const;
    void setMedian(bool on);
    // What is under `at` (canvas pixels): the nearest point of a line within 8 pixels, as its
    // configuration, its group, the step, the loss and how many seeds; "" for none.
    QString hoverText(const QPointF &at) const;
    // The runs of the line nearest `at` (a click), empty for none.
    QList<int> runsAt(const QPointF &at) const;

private:
    struct Layout {
        std::vector<QRectF> panels; // each group's plot
        double yMax = 1, xMax = 1;
        QRectF legend;
    };
    Layout layoutFor(const QRectF &area, const std::vector<Line> &drawn) const;
    QPointF toPixel(const Layout &l, int group, int64_t step, double loss) const;
    // The nearest drawn point within `radius`: its line and the point's index.
    struct Hit {
        Line line;
        int point = 0;
    };
    std::optional<Hit> hit(const QPointF &at, double radius) const;
    void paint(QPainter &p, const QRectF &area) const;

    PaintedCanvas *m_canvasWidget;
    QCheckBox *m_median, *m_logX;
};

} // namespace headlab::ui
