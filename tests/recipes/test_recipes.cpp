// test_recipes.cpp — the recipes of docs/ARCHITECTURE.md as tests: each adds a dummy row to its
// table, for the test's length only (a scoped registration), and checks that every reader of that
// table picks it up with no other edit.
//
// recipe_dimension: a searchable, law-fittable dimension of the model (`ffn_width`, the
// feed-forward width, which no built-in row sweeps) added as one row of the dimension table
// (core/schema/Dimensions.h). It must be read from a session's sweep and written back, expanded
// into runs, searched along, fitted against by a law, listed by `headlab-cli schema`, offered by the
// form's search box with its range, and shown as a column of the run table.
#include "core/config/RunConfig.h"
#include "core/schema/Dimensions.h"
#include "core/session/Search.h"
#include "core/session/SessionYaml.h"
#include "core/session/SweepExpansion.h"

#include "ui/app/ExperimentForm.h"
#include "ui/model/RunTableModel.h"
#include "ui/model/SessionModel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QtTest>

#include <algorithm>

using namespace headlab;
using namespace headlab::ui;

class TestRecipes : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void recipe_dimension();
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

} // namespace

void TestRecipes::recipe_dimension()
{
    QVERIFY(!findDimension("ffn_width")); // not a named dimension before the recipe
    // The recipe: one row.
    const ScopedDimension row(integerModelDimension(
        "ffn_width", "feed-forward width", &ModelConfig::ffnWidth, 1 << 16, SearchRange{64, 1024}));

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
}

QTEST_MAIN(TestRecipes)
#include "test_recipes.moc"
