// HeadlabApplication.cpp — see HeadlabApplication.h.
#include "ui/app/HeadlabApplication.h"

#include "core/session/Presets.h"
#include "core/session/Session.h"
#include "ui/app/MainWindow.h"
#include "ui/app/StopSignalWatcher.h"
#include "ui/figures/FigureExporter.h"
#include "ui/figures/FigureTable.h"
#include "ui/model/Metatypes.h"
#include "ui/model/SessionModel.h"
#include "ui/model/TrainingController.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QScreen>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace headlab::ui {

void prepareEnvironment(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--export-all") == 0 &&
            qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        // QGuiApplication takes -session/--session for X11 session management and removes it
        // from the arguments; ours means a session file, so rename it before Qt sees it.
        if (std::strcmp(argv[i], "--session") == 0 || std::strcmp(argv[i], "-session") == 0) {
            static char renamed[] = "--open-session";
            argv[i] = renamed;
        } else if (std::strncmp(argv[i], "--session=", 10) == 0) {
            static std::string renamed;
            renamed = std::string("--open-session=") + (argv[i] + 10);
            argv[i] = renamed.data();
        }
    }
}

static QSize parseSize(const QString &text, QSize fallback)
{
    const auto parts = text.split('x');
    if (parts.size() == 2 && parts[0].toInt() >= 100 && parts[1].toInt() >= 100)
        return QSize(parts[0].toInt(), parts[1].toInt());
    return fallback;
}

namespace {

// What the command line asks for.
struct LaunchOptions {
    QString session, preset, exportDir, figure, screenshot;
    QSize size;
    double screenshotAfter = 15;
    bool start = false, dark = false, presenter = false, lesson = false, latency = false;
};

// The command line (QCommandLineParser: --help and --version come from these definitions).
LaunchOptions parseLaunchOptions(QApplication &app)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("HeadLab: how attention heads, head dimension and learning rate decide "
                       "whether a transformer trains."));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption sessionOpt(
        QStringList{QStringLiteral("session"), QStringLiteral("open-session")},
        QStringLiteral("Open this session file."), QStringLiteral("S.yaml"));
    QCommandLineOption presetOpt(QStringLiteral("preset"),
                                 QStringLiteral("Open a built-in preset."), QStringLiteral("NAME"));
    QCommandLineOption exportOpt(
        QStringLiteral("export-all"),
        QStringLiteral("Write every figure (PNG, SVG, CSV) to DIR and exit; needs no display."),
        QStringLiteral("DIR"));
    QCommandLineOption sizeOpt(QStringLiteral("size"),
                               QStringLiteral("Figure size for export, e.g. 1600x1000."),
                               QStringLiteral("WxH"), QStringLiteral("1600x1000"));
    QCommandLineOption startOpt(QStringLiteral("start"),
                                QStringLiteral("Start the sweep when the window opens."));
    QCommandLineOption shotOpt(QStringLiteral("screenshot"),
                               QStringLiteral("Save a picture of the window to FILE, then quit."),
                               QStringLiteral("FILE"));
    QCommandLineOption shotAfterOpt(
        QStringLiteral("screenshot-after"),
        QStringLiteral("Seconds to wait before the screenshot (default 15)."),
        QStringLiteral("SECONDS"), QStringLiteral("15"));
    QCommandLineOption figureOpt(QStringLiteral("figure"),
                                 QStringLiteral("Show this figure: %1.").arg(figureIdList()),
                                 QStringLiteral("ID"));
    QCommandLineOption darkOpt(QStringLiteral("dark"), QStringLiteral("Use the dark theme."));
    QCommandLineOption latencyOpt(
        QStringLiteral("latency"),
        QStringLiteral(
            "On exit, print how late a 5 ms timer fired on the GUI thread (event-loop latency)."));
    QCommandLineOption presenterOpt(QStringLiteral("presenter"),
                                    QStringLiteral("Start in presenter mode (F11 toggles it)."));
    QCommandLineOption lessonOpt(
        QStringLiteral("lesson"),
        QStringLiteral("Show the lesson strip: large buttons for heads and "
                       "η (Ctrl+L toggles it)."));
    parser.addOptions({sessionOpt, presetOpt, exportOpt, sizeOpt, startOpt, shotOpt, shotAfterOpt,
                       figureOpt, darkOpt, presenterOpt, lessonOpt, latencyOpt});
    parser.addPositionalArgument(QStringLiteral("session"),
                                 QStringLiteral("A session file to open."),
                                 QStringLiteral("[S.yaml]"));
    parser.process(app);

    LaunchOptions o;
    o.session = parser.value(sessionOpt);
    if (o.session.isEmpty() && !parser.positionalArguments().isEmpty())
        o.session = parser.positionalArguments().first();
    o.preset =
        parser.isSet(presetOpt) ? parser.value(presetOpt) : QString::fromLatin1(kDefaultPreset);
    o.exportDir = parser.value(exportOpt);
    o.size = parseSize(parser.value(sizeOpt), QSize(1600, 1000));
    o.figure = parser.value(figureOpt);
    o.screenshot = parser.value(shotOpt);
    o.screenshotAfter = parser.value(shotAfterOpt).toDouble();
    o.start = parser.isSet(startOpt);
    o.dark = parser.isSet(darkOpt);
    o.presenter = parser.isSet(presenterOpt);
    o.lesson = parser.isSet(lessonOpt);
    o.latency = parser.isSet(latencyOpt);
    return o;
}

// --export-all: every figure of the session (or preset) to a folder, without a window.
int exportAllFigures(const LaunchOptions &o)
{
    SessionModel model;
    try {
        if (!o.session.isEmpty()) {
            model.load(o.session);
        } else {
            Session s = loadPreset(o.preset.toStdString());
            expandSweep(s);
            model.setSession(std::move(s));
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "headlab: %s\n", e.what());
        return 2;
    }
    QString error;
    const QStringList files =
        FigureExporter::exportAll(&model, o.exportDir, o.size, model.session().view, &error);
    for (const auto &f : files) std::printf("%s\n", qPrintable(QDir::toNativeSeparators(f)));
    if (!error.isEmpty()) {
        std::fprintf(stderr, "headlab: %s\n", qPrintable(error));
        return 1;
    }
    return 0;
}

// --latency: a 5 ms timer whose lateness is what a user feels as lag, reported at exit.
class LatencyProbe {
public:
    void start(QApplication &app)
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(5);
        m_clock.start();
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            const double now = double(m_clock.nsecsElapsed()) / 1e6;
            if (m_last >= 0) m_lateness.push_back(now - m_last - 5.0);
            m_last = now;
        });
        m_timer.start();
        QObject::connect(&app, &QCoreApplication::aboutToQuit, [this] {
            if (m_lateness.empty()) return;
            std::sort(m_lateness.begin(), m_lateness.end());
            auto at = [this](double q) {
                return m_lateness[size_t(q * double(m_lateness.size() - 1))];
            };
            std::fprintf(stderr,
                         "headlab: event-loop latency (5 ms timer): p50 %.2f ms, p99 %.2f ms, max "
                         "%.2f ms, %zu samples\n",
                         at(0.5), at(0.99), m_lateness.back(), m_lateness.size());
        });
    }

private:
    std::vector<double> m_lateness;
    double m_last = -1; // ms, when the timer last fired
    QElapsedTimer m_clock;
    QTimer m_timer;
};

} // namespace

int runHeadlab(QApplication &app)
{
    QCoreApplication::setOrganizationName(QStringLiteral("HeadLab"));
    QCoreApplication::setApplicationName(QStringLiteral("HeadLab"));
    QCoreApplication::setApplicationVersion(QStringLiteral("0.1"));
    registerMetatypes();
    const LaunchOptions o = parseLaunchOptions(app);
    if (!o.figure.isEmpty()) {
        QString why;
        if (resolveFigure(o.figure, &why).isEmpty()) {
            std::fprintf(stderr, "headlab: --figure: %s\n", qPrintable(why));
            return 2;
        }
    }
    if (!o.exportDir.isEmpty()) return exportAllFigures(o);
    LatencyProbe probe;
    if (o.latency) probe.start(app);

    MainWindow window;
    StopSignalWatcher stopSignals;
    QObject::connect(&stopSignals, &StopSignalWatcher::received, &window,
                     &MainWindow::stopForSignal);
    if (o.dark)
        QMetaObject::invokeMethod(
            &window,
            [&window] {
                // The View ▸ Theme ▸ Dark action.
                for (auto *a : window.findChildren<QAction *>())
                    if (a->text() == QObject::tr("Dark")) a->trigger();
            },
            Qt::QueuedConnection);
    // A scripted run (screenshot) asks nothing: a question would block the timer's exit.
    if (!o.screenshot.isEmpty()) window.setInteractive(false);
    bool ok = true;
    if (!o.session.isEmpty())
        ok = window.openSession(o.session);
    else
        ok = window.openPreset(o.preset);
    // A session a crashed HeadLab showed is offered once the window is up (not to a script).
    if (o.screenshot.isEmpty())
        QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });
    if (!ok && !o.session.isEmpty()) return 2;
    if (!o.figure.isEmpty()) window.showFigure(o.figure);
    window.show();
    if (o.presenter) window.setPresenterMode(true);
    if (o.lesson) window.lessonAction()->setChecked(true);
    if (o.start) QTimer::singleShot(300, &window, [&window] { window.startSweep(); });
    if (!o.screenshot.isEmpty()) {
        window.setInteractive(false);
        const QString file = o.screenshot;
        const int ms = int(o.screenshotAfter * 1000);
        QTimer::singleShot(ms, &window, [&window, file] {
            if (auto *f = window.currentFigure()) f->refresh();
            QCoreApplication::processEvents();
            const bool saved = window.grab().save(file);
            std::fprintf(stderr, "headlab: %s %s\n", saved ? "wrote" : "could not write",
                         qPrintable(file));
            window.stopSweep();
            window.controller()->waitForFinished();
            QCoreApplication::exit(saved ? 0 : 1);
        });
    }
    return app.exec();
}

} // namespace headlab::ui
