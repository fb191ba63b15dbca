// FigureView.h — the base of every figure in the app: a row of controls above a canvas.
//
// A figure reads the SessionModel and redraws only when refresh() is called (the main window
// calls it from one ~40 ms single-shot frame timer). Export renders the canvas alone, through
// QWidget::render, so the same painting code serves the screen, SVG and PNG. csv() gives the
// numbers behind what is drawn.
#pragma once

#include "core/session/Session.h"
#include "ui/figures/ChartTheme.h"

#include <QList>
#include <QRectF>
#include <QWidget>

#include <functional>
#include <map>
#include <string>
#include <vector>

class QHBoxLayout;
class QVBoxLayout;

class QAbstractAxis;
class QChart;
class QLogValueAxis;
class QChartView;

class QPainter;
class QScrollArea;

namespace headlab::ui {

class SessionModel;
using ViewState = std::map<std::string, std::string>;

class FigureView : public QWidget {
    Q_OBJECT
public:
    explicit FigureView(SessionModel *model, QWidget *parent = nullptr);

    // Its id in the figure table (FigureTable.h): "loss", "heatmap", ...; a stable name used in
    // view state and exports. The row that makes views of its class gives it; "" for a view with
    // no row (a panel inside a figure).
    QString figureId() const;
    virtual QString title() const = 0;
    virtual QString csv() const = 0;
    virtual void refresh() = 0;
    // Whether the figure means anything for the session (its row of the figure table: the rank
    // figure is the nearest-neighbour task's). The window hides the tab of one that does not;
    // Export all skips it.
    bool applies() const;
    virtual void saveViewState(ViewState &state) const { Q_UNUSED(state); }
    virtual void restoreViewState(const ViewState &state) { Q_UNUSED(state); }
    virtual void applyTheme(const ChartTheme &theme);
    // What the figure pools, as drawn now: the runs each point, line, band or cell stands for
    // where it stands for several (the seeds of one configuration), and the axes it says in its
    // title that it pools over (whose values may then differ within a group). tests/ui's harness
    // checks every figure of every corpus session with it. A figure that draws each run alone
    // returns none.
    struct Pooling {
        std::vector<QList<int>> groups;
        QStringList pooledAxes;
    };
    virtual Pooling pooling() const { return {}; }

    QWidget *canvas() const { return m_canvas; }
    // What a chart figure shows under `at` (the chart view's pixels): the nearest drawn point
    // within `radius` pixels, as its series' name and its two values in the axes' titles ("" if
    // none). Its tooltip while the mouse moves; tests call it directly.
    static QString valueAt(QChartView *view, const QPoint &at, double radius = 8);
    // The tick labels a chart draws, in its scene's coordinates: Qt Charts' own (its axes'
    // label items) and those the chart view adds between a log axis's decades (added), placed
    // only where they overlap no other label (tests/ui measures that none do).
    struct TickLabel {
        QRectF box;
        QString text;
        Qt::Orientation orientation;
        QPointF at;                    // the tick's place on the axis
        QLogValueAxis *axis = nullptr; // of an added one
        bool added = false;
    };
    static std::vector<TickLabel> tickLabels(QChart *chart);
    void setControlsVisible(bool visible);
    // A control of the figure changed: redraw, and say so, so that the session keeps it. Connect
    // a control's change signal here (its arguments are not needed).
    void controlChanged();
    // The runs the table selects. A figure on a tab the user is not looking at (its window shown,
    // it not) follows at its next showing or export (ensureCurrent): every figure redrawing at
    // every click was most of a click's time in a session of 150 runs. One never shown (a test's,
    // an export's copy) follows at once.
    void setSelectedRuns(const QList<int> &runs);
    const QList<int> &selectedRuns() const { return m_selected; }
    void ensureCurrent();
    const ChartTheme &theme() const { return m_theme; }
    // Qt Charts cuts a title wider than the chart ("— one learni...", a search's run count):
    // smaller type, down to 7 pt, then two lines broken near the middle. Call after setTitle and
    // on resize.
    static void fitChartTitle(QChart *chart, const ChartTheme &theme);

Q_SIGNALS:
    void runsActivated(const QList<int> &runs); // a click on a cell or panel
    void viewStateChanged();                    // a control changed: save it in the session

protected:
    void setCanvas(QWidget *canvas);
    // A chart view for `chart` (legend on the right, no window-coloured frame, antialiased),
    // installed as this figure's canvas.
    QChartView *setChartCanvas(QChart *chart);
    // A value axis: logarithmic with `logBase` (minor ticks for base 10, whole numbers for base 2),
    // or linear with labels in `linearFormat` (printf style; empty keeps Qt's default).
    static QAbstractAxis *makeValueAxis(bool log, double logBase, const char *linearFormat);
    // Sets the range with ticks on round values (AxisRange.h): a linear axis keeps [lo, hi] and
    // gets ticks at 1, 2 or 5 × 10^k, labelled with just the digits they need; a base-10 log
    // axis is widened to whole decades.
    static void setAxisRange(QAbstractAxis *axis, double lo, double hi);
    QHBoxLayout *controlsLayout() const { return m_controlsLayout; }
    // A widget beneath the canvas, across the figure's width (a note on what is drawn).
    void addFooter(QWidget *footer);
    virtual void selectionChanged() { refresh(); }
    // What must follow the selection at once while the figure is hidden (the rest waits for its
    // showing): Inside the heads' request for the selected run's live maps.
    virtual void selectionChangedWhileHidden() {}
    void showEvent(QShowEvent *event) override;
    // Reads "<figureId>.<key>" from a view state.
    std::string stateValue(const ViewState &state, const std::string &key,
                           const std::string &fallback = {}) const;
    void setStateValue(ViewState &state, const std::string &key, const std::string &value) const;

    SessionModel *m_model;
    QList<int> m_selected;
    ChartTheme m_theme;

private:
    QVBoxLayout *m_layout;
    QScrollArea *m_controlsBar; // scrolls m_controls sideways when the window is narrow
    QWidget *m_controls;
    QHBoxLayout *m_controlsLayout;
    QWidget *m_canvas = nullptr;
    bool m_selectionStale = false; // the selection changed while the figure was hidden
};

// A figure's canvas drawn with QPainter (the screen, PNG and SVG are one drawing, through `paint`):
// while the mouse moves its tooltip says what `hover` finds under it, and a click selects the runs
// `click` names (FigureView::runsActivated). The small multiples, the parallel coordinates and
// the per-digit panels are each one.
class PaintedCanvas : public QWidget {
public:
    struct Hooks {
        std::function<void(QPainter &, const QRectF &)> paint;
        std::function<QString(const QPointF &)> hover;    // "" for nothing
        std::function<QList<int>(const QPointF &)> click; // empty for nothing
    };
    PaintedCanvas(FigureView *view, Hooks hooks);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;

private:
    FigureView *m_view;
    Hooks m_hooks;
};

} // namespace headlab::ui
