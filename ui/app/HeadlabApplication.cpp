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

int runHeadlab(QApplication &app)
{
    QCoreApplication::setOrganizationName(QStringLiteral("HeadLab"));
    QCoreApplication::setApplicationName(QStringLiteral("HeadLab"));
    QCoreApplication::setApplicationVersion(QStringLiteral("0.1"));
    registerMetatypes();

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

    QString sessionPath = parser.value(sessionOpt);
    if (sessionPath.isEmpty() && !parser.positionalArguments().isEmpty())
        sessionPath = parser.positionalArguments().first();
    const QSize size = parseSize(parser.value(sizeOpt), QSize(1600, 1000));
    if (parser.isSet(figureOpt)) {
        QString why;
        if (resolveFigure(parser.value(figureOpt), &why).isEmpty()) {
            std::fprintf(stderr, "headlab: --figure: %s\n", qPrintable(why));
            return 2;
        }
    }

    if (parser.isSet(exportOpt)) {
        SessionModel model;
        try {
            if (!sessionPath.isEmpty()) {
                model.load(sessionPath);
            } else {
                Session s =
                    loadPreset(parser.isSet(presetOpt) ? parser.value(presetOpt).toStdString()
                                                       : kDefaultPreset);
                expandSweep(s);
                model.setSession(std::move(s));
            }
        } catch (const std::exception &e) {
            std::fprintf(stderr, "headlab: %s\n", e.what());
            return 2;
        }
        QString error;
        const QStringList files = FigureExporter::exportAll(&model, parser.value(exportOpt), size,
                                                            model.session().view, &error);
        for (const auto &f : files) std::printf("%s\n", qPrintable(QDir::toNativeSeparators(f)));
        if (!error.isEmpty()) {
            std::fprintf(stderr, "headlab: %s\n", qPrintable(error));
            return 1;
        }
        return 0;
    }

    // Event-loop latency probe: a 5 ms timer whose lateness is what a user feels as lag.
    std::vector<double> lateness;
    QElapsedTimer probeClock;
    QTimer probe;
    if (parser.isSet(latencyOpt)) {
        probe.setTimerType(Qt::PreciseTimer);
        probe.setInterval(5);
        probeClock.start();
        QObject::connect(&probe, &QTimer::timeout, [&] {
            static double last = -1;
            const double now = double(probeClock.nsecsElapsed()) / 1e6;
            if (last >= 0) lateness.push_back(now - last - 5.0);
            last = now;
        });
        probe.start();
        QObject::connect(&app, &QCoreApplication::aboutToQuit, [&] {
            if (lateness.empty()) return;
            std::sort(lateness.begin(), lateness.end());
            auto at = [&](double q) { return lateness[size_t(q * double(lateness.size() - 1))]; };
            std::fprintf(stderr,
                         "headlab: event-loop latency (5 ms timer): p50 %.2f ms, p99 %.2f ms, max "
                         "%.2f ms, %zu samples\n",
                         at(0.5), at(0.99), lateness.back(), lateness.size());
        });
    }

    MainWindow window;
    StopSignalWatcher stopSignals;
    QObject::connect(&stopSignals, &StopSignalWatcher::received, &window,
                     &MainWindow::stopForSignal);
    if (parser.isSet(darkOpt))
        QMetaObject::invokeMethod(
            &window,
            [&window] {
                // The View ▸ Theme ▸ Dark action.
                for (auto *a : window.findChildren<QAction *>())
                    if (a->text() == QObject::tr("Dark")) a->trigger();
            },
            Qt::QueuedConnection);
    // A scripted run (screenshot) asks nothing: a question would block the timer's exit.
    if (parser.isSet(shotOpt)) window.setInteractive(false);
    bool ok = true;
    if (!sessionPath.isEmpty())
        ok = window.openSession(sessionPath);
    else
        ok = window.openPreset(parser.isSet(presetOpt) ? parser.value(presetOpt)
                                                       : QString::fromLatin1(kDefaultPreset));
    if (!ok && !sessionPath.isEmpty()) return 2;
    if (parser.isSet(figureOpt)) window.showFigure(parser.value(figureOpt));
    window.show();
    if (parser.isSet(presenterOpt)) window.setPresenterMode(true);
    if (parser.isSet(lessonOpt)) window.lessonAction()->setChecked(true);
    if (parser.isSet(startOpt))
        QTimer::singleShot(300, &window, [&window] { window.startSweep(); });
    if (parser.isSet(shotOpt)) {
        window.setInteractive(false);
        const QString file = parser.value(shotOpt);
        const int ms = int(parser.value(shotAfterOpt).toDouble() * 1000);
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
