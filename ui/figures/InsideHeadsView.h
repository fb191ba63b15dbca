// InsideHeadsView.h — the Heads view: inside the heads of one run.
//
// For the selected run (the first selected, else the first with checkpoints): the attention map of
// every head of every layer on an input the user types (tokens labelled, the answer's row framed),
// scrubbed through the run's checkpoints with a step slider, and live at each evaluation while the
// run trains; its per-head statistics against step with the plateau entries and exits marked;
// and, at a checkpoint, each head's importance (the test loss with it removed, a layer × head
// grid) and the greedy pruning curve. One painter draws the screen, PNG and SVG; csv() gives
// every number shown.
#pragma once

#include "ui/figures/FigureView.h"
#include "ui/model/Mailbox.h"

#include "core/train/Checkpoint.h"
#include "core/train/HeadInspector.h"

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;

namespace headlab::ui {

class InsideHeadsCanvas;

class InsideHeadsView : public FigureView {
    Q_OBJECT
public:
    explicit InsideHeadsView(SessionModel *model, QWidget *parent = nullptr);
    ~InsideHeadsView() override;
    QString title() const override;
    QString csv() const override;
    void refresh() override;
    void saveViewState(ViewState &state) const override;
    void restoreViewState(const ViewState &state) override;

    // For tests and scripts: the run shown, the checkpoints it offers, the slider's position.
    int shownRun() const { return m_run; }
    QComboBox *runPicker() const { return m_runPicker; }
    const std::vector<CheckpointInfo> &checkpoints() const { return m_checkpoints; }
    void setInput(const QString &input);
    // index into checkpoints() (ascending steps); checkpoints().size() is "live".
    void setPosition(int index);
    int position() const;
    void setStatistic(const QString &name);
    // Ablates every head and prunes greedily at the shown checkpoint, on a worker thread; the
    // button shows the progress and cancels. waitForAblation() blocks until it is done (tests).
    void runAblation();
    // Whether Ablate also prunes with retraining (the box beside it).
    void setRetraining(bool on);
    // Marks (or unmarks) the shown checkpoint as one pruning keeps; false when it cannot be
    // (no checkpoint shown, the run unfinished), with message() saying why.
    bool setKeepShown(bool keep);
    bool ablationRunning() const { return m_worker.joinable(); }
    void waitForAblation();
    const AttentionMaps *maps() const { return m_maps ? &*m_maps : nullptr; }
    const std::vector<HeadAblation> &ablation() const { return m_ablation; }
    const std::vector<PruningCurve> &pruning() const { return m_pruning; }
    // The step the ablation and pruning shown were computed at (-1: none shown). They are
    // cleared when the slider leaves that step, and a running one is cancelled.
    int64_t ablationStep() const { return m_ablationStep; }
    QString message() const { return m_message; }
    // The model's prediction for the input, beside it: "predicts 9 (p = 0.87) · answer 9".
    QString predictionText() const;
    // One colour per head of a layer, as many distinct colours as the run has heads in a layer
    // (the figures' colour-blind-safe palette while it has room, ChartTheme::categoryColor
    // beyond); layers differ in line style. The maps' labels, the statistics' lines and their
    // legend use them.
    QColor headColor(int64_t head) const { return m_theme.categoryColor(int(head), m_headCount); }
    int headCount() const { return m_headCount; } // the most heads of one layer of the run shown
    static Qt::PenStyle layerStyle(int64_t layer);
    // For the tests that nothing overlaps: the box of every label the last paint drew (the maps'
    // head and layer names, tokens, the focus rows' weights, the legend, the Δ-loss matrix), in
    // the painted widget's coordinates, and the heads the statistics' legend named.
    struct DrawnLabel {
        QRectF box; // what the text took
        QString text;
        QRectF room; // what it was given: a text larger than its room is clipped
    };
    const std::vector<DrawnLabel> &drawnLabels() const { return m_drawnLabels; }
    int legendHeads() const { return m_legendHeads; }
    // What is under `at` (canvas pixels) on an attention map: the run, the step, the layer and
    // head, the query and key positions with their tokens, and the weight; "" off the maps. The
    // canvas's tooltip while the mouse moves.
    QString hoverText(const QPointF &at) const;

private:
    friend class InsideHeadsCanvas;
    void selectionChanged() override;
    void selectionChangedWhileHidden() override;
    void reloadRun();
    void updateMaps();
    const HeadInspector *inspectorAt(int index);
    QString storePath() const;

    InsideHeadsCanvas *m_canvasWidget;
    QLineEdit *m_input;
    QLabel *m_prediction; // the model's answer to the input, and its probability
    QSlider *m_slider;
    QLabel *m_stepLabel;
    QCheckBox *m_keep;   // the shown checkpoint is marked: pruning keeps it
    QLabel *m_diskLabel; // the run's checkpoints on disk, and the session's
    QComboBox *m_stat, *m_mode;
    QComboBox *m_runPicker; // the run shown; its choice selects the run, as the table does
    QString m_pickerKey;    // the runs it lists (session, count, last run's label)
    QPushButton *m_ablate;
    QCheckBox *m_retrain; // Ablate also fine-tunes, trains the control and learns L0 gates

    int m_run = -1;
    bool m_runChangedWhileHidden = false; // m_run moved without a reload: the next one resets
    int m_headCount = 1;                  // of m_run: the most heads in one layer (w·H)
    mutable std::vector<DrawnLabel> m_drawnLabels; // written by each paint
    struct DrawnMap {
        QRectF box;
        size_t layer;
        int64_t head;
    };
    mutable std::vector<DrawnMap> m_drawnMaps; // each attention map's box, written by each paint
    mutable int m_legendHeads = 0;
    std::vector<CheckpointInfo> m_checkpoints; // ascending steps
    size_t m_diskCounted = size_t(-1);         // checkpoints when the disk label was last computed
    std::string m_inspectorPath;
    std::unique_ptr<HeadInspector> m_inspector; // of m_inspectorPath
    std::optional<AttentionMaps> m_maps;
    struct {
        std::string key; // checkpoint path and input they were computed for
        std::optional<AttentionMaps> maps;
        QString message;
    } m_checkpointMaps;
    std::vector<HeadAblation> m_ablation;
    std::vector<PruningCurve> m_pruning; // one per order (HeadInspector.h), random ones per seed
    int64_t m_ablationStep = -1;
    int64_t m_ablationRequestedStep = -1;        // of the ablation running on m_worker
    QString m_message;                           // why nothing is shown, or what went wrong
    bool m_followLive = true;                    // the slider stays at "live" while the run trains
    std::thread m_worker;                        // the ablation in progress
    Mailbox *m_mailbox;                          // its values, handed to this thread
    std::shared_ptr<std::atomic<bool>> m_cancel; // asks it to stop after its current step
    void finishAblation(std::vector<HeadAblation> ablation, std::vector<PruningCurve> pruning,
                        int64_t step, QString error);
};

} // namespace headlab::ui
