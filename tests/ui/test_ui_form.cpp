// test_ui_form.cpp — the experiment form never changes an experiment: every number it shows is
// exact, so a session opened, edited elsewhere and saved keeps every value bit for bit, and its
// controls do not change under a mouse wheel that only meant to scroll the form.
#include "UiTestSessions.h"

#include "ui/app/ExperimentForm.h"
#include "ui/app/HeadScheduleEditor.h"
#include "ui/app/form/FormParts.h"
#include "ui/app/form/ModelBox.h"
#include "ui/model/RunMetrics.h"

#include "core/schema/RunConfigFields.h"
#include "core/session/Presets.h"
#include "core/session/Session.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QWheelEvent>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>

#include <yaml-cpp/yaml.h>

using namespace headlab;
using namespace headlab::ui;

namespace {

// The definition the form writes back after loading `session` and one unrelated edit (the name).
std::string throughTheForm(const Session &session)
{
    ExperimentForm form;
    form.loadFrom(session);
    form.findChild<QLineEdit *>()->setText(
        QStringLiteral("renamed")); // the first line edit is the name
    Session built = session;
    QStringList errors;
    if (!form.buildDefinition(built, &errors)) return "errors: " + errors.join("; ").toStdString();
    built.runs.clear();
    built.skipped.clear();
    return sessionToYaml(built);
}

std::string expected(Session session)
{
    session.name = "renamed";
    session.runs.clear();
    session.skipped.clear();
    return sessionToYaml(session);
}

// "" when `session` survives the form but for the edit; else both texts, for the failure.
QString changedByTheForm(const Session &session, int trial)
{
    const std::string want = expected(session), got = throughTheForm(session);
    if (got == want) return {};
    return QStringLiteral("trial %1 changed:\n--- saved ---\n%2\n--- original ---\n%3")
        .arg(trial)
        .arg(QString::fromStdString(got), QString::fromStdString(want));
}

} // namespace

class TestUiForm : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void exactNumberIsShortestAndExact();
    void integersReadAsTheCliReadsThem();
    void theReportedValuesSurviveAnEdit();
    void randomSessionsSurviveTheForm();
    void everyConfigFieldSurvivesTheForm();
    void anUnfocusedControlIgnoresTheWheel();
    void theFormEditsABoundarySearch();
    void theFormEditsStabilizers();
    void theModelBoxHasALinePerModelRow();
    void theFormKeepsAGeneratorAsAGenerator();
    void aHeadCountThatDividesNoWidthIsSaidAtTheHeadsField();
};

namespace {

QLineEdit *stabilizerEdit(ExperimentForm &form, const char *key)
{
    for (auto *edit : form.findChildren<QLineEdit *>())
        if (edit->placeholderText().toStdString() == [&] {
                for (const auto &row : stabilizerFields())
                    if (row.keys.front() == key) return row.help;
                return std::string();
            }())
            return edit;
    return nullptr;
}

AxisValue text(const char *t)
{
    AxisValue v;
    v.kind = AxisValue::Kind::Text;
    v.text = t;
    return v;
}

} // namespace

// Stabilizers in the form: a session with them (and a stabilizer axis) survives exactly; one value
// sets the experiment's, a list makes an axis, a bad value is named with its key, and an empty line
// turns it off.
void TestUiForm::theFormEditsStabilizers()
{
    Session s = uitest::tinySession();
    s.base.stabilizers.softcap = 0.1 + 0.2; // every bit of a double survives
    s.base.stabilizers.zLoss = 1e-4;
    s.base.stabilizers.sigmaReparam = SigmaReparam::QueryKey;
    s.axes.push_back(SweepAxis{"qk_norm", {text("off"), text("gain")}});
    QCOMPARE(throughTheForm(s), expected(s));

    ExperimentForm form;
    form.loadFrom(uitest::tinySession());
    QLineEdit *qk = stabilizerEdit(form, "qk_norm"), *cap = stabilizerEdit(form, "softcap"),
              *decay = stabilizerEdit(form, "independent_weight_decay");
    QVERIFY(qk && cap && decay);
    QCOMPARE(qk->text(), QStringLiteral("off"));
    qk->setText(QStringLiteral("off, on, gain"));
    cap->setText(QStringLiteral("30"));
    Session built;
    QStringList errors;
    QVERIFY2(form.buildDefinition(built, &errors), qPrintable(errors.join("; ")));
    QCOMPARE(built.base.stabilizers.softcap, 30.0);
    const auto axis = std::find_if(built.axes.begin(), built.axes.end(),
                                   [](const SweepAxis &a) { return a.name == "qk_norm"; });
    QVERIFY(axis != built.axes.end());
    QCOMPARE(int(axis->values.size()), 3);
    expandSweep(built);
    QCOMPARE(int(built.runs.size()), int(3 * uitest::tinySession().runs.size()));
    QCOMPARE(built.runs.back().config.stabilizers.qkNorm, QkNorm::Gain);

    decay->setText(QStringLiteral("2"));
    cap->setText(QStringLiteral("-1"));
    errors.clear();
    QVERIFY(!form.buildDefinition(built, &errors));
    const QString said = errors.join("; ");
    QVERIFY2(said.contains("stabilizers.independent_weight_decay:") &&
                 said.contains("stabilizers.softcap:"),
             qPrintable(said));
    decay->clear();
    cap->clear();
    errors.clear();
    QVERIFY2(form.buildDefinition(built, &errors), qPrintable(errors.join("; ")));
    QCOMPARE(built.base.stabilizers.softcap, 0.0);
    QCOMPARE(built.base.stabilizers.independentWeightDecay, 0.0);
}

// The model box is generated from the model rows of the field table: every one-key row has a line
// (the heads row has its own editor), found by its key, titled by its dimension where it is one.
// One value sets the field; several sweep it along the row's axis (its dimension's name, else
// model.KEY); a bad value is named by that axis with the session reader's message; a session that
// sweeps a model row survives the form; the schedule generator makes schedules of the form's layer
// count that divide the widths typed.
void TestUiForm::theModelBoxHasALinePerModelRow()
{
    ExperimentForm form;
    form.loadFrom(uitest::tinySession());
    ModelBox *box = form.modelBox();
    int lines = 0;
    for (const auto &row : modelFields()) {
        if (row.keys.size() != 1) continue;
        QLineEdit *line = box->edit(row.keys.front());
        QVERIFY2(line, row.keys.front().c_str());
        ++lines;
    }
    QVERIFY(lines >= 10);
    QCOMPARE(box->edit("d_model"), form.dModelsEdit());
    QCOMPARE(box->edit("ffn_width")->text(), QStringLiteral("auto"));
    QCOMPARE(box->edit("init")->text(), QStringLiteral("uniform")); // a default files leave out

    box->edit("activation")->setText(QStringLiteral("gelu, relu"));
    box->edit("ffn_width")->setText(QStringLiteral("64"));
    Session built;
    QStringList errors;
    QVERIFY2(form.buildDefinition(built, &errors), qPrintable(errors.join("; ")));
    QCOMPARE(built.base.model.ffnWidth, int64_t(64));
    const SweepAxis *activation = nullptr;
    for (const auto &a : built.axes)
        if (a.name == "model.activation") activation = &a;
    QVERIFY(activation);
    QCOMPARE(int(activation->values.size()), 2);
    expandSweep(built);
    QCOMPARE(int(built.runs.size()), int(2 * uitest::tinySession().runs.size()));
    QCOMPARE(built.runs.back().config.model.activation, Activation::Relu);
    QCOMPARE(throughTheForm(built), expected(built));

    box->edit("activation")->setText(QStringLiteral("gelu, swish"));
    box->edit("d_model")->setText(QStringLiteral("8.5"));
    errors.clear();
    QVERIFY(!form.buildDefinition(built, &errors));
    const QString said = errors.join(QStringLiteral("; "));
    QVERIFY2(said.contains(QStringLiteral("sweep.model.activation[1]: ")) &&
                 said.contains(QStringLiteral("swish")),
             qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("sweep.d_model: expected an integer, got 8.5")),
             qPrintable(said));

    // The per-layer schedules' generator follows the layer count and the widths typed.
    box->edit("d_model")->setText(QStringLiteral("48"));
    auto *layers = box->findChild<QSpinBox *>(QString(), Qt::FindDirectChildrenOnly);
    QVERIFY(layers);
    layers->setValue(3);
    auto *editor = box->findChild<HeadScheduleEditor *>();
    QVERIFY(editor);
    editor->setSchedules({});
    for (auto *button : editor->findChildren<QPushButton *>())
        if (button->text() == QStringLiteral("Add")) button->click();
    const auto schedules = editor->schedules();
    QCOMPARE(int(schedules.size()), 1);
    QCOMPARE(int(schedules.front().size()), 3);
    for (int64_t h : schedules.front()) QVERIFY2(48 % h == 0, qPrintable(QString::number(h)));
}

// A search session survives the form exactly (its rounds included); its settings are edited in
// the form, η and the seeds are the search's, and the form counts round 0's runs; switched off,
// the session is a sweep again.
void TestUiForm::theFormEditsABoundarySearch()
{
    const Session search = uitest::searchSession();
    QCOMPARE(throughTheForm(search), expected(search));

    ExperimentForm form;
    form.loadFrom(search);
    QVERIFY(form.searchBox()->isChecked());
    QVERIFY(!form.learningRatesEdit()->isEnabled());
    Session built;
    QStringList errors;
    QVERIFY2(form.buildDefinition(built, &errors), qPrintable(errors.join("; ")));
    QVERIFY(built.search.has_value());
    QCOMPARE(built.search->low, 1e-4);
    QCOMPARE(built.search->high, 1e-1);
    QVERIFY(built.search->probes == search.search->probes);

    // A fresh search from a sweep: round 0 is every configuration × the initial points.
    Session sweep = uitest::tinySession();
    form.loadFrom(sweep);
    QVERIFY(!form.searchBox()->isChecked());
    form.searchBox()->setChecked(true);
    QVERIFY(!form.learningRatesEdit()->isEnabled());
    QVERIFY(form.buildDefinition(built, &errors));
    QVERIFY(built.search.has_value());
    QCOMPARE(built.search->axis, std::string("lr"));
    QVERIFY(built.search->direction == SearchSpec::Direction::Decreasing);
    for (const auto &axis : built.axes) QVERIFY(axis.name != "lr" && axis.name != "seed");
    const FormCheck check = form.check();
    QVERIFY2(check.errors.isEmpty(), qPrintable(check.errors.join("; ")));
    QCOMPARE(check.runs, 4 * SearchSpec{}.initialPoints); // four runnable (d_model, heads)
    // The joint model (issue 53): chosen in the form, kept by the definition; a joint search
    // survives the form exactly.
    QCOMPARE(form.searchModelBox()->currentData().toString(), QStringLiteral("separate"));
    form.searchModelBox()->setCurrentIndex(
        form.searchModelBox()->findData(QStringLiteral("joint")));
    QVERIFY(form.buildDefinition(built, &errors));
    QVERIFY(built.search->model == SearchSpec::Model::Joint);
    Session joint = search;
    joint.search->model = SearchSpec::Model::Joint;
    QCOMPARE(throughTheForm(joint), expected(joint));
    // law_width (issue 53): the joint model's, offered with it only; kept through the form.
    QVERIFY(form.searchLawWidthBox()->isEnabled());
    QCOMPARE(form.searchLawWidthBox()->value(), 0.0);
    QCOMPARE(form.searchLawWidthBox()->text(), QStringLiteral("off"));
    form.searchLawWidthBox()->setValue(0.6);
    QVERIFY(form.buildDefinition(built, &errors));
    QCOMPARE(built.search->lawWidth, 0.6);
    form.searchModelBox()->setCurrentIndex(
        form.searchModelBox()->findData(QStringLiteral("separate")));
    QVERIFY(!form.searchLawWidthBox()->isEnabled());
    QVERIFY(form.buildDefinition(built, &errors));
    QCOMPARE(built.search->lawWidth, 0.0); // a separate search has no law_width
    form.searchModelBox()->setCurrentIndex(
        form.searchModelBox()->findData(QStringLiteral("joint")));
    QCOMPARE(form.searchLawWidthBox()->value(), 0.6); // kept in the box
    form.searchLawWidthBox()->setValue(0.0);
    Session precise = joint;
    precise.search->lawWidth = 0.45;
    QCOMPARE(throughTheForm(precise), expected(precise));
    // Seeds (issue 53): a fresh seed every run by default; paired seeds take the count as their
    // number of seeds and refuse the joint model with the key; each plan survives the form.
    QCOMPARE(form.searchSeedsBox()->currentData().toString(), QStringLiteral("fresh"));
    QVERIFY(!form.searchReplicatesBox()->isEnabled());
    form.searchSeedsBox()->setCurrentIndex(
        form.searchSeedsBox()->findData(QStringLiteral("paired")));
    QVERIFY(form.searchReplicatesBox()->isEnabled());
    QCOMPARE(form.searchReplicatesBox()->value(), 8);
    QVERIFY(!form.buildDefinition(built, &errors));
    QVERIFY2(errors.join(" ").contains("search.model: paired seeds"),
             qPrintable(errors.join("; ")));
    form.searchModelBox()->setCurrentIndex(
        form.searchModelBox()->findData(QStringLiteral("separate")));
    form.searchReplicatesBox()->setValue(5);
    errors.clear();
    QVERIFY2(form.buildDefinition(built, &errors), qPrintable(errors.join("; ")));
    QVERIFY(built.search->paired());
    QCOMPARE(built.search->seeds, 5);
    QCOMPARE(built.search->replicates, 1);
    for (const auto plan : {SearchSpec::SeedPlan::Paired, SearchSpec::SeedPlan::Replicates}) {
        Session seeded = search;
        seeded.search->seedPlan = plan;
        seeded.search->seeds = 6;
        QCOMPARE(throughTheForm(seeded), expected(seeded));
    }
    form.searchBox()->setChecked(false);
    QVERIFY(form.buildDefinition(built, &errors));
    QVERIFY(!built.search.has_value());

    // Along another axis (issue 27: any numeric axis): a search along d_model, loaded, survives
    // the form exactly, and the form edits it: the d_model list is the search's, η's list is not.
    Session alongWidth = uitest::tinySession();
    std::erase_if(alongWidth.axes, [](const SweepAxis &a) { return a.name == "d_model"; });
    SearchSpec widths;
    widths.axis = "d_model";
    widths.low = 12;
    widths.high = 0.1 + 383.2; // every bit of a double survives
    widths.direction = SearchSpec::Direction::Increasing;
    alongWidth.search = widths;
    planSearchRound(alongWidth);
    QCOMPARE(throughTheForm(alongWidth), expected(alongWidth));
    form.loadFrom(alongWidth);
    QCOMPARE(form.searchAxisBox()->currentData().toString(), QStringLiteral("d_model"));
    QVERIFY(!form.dModelsEdit()->isEnabled());
    QVERIFY(form.learningRatesEdit()->isEnabled());
    form.searchToEdit()->setText(QStringLiteral("192"));
    QVERIFY2(form.buildDefinition(built, &errors), qPrintable(errors.join("; ")));
    QCOMPARE(built.search->axis, std::string("d_model"));
    QCOMPARE(built.search->high, 192.0);
    QVERIFY(built.search->direction == SearchSpec::Direction::Increasing); // kept: same axis
    for (const auto &axis : built.axes) QVERIFY(axis.name != "d_model" && axis.name != "seed");

    // Switching a fresh search to the head count: that axis's range, its list taken over,
    // the direction left to the data; a bad range is named by its key.
    form.loadFrom(sweep);
    form.searchBox()->setChecked(true);
    form.searchAxisBox()->setCurrentIndex(form.searchAxisBox()->findData(QStringLiteral("heads")));
    QCOMPARE(form.searchFromEdit()->text(), QStringLiteral("1"));
    QVERIFY(!form.headsEdit()->isEnabled());
    QVERIFY(form.learningRatesEdit()->isEnabled());
    QVERIFY2(form.buildDefinition(built, &errors), qPrintable(errors.join("; ")));
    QCOMPARE(built.search->axis, std::string("heads"));
    QVERIFY(built.search->direction == SearchSpec::Direction::Auto);
    form.searchFromEdit()->setText(QStringLiteral("40"));
    errors.clear();
    QVERIFY(!form.buildDefinition(built, &errors));
    QVERIFY2(errors.join(" ").contains("search.range: from (40) must be below to (32)"),
             qPrintable(errors.join("; ")));
    form.searchBox()->setChecked(false);
    QVERIFY(form.headsEdit()->isEnabled());
}

void TestUiForm::exactNumberIsShortestAndExact()
{
    QCOMPARE(exactNumber(0.000316227766), QStringLiteral("0.000316227766"));
    QCOMPARE(exactNumber(16384), QStringLiteral("16384"));
    QCOMPARE(exactNumber(1e-3), QStringLiteral("0.001"));
    std::mt19937_64 random(7);
    for (int i = 0; i < 10000; ++i) {
        double v = 0;
        const uint64_t bits = random();
        std::memcpy(&v, &bits, sizeof v);
        if (!std::isfinite(v)) continue;
        QCOMPARE(exactNumber(v).toDouble(), v);
    }
}

// The defects as reported: learning rates [0.000316227766, 0.00177827941] were saved as
// [0.000316, 0.00178] after an unrelated edit, and d_model 16384 as 16380.
void TestUiForm::theReportedValuesSurviveAnEdit()
{
    Session s = uitest::tinySession();
    s.axes = {SweepAxis{"d_model", {uitest::num(16384), uitest::num(48)}},
              SweepAxis{"heads", {uitest::num(1), uitest::num(2)}},
              SweepAxis{"lr", {uitest::num(0.000316227766), uitest::num(0.00177827941)}}};
    expandSweep(s);
    QCOMPARE(throughTheForm(s), expected(s));
}

// A property test: random sessions whose numbers use every bit of a double (learning rates of
// the axis and of fixed-rate phases), widths up to the HeadLab limit (16,384, which a session
// file's reader and so the form hold them to), any 64-bit seed, and
// random steps, batch sizes and evaluation intervals; each, opened in the form, edited and saved,
// must give the same file but for the edit.
void TestUiForm::randomSessionsSurviveTheForm()
{
    std::mt19937_64 random(20261126);
    auto uniform = [&](double a, double b) {
        return std::uniform_real_distribution<double>(a, b)(random);
    };
    auto integer = [&](int64_t a, int64_t b) {
        return std::uniform_int_distribution<int64_t>(a, b)(random);
    };
    for (int trial = 0; trial < 200; ++trial) {
        Session s = uitest::tinySession();
        std::vector<AxisValue> widths, heads, lrs, seeds;
        for (int64_t k = integer(1, 4); k > 0; --k)
            widths.push_back(uitest::num(double(integer(1, RunLimits::kMaxDModel))));
        for (int64_t k = integer(1, 4); k > 0; --k)
            heads.push_back(uitest::num(double(integer(1, 64))));
        for (int64_t k = integer(1, 5); k > 0; --k)
            lrs.push_back(uitest::num(std::exp(uniform(std::log(1e-7), std::log(1.0)))));
        for (int64_t k = integer(1, 3); k > 0; --k) {
            AxisValue seed;
            seed.kind = AxisValue::Kind::Unsigned;
            seed.unsignedValue = random();
            seeds.push_back(seed);
        }
        s.axes = {SweepAxis{"d_model", widths}, SweepAxis{"heads", heads}, SweepAxis{"lr", lrs}};
        if (seeds.size() > 1) s.axes.push_back(SweepAxis{"seed", seeds});
        PhaseConfig &phase = s.base.phases.front();
        phase.steps = integer(1, 1'000'000);
        phase.batchSize = integer(1, 4096);
        if (trial % 2) {
            phase.useScannedLr = false;
            phase.lr = std::exp(uniform(std::log(1e-7), std::log(1.0)));
        }
        s.base.evalEvery = integer(1, 10000);
        if (trial % 3 == 0) { // stabilizers with every bit of a double
            s.base.stabilizers.softcap = std::exp(uniform(std::log(1e-3), std::log(1e3)));
            s.base.stabilizers.zLoss = std::exp(uniform(std::log(1e-7), std::log(1.0)));
            s.base.stabilizers.independentWeightDecay = uniform(0, 0.999);
            s.base.stabilizers.qkNorm = QkNorm(integer(0, 2));
        }
        if (const QString changed = changedByTheForm(s, trial); !changed.isEmpty())
            QFAIL(qPrintable(changed));
    }
}

// Scrolling the form with the wheel over an unfocused control changes nothing in it.
void TestUiForm::anUnfocusedControlIgnoresTheWheel()
{
    ExperimentForm form;
    form.loadFrom(uitest::tinySession());
    form.resize(600, 900);
    form.show();
    QVERIFY(QTest::qWaitForWindowExposed(&form));
    int tried = 0;
    for (QComboBox *combo : form.findChildren<QComboBox *>()) {
        if (!combo->isVisible() || combo->count() < 2) continue;
        combo->setCurrentIndex(0);
        QVERIFY(!combo->hasFocus());
        QWheelEvent wheel(QPointF(5, 5), combo->mapToGlobal(QPointF(5, 5)), QPoint(),
                          QPoint(0, -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(combo, &wheel);
        QCOMPARE(combo->currentIndex(), 0);
        ++tried;
    }
    for (QSpinBox *spin : form.findChildren<QSpinBox *>()) {
        if (!spin->isVisible() || !spin->isEnabled() || spin->value() >= spin->maximum()) continue;
        const int before = spin->value();
        QWheelEvent wheel(QPointF(5, 5), spin->mapToGlobal(QPointF(5, 5)), QPoint(), QPoint(0, 120),
                          Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(spin, &wheel);
        QCOMPARE(spin->value(), before);
        ++tried;
    }
    QVERIFY2(tried >= 4, "the form shows spin boxes and combo boxes");
}

// Issue 74 item 3: numbers as users type them, in the app's fields as in headlab-cli and Python:
// decimal digits with leading zeros allowed ("010" is 10, never octal 8), no hex or binary (each
// refused at its item), and seeds exact to 2^64 - 1 and no further.
void TestUiForm::integersReadAsTheCliReadsThem()
{
    QStringList errors;
    QCOMPARE(form::parseNumbers("010, 000000020", "heads", &errors, true),
             (std::vector<double>{10, 20}));
    QVERIFY(errors.isEmpty());
    QCOMPARE(form::parseSeeds("010, 18446744073709551615", "seed", &errors),
             (std::vector<uint64_t>{10, 18446744073709551615u}));
    QVERIFY(errors.isEmpty());
    for (const QString &typed :
         {QStringLiteral("0x10"), QStringLiteral("0b11"), QStringLiteral("18446744073709551616")}) {
        errors.clear();
        form::parseSeeds(typed, "seed", &errors);
        QVERIFY2(errors.size() == 1 && errors.front().startsWith(QStringLiteral("seed")) &&
                     errors.front().contains(typed),
                 qPrintable(typed + ": " + errors.join(" | ")));
        errors.clear();
        form::parseNumbers(typed == QStringLiteral("18446744073709551616") ? "1.5" : typed, "heads",
                           &errors, true);
        QVERIFY2(errors.size() == 1 && errors.front().startsWith(QStringLiteral("heads")),
                 qPrintable(typed + ": " + errors.join(" | ")));
    }
}

QTEST_MAIN(TestUiForm)

namespace {
std::string dump(const YAML::Node &node)
{
    YAML::Emitter out;
    out << YAML::Flow << node;
    return out.c_str();
}
} // namespace

// Every row of the config-field tables (experiment, model, stabilizers, phases), through the form:
// random sessions whose every field takes its value from a random preset (each field on its own,
// so values meet that no preset pairs), or from the values below where every preset has the same,
// and whose floating-point values use every bit of a double; each valid one, opened in the form,
// edited and saved, gives the same file but for the edit. A row that none of them varies fails
// the test by name: a new field needs a second value here.
void TestUiForm::everyConfigFieldSurvivesTheForm()
{
    std::vector<YAML::Node> experiments;
    std::vector<Session> presets;
    for (const auto &info : builtinPresets()) {
        presets.push_back(loadPreset(info.name));
        experiments.push_back(YAML::Load(sessionToYaml(presets.back()))["experiment"]);
    }
    // Values for fields every preset leaves alike (a flow-style YAML value each).
    const std::map<std::string, std::vector<std::string>> more = {
        {"model.layers", {"3"}},
        {"model.head_dim", {"8", "16"}},
        {"model.width_multiplier", {"2", "8"}},
        {"qk_rule",
         {"{enabled: true, reference_head_dim: 8}", "{enabled: true, reference_head_dim: 16}"}},
        {"model.final_norm", {"false"}},
        {"model.init", {"pytorch"}},
        {"stabilizers.qk_norm", {"on", "gain"}},
        {"stabilizers.softcap", {"7.3890560989306504"}},
        {"stabilizers.z_loss", {"1.0000000000000001e-05"}},
        {"stabilizers.sigma_reparam", {"qk", "all"}},
        {"stabilizers.independent_weight_decay", {"0.00031622776601683794"}},
        {"tf32", {"true"}},
        {"device", {"cpu"}},
        {"eval_batches", {"3"}},
        {"seed", {"18446744073709551557"}},
    };
    std::mt19937_64 random(20261127);
    auto pick = [&](size_t n) {
        return size_t(std::uniform_int_distribution<size_t>(0, n - 1)(random));
    };
    // Per field, the distinct values that reached the form in valid sessions.
    std::map<std::string, std::set<std::string>> seen;
    int valid = 0;
    for (int trial = 0; trial < 1000 && valid < 150; ++trial) {
        const size_t base = pick(presets.size());
        YAML::Node doc = YAML::Load(sessionToYaml(presets[base]));
        YAML::Node experiment = doc["experiment"];
        std::map<std::string, std::string> chosen;
        auto choose = [&](YAML::Node map, const std::string &prefix, const std::string &key,
                          const YAML::Node &from) {
            const std::string path = prefix.empty() ? key : prefix + "." + key;
            const auto extra = more.find(path);
            if (extra != more.end() && pick(3) == 0) {
                map[key] = YAML::Load(extra->second[pick(extra->second.size())]);
            } else if (from && from[key]) {
                map[key] = YAML::Clone(from[key]);
            } else {
                map.remove(key);
            }
            chosen[path] = map[key] ? dump(map[key]) : std::string("(default)");
        };
        auto keysOf = [&](const std::string &sub) {
            std::set<std::string> keys;
            for (const auto &e : experiments) {
                const YAML::Node map = sub.empty() ? e : e[sub];
                if (map && map.IsMap())
                    for (const auto &kv : map) keys.insert(kv.first.as<std::string>());
            }
            for (const auto &[path, values] : more) {
                const auto dot = path.find('.');
                if (sub.empty() ? dot == std::string::npos : path.rfind(sub + ".", 0) == 0)
                    keys.insert(sub.empty() ? path : path.substr(dot + 1));
            }
            return keys;
        };
        for (const std::string &key : keysOf("")) {
            if (key == "model" || key == "stabilizers") continue;
            choose(experiment, "", key, experiments[pick(experiments.size())]);
        }
        for (const std::string sub : {"model", "stabilizers"}) {
            if (!experiment[sub]) experiment[sub] = YAML::Node(YAML::NodeType::Map);
            YAML::Node map = experiment[sub];
            for (const std::string &key : keysOf(sub))
                choose(map, sub, key, experiments[pick(experiments.size())][sub]);
        }
        // Floating-point values with every bit of a double: within 1 % of the chosen one.
        std::function<void(YAML::Node)> jitter = [&](YAML::Node node) {
            if (node.IsMap() || node.IsSequence()) {
                for (auto it = node.begin(); it != node.end(); ++it)
                    jitter(node.IsMap() ? it->second : *it);
                return;
            }
            if (!node.IsScalar() || pick(3) != 0) return;
            const std::string text = node.Scalar();
            char *end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end || text.find_first_of(".eE") == std::string::npos)
                return; // not a floating-point number (integers, words)
            char out[40];
            std::snprintf(out, sizeof out, "%.17g",
                          v * (1 + std::uniform_real_distribution<double>(-0.01, 0.01)(random)));
            node = std::string(out);
        };
        jitter(experiment);
        Session s;
        try {
            s = sessionFromYaml(dump(doc), "trial " + std::to_string(trial));
            expandSweep(s);
        } catch (const std::exception &) {
            continue; // fields that do not go together (a width the heads do not divide, ...)
        }
        if (s.runs.empty()) continue;
        ++valid;
        for (const auto &[path, value] : chosen) seen[path].insert(value);
        for (const auto &phase : experiment["phases"])
            for (const auto &kv : phase)
                seen["phases." + kv.first.as<std::string>()].insert(dump(kv.second));
        if (const QString changed = changedByTheForm(s, trial); !changed.isEmpty())
            QFAIL(qPrintable(changed));
    }
    qInfo("%d valid sessions went through the form", valid);
    QVERIFY2(valid >= 100, qPrintable(QStringLiteral("only %1 valid sessions").arg(valid)));
    // Every row of every table took two values or more.
    QStringList unvaried;
    auto check = [&](const std::string &prefix, const std::vector<std::string> &keys) {
        for (const auto &key : keys) {
            const std::string path = prefix.empty() ? key : prefix + "." + key;
            if (seen[path].size() < 2) unvaried << QString::fromStdString(path);
        }
    };
    std::vector<std::string> runKeys, modelKeys, stabilizerKeys, phaseKeys;
    for (const auto &row : runConfigFields()) // model and stabilizers: their own tables' rows
        if (row.keys.front() != "model" && row.keys.front() != "stabilizers")
            runKeys.push_back(row.keys.front());
    for (const auto &row : modelFields()) modelKeys.push_back(row.keys.front());
    for (const auto &row : stabilizerFields()) stabilizerKeys.push_back(row.keys.front());
    for (const auto &row : phaseFields()) phaseKeys.push_back(row.keys.front());
    check("", runKeys);
    check("model", modelKeys);
    check("stabilizers", stabilizerKeys);
    check("phases", phaseKeys);
    QVERIFY2(unvaried.isEmpty(),
             qPrintable(QStringLiteral("fields that took one value only (add values above): ") +
                        unvaried.join(", ")));
}

// Issue 52 item 7: a session whose η axis is a generator (lr: {logspace: …}) shows that generator
// in the form's generator row and is saved as the generator after an unrelated edit; a list typed
// over it is saved as the list; the row's button writes the generator the session reader expands.
void TestUiForm::theFormKeepsAGeneratorAsAGenerator()
{
    Session session = uitest::tinySession();
    std::string text = sessionToYaml(session);
    const std::string list = "lr: [0.001]";
    QVERIFY(text.find(list) != std::string::npos);
    text.replace(text.find(list), list.size(),
                 "lr: {logspace: {from: 2.5e-4, to: 4.0e-3, count: 5}}");
    session = sessionFromYaml(text, "generator.yaml");
    QCOMPARE(throughTheForm(session), expected(session)); // the generator, exactly as written

    ExperimentForm form;
    form.loadFrom(session);
    QCOMPARE(form.generatorFromEdit()->text(), QStringLiteral("0.00025"));
    QCOMPARE(form.generatorToEdit()->text(), QStringLiteral("0.004"));
    QCOMPARE(form.generatorCountBox()->value(), 5);
    QCOMPARE(form.learningRatesEdit()->text().split(',').size(), 5);

    // A list typed over the generator is saved as that list.
    form.learningRatesEdit()->setText(QStringLiteral("1e-4, 1e-3"));
    Session built;
    QStringList errors;
    QVERIFY2(form.buildDefinition(built, &errors), qPrintable(errors.join("; ")));
    std::string saved = sessionToYaml(built);
    QVERIFY2(saved.find("logspace") == std::string::npos, saved.c_str());
    QVERIFY2(saved.find("lr: [1.0e-04, 0.001]") != std::string::npos, saved.c_str());

    // The button: the list is the session reader's expansion of the generator, which is saved.
    form.generatorFromEdit()->setText(QStringLiteral("1e-5"));
    form.generatorToEdit()->setText(QStringLiteral("1e-2"));
    form.generatorCountBox()->setValue(4);
    form.findChild<QPushButton *>(QStringLiteral("logspaceButton"))->click();
    QVERIFY2(form.buildDefinition(built, &errors), qPrintable(errors.join("; ")));
    saved = sessionToYaml(built);
    QVERIFY2(saved.find("lr: {logspace: {from: 1.0e-05, to: 0.01, count: 4}}") != std::string::npos,
             saved.c_str());
    const Session reread = sessionFromYaml(saved, "saved.yaml");
    const SweepAxis *lr = nullptr;
    for (const auto &axis : reread.axes)
        if (axis.name == "lr") lr = &axis;
    QVERIFY(lr);
    QCOMPARE(lr->values.size(), size_t(4));
    QCOMPARE(lr->values[1].number, built.axes.back().values[1].number);
    QCOMPARE(form.learningRatesEdit()->text(),
             QStringLiteral("1e-05, %1, %2, 0.01")
                 .arg(exactNumber(lr->values[1].number), exactNumber(lr->values[2].number)));

    // A range that is not a number: said at the η field, and the list is left as it was.
    const QString before = form.learningRatesEdit()->text();
    form.generatorToEdit()->setText(QStringLiteral("ten"));
    form.findChild<QPushButton *>(QStringLiteral("logspaceButton"))->click();
    QCOMPARE(form.learningRatesEdit()->text(), before);
}

// Issue 52 item 7: head counts that divide no width are one line at the Heads field with how many
// runs they skip, not one line per run at the bottom of the panel.
void TestUiForm::aHeadCountThatDividesNoWidthIsSaidAtTheHeadsField()
{
    Session session = uitest::tinySession(); // d_model {8, 16} × heads {1, 2, 3}
    session.axes.push_back(SweepAxis{"seed", {}});
    for (uint64_t seed = 1; seed <= 7; ++seed) {
        AxisValue v;
        v.kind = AxisValue::Kind::Unsigned;
        v.unsignedValue = seed;
        session.axes.back().values.push_back(v);
    }
    expandSweep(session);
    QCOMPARE(session.skipped.size(), size_t(14)); // 3 heads × 2 widths × 7 seeds
    ExperimentForm form;
    form.show();
    form.loadFrom(session);
    const FormCheck check = form.check();
    QVERIFY2(check.errors.isEmpty(), qPrintable(check.errors.join("; ")));
    QCOMPARE(check.skipped.size(), 14);
    const QString heads = form.headsMessage()->text();
    QVERIFY(form.headsMessage()->isVisible());
    QVERIFY2(heads.contains(QStringLiteral("3 heads do not divide d_model 8: 7 runs skipped")),
             qPrintable(heads));
    QVERIFY2(heads.contains(QStringLiteral("3 heads do not divide d_model 16: 7 runs skipped")),
             qPrintable(heads));
    QCOMPARE(heads.count(QStringLiteral("⤼")), 2); // one line per reason, not per run or layer
    QVERIFY2(!form.messagesLabel()->text().contains(QStringLiteral("do not divide")),
             qPrintable(form.messagesLabel()->text()));
}

#include "test_ui_form.moc"
