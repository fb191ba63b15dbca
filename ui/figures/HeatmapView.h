// HeatmapView.h — Figure 2: final (or at-step) test loss over any two swept axes, d_model × heads
// by default, at a chosen value of every other axis (the learning rate, typically).
//
// Painted with QPainter (Qt Charts has no heatmap): a colour bar, the value in each cell, a
// hatched style for diverged, failed and skipped cells, an outline for runs still training.
// Clicking a cell selects its runs, so the loss chart shows their curves.
#pragma once

#include "ui/figures/FigureView.h"
#include "ui/model/HeatmapData.h"

class QComboBox;
class QGridLayout;
class QSpinBox;
class QLabel;

namespace headlab::ui {

class HeatmapCanvas;

class HeatmapView : public FigureView {
    Q_OBJECT
public:
    explicit HeatmapView(SessionModel *model, QWidget *parent = nullptr);

    QString title() const override;
    QString csv() const override;
    void refresh() override;
    void saveViewState(ViewState &state) const override;
    void restoreViewState(const ViewState &state) override;
    // Each cell's runs, and the fixed axes set to "all (pooled)".
    Pooling pooling() const override;

    const HeatmapData &data() const { return m_data; }
    void setAxes(const QString &x, const QString &y);
    void setFixedValue(const QString &axis, const QString &label); // "" averages over the axis
    void setStep(int64_t step);
    void setStat(HeatmapStat stat);
    HeatmapStat currentStat() const; // -1: final
    // The cell under a canvas position, (-1, -1) if none.
    // With a side-by-side axis, `panel` picks the heatmap (one per value of that axis).
    QPoint cellAt(const QPoint &canvasPos, int *panel = nullptr) const;
    QRect cellRect(int row, int column, int panel = 0) const;
    // Side by side: one heatmap per value of this axis (e.g. qk_rule off | on); "" for one.
    void setSideBySide(const QString &axis);
    int panelCount() const { return std::max<int>(1, int(m_panels.size())); }
    const HeatmapData &panelData(int panel) const
    {
        return m_panels.empty() ? m_data : m_panels[size_t(panel)];
    }
    // Texts (title, cells) the last paint had to elide because nothing else fitted: 0 at any
    // screen of 1280×720 and up.
    int elidedTexts() const { return m_elided; }
    // Whether the last drawing keyed the split cells' corner mark (it has split cells).
    bool splitKeyDrawn() const { return m_splitKeyDrawn; }

private:
    friend class HeatmapCanvas;
    void rebuildControls();
    void paintHeatmap(QPainter &p, const QRectF &area) const;
    void paintPanel(QPainter &p, const QRectF &area, const HeatmapData &data,
                    const QString &panelTitle, bool colourBar) const;
    QRectF panelArea(const QRectF &area, int panel) const;
    // The replicates every cell with a value has (said once in the title), 0 when they differ.
    int sharedReplicates() const;
    void onCellClicked(int panel, int row, int column);

    HeatmapCanvas *m_canvasWidget;
    QComboBox *m_xCombo, *m_yCombo, *m_sideBySide;
    QComboBox *m_stat; // what a cell shows of its replicates: mean, median, P(learned)
    QSpinBox *m_step;
    QWidget *m_fixedBox;
    QHBoxLayout *m_fixedLayout;
    std::map<std::string, QComboBox *> m_fixedCombos;
    QStringList m_axesShown;
    ViewState m_pending;               // restored view state applied once the controls exist
    HeatmapData m_data;                // the (first) heatmap
    std::vector<HeatmapData> m_panels; // side by side: one per value of m_sideBySide's axis
    QStringList m_panelLabels;
    mutable int m_elided = 0;
    mutable bool m_splitKeyDrawn = false;
};

} // namespace headlab::ui
