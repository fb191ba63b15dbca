// SessionModel.h — the GUI's single source of truth: one headlab::Session with every run's full
// history, plus the live numbers (steps/s, ETA) that are not saved.
//
// Lives on the GUI thread. Progress arrives from TrainingController's queued signals and is
// appended here; views read from here and redraw on their own frame timer, never per point.
#pragma once

#include "core/lab/SweepSession.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "core/train/HeadInspector.h"

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <vector>

namespace headlab::ui {

class SessionModel : public QObject {
    Q_OBJECT
public:
    explicit SessionModel(QObject *parent = nullptr);

    const headlab::Session &session() const { return m_session; }
    int runCount() const { return int(m_session.runs.size()); }
    const headlab::SessionRun &run(int index) const { return m_session.runs.at(size_t(index)); }

    // Replaces everything (new, open, preset). `path` may be empty (untitled).
    void setSession(headlab::Session session, const QString &path = {});
    // Loads from disk; throws headlab::SessionError with a located message.
    void load(const QString &path);
    // Saves to `path` (empty: the current path) in the stored layout: the session file and one
    // file per run in S.results/ (SessionStore.h). The first save to a path takes its lock, kept
    // until the session is replaced: another HeadLab writing the same file is refused, and so is
    // this one while another writes it. Throws headlab::SessionError.
    void save(const QString &path = {});
    // Writes a copy without touching the path or the modified flag (autosave).
    void saveCopy(const QString &path);
    // Removes the checkpoints of finished runs except those whose reason is in `keep`
    // (headlab::pruneCheckpoints) and saves the session's run files; the session must have a
    // file and not be training. Throws SessionError.
    headlab::PruneSummary pruneCheckpoints(const std::set<std::string> &keep);
    // Marks (or unmarks) finished run `row`'s checkpoint at `step` as one pruning keeps
    // (headlab::markCheckpoint) and saves the run's file when the session has one. Throws
    // SessionError.
    void markCheckpoint(int row, int64_t step, bool keep);
    // The session's checkpoint budget (headlab::enforceCheckpointBudget) after a run finished:
    // the runs pruned are saved again. Returns the sentence to show ("" within the budget).
    QString enforceCheckpointBudget();
    // Writes one run's result file, to the session's own folder or, for an untitled session, to
    // the copy at `fallbackPath`: what finishing a run costs. Throws headlab::SessionError when the
    // store cannot be opened (another writer holds it).
    // Stores a finished run's result at once in its own file (core/lab: the same way headlab-cli
    // does); when the file cannot be written, the result goes to a rescue folder, and the returned
    // value says where and why.
    headlab::StoredResult storeRun(int runIndex, const QString &fallbackPath);
    // Takes the lock of the file runs will be stored in (as storeRun chooses it) before a sweep
    // starts, so that a second writer is refused before any work. Throws headlab::SessionError.
    void openStore(const QString &fallbackPath);
    // Where results and checkpoints are: the open store's session path (an untitled session's
    // autosave copy while it trains), else the file path.
    QString storePath() const
    {
        return m_store ? QString::fromStdString(m_store->sessionPath()) : m_filePath;
    }

    QString filePath() const { return m_filePath; }
    bool isModified() const { return m_modified; }
    void setModified(bool modified);

    // The sweep definition changed (the form): rebuilds runs with expandSweep, which keeps the
    // results of runs whose configuration did not change.
    // Runs it leaves out keep their results aside, for when they come back.
    void setSweep(const headlab::Session &definition);
    // A boundary search (search/SearchPlanner.h): plans its next round once every run of the last one has a
    // result (round 0 first), re-expands the runs and returns how many it added; 0 otherwise.
    int planSearchRound();
    // View state (figure shown, heatmap axes, log scales) travels with the next save; it does
    // not by itself mark the session modified.
    void setViewState(const std::string &key, const std::string &value);
    // The session's own note and tags, and run `runIndex`'s (kept by its run_id): the session is
    // modified, the run table and filter follow. A tag that is not one word is refused (false,
    // `why`: validTag), and nothing changes.
    bool setSessionAnnotation(const headlab::Annotation &annotation, QString *why = nullptr);
    bool setRunAnnotation(int runIndex, const headlab::Annotation &annotation,
                          QString *why = nullptr);
    // Which rule "learned" follows in the table, the figures and runs.csv; saved with the session.
    void setLearnedRule(headlab::LearnedRule rule);
    std::string viewState(const std::string &key, const std::string &fallback = {}) const;

    // Training updates.
    void markStarting(const std::vector<int> &runIndices); // clears their curves, Queued
    void applyProgress(const headlab::RunProgress &progress);
    void applyResult(int runIndex, const headlab::RunResult &result);
    // After a sweep ends: any run still Running or Paused becomes Stopped.
    void settleAfterSweep();
    // A sweep trained by other processes or machines (headlab-cli run, Slurm shards) into this
    // session's results: reads the run files that changed since the last call, and the newest
    // checkpoint of each run still training (its curves so far), and applies them to the runs
    // without touching the session file; and merges the notes and tags other programs wrote into
    // the session file (headlab-cli note, the Python package's annotate) with the edits made here
    // (mergeAnnotations: neither side's edit is lost). Cheap when nothing changed (a listing of
    // names, sizes and times). Returns the number of runs whose result changed. Never while this
    // app trains the session.
    int refreshFromDisk();
    // Live attention maps (the Heads view): which run's maps, on what input, the view wants while
    // it trains; and the newest maps that arrived for a run (nullptr if none).
    void setAttentionRequest(int runIndex, const QString &input);
    int attentionRequestRun() const { return m_attentionRun; }
    const QString &attentionRequestInput() const { return m_attentionInput; }
    void setLiveAttention(int runIndex, const headlab::AttentionMaps &maps);
    const headlab::AttentionMaps *liveAttention(int runIndex) const;
    // Appends a run outside the sweep's product (rerun with another seed); returns its index.
    int addRun(const headlab::SessionRun &run);

    double stepsPerSecond(int runIndex) const;
    double etaSeconds(int runIndex) const;
    // Whole sweep: fraction of steps done among the runs that are part of the current sweep.
    double sweepFraction() const;
    double sweepEtaSeconds() const;
    // The ETA is an upper bound: a run still to finish may end early (stop_after_learned) at a
    // step nobody knows yet. Runs that went below the learned level count where they will end.
    bool sweepEtaIsAtMost() const;
    void setActiveRuns(const std::vector<int> &runIndices) { m_activeRuns = runIndices; }
    const std::vector<int> &activeRuns() const { return m_activeRuns; }

    // Increases whenever any data a figure draws changes.
    quint64 revision() const { return m_revision; }
    // The boundary search's report (headlab::searchReport) of the session as it is now, computed
    // once per revision and shared by every figure and panel that draws it: it fits each
    // configuration's curve and the law (a second for a search of a few hundred runs), which a
    // change of selection or of a figure's options must not repeat. nullptr without a search.
    std::shared_ptr<const headlab::SearchReport> searchReport() const;

Q_SIGNALS:
    void runsReset();              // the run list changed shape (new session, sweep edited)
    void runChanged(int runIndex); // a run's status or curves changed
    void dataChanged();            // anything a figure draws changed (coalesce before redrawing)
    void modifiedChanged(bool modified);
    void filePathChanged(const QString &path);
    void attentionRequestChanged(int runIndex, const QString &input);

private:
    void touch();
    // Rebuilds the runs from the definition (finished results kept) and tells the views.
    void reexpand();
    // After the runs were rebuilt: fresh live state, the views told, the session modified.
    void runsRebuilt();
    // The store for `path`, opened (and locked) on first use.
    headlab::SessionStore &storeFor(const QString &path);
    // Writes the session file at `target` (and the runs it lacks). Onto its own file, the notes
    // and tags another program wrote there since it was read are merged in first: the app holds
    // the file's lock only from its first save, and `headlab-cli note` may write before that.
    void writeSession(const QString &target);
    // Merges the notes and tags of the session file as it is on disk now (see refreshFromDisk);
    // true when what the model holds changed. A file that does not read (gone, being edited) is
    // left for the next call.
    bool mergeAnnotationsFromDisk();
    headlab::Session m_session;
    std::unique_ptr<headlab::SessionStore> m_store; // for m_filePath or the autosave copy
    QString m_filePath;
    bool m_modified = false;
    quint64 m_revision = 0;
    mutable std::shared_ptr<const headlab::SearchReport> m_report; // of m_reportRevision
    mutable quint64 m_reportRevision = 0;
    struct Live {
        double stepsPerSecond = 0;
        double etaSeconds = -1;
        int64_t expectedEnd = 0; // RunProgress::expectedEnd (0: none reported yet)
        bool mayEndEarly = false;
    };
    std::vector<Live> m_live; // parallel to m_session.runs
    // Results of runs a new sweep left out (setSweep), by configuration (canonical YAML): a run
    // that comes back (the lesson strip's head count pressed again) gets its result back instead
    // of training again. Cleared with the session.
    std::map<std::string, headlab::RunResult> m_setAside;
    // The runs in training, listed for readers outside the app (SessionStore::writeLiveRuns):
    // rewritten at most every 5 s while they train, removed when the sweep settles.
    void publishLive(bool force);
    qint64 m_livePublishedMs = 0;
    bool m_liveWarned = false;
    std::vector<int> m_activeRuns;
    std::string m_diskFingerprint; // of the results folder, at the last refreshFromDisk
    std::string m_indexStamp;      // the session file's size and time when last read or written
    headlab::Annotations
        m_annotationBase; // the notes and tags the file held when last read or written
    int m_attentionRun = -1;
    QString m_attentionInput;
    std::map<int, headlab::AttentionMaps> m_liveAttention;
};

} // namespace headlab::ui
