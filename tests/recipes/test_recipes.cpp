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
#include "core/schema/Dimensions.h"
#include "core/session/Search.h"
#include "core/session/SessionYaml.h"
#include "core/session/SweepExpansion.h"

#include "ui/app/ExperimentForm.h"
#include "ui/app/MainWindow.h"
#include "ui/figures/FigureExporter.h"
#include "ui/figures/FigureTable.h"
#include "ui/figures/FigureView.h"
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
#include <memory>

using namespace headlab;
using namespace headlab::ui;

class TestRecipes : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void recipe_dimension();
    void recipe_figure();
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

    // The form's search box offers it, with its range.
    ExperimentForm form;
    const int item = form.searchAxisBox()->findData(QStringLiteral("ffn_width"));
    QVERIFY(item >= 0);
    form.loadFrom(sweep);
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
    QTemporaryDir dir;
    QVERIFY(QDir().mkpath(dir.filePath("headlab")));
    const QDir package(QStringLiteral(HEADLAB_SOURCE_DIR "/python/headlab"));
    for (const QString &file : package.entryList({QStringLiteral("*.py")}, QDir::Files))
        QVERIFY(QFile::copy(package.filePath(file), dir.filePath("headlab/" + file)));
    auto write = [&](const QString &name, const std::string &text) {
        QFile f(dir.filePath(name));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(text));
    };
    write(QStringLiteral("headlab/schema.json"), schema);
    write(QStringLiteral("recipe.yaml"), sessionToYaml(sweep));
    const QString python = QStringLiteral(HEADLAB_SOURCE_DIR "/.venv/bin/python");
    if (!QFileInfo::exists(python)) QSKIP("no .venv/bin/python (scripts/setup.sh makes it)");
    QProcess process;
    process.setWorkingDirectory(dir.path());
    process.start(python, {QStringLiteral("-c"), QStringLiteral(R"(
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
)")});
    QVERIFY(process.waitForFinished(120000));
    const QByteArray output = process.readAllStandardOutput() + process.readAllStandardError();
    QVERIFY2(process.exitCode() == 0 && output.contains("python ok"), output.constData());
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

QTEST_MAIN(TestRecipes)
#include "test_recipes.moc"
