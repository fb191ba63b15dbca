// LossChartView.h — Figure 1: train and test loss against step, many runs overlaid (Qt Charts).
//
// Dashed, labelled plateau lines at ln 10, (2/3) ln 10 and (1/3) ln 10; log-x and log-y toggles;
// smoothing that draws the smoothed train curve over a faint raw trace; and a per-digit view of
// the test loss (extra curves test_digit_0..2). Series persist between frames and each gets one
// replace() per frame with a min/max-decimated view of the run's full history.
#pragma once

#include "ui/figures/FigureView.h"

#include "core/session/Replicates.h"

#include <QSet>

#include <map>
#include <set>
#include <string>

class QChart;
class QChartView;
class QCheckBox;
class QLabel;
class QLineSeries;
class QScatterSeries;
class QAreaSeries;
class QComboBox;
class QSlider;
class QAbstractAxis;
class QAbstractSeries;

namespace headlab::ui {

class LossChartView : public FigureView {
    Q_OBJECT
public:
    explicit LossChartView(SessionModel *model, QWidget *parent = nullptr);

    QString title() const override;
    QString csv() const override;
    void refresh() override;
    void saveViewState(ViewState &state) const override;
    void restoreViewState(const ViewState &state) override;
    Pooling pooling() const override; // in the median view, each configuration's runs
    void applyTheme(const ChartTheme &theme) override;

    void setLogX(bool on);
    void setLogY(bool on);
    void setSmoothing(double weight); // 0 .. 0.99
    void setDigitView(bool on);
    // Replicates: one median test curve per configuration with a band over its seeds, instead of
    // every run (runs selected in the table are drawn one by one regardless).
    void setMedianView(bool on);
    // Colour by this swept axis (its values in the legend); "" colours by run.
    void setColourBy(const QString &axis);
    // Which of the runs to draw, by the run filter's grammar (RunFilter.h): "best:10",
    // "worst:5:min(test_loss)", "!outliers", "heads=12 best:3"; "" draws them all. Among the runs
    // selected in the table, when some are. Chosen again each frame, so the K best follow the
    // curves as they train. Returns why the text is not a filter ("" when it is; then every run
    // is drawn).
    QString setShown(const QString &filter);
    QString shown() const;
    QChart *chart() const { return m_chart; }
    // Earlier runs drawn faintly behind the current ones, in their colours (the lesson strip's
    // comparison: the runs a new choice replaced); empty clears them.
    struct Ghost {
        QString label;
        Curve test;
        int colour = 0;
        // What the earlier runs had that the new ones do not ("η = 0.007"): the legend names
        // each group, and several groups are told apart by dash.
        QString group;
        std::string key; // the run's configuration (canonical YAML): one ghost per configuration
    };
    void setGhosts(std::vector<Ghost> ghosts);
    // The lesson's faint curves kept through its presses: `more` joins those drawn (replacing a
    // ghost of the same key), and a ghost whose configuration is a run again (`current`) goes.
    void addGhosts(std::vector<Ghost> more, const std::set<std::string> &current);
    int ghostCount() const { return int(m_ghosts.size()); }
    std::set<std::string> ghostKeys() const;
    // Runs drawn now: the selection, else every run with data.
    QList<int> displayedRuns() const;
    // The palette colour a run's curves are drawn in (by the colour-by axis); -1 for none.
    int colourIndexOfRun(int run) const;

private:
    // A series' kind; Group + g is the test loss of group g (TaskSpec::groupCurvePrefix). Median
    // series are keyed by (−1 − configuration, Median). A train curve is one series per phase:
    // phase p > 0 of kind k is keyed k + p · kPhaseKey (the objective changes where a phase
    // begins, and one line would join the two losses with a jump no step took).
    enum Kind : int { TrainRaw, TrainSmooth, Test, Median, Group };
    static constexpr int kPhaseKey = 1000;
    bool medianMode() const;
    // The colour-by axis's values in their colours' order (computed once per styling pass), and
    // a run's colour by them with the legend name its first curve carries.
    QStringList colourValues() const;
    int colourIndexOf(const std::map<std::string, std::string> &labels, const QStringList &values,
                      QString *legendName) const;
    QLineSeries *seriesFor(int run, int key);
    void rebuildAxes();
    void updatePlateaus(double xMin, double xMax);
    void updatePhaseMarks(const QList<int> &runs, double yMin, double yMax);
    void attach(QAbstractSeries *series);
    void styleGhosts();
    std::vector<QLineSeries *> m_ghosts;
    std::vector<Ghost> m_ghostData; // what m_ghosts draw

    QChartView *m_view;
    QChart *m_chart;
    // The task's test-loss groups: curve names and display names (the addition task's digits).
    struct Groups {
        std::vector<std::string> curves;
        QStringList names;
        QString word;
    };
    Groups groups() const;

    // refresh()'s steps, and what they gather for one frame.
    struct Frame {
        std::map<std::pair<int, int>, const Curve *> wanted; // (run, kind) → its curve
        std::map<std::pair<int, int>, Curve> derived;        // train curves cut at phases, smoothed
        std::map<int, Curve> medians;                        // by configuration
        std::map<int, std::pair<QList<QPointF>, QList<QPointF>>> bands; // upper, lower
        double xMax = 1, yMinPositive = 1e300;
        std::vector<double> plotted; // every finite value, for a range outliers cannot flatten
    };
    void updateColourChoices(const Session &session);
    void collectRunCurves(const QList<int> &runs, bool digits, const Groups &groupCurves,
                          double smoothing, Frame &f);
    void collectMedians(Frame &f);
    void updateBands(const Frame &f, bool logX);
    void dropUnwanted(const Frame &f);
    void styleSeries(bool single, double smoothing);
    QString runSeriesStyle(Kind kind, bool single, double smoothing, int run, const QString &label,
                           const QStringList &groupNames, QPen &pen) const;
    void stylePlateauLines();
    void updateInfo(bool median, const QList<int> &runs, size_t configurations);
    // The dash axis: the first swept axis besides the colour axis that is no replicate axis and
    // has 2 to 5 values (η beside heads, in the classroom preset); "" for none. Each of its values
    // is drawn with one dash, and the legend lists the dashes.
    std::string dashAxis() const;
    void updateKeys(const std::string &axis, const QStringList &values, const QSet<int> &used,
                    bool weights, int &legendShown);

    QCheckBox *m_logX, *m_logY, *m_digits, *m_showTrain, *m_showTest;
    QCheckBox *m_fullRange;      // off: outliers (a blown-up loss) stay off the chart, counted
    QCheckBox *m_median;         // median and band over replicates
    QComboBox *m_colourBy;       // "(run)" or a swept axis
    QComboBox *m_show;           // editable: a run filter over the runs drawn (setShown)
    mutable QString m_showError; // why m_show's text is not a filter (displayedRuns reads it)
    QString m_pendingColourBy =
        QStringLiteral("\x01"); // from a view state, applied once the axes are known
    QStringList m_colourAxes;   // the axes m_colourBy lists
    // Per configuration in the median view: its labels, and its band (inter-quartile range, or
    // min–max under 4 replicates) as an area between two lines.
    std::vector<ReplicateGroup> m_groups;
    std::map<int, QAreaSeries *> m_bands;
    int m_outliers = 0;                       // finite points above the y range, last frame
    static constexpr int kMaxDrawnRuns = 120; // without a selection, an even sample beyond this
    int runsWithCurves() const;
    QSlider *m_smoothing;
    QLabel *m_info;
    QAbstractAxis *m_axisX = nullptr;
    QAbstractAxis *m_axisY = nullptr;
    std::map<std::pair<int, int>, QLineSeries *> m_series;
    QList<QLineSeries *> m_plateauLines;
    QList<QScatterSeries *> m_plateauLabels;
    QList<QLineSeries *> m_phaseLines;     // vertical dashed line where each later phase begins
    QList<QScatterSeries *> m_phaseLabels; // and its name
    QList<QLineSeries *> m_keys; // empty series: the dash axis's values, test/train line weights
    bool m_axesDirty = true;
    bool m_stylesDirty = true;
};

} // namespace headlab::ui
