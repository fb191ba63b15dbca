// test_recipes.cpp — the recipes of docs/ARCHITECTURE.md as tests: each adds a dummy row to its
// table, for the test's length only (a scoped registration), and checks that every reader of that
// table picks it up with no other edit.
//
// recipe_dimension: a searchable, law-fittable dimension of the model (`ffn_width`, the
// feed-forward width, which no built-in row sweeps) added as one row of the dimension table
// (core/schema/Dimensions.h). It must be read from a session's sweep and written back, expanded
// into runs, searched along, fitted against by a law, listed by `headlab-cli schema`, offered by the
// form's search box with its range, shown as a column of the run table, and read by the Python
// package from the schema it ships.
#include "core/config/RunConfig.h"
#include "core/metrics/Metrics.h"
#include "core/schema/Dimensions.h"
#include "core/schema/RunConfigFields.h"
#include "core/schema/TaskSpec.h"
#include "core/session/SessionYaml.h"
#include "core/session/SweepExpansion.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "core/tasks/Task.h"
#include "core/train/Trainer.h"

#include "ui/app/ExperimentForm.h"
#include "ui/app/MainWindow.h"
#include "ui/app/form/ModelBox.h"
#include "ui/app/form/StabilizerBox.h"
#include "ui/app/form/TaskBox.h"
#include "ui/figures/FigureExporter.h"
#include "ui/figures/FigureTable.h"
#include "ui/figures/FigureView.h"

#include "tests/TinyRuns.h"
#include "ui/model/FigureData.h"
#include "ui/model/RunTableModel.h"
#include "ui/model/SessionModel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QPainter>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace headlab;
using namespace headlab::ui;

class TestRecipes : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void recipe_dimension();
    void recipe_figure();
    void recipe_stabilizer();
    void recipe_statistic();
    void recipe_task();
};

namespace {

bool contains(const std::vector<std::string> &names, const std::string &name)
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

const char *kSweep = "schema_version: 2\n"
                     "experiment:\n"
                     "  task: {kind: addition, train_pairs: 64, test_pairs: 8}\n"
                     "  model: {d_model: 16, heads: 2, layers: 1}\n"
                     "  phases: [{steps: 1}]\n"
                     "sweep:\n"
                     "  ffn_width: [32, 96]\n"
                     "  lr: [1.0e-3]\n";

const char *kSearch = "schema_version: 2\n"
                      "experiment:\n"
                      "  task: {kind: addition, train_pairs: 64, test_pairs: 8}\n"
                      "  model: {d_model: 16, heads: 2, layers: 1}\n"
                      "  phases: [{steps: 1}]\n"
                      "sweep:\n"
                      "  d_model: [16, 32]\n"
                      "search: {axis: ffn_width, range: [8, 512], law: {x: ffn_width}}\n";

// Two runs of built-in dimensions only.
const char *kTwoRuns = "schema_version: 2\n"
                       "experiment:\n"
                       "  task: {kind: addition, train_pairs: 64, test_pairs: 8}\n"
                       "  model: {d_model: 16, heads: 2, layers: 1}\n"
                       "  phases: [{steps: 1}]\n"
                       "sweep:\n"
                       "  d_model: [16, 32]\n";

// A figure as small as one can be: the run count, drawn and as CSV.
class CountView : public FigureView {
public:
    CountView(SessionModel *model, QWidget *parent)
        : FigureView(model, parent)
    {
        setCanvas(new PaintedCanvas(
            this, {[this](QPainter &p, const QRectF &r) { p.drawText(r, Qt::AlignCenter, csv()); },
                   {},
                   {}}));
    }
    QString title() const override { return QStringLiteral("Run count"); }
    QString csv() const override
    {
        return QStringLiteral("runs\n%1\n").arg(m_model->session().runs.size());
    }
    void refresh() override {}
};

// Runs `script` with the Python package as this build would ship it now: its modules, and the
// schema `headlab-cli schema` writes with the test's rows in it; `session` is saved beside it as
// recipe.yaml. True when the script printed "python ok"; `output` gets what it printed. Skips
// where the project's .venv is absent.
bool runPackage(const Session &session, const QString &script, QString *output)
{
    QTemporaryDir dir;
    QDir().mkpath(dir.filePath("headlab"));
    const QDir package(QStringLiteral(HEADLAB_SOURCE_DIR "/python/headlab"));
    for (const QString &file : package.entryList({QStringLiteral("*.py")}, QDir::Files))
        QFile::copy(package.filePath(file), dir.filePath("headlab/" + file));
    auto write = [&](const QString &name, const std::string &text) {
        QFile f(dir.filePath(name));
        return f.open(QIODevice::WriteOnly) && f.write(QByteArray::fromStdString(text)) >= 0;
    };
    if (!write(QStringLiteral("headlab/schema.json"), sessionSchemaJson()) ||
        !write(QStringLiteral("recipe.yaml"), sessionToYaml(session))) {
        *output = QStringLiteral("could not write into ") + dir.path();
        return false;
    }
    const QString python = QStringLiteral(HEADLAB_SOURCE_DIR "/.venv/bin/python");
    if (!QFileInfo::exists(python)) {
        *output = QStringLiteral("no .venv/bin/python (scripts/setup.sh makes it)");
        return true; // the package's own tests need the same; nothing to check here without it
    }
    QProcess process;
    process.setWorkingDirectory(dir.path());
    process.start(python, {QStringLiteral("-c"), script});
    process.waitForFinished(120000);
    *output = QString::fromUtf8(process.readAllStandardOutput() + process.readAllStandardError());
    return process.exitCode() == 0 && output->contains(QStringLiteral("python ok"));
}

} // namespace

void TestRecipes::recipe_dimension()
{
    QVERIFY(!findDimension("ffn_width")); // not a named dimension before the recipe
    // The recipe: one row.
    const ScopedDimension row(
        fieldDimension("ffn_width", "model.ffn_width", "feed-forward width",
                       {.role = DimensionRole::Shape,
                        .number = [](const RunConfig &c) { return double(c.model.ffn()); },
                        .integer = true,
                        .search = SearchRange{64, 1024},
                        .law = true}));

    // Read, expanded, written back.
    QVERIFY(contains(sweptDimensionNames(), "ffn_width"));
    Session sweep = sessionFromYaml(kSweep, "recipe.yaml");
    expandSweep(sweep);
    QCOMPARE(sweep.runs.size(), size_t(2));
    QCOMPARE(sweep.runs[0].config.model.ffnWidth, int64_t(32));
    QCOMPARE(sweep.runs[1].config.model.ffnWidth, int64_t(96));
    QCOMPARE(sweep.runs[1].labels.at("ffn_width"), std::string("96"));
    const std::string written = sessionToYaml(sweep);
    QVERIFY(written.find("ffn_width: [32, 96]") != std::string::npos);
    QCOMPARE(QString::fromStdString(sessionToYaml(sessionFromYaml(written, "again.yaml"))),
             QString::fromStdString(written));

    // Searched along (whole numbers, from its row's range) and fitted against by a law.
    QVERIFY(contains(searchableDimensions(), "ffn_width"));
    QVERIFY(contains(lawDimensions(), "ffn_width"));
    QVERIFY(isIntegerDimension("ffn_width") && isShapeDimension("ffn_width"));
    QCOMPARE(dimensionNumber(sweep.runs[1].config, "ffn_width"), 96.0);
    Session search = sessionFromYaml(kSearch, "search.yaml");
    QCOMPARE(search.search->axis, std::string("ffn_width"));
    QCOMPARE(search.search->lawX, std::string("ffn_width"));
    QVERIFY(planSearchRound(search) > 0);
    for (const auto &run : search.runs) {
        const int64_t width = run.config.model.ffnWidth;
        QVERIFY2(width >= 8 && width <= 512, qPrintable(QString::number(width)));
    }

    // Listed by `headlab-cli schema`, with its use.
    const std::string schema = sessionSchemaJson();
    QVERIFY(schema.find("\"ffn_width\":{\"title\":\"feed-forward width\"") != std::string::npos);

    // The form's model box has its line, titled by the row, holding the axis's values; a value
    // typed there sweeps it. The search box offers it, with its range.
    ExperimentForm form;
    const int item = form.searchAxisBox()->findData(QStringLiteral("ffn_width"));
    QVERIFY(item >= 0);
    form.loadFrom(sweep);
    QLineEdit *line = form.modelBox()->edit("ffn_width");
    QVERIFY(line);
    QCOMPARE(line->text(), QStringLiteral("32, 96"));
    line->setText(QStringLiteral("32, 64, 96"));
    Session edited;
    QStringList errors;
    QVERIFY2(form.buildDefinition(edited, &errors), qPrintable(errors.join("; ")));
    expandSweep(edited);
    QCOMPARE(edited.runs.size(), size_t(3));
    QCOMPARE(edited.runs[1].config.model.ffnWidth, int64_t(64));
    form.searchBox()->setChecked(true);
    form.searchAxisBox()->setCurrentIndex(item);
    QCOMPARE(form.searchFromEdit()->text(), QStringLiteral("64"));
    QCOMPARE(form.searchToEdit()->text(), QStringLiteral("1024"));

    // The run table shows it as a column.
    SessionModel model;
    model.setSession(sweep);
    RunTableModel table(&model);
    QStringList headers;
    for (int c = 0; c < table.columnCount(); ++c)
        headers << table.headerData(c, Qt::Horizontal).toString();
    QVERIFY2(headers.contains(QStringLiteral("ffn_width")), qPrintable(headers.join(", ")));
    const int column = int(headers.indexOf(QStringLiteral("ffn_width")));
    QCOMPARE(table.data(table.index(1, column)).toString(), QStringLiteral("96"));

    // Python: the package reads the schema it ships, here the one `headlab-cli schema` writes with
    // the row in it. The swept runs carry the dimension as a column, and a run that does not
    // sweep it reads its value from the config through the row's field, or the schema's default.
    QString output;
    QVERIFY2(runPackage(sweep, QStringLiteral(R"(
import headlab
from headlab.session import _named_axis_text
s = headlab.open("recipe.yaml")
assert "ffn_width" in s.axes, s.axes
column = [str(v) for v in s.runs()["label_ffn_width"]]
assert column == ["32", "96"], column
assert headlab.session.schema()["dimensions"]["ffn_width"]["law"]
assert _named_axis_text("ffn_width", {"model": {"ffn_width": 128}}) == "128"
assert _named_axis_text("ffn_width", {"model": {}}) == "auto"
print("python ok")
)"),
                        &output),
             qPrintable(output));
}

// recipe_figure: a figure is a FigureView in its own file and one row of the figure table
// (ui/figures/FigureTable.cpp). The row alone must give it its id, an alias, a tab in the window,
// a place in --figure's list, its files in Export all, and the view state's `chart`.
void TestRecipes::recipe_figure()
{
    QVERIFY(!findFigure(QStringLiteral("count")));
    const qsizetype exportsBefore = FigureExporter::allFigures().size();
    // The recipe: one row.
    const ScopedFigure row({QStringLiteral("count"),
                            {QStringLiteral("run_count")},
                            "Run count",
                            {{QStringLiteral("recipe_run_count"), QStringLiteral("count"), {}}},
                            {},
                            nullptr,
                            figureFactory<CountView>()});

    // Found by its id and alias, listed for --figure, made with its id.
    QVERIFY(figureIds().contains(QStringLiteral("count")));
    QVERIFY(figureIdList().contains(QStringLiteral("count")));
    QString error;
    QCOMPARE(resolveFigure(QStringLiteral("run_count"), &error), QStringLiteral("count"));
    Session session = sessionFromYaml(kTwoRuns, "recipe.yaml");
    expandSweep(session);
    SessionModel model;
    model.setSession(session);
    std::unique_ptr<FigureView> made(createFigure(QStringLiteral("count"), &model));
    QVERIFY(made && dynamic_cast<CountView *>(made.get()));
    QCOMPARE(made->figureId(), QStringLiteral("count"));
    QVERIFY(made->applies());

    // Export all writes its files.
    QCOMPARE(FigureExporter::allFigures().size(), exportsBefore + 1);
    QTemporaryDir dir;
    const QStringList files =
        FigureExporter::exportAll(&model, dir.path(), QSize(640, 400), {}, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    for (const char *suffix : {".png", ".svg", ".csv"})
        QVERIFY2(files.contains(dir.filePath(QStringLiteral("recipe_run_count") + suffix)),
                 qPrintable(files.join(", ")));
    QFile csv(dir.filePath(QStringLiteral("recipe_run_count.csv")));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QCOMPARE(csv.readAll(), QByteArray("runs\n2\n"));

    // The window has its tab, shows it by id, and a saved session remembers it as its chart.
    MainWindow window;
    window.setInteractive(false);
    FigureView *tab = window.figure(QStringLiteral("count"));
    QVERIFY(tab && dynamic_cast<CountView *>(tab));
    const QString path = dir.filePath(QStringLiteral("recipe.yaml"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kTwoRuns);
    }
    QVERIFY(window.openSession(path));
    window.showFigure(QStringLiteral("run_count"));
    QCOMPARE(window.currentFigure(), tab);
    QVERIFY(window.saveSession());
    QVERIFY(window.model()->session().view.count("chart"));
    QCOMPARE(window.model()->session().view.at("chart"), std::string("count"));
}

// recipe_stabilizer: a stabilizer is one row of stabilizerFields() (core/schema/RunConfigFields.cpp)
// and its effect where it acts (docs/ARCHITECTURE.md). The row alone must make it a key of a
// session's `stabilizers:`, read and written back, a sweep axis by its short name, a line of the
// form's stabilizer box, a key and axis default of `headlab-cli schema`, and so a key and a
// column of the Python package. The dummy row is a second name for the softcap's value, so that no
// effect code is needed.
void TestRecipes::recipe_stabilizer()
{
    QVERIFY(!findFieldAxis("cap"));
    const ScopedStabilizer row(fields::number(
        "cap", &StabilizerConfig::softcap,
        [](const yaml::YamlField &f) { return yaml::readNumberInRange(f, 0, true, 1e6, true); },
        "the softcap again, by a second name"));
    const char *yaml = "schema_version: 2\n"
                       "experiment:\n"
                       "  task: {kind: addition, train_pairs: 64, test_pairs: 8}\n"
                       "  model: {d_model: 16, heads: 2, layers: 1}\n"
                       "  stabilizers: {cap: 30}\n"
                       "  phases: [{steps: 1}]\n"
                       "sweep:\n"
                       "  cap: [10, 20]\n";
    // Read, written back, swept.
    Session session = sessionFromYaml(yaml, "stabilizer.yaml");
    QCOMPARE(session.base.stabilizers.softcap, 30.0);
    const std::string written = sessionToYaml(session);
    QVERIFY2(written.find("cap: 30") != std::string::npos, written.c_str());
    QVERIFY2(written.find("cap: [10, 20]") != std::string::npos, written.c_str());
    expandSweep(session);
    QCOMPARE(session.runs.size(), size_t(2));
    QCOMPARE(session.runs[1].config.stabilizers.softcap, 20.0);
    QCOMPARE(session.runs[1].labels.at("cap"), std::string("20"));
    QVERIFY(validate(session.runs[1].config).empty());

    // The form has its line, and reads the axis into it.
    ExperimentForm form;
    QLineEdit *edit = form.stabilizerBox()->edit("cap");
    QVERIFY(edit);
    form.loadFrom(session);
    QCOMPARE(edit->text(), QStringLiteral("10, 20"));

    // The schema lists it, with the value a run that does not set it has.
    const std::string schema = sessionSchemaJson();
    QVERIFY(schema.find("\"cap\"") != std::string::npos);
    QVERIFY(schema.find("\"cap\":\"0\"") != std::string::npos);

    // Python reads the key and the axis.
    QString output;
    QVERIFY2(runPackage(session, QStringLiteral(R"(
import headlab
s = headlab.open("recipe.yaml")
assert "cap" in s.axes, s.axes
column = [str(v) for v in s.runs()["label_cap"]]
assert column == ["10", "20"], column
assert "cap" in headlab.session.schema()["stabilizers"]
print("python ok")
)"),
                        &output),
             qPrintable(output));
}

// recipe_statistic: a per-head statistic is one row of headStatTable() (core/metrics/Metrics.cpp)
// saying where its value comes from. The row alone must make the trainer log it for every head at
// every evaluation, the metric registry know its curves, and the figures offer it (the y menu
// against m_H and η, Inside the heads' statistic menu). The dummy row reads the same weight as
// wq_norm under a second name, so the two curves must agree number for number.
void TestRecipes::recipe_statistic()
{
    const ScopedHeadStat row({"wq_again", "‖W_Q‖ again", "wq_norm by a second name",
                              HeadStatSource::Weight, "wq", "|W_Q|'", true});
    QVERIFY(findMetric(headCurveName(0, 1, "wq_again")));

    // Logged by a training run, for every head, equal to the row it repeats.
    RunConfig config = testing::tinyAdditionRun(16, {2}, 4, 1e-3);
    config.evalEvery = 2;
    const std::vector<RunResult> results = trainMembers({config}, {});
    QCOMPARE(results.size(), size_t(1));
    QCOMPARE(results[0].status, RunStatus::Done);
    for (int64_t head = 0; head < 2; ++head) {
        const auto again = results[0].extra.find(headCurveName(0, head, "wq_again"));
        const auto norm = results[0].extra.find(headCurveName(0, head, "wq_norm"));
        QVERIFY(again != results[0].extra.end() && norm != results[0].extra.end());
        QCOMPARE(again->second.size(), size_t(3)); // steps 0, 2 and 4
        QCOMPARE(again->second.size(), norm->second.size());
        for (size_t i = 0; i < again->second.size(); ++i) {
            QCOMPARE(again->second[i].step, norm->second[i].step);
            QCOMPARE(again->second[i].value, norm->second[i].value);
        }
    }

    // The figures offer it.
    bool onY = false;
    for (const auto &[title, y] : figureYChoices())
        onY = onY || y.stat == QStringLiteral("wq_again");
    QVERIFY(onY);
    SessionModel model;
    std::unique_ptr<FigureView> inside(createFigure(QStringLiteral("inside"), &model));
    bool inMenu = false;
    for (const QComboBox *box : inside->findChildren<QComboBox *>())
        inMenu = inMenu || box->findData(QStringLiteral("wq_again")) >= 0;
    QVERIFY(inMenu);
}

// recipe_task: a task is one line of core/schema/TaskList.h naming its spec (core/schema/<task>/)
// and its factory (core/tasks/<task>/). The dummy task is addition under a second id, added as its
// spec and factory for the test's length (ScopedTask, what the line gives). It must be read from a
// session and written back, checked, listed by the form with a page of its options, trained, and
// listed by `headlab-cli schema` and so by the Python package.
void TestRecipes::recipe_task()
{
    QVERIFY(!findTaskSpec("addition_again"));
    TaskSpec spec = taskSpec("addition");
    spec.id = "addition_again";
    spec.title = "Addition again (a recipe test's task)";
    const ScopedTask row(spec, [](const RunConfig &config, const std::vector<uint64_t> &seeds,
                                  const std::string &device) {
        RunConfig addition = config;
        addition.task.kind = "addition";
        return makeTask(addition, seeds, torch::Device(device));
    });

    const char *yaml = "schema_version: 2\n"
                       "experiment:\n"
                       "  task: {kind: addition_again, train_pairs: 64, test_pairs: 8}\n"
                       "  model: {d_model: 16, heads: 2, layers: 1}\n"
                       "  phases: [{steps: 1}]\n"
                       "sweep:\n"
                       "  lr: [1.0e-3, 2.0e-3]\n";
    Session session = sessionFromYaml(yaml, "task.yaml");
    QCOMPARE(session.base.task.kind, std::string("addition_again"));
    QCOMPARE(session.base.task.trainPairs, int64_t(64));
    const std::string written = sessionToYaml(session);
    QVERIFY2(written.find("kind: addition_again") != std::string::npos, written.c_str());
    expandSweep(session);
    QCOMPARE(session.runs.size(), size_t(2));
    QVERIFY(validate(session.runs[0].config).empty());

    // The form lists it and gives it a page of its options.
    ExperimentForm form;
    QVERIFY(form.taskBox()->kindBox()->findData(QStringLiteral("addition_again")) >= 0);
    form.loadFrom(session);
    QLineEdit *pairs = form.taskBox()->optionEdit("train_pairs");
    QVERIFY(pairs);
    QCOMPARE(pairs->text(), QStringLiteral("64"));
    Session built = session;
    QStringList errors;
    QVERIFY2(form.buildDefinition(built, &errors), qPrintable(errors.join("; ")));
    QCOMPARE(built.base.task.kind, std::string("addition_again"));

    // It trains.
    RunConfig config = testing::tinyAdditionRun(16, {2}, 2, 1e-3);
    config.task.kind = "addition_again";
    const std::vector<RunResult> results = trainMembers({config}, {});
    QCOMPARE(results[0].status, RunStatus::Done);
    QVERIFY(std::isfinite(results[0].metrics.at(metric::kFinalTestLoss)));

    // The schema and Python list it.
    QVERIFY(sessionSchemaJson().find("\"addition_again\"") != std::string::npos);
    QString output;
    QVERIFY2(runPackage(session, QStringLiteral(R"(
import headlab
assert "addition_again" in headlab.TASKS, headlab.TASKS
s = headlab.open("recipe.yaml")
assert s.task == "addition_again", s.task
assert list(s.runs()["task"]) == ["addition_again"] * 2
print("python ok")
)"),
                        &output),
             qPrintable(output));
}

QTEST_MAIN(TestRecipes)
#include "test_recipes.moc"
