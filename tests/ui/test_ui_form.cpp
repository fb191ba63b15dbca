// test_ui_form.cpp — the experiment form never changes an experiment: every number it shows is
// exact, so a session opened, edited elsewhere and saved keeps every value bit for bit, and its
// controls do not change under a mouse wheel that only meant to scroll the form.
#include "UiTestSessions.h"

#include "ui/app/ExperimentForm.h"
#include "ui/model/RunMetrics.h"

#include "core/session/Search.h"
#include "core/tasks/RunConfigFields.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QSpinBox>
#include <QWheelEvent>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>

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

} // namespace

class TestUiForm : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void exactNumberIsShortestAndExact();
    void theReportedValuesSurviveAnEdit();
    void randomSessionsSurviveTheForm();
    void anUnfocusedControlIgnoresTheWheel();
    void theFormEditsABoundarySearch();
    void theFormEditsStabilizers();
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
    form.searchBox()->setChecked(false);
    QVERIFY(form.buildDefinition(built, &errors));
    QVERIFY(!built.search.has_value());
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
// the axis and of fixed-rate phases), widths and head counts up to 65,536, any 64-bit seed, and
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
            widths.push_back(uitest::num(double(integer(1, 65536))));
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
        const std::string want = expected(s), got = throughTheForm(s);
        if (got != want)
            QFAIL(qPrintable(
                QStringLiteral("trial %1 changed:\n--- saved ---\n%2\n--- original ---\n%3")
                    .arg(trial)
                    .arg(QString::fromStdString(got), QString::fromStdString(want))));
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

QTEST_MAIN(TestUiForm)

#include "test_ui_form.moc"
