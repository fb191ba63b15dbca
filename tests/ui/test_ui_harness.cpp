// test_ui_harness.cpp — a harness that plays the user over real sessions (issue 50).
//
// The app's other suites test the paths their authors wrote; users met crashes in the paths
// nobody walked (a click on a heatmap cell of a stored session, the last checkpoint of an
// early-stopped run, a signal on a file nobody edited). This suite opens a corpus of real
// sessions, each made the way users make them (every preset trained small by headlab-cli, the
// stored layout and its export, a previous release's file, a sharded session not yet merged, a
// session with early-stopped, diverged and failed runs, a boundary search), and on each performs
// every action of the table below, as a user would, in the real main window. After each session:
// no crash, and the session file byte for byte as it was (the harness never saves). ctest runs it
// offscreen and under Xvfb at 1280x720 and 1920x1080 (on the corpus the offscreen run made; there
// only the actions whose outcome depends on the screen). Each action's time is logged.
//
// Two tables: kCorpus (a row per kind of session) and kActions (a row per thing a user does). A
// new figure is walked by "every figure" and exported by "export" without a row; a new session
// kind or action is one row. Assertions of every action: exactly the cell's or row's runs are
// selected; a heatmap cell pools only replicates (the runs' configurations are equal but for their
// seeds); Inside the heads opens every checkpoint a run wrote and starts from the task's example;
// every figure offered draws its CSV, the heatmap's listing the runs of each cell as the figure
// pools them; every figure exports as a non-empty PNG and SVG.
#include "UiTestSessions.h"

#include "core/lab/SweepSession.h"
#include "core/metrics/RunValues.h"
#include "core/report/HtmlReport.h"
#include "core/session/Presets.h"
#include "core/session/Replicates.h"
#include "core/session/SessionStore.h"
#include "ui/app/MainWindow.h"
#include "ui/figures/FigureExporter.h"
#include "ui/figures/FigureTable.h"
#include "ui/figures/HeatmapView.h"
#include "ui/figures/InsideHeadsView.h"
#include "ui/figures/LossChartView.h"
#include "ui/figures/ParallelCoordinatesView.h"
#include "ui/model/RunMetrics.h"
#include "ui/model/RunTableModel.h"
#include "ui/model/SessionModel.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>

using namespace headlab;
using namespace headlab::ui;

namespace {

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

int cli(const QStringList &args, QString *err = nullptr)
{
    QProcess p;
    p.start(QStringLiteral(HEADLAB_CLI), args);
    p.waitForFinished(600000);
    if (err) *err = QString::fromUtf8(p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

// A preset as a user would try it on a laptop: each phase cut to a few steps (a search to its
// first round), its data and its test set small, on the CPU; its sweep's shape kept, the widths
// capped (d_model at 96, the width multiplier at 2: the paper's w 64 is a GPU's work; the feed-
// forward width at 4 d_model) so that the corpus trains in a minute on 2 cores.
void capAxis(std::vector<AxisValue> &values, double cap)
{
    if (values.empty()) return;
    const AxisValue smallest =
        *std::min_element(values.begin(), values.end(), [](const AxisValue &a, const AxisValue &b) {
            return a.number < b.number;
        });
    std::erase_if(values, [cap](const AxisValue &v) { return v.number > cap; });
    if (values.empty()) values.push_back(smallest); // one width all the same
}

Session smallPreset(const std::string &name)
{
    Session s = loadPreset(name);
    const std::map<std::string, double> caps = {{"d_model", 96}, {"width_multiplier", 2}};
    for (auto &axis : s.axes)
        if (const auto it = caps.find(axis.name); it != caps.end())
            capAxis(axis.values, it->second);
    std::erase_if(s.combinations, [&](const SweepCombination &c) {
        for (const auto &[axis, cap] : caps)
            if (const auto it = c.find(axis); it != c.end() && it->second.number > cap) return true;
        return false;
    });
    s.base.model.dModel = std::min<int64_t>(s.base.model.dModel, 96);
    s.base.model.widthMultiplier = std::min<int64_t>(s.base.model.widthMultiplier, 2);
    if (s.base.model.ffnWidth > 0) // the nearest-neighbour paper's 2048 at d 64
        s.base.model.ffnWidth = std::min<int64_t>(s.base.model.ffnWidth, 4 * s.base.model.dModel);
    s.base.task.corpusBytes = std::min<int64_t>(s.base.task.corpusBytes, 200'000);
    s.base.task.contextLength = std::min<int64_t>(s.base.task.contextLength, 32);
    for (auto &phase : s.base.phases) {
        phase.steps = std::min<int64_t>(phase.steps, 6);
        phase.batchSize = std::min<int64_t>(phase.batchSize, 16);
    }
    s.base.evalEvery = 3;
    s.base.logEvery = 3;
    s.base.evalBatches = 1; // the text's 64 windows, 256 of the nearest-neighbour test sets
    s.base.device = "cpu";
    if (s.base.task.kind == "addition") {
        s.base.task.trainPairs = std::min<int64_t>(s.base.task.trainPairs, 512);
        s.base.task.testPairs = std::min<int64_t>(s.base.task.testPairs, 32);
    }
    if (s.search) s.search->budget = s.search->initialPoints * s.search->replicates;
    if (s.checkpoints.enabled) s.checkpoints.every = 3;
    return s;
}

// The corpus: a row per kind of session, each made under `dir` as users make them.
struct CorpusRow {
    QString name;
    std::function<QString(const QString &dir)> make; // the session file; "" and QFAIL on failure
};

// Why the last row could not be made (trained() refused it), for initTestCase's message.
QString g_whyNotMade;

// `s` saved in `dir` and trained by the CLI as a user's server would (`headlab-cli run`, with
// `extra`): the session's path, or "" (and g_whyNotMade says why) when the CLI did not train it
// to the end: a preset the CLI cannot train fails the harness instead of being walked untrained.
QString trained(const QString &dir, const QString &file, const Session &s,
                const QStringList &extra = {})
{
    const QString path = dir + "/" + file;
    saveSessionAtomic(s, path.toStdString());
    QString err;
    const int code = cli(QStringList{"run", path} + extra, &err);
    if (code == 0) return path;
    g_whyNotMade = QStringLiteral("headlab-cli run %1 exited with %2: %3")
                       .arg((QStringList{path} + extra).join(QLatin1Char(' ')))
                       .arg(code)
                       .arg(err.trimmed().right(2000));
    return {};
}

std::vector<CorpusRow> corpus()
{
    std::vector<CorpusRow> rows;
    for (const auto &preset : builtinPresets()) {
        const std::string name = preset.name;
        rows.push_back({QStringLiteral("preset %1").arg(QString::fromStdString(name)),
                        [name](const QString &dir) {
                            return trained(dir, QString::fromStdString(name) + ".yaml",
                                           smallPreset(name));
                        }});
    }
    rows.push_back(
        {"stored fixture and its export", [](const QString &dir) {
             for (const char *f : {"v2-addition.yaml", "v2-addition.export.yaml"})
                 QFile::copy(QStringLiteral(HEADLAB_SOURCE_DIR "/tests/session/fixtures/") + f,
                             dir + "/" + f);
             QProcess cp;
             cp.start("cp", {"-a",
                             QStringLiteral(HEADLAB_SOURCE_DIR
                                            "/tests/session/fixtures/v2-addition.results"),
                             dir});
             cp.waitForFinished();
             return dir + "/v2-addition.yaml";
         }});
    rows.push_back({"the export of a stored session", [](const QString &dir) {
                        QFile::copy(QStringLiteral(HEADLAB_SOURCE_DIR
                                                   "/tests/session/fixtures/v2-nn.export.yaml"),
                                    dir + "/v2-nn.export.yaml");
                        return dir + "/v2-nn.export.yaml";
                    }});
    rows.push_back({"a previous release's file", [](const QString &dir) {
                        QFile::copy(QStringLiteral(HEADLAB_SOURCE_DIR
                                                   "/tests/storage/fixtures/previous-release.yaml"),
                                    dir + "/previous.yaml");
                        return dir + "/previous.yaml";
                    }});
    rows.push_back({"early-stopped, diverged and failed runs", [](const QString &dir) {
                        Session s = uitest::tinySession(60);
                        s.base.stopAfterLearned = 5;
                        s.base.task.trainPairs = 64;
                        s.checkpoints.enabled = true;
                        s.checkpoints.every = 10;
                        AxisValue big;
                        big.number = 3.0; // diverges
                        s.axes[2].values.push_back(big);
                        s.runs.clear();
                        expandSweep(s);
                        return trained(dir, "stopped.yaml", s);
                    }});
    rows.push_back({"a sharded session not yet merged", [](const QString &dir) {
                        Session s = uitest::tinySession(10);
                        s.runs.clear();
                        return trained(dir, "sharded.yaml", s, {"--shard", "1/2"});
                    }});
    rows.push_back({"a boundary search (made-up outcomes)", [](const QString &dir) {
                        const QString path = dir + "/search.yaml";
                        saveSessionAtomic(uitest::searchSession(true), path.toStdString());
                        return path;
                    }});
    rows.push_back(
        {"a joint-model search with law_width (made-up outcomes)", [](const QString &dir) {
             const QString path = dir + "/search-law.yaml";
             Session s = uitest::searchSession(true);
             s.search->model = SearchSpec::Model::Joint;
             s.search->lawWidth = 0.6;
             saveSessionAtomic(s, path.toStdString());
             return path;
         }});
    rows.push_back({"a per-layer head schedule (made-up)", [](const QString &dir) {
                        const QString path = dir + "/schedules.yaml";
                        saveSessionAtomic(uitest::headScheduleSession(), path.toStdString());
                        return path;
                    }});
    return rows;
}

// What each action can see.
struct Walk {
    MainWindow *window = nullptr;
    QString path, exportDir;
    Session session; // as the window holds it, for the assertions' own reading of the runs
};

// Runs equal but for their replicate axes (the seeds): their configs' canonical text with the
// seeds cleared. A heatmap cell pools exactly such runs (Replicates.h), whatever the labels say.
// In a boundary search a configuration is measured at many η: its cell (η*) pools them, so the
// searched η is cleared too.
std::string withoutSeeds(RunConfig c, bool search)
{
    c.initSeed = 0;
    c.dataSeed = 0;
    if (search) c.lr = 0;
    return yaml::canonicalYaml(c);
}

// Issue 75, item 3: every group a figure draws (a point, a line, a band, a cell) pools only runs
// equal but for the replicate axes and the axes the figure says it pools, which its title names.
// Where it pools only seeds, their configs must be equal with the seeds cleared (whatever the
// labels say); otherwise their labels on every other axis.
void checkPooling(const Walk &w, FigureView *figure, const QString &what)
{
    const FigureView::Pooling pooling = figure->pooling();
    const auto replicates = replicateAxes(w.session);
    std::set<std::string> free(replicates.begin(), replicates.end());
    for (const QString &axis : pooling.pooledAxes) {
        free.insert(axis.toStdString());
        const bool searched = w.session.search && w.session.search->axis == axis.toStdString();
        QVERIFY2(searched || figure->title().contains(axis) ||
                     figure->title().contains(
                         axisValueText(axis.toStdString(), QString()).section(' ', 0, 0)),
                 qPrintable(QStringLiteral("%1 pools %2 without saying so: '%3'")
                                .arg(what, axis, figure->title())));
    }
    const bool seedsOnly = pooling.pooledAxes.isEmpty() && w.session.replicateAxes.empty();
    const bool search = w.session.search.has_value() && w.session.search->axis == "lr";
    // Each run's value on every axis, its configuration's where it has no label of its own (a
    // combination that sets qk_norm alone still has softcap 0): core/session/Replicates.h.
    const auto resolved = configurationLabels(w.session);
    auto valueOf = [&](int run, const std::string &axis) {
        const auto &labels = resolved[size_t(run)];
        const auto it = labels.find(axis);
        return it == labels.end() ? std::string() : it->second;
    };
    for (const QList<int> &group : pooling.groups) {
        if (group.size() < 2) continue;
        const SessionRun &first = w.session.runs[size_t(group.front())];
        for (int i : group) {
            const SessionRun &run = w.session.runs[size_t(i)];
            auto differ = [&](const QString &how) {
                return qPrintable(QStringLiteral("%1: '%2' pools runs %3 and %4, which differ %5")
                                      .arg(what, figure->title())
                                      .arg(group.front())
                                      .arg(i)
                                      .arg(how));
            };
            if (seedsOnly)
                QVERIFY2(withoutSeeds(run.config, search) == withoutSeeds(first.config, search),
                         differ(QStringLiteral("in more than their seeds")));
            std::set<std::string> axes;
            for (const auto &[axis, label] : resolved[size_t(i)]) axes.insert(axis);
            for (const auto &[axis, label] : resolved[size_t(group.front())]) axes.insert(axis);
            for (const auto &axis : axes) {
                if (free.count(axis) || (search && axis == "lr")) continue;
                const std::string a = valueOf(group.front(), axis), b = valueOf(i, axis);
                QVERIFY2(a == b,
                         differ(QStringLiteral("in %1 (%2, %3)")
                                    .arg(QString::fromStdString(axis), QString::fromStdString(a),
                                         QString::fromStdString(b))));
            }
        }
    }
}

QList<int> selectedRows(QTableView *table)
{
    QList<int> rows;
    auto *proxy = qobject_cast<QAbstractProxyModel *>(table->model());
    for (const QModelIndex &index : table->selectionModel()->selectedRows())
        rows << (proxy ? proxy->mapToSource(index).row() : index.row());
    std::sort(rows.begin(), rows.end());
    return rows;
}

// Whether the window offers figure `id` for this session (its tab is shown).
bool offered(MainWindow *window, const QString &id)
{
    auto *tabs = window->findChild<QTabWidget *>();
    const int i = tabs ? tabs->indexOf(window->figure(id)) : -1;
    return i >= 0 && tabs->isTabVisible(i);
}

void settle()
{
    QCoreApplication::processEvents();
    QTest::qWait(50); // one frame of the figures' redraw timer
}

// What a click or a selection does happens at once (the figures follow the selection without the
// redraw timer): its events delivered, its paints done, without settle's frame of waiting, which
// over every cell and row of the corpus was a minute a walk.
void deliver()
{
    QCoreApplication::processEvents();
}

struct Action {
    QString name;
    std::function<void(Walk &)> act;
    // Whether what it checks depends on the screen (where cells and lines are drawn, what fits
    // at 1280x720, presenter mode's size): the runs under Xvfb at both screen sizes walk only
    // these; the others (CSV, selection by row, checkpoints, exports at a fixed size) give the
    // same answer on any screen and are walked once, offscreen (issue 51: CI time).
    bool dependsOnScreen = true;
};

const std::vector<Action> &actions()
{
    static const std::vector<Action> table = {
        {"every figure the window offers",
         [](Walk &w) {
             auto *tabs = w.window->findChild<QTabWidget *>();
             QVERIFY(tabs);
             int shown = 0;
             for (int i = 0; i < tabs->count(); ++i) {
                 if (!tabs->isTabVisible(i)) continue; // a figure this session has no data for
                 tabs->setCurrentIndex(i);
                 settle();
                 auto *f = qobject_cast<FigureView *>(tabs->widget(i));
                 QVERIFY(f && w.window->currentFigure() == f);
                 QVERIFY2(!f->title().isEmpty(), qPrintable(tabs->tabText(i)));
                 ++shown;
             }
             QVERIFY(shown >= 3);
         }},
        {"every heatmap cell, under every value of every fixed axis",
         [](Walk &w) {
             auto *heatmap = qobject_cast<HeatmapView *>(w.window->figure("heatmap"));
             QVERIFY(heatmap);
             if (!offered(w.window, "heatmap")) return;
             w.window->showFigure("heatmap");
             settle();
             const bool seedsOnly = w.session.replicateAxes.empty();
             const bool search = w.session.search.has_value() && w.session.search->axis == "lr";
             // Every cell holds replicates of one configuration only: their configs equal but for
             // their seeds, whatever the labels say; a click selects exactly its runs.
             auto cells = [&](bool click) {
                 for (int panel = 0; panel < heatmap->panelCount(); ++panel) {
                     const HeatmapData data = heatmap->panelData(panel);
                     for (int row = 0; row < data.rows(); ++row)
                         for (int column = 0; column < data.columns(); ++column) {
                             QList<int> runs = data.cell(row, column).runs;
                             if (runs.isEmpty()) continue;
                             std::sort(runs.begin(), runs.end());
                             const std::string first =
                                 withoutSeeds(w.session.runs[size_t(runs[0])].config, search);
                             if (seedsOnly)
                                 for (int i : runs)
                                     QVERIFY2(withoutSeeds(w.session.runs[size_t(i)].config,
                                                           search) == first,
                                              qPrintable(
                                                  QStringLiteral("%1: cell (%2, %3) pools runs %4 "
                                                                 "and %5, which differ in more "
                                                                 "than their seeds")
                                                      .arg(heatmap->title())
                                                      .arg(row)
                                                      .arg(column)
                                                      .arg(runs[0])
                                                      .arg(i)));
                             if (!click) continue;
                             QTest::mouseClick(heatmap->canvas(), Qt::LeftButton, {},
                                               heatmap->cellRect(row, column, panel).center());
                             deliver();
                             QCOMPARE(selectedRows(w.window->runTable()), runs);
                             // The status bar says how many.
                             const QString said = w.window->statusBar()->currentMessage();
                             QVERIFY2(said.startsWith(
                                          QStringLiteral("Selected %1 run").arg(runs.size())),
                                      qPrintable(said));
                         }
                 }
             };
             cells(true);
             if (QTest::currentTestFailed()) return;
             // The fixed axes' boxes end with "all (pooled)" or "all replicates"; every other
             // value is a choice a user makes (issue 50: softcap = 10 pooled three combinations).
             for (auto *box : heatmap->findChildren<QComboBox *>()) {
                 const QString last = box->itemText(box->count() - 1);
                 if (!last.startsWith(QStringLiteral("all "))) continue;
                 const int was = box->currentIndex();
                 for (int k = 0; k + 1 < box->count(); ++k) {
                     box->setCurrentIndex(k);
                     settle();
                     // The title names the axis held fixed and its value, as the figures write
                     // it (its axis not being drawn: "η = 5e-5", "z_loss = 1e-4").
                     const QString axis = box->objectName().section(':', 1);
                     const QString value = box->currentData().toString();
                     const bool overLr = axis == QLatin1String("lr") &&
                                         heatmap->title().contains(QLatin1String("sensitivity"));
                     if (box->parentWidget()->isVisibleTo(heatmap) && !value.isEmpty() && !overLr)
                         QVERIFY2(
                             heatmap->title().contains(axisValueText(axis.toStdString(), value)),
                             qPrintable(QStringLiteral("%1 = %2 not in '%3'")
                                            .arg(axis, value, heatmap->title())));
                     cells(false);
                     checkPooling(w, heatmap, QStringLiteral("heatmap"));
                     if (QTest::currentTestFailed()) return;
                 }
                 // Pooled: the title says so, and the cells pool only that axis and replicates.
                 if (box->parentWidget()->isVisibleTo(heatmap)) {
                     box->setCurrentIndex(box->count() - 1);
                     settle();
                     checkPooling(w, heatmap,
                                  QStringLiteral("heatmap, %1 pooled").arg(box->objectName()));
                     if (QTest::currentTestFailed()) return;
                 }
                 box->setCurrentIndex(was);
                 settle();
             }
         }},
        {"every figure's groups are configurations",
         [](Walk &w) {
             for (const QString &id : figureIds()) {
                 if (!offered(w.window, id)) continue;
                 w.window->showFigure(id);
                 settle();
                 FigureView *figure = w.window->figure(id);
                 checkPooling(w, figure, id);
                 if (QTest::currentTestFailed()) return;
                 // The loss curves pool in their median view.
                 if (auto *loss = qobject_cast<LossChartView *>(figure)) {
                     loss->setMedianView(true);
                     settle();
                     checkPooling(w, figure, id + QStringLiteral(" (median view)"));
                     loss->setMedianView(false);
                     settle();
                     if (QTest::currentTestFailed()) return;
                 }
             }
         },
         false},
        {"every figure's CSV, and the heatmap's groups in it",
         [](Walk &w) {
             // Every figure a session offers draws its numbers as CSV too; the heatmap's CSV
             // lists, cell by cell, exactly the runs the figure pools there.
             for (const QString &id : figureIds()) {
                 if (!offered(w.window, id)) continue;
                 w.window->showFigure(id);
                 settle();
                 const QString csv = w.window->figure(id)->csv();
                 QVERIFY2(csv.count('\n') >= 1, qPrintable(id + ": no CSV"));
             }
             auto *heatmap = qobject_cast<HeatmapView *>(w.window->figure("heatmap"));
             if (!heatmap || !offered(w.window, "heatmap")) return;
             w.window->showFigure("heatmap");
             settle();
             QStringList fromCsv, fromFigure;
             const QStringList lines = heatmap->csv().split('\n', Qt::SkipEmptyParts);
             for (int i = 1; i < lines.size(); ++i) {
                 // ...,split,runs,note: the runs are the field before the note (RFC 4180 fields:
                 // a quoted one may hold commas and doubled quotes).
                 QStringList fields = {QString()};
                 bool quoted = false;
                 for (const QChar c : lines[i]) {
                     if (c == '"')
                         quoted = !quoted;
                     else if (c == ',' && !quoted)
                         fields << QString();
                     else
                         fields.last() += c;
                 }
                 fromCsv << fields.value(fields.size() - 2);
             }
             for (int panel = 0; panel < heatmap->panelCount(); ++panel) {
                 const HeatmapData data = heatmap->panelData(panel);
                 for (int row = 0; row < data.rows(); ++row)
                     for (int column = 0; column < data.columns(); ++column) {
                         QStringList ids;
                         for (int run : data.cell(row, column).runs) ids << QString::number(run);
                         fromFigure << ids.join(' ');
                     }
             }
             QCOMPARE(fromCsv, fromFigure);
         },
         false},
        {"parallel coordinates: a click on a line of each run",
         [](Walk &w) {
             auto *coords = qobject_cast<ParallelCoordinatesView *>(w.window->figure("coords"));
             QVERIFY(coords);
             if (!offered(w.window, "coords")) return;
             w.window->showFigure("coords");
             settle();
             // Each line's last segment, where no other line passes nearer: the hover names its
             // run and a click selects exactly it (at most 24 a session, the walk stays short).
             int clicked = 0;
             for (const auto &[run, points] : coords->drawnLines()) {
                 if (clicked >= 24) break;
                 const QPoint at = ((points[points.size() - 2] + points.back()) / 2).toPoint();
                 if (coords->runAt(at) != run) continue; // another line passes nearer
                 QVERIFY2(coords->hoverText(at).startsWith(QStringLiteral("run %1:").arg(run + 1)),
                          qPrintable(coords->hoverText(at)));
                 QTest::mouseClick(coords->canvas(), Qt::LeftButton, {}, at);
                 deliver();
                 QCOMPARE(selectedRows(w.window->runTable()), QList<int>{run});
                 ++clicked;
             }
             const bool finished =
                 std::any_of(w.session.runs.begin(), w.session.runs.end(), [](const SessionRun &r) {
                     return r.result.status == RunStatus::Done;
                 });
             QVERIFY2(!finished || clicked > 0, "no line of a finished run could be clicked");
             w.window->runTable()->clearSelection();
             settle();
         }},
        {"a crowded sweep: best:K in the run filter, the loss figure's show field",
         [](Walk &w) {
             // The run filter's best:3 shows (and selects) the three runs of lowest final test
             // loss of those that have one; !outliers keeps every run without a value.
             std::vector<std::pair<double, int>> ranked;
             for (int i = 0; i < int(w.session.runs.size()); ++i)
                 if (const auto v = runValue(w.session.runs[size_t(i)].result, "final(test_loss)");
                     v && !std::isnan(*v))
                     ranked.push_back({*v, i});
             std::stable_sort(ranked.begin(), ranked.end(),
                              [](const auto &a, const auto &b) { return a.first < b.first; });
             QList<int> best;
             for (size_t r = 0; r < ranked.size() && r < 3; ++r) best << ranked[r].second;
             std::sort(best.begin(), best.end());
             w.window->runFilter()->setText(QStringLiteral("best:3"));
             deliver();
             QCOMPARE(w.window->runTable()->model()->rowCount(), int(best.size()));
             QCOMPARE(selectedRows(w.window->runTable()), best);
             w.window->runFilter()->setText(QStringLiteral("!outliers"));
             deliver();
             QVERIFY(w.window->runFilterStatus()->text().contains(QStringLiteral("runs shown")));
             w.window->runFilter()->clear();
             deliver();
             // The loss figure's show field: the K worst by the lowest test loss, among the runs
             // it draws; a mistake is said.
             auto *loss = qobject_cast<LossChartView *>(w.window->figure("loss"));
             QVERIFY(loss);
             QVERIFY(loss->setShown(QStringLiteral("worst:2:min(test_loss)")).isEmpty());
             loss->refresh();
             QVERIFY(loss->displayedRuns().size() <= 2);
             QVERIFY(!loss->setShown(QStringLiteral("worst:0")).isEmpty());
             loss->setShown(QString());
             loss->refresh();
         },
         false},
        {"notes and tags: the run table's Tags and Note, the session's note",
         [](Walk &w) {
             QTableView *table = w.window->runTable();
             auto *proxy = qobject_cast<QSortFilterProxyModel *>(table->model());
             QVERIFY(proxy);
             auto *runs = qobject_cast<RunTableModel *>(proxy->sourceModel());
             QVERIFY(runs);
             if (runs->rowCount() == 0) return;
             const Session &session = w.window->model()->session();
             const Annotation before = runAnnotation(session, 0), own = session.annotation;
             // Typed in the table: the run's tags, kept by its run_id; the filter selects by them.
             QVERIFY(runs->setData(runs->index(0, runs->tagsColumn()),
                                   QStringLiteral("harness, walked")));
             QVERIFY(runs->setData(runs->index(0, runs->noteColumn()), QStringLiteral("a note")));
             QCOMPARE(runAnnotation(session, 0).tags,
                      (std::vector<std::string>{"harness", "walked"}));
             QCOMPARE(runAnnotation(session, 0).note, std::string("a note"));
             QVERIFY(w.window->model()->isModified());
             w.window->runFilter()->setText(QStringLiteral("tag=harness"));
             deliver();
             QCOMPARE(proxy->rowCount(), 1);
             QCOMPARE(selectedRows(table), QList<int>{0});
             w.window->runFilter()->clear();
             deliver();
             // A tag that is not one word is refused, and said.
             QVERIFY(!runs->setData(runs->index(0, runs->tagsColumn()), QStringLiteral("a=b")));
             QVERIFY(
                 w.window->runFilterStatus()->text().contains(QStringLiteral("Tags not changed")));
             QCOMPARE(runAnnotation(session, 0).tags.size(), size_t(2));
             // The session's note and tags, from File → Session note and tags….
             QTimer::singleShot(0, [] {
                 auto *dialog = qobject_cast<QDialog *>(QApplication::activeModalWidget());
                 QVERIFY(dialog && dialog->objectName() == QStringLiteral("sessionNote"));
                 dialog->findChild<QLineEdit *>(QStringLiteral("sessionTags"))
                     ->setText(QStringLiteral("walked lesson"));
                 dialog->findChild<QPlainTextEdit *>(QStringLiteral("sessionNoteText"))
                     ->setPlainText(QStringLiteral("walked by the harness"));
                 dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
             });
             w.window->sessionNoteAction()->trigger();
             QCOMPARE(session.annotation.note, std::string("walked by the harness"));
             QCOMPARE(session.annotation.tags, (std::vector<std::string>{"walked", "lesson"}));
             // As they were (the walk saves nothing).
             QVERIFY(w.window->model()->setRunAnnotation(0, before));
             QVERIFY(w.window->model()->setSessionAnnotation(own));
         },
         false},
        {"parallel coordinates: each metric axis's statistic",
         [](Walk &w) {
             auto *coords = qobject_cast<ParallelCoordinatesView *>(w.window->figure("coords"));
             QVERIFY(coords);
             if (!offered(w.window, "coords")) return;
             for (const auto &row : curveStatisticTable()) {
                 const QString key = QStringLiteral("%1(test_loss)").arg(row.name);
                 QVERIFY(coords->setMetricAxes({key, QStringLiteral("final(train_loss)")}));
                 QVERIFY(coords->csv().startsWith(QStringLiteral("run,")));
                 QVERIFY2(coords->csv().section('\n', 0, 0).contains(key),
                          qPrintable(coords->csv().section('\n', 0, 0)));
                 QVERIFY(!coords->title().isEmpty());
             }
             QVERIFY(coords->setMetricAxes({QStringLiteral("final(test_loss)")}));
         },
         false},
        {"every run row",
         [](Walk &w) {
             QTableView *table = w.window->runTable();
             for (int row = 0; row < table->model()->rowCount(); ++row) {
                 table->selectRow(row);
                 deliver();
                 QCOMPARE(int(selectedRows(table).size()), 1);
             }
             // A figure on a hidden tab follows the selection once it is shown (it skips the
             // redraws while hidden: FigureView::ensureCurrent; Inside the heads reads the run's
             // checkpoint only then): Inside the heads, shown from another tab after a click on
             // the last row, shows that row's run.
             auto *inside = qobject_cast<InsideHeadsView *>(w.window->figure("inside"));
             const int rows = table->model()->rowCount();
             if (inside && offered(w.window, "inside") && rows > 1) {
                 QString other;
                 for (const QString &id : figureIds())
                     if (id != QLatin1String("inside") && offered(w.window, id)) other = id;
                 w.window->showFigure(other);
                 settle();
                 table->selectRow(0);
                 deliver();
                 table->selectRow(rows - 1);
                 deliver();
                 const int run = selectedRows(table).value(0, -1);
                 w.window->showFigure("inside");
                 deliver();
                 QCOMPARE(inside->shownRun(), run);
             }
             table->selectAll();
             settle();
             QCOMPARE(int(selectedRows(table).size()), table->model()->rowCount());
             table->clearSelection();
             settle();
             QVERIFY(selectedRows(table).isEmpty());
         },
         false},
        {"inside the heads, every checkpoint",
         [](Walk &w) {
             auto *inside = qobject_cast<InsideHeadsView *>(w.window->figure("inside"));
             QVERIFY(inside);
             if (!offered(w.window, "inside")) return;
             w.window->showFigure("inside");
             int opened = 0;
             for (int run = 0; run < int(w.session.runs.size()) && opened < 4; ++run) {
                 const RunResult &r = w.session.runs[size_t(run)].result;
                 if (r.checkpoints.empty() || !isFinished(r.status)) continue;
                 QTableView *table = w.window->runTable();
                 auto *proxy = qobject_cast<QAbstractProxyModel *>(table->model());
                 const QModelIndex source = proxy->sourceModel()->index(run, 0);
                 table->selectRow(proxy->mapFromSource(source).row());
                 settle();
                 QCOMPARE(inside->shownRun(), run);
                 QVERIFY2(inside->title().endsWith(QString::number(run + 1)),
                          qPrintable(inside->title()));
                 for (int k = 0; k < int(inside->checkpoints().size()); ++k) {
                     inside->setPosition(k);
                     settle();
                     QVERIFY2(!inside->message().contains("not a usable checkpoint"),
                              qPrintable(inside->message()));
                 }
                 ++opened;
             }
             w.window->runTable()->clearSelection();
         },
         false},
        {"presenter mode and the lesson strip",
         [](Walk &w) {
             w.window->setPresenterMode(true);
             settle();
             w.window->lessonAction()->trigger();
             settle();
             w.window->lessonAction()->trigger();
             w.window->setPresenterMode(false);
             settle();
             QVERIFY(!w.window->presenterMode());
         }},
        {"export every figure",
         [](Walk &w) {
             for (const QString &id : figureIds()) {
                 FigureView *f = w.window->figure(id);
                 const QString base = w.exportDir + "/" + id;
                 QString error;
                 QVERIFY2(FigureExporter::writePng(f, base + ".png", QSize(960, 600), &error),
                          qPrintable(id + ": " + error));
                 QVERIFY2(FigureExporter::writeSvg(f, base + ".svg", QSize(960, 600), &error),
                          qPrintable(id + ": " + error));
                 QVERIFY2(QFileInfo(base + ".png").size() > 0 &&
                              QFileInfo(base + ".svg").size() > 0,
                          qPrintable(id));
             }
         },
         false},
        {"export the report, and reopen it as the session",
         [](Walk &w) {
             if (findD3Script().empty()) return; // no D3 here (node-d3): no report to write
             const QString path = w.exportDir + "/report.html";
             QVERIFY(w.window->exportReport(path));
             QVERIFY(QFileInfo(path).size() > 0);
             // The page carries the session as the window holds it, or as its file holds it.
             const Session reopened = loadSession(path.toStdString());
             QCOMPARE(reopened.runs.size(), w.window->model()->session().runs.size());
             QCOMPARE(reopened.name, w.window->model()->session().name);
         },
         false},
    };
    return table;
}

} // namespace

class TestUiHarness : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_temporary;
    QString m_dir;                         // where the corpus is
    std::map<QString, QString> m_sessions; // corpus row -> session file

private Q_SLOTS:
    void initTestCase()
    {
        // HEADLAB_HARNESS_CORPUS: a folder the corpus is kept in, so that the runs under Xvfb
        // (ctest: test_ui_harness_1280x720, _1920x1080) walk the sessions the offscreen run
        // trained rather than train them again. HEADLAB_HARNESS_FRESH=1 (the offscreen run) makes
        // it anew; a row whose session is missing is made whatever the setting.
        const QByteArray kept = qgetenv("HEADLAB_HARNESS_CORPUS");
        m_dir = kept.isEmpty() ? m_temporary.path() : QString::fromLocal8Bit(kept);
        QVERIFY(kept.isEmpty() ? m_temporary.isValid() : QDir().mkpath(m_dir));
        const bool fresh = kept.isEmpty() || qgetenv("HEADLAB_HARNESS_FRESH") == "1";
        int n = 0;
        for (const auto &row : corpus()) {
            const QString dir = m_dir + "/" + QString::number(n++);
            const QString made = dir + "/made"; // the session's path, once it is complete
            if (!fresh && QFileInfo::exists(made)) {
                const QString path = QString::fromUtf8(readAll(made));
                if (QFileInfo::exists(path)) {
                    m_sessions[row.name] = path;
                    continue;
                }
            }
            QDir(dir).removeRecursively();
            QDir().mkpath(dir);
            g_whyNotMade.clear();
            const QString path = row.make(dir);
            QVERIFY2(!path.isEmpty() && QFileInfo::exists(path),
                     qPrintable(row.name + ": " + g_whyNotMade));
            QFile note(made);
            QVERIFY(note.open(QIODevice::WriteOnly) && note.write(path.toUtf8()) > 0);
            m_sessions[row.name] = path;
        }
    }

    void walk_data()
    {
        QTest::addColumn<QString>("session");
        for (const auto &row : corpus()) QTest::newRow(qPrintable(row.name)) << row.name;
    }

    void walk()
    {
        QFETCH(QString, session);
        const QString path = m_sessions.at(session);
        const QByteArray before = readAll(path);
        QTemporaryDir exports;
        {
            MainWindow window;
            window.setInteractive(false);
            // On a real screen (Xvfb) the window a user gets there; offscreen, the small laptop's.
            if (QGuiApplication::platformName() == QLatin1String("offscreen"))
                window.resize(1280, 720);
            QVERIFY2(window.openSession(path), qPrintable(path));
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            Walk w{&window, path, exports.path(), window.model()->session()};
            const bool onScreen = QGuiApplication::platformName() != QLatin1String("offscreen");
            // HEADLAB_HARNESS_ACTIONS: walk only the actions whose name contains it (a developer
            // working on one; ctest walks them all).
            const QString only = QString::fromLocal8Bit(qgetenv("HEADLAB_HARNESS_ACTIONS"));
            for (const auto &action : actions()) {
                if (onScreen && !action.dependsOnScreen) continue; // walked offscreen already
                if (!only.isEmpty() && !action.name.contains(only)) continue;
                QElapsedTimer took;
                took.start();
                action.act(w);
                qInfo("harness: %s: %s: %lld ms", qPrintable(session), qPrintable(action.name),
                      static_cast<long long>(took.elapsed()));
                if (QTest::currentTestFailed()) {
                    qWarning("harness: %s: action '%s' failed", qPrintable(session),
                             qPrintable(action.name));
                    return;
                }
            }
            window.close();
            settle();
        }
        QVERIFY2(readAll(path) == before, "the session file changed though nobody saved it");
    }

    // Issue 75, item 7: a corpus row the CLI cannot train is not made (initTestCase then fails,
    // naming the row and the CLI's message), rather than walked untrained. Its data file is
    // missing here, as a preset's would be if its task broke.
    void aSessionTheCliCannotTrainIsNotMade()
    {
        QTemporaryDir dir;
        Session s = uitest::tinySession(10);
        s.base.task.kind = "sequence_file";
        s.base.task.options = {{"path", "missing.txt"}, {"tokens", "words"}};
        s.base.task.baseDirectory = dir.path().toStdString();
        s.runs.clear();
        expandSweep(s);
        g_whyNotMade.clear();
        QCOMPARE(trained(dir.path(), "broken.yaml", s), QString());
        QVERIFY2(g_whyNotMade.contains("exited with") && g_whyNotMade.contains("missing.txt"),
                 qPrintable(g_whyNotMade));
        // The same session with its file trains, and is made.
        std::ofstream(dir.filePath("missing.txt").toStdString()) << "a b\tc\td\n"
                                                                 << "b a\tc\td\n";
        const QString made = trained(dir.path(), "fixed.yaml", s);
        QVERIFY2(!made.isEmpty(), qPrintable(g_whyNotMade));
    }
};

QTEST_MAIN(TestUiHarness)
#include "test_ui_harness.moc"
