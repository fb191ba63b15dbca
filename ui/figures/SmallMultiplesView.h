// SmallMultiplesView.h — Figure 5: one small panel of train and test curves per cell of two swept
// axes (n_H rows × d_model columns by default), the other axes (η) told apart by colour. Painted
// with QPainter on shared axes so panels compare at a glance; clicking a panel selects its runs.
#pragma once

#include "ui/figures/FigureView.h"

#include "core/session/Session.h"

#include <optional>

class QCheckBox;
class QComboBox;

namespace headlab::ui {

class SmallMultiplesView : public FigureView {
    Q_OBJECT
public:
    explicit SmallMultiplesView(SessionModel *model, QWidget *parent = nullptr);
    QString title() const override;
    QString csv() const override;
    void refresh() override;
    void saveViewState(ViewState &state) const override;
    void restoreViewState(const ViewState &state) override;
    // A panel's runs of one colour: drawn alike but for the replicates' shades.
    Pooling pooling() const override;
    // The axis whose values the colours stand for: the session's colour axis (ColourTable.h)
    // unless it lays out the panels, else the first swept axis with several values that is
    // neither rows nor columns, else a replicate axis (one colour per seed).
    std::string colourAxis() const;
    // How a run's curves are drawn: one colour per line key (the rest of its configuration: every
    // axis but the panels' and the replicates'), a shade of it per replicate; past the palette's
    // colours, the colour axis's colour and a shade per value of the rest (then seeds share it).
    struct LineStyle {
        int colour = 0, shade = 0;
    };
    LineStyle lineStyle(const SessionRun &run) const;
    // The legend's entries: each colour's (and, past the palette, each shade's) text.
    struct LineLegend {
        QStringList colours;
        QStringList shades; // empty unless shaded
    };
    LineLegend lineLegend() const;
    // Texts (titles) the last paint had to cut off because nothing else fitted.
    int elidedTexts() const { return m_elided; }
    // The y ticks every panel shares, labelled beside the first column: 0 and the task's plateaus
    // by name (ln 10, ⅔ ln 10, ...) in the task's order, which is the order they are labelled in
    // where not all fit; or round values where the task has none.
    QList<std::pair<double, QString>> yTicks() const;
    // What is under `pos` (canvas pixels): the nearest point of a curve of that panel within 8
    // pixels, as its run, the curve (test or train), its loss and its step; "" for none. The
    // canvas's tooltip while the mouse moves.
    QString hoverText(const QPointF &pos) const;

private:
    struct Legend {
        struct Item {
            QPointF at;
            QColor colour;
            double width;
            Qt::PenStyle style;
            QString text;
            double textWidth;
        };
        std::vector<Item> items;
        QRectF grid; // the panels' area, below the legend
    };
    Legend legendFor(const QRectF &area) const;
    void paintGrid(QPainter &p, const QRectF &area) const;
    struct GridScale {
        double xMax = 1, yMax = 1;
        bool logX = false;
        // A curve's point (step, loss) in a panel's plot, as every panel draws it.
        QPointF toPixel(const QRectF &plot, double step, double loss) const;
    };
    // A panel's plot inside its cell of the grid (below its title).
    QRectF plotOf(const QRectF &panel) const;
    // The runs of the panel of these row and column labels ("" where the axis is none).
    QList<int> runsOfPanel(const QString &rowLabel, const QString &columnLabel) const;
    // The panel under `pos` (canvas pixels): its labels and its plot; nullopt off the panels.
    struct PanelAt {
        QString rowLabel, columnLabel;
        QRectF plot;
    };
    std::optional<PanelAt> panelAt(const QPointF &pos) const;
    GridScale gridScale() const;
    bool paintPanelCurves(QPainter &p, const QRectF &plot, const QString &rowLabel,
                          const QString &columnLabel, const GridScale &scale,
                          const QSet<int> &selected) const;
    QList<int> runsAt(const QPointF &pos) const;
    std::string rowAxis() const;
    std::string columnAxis() const;

    PaintedCanvas *m_canvasWidget;
    QComboBox *m_rows, *m_columns;
    QCheckBox *m_logX, *m_showTrain;
    QStringList m_axesShown;
    ViewState m_pending;
    mutable int m_elided = 0;
};

} // namespace headlab::ui
