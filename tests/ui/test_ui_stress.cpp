// test_ui_stress.cpp — a teacher who presses everything while runs train (issue 75: a SIGSEGV in
// Qt Charts after lesson-strip presses and F11 mid-run). The lesson strip's head and η buttons,
// Clear, presenter mode, Stop, Start, Pause, and the figure tabs, pressed at random with the
// event loop running between them, on a session that trains all the while: at least 1,000
// actions, then every run settled. Run in the ordinary build by ctest (offscreen) and under
// AddressSanitizer and ThreadSanitizer by scripts/sanitize-app.sh, which fails on any report.
//   HEADLAB_STRESS_ACTIONS  how many (default 1000);  HEADLAB_STRESS_SEED  the sequence (75)
#include "UiTestSessions.h"

#include "ui/app/LessonStrip.h"
#include "ui/app/MainWindow.h"
#include "ui/figures/FigureTable.h"
#include "ui/model/SessionModel.h"
#include "ui/model/TrainingController.h"

#include "core/session/SessionStore.h"

#include <QAction>
#include <QElapsedTimer>
#include <QPushButton>
#include <QTemporaryDir>
#include <QtTest>

#include <random>

using namespace headlab;
using namespace headlab::ui;

class TestUiStress : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void pressingEverythingWhileRunsTrainNeverCrashes();
};

void TestUiStress::pressingEverythingWhileRunsTrainNeverCrashes()
{
    const int actions = qEnvironmentVariableIsSet("HEADLAB_STRESS_ACTIONS")
                            ? qEnvironmentVariableIntValue("HEADLAB_STRESS_ACTIONS")
                            : 1000;
    const unsigned seed = qEnvironmentVariableIsSet("HEADLAB_STRESS_SEED")
                              ? unsigned(qEnvironmentVariableIntValue("HEADLAB_STRESS_SEED"))
                              : 75u;
    // The classroom's shape, tiny: width 12 (every head count of the strip divides it), the
    // contrast's two η, runs long enough to be mid-run at most presses.
    QTemporaryDir dir;
    Session s = uitest::tinySession(400);
    s.base.model.dModel = 12;
    s.axes = {SweepAxis{"lr", {uitest::num(7e-3), uitest::num(1.5e-3)}},
              SweepAxis{"heads", {uitest::num(1), uitest::num(12)}}};
    s.view["lesson"] = "true";
    expandSweep(s);
    const QString path = dir.filePath("stress.yaml");
    saveSessionAtomic(s, path.toStdString());

    MainWindow window;
    window.setInteractive(false);
    window.show();
    QVERIFY(window.openSession(path));
    LessonStrip *strip = window.lessonStrip();
    QVERIFY(strip->isVisibleTo(&window));
    QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), 3000);
    QVERIFY(window.startSweep());

    QList<int64_t> heads;
    for (const QString &v : strip->headColours().split(',')) heads << v.toLongLong();
    const QList<double> rates = strip->learningRateButtons();
    QStringList figures;
    for (const auto &spec : figureTable()) figures << spec.id;
    std::mt19937 rng(seed);
    std::map<QString, int> done;
    QElapsedTimer clock;
    clock.start();
    for (int a = 0; a < actions; ++a) {
        const unsigned what = rng() % 100;
        QString name;
        if (what < 30) {
            strip->toggleHeads(heads[int(rng() % heads.size())]);
            name = "heads";
        } else if (what < 45) {
            strip->chooseLearningRate(rates[int(rng() % rates.size())]);
            name = "η";
        } else if (what < 53) {
            window.setPresenterMode(!window.presenterMode());
            name = "F11";
        } else if (what < 63) {
            window.stopSweep();
            name = "Stop";
        } else if (what < 75) {
            window.startSweep();
            name = "Start";
        } else if (what < 80) {
            window.pauseOrResume();
            name = "Pause";
        } else if (what < 85) {
            if (auto *clear = strip->findChild<QPushButton *>("clearEarlier")) clear->click();
            name = "Clear";
        } else {
            window.showFigure(figures[int(rng() % figures.size())]);
            name = "tab";
        }
        ++done[name];
        // A paint at once, before the event loop: what a press took off a chart must not be
        // reached by it (Qt Charts deletes a removed series' chart item later, in the loop).
        window.repaint();
        // The event loop runs between presses: paints, queued results, the sweep's own end.
        QTest::qWait(int(rng() % 12));
    }
    if (window.presenterMode()) window.setPresenterMode(false);
    // Everything settles: the sweep stops, no run is left running, the window still answers.
    window.stopSweep();
    QTRY_VERIFY_WITH_TIMEOUT(!window.controller()->isRunning(), 60000);
    for (int i = 0; i < window.model()->runCount(); ++i)
        QVERIFY(window.model()->run(i).result.status != RunStatus::Running);
    QStringList said;
    for (const auto &[n, count] : done) said << QString("%1 %2").arg(n).arg(count);
    qInfo("%d actions in %.1f s: %s", actions, double(clock.elapsed()) / 1000,
          qPrintable(said.join(", ")));
}

QTEST_MAIN(TestUiStress)
#include "test_ui_stress.moc"
