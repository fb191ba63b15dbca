// FigureExporter.cpp — see FigureExporter.h.
#include "ui/figures/FigureExporter.h"

#include "ui/figures/FigureTable.h"
#include "ui/model/SessionModel.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>

namespace headlab::ui {

QList<FigureExport> FigureExporter::allFigures()
{
    QList<FigureExport> all;
    for (const auto &spec : figureTable()) all += spec.exports;
    return all;
}

std::unique_ptr<FigureView>
FigureExporter::offscreenCopy(SessionModel *model, const QString &figureId, const ViewState &state,
                              const QList<int> &selectedRuns, QSize size)
{
    std::unique_ptr<FigureView> figure(createFigure(figureId, model));
    if (!figure) return nullptr;
    figure->setAttribute(Qt::WA_DontShowOnScreen);
    figure->setControlsVisible(false);
    figure->restoreViewState(state);
    figure->setSelectedRuns(selectedRuns);
    figure->resize(size);
    figure->show();
    QCoreApplication::sendPostedEvents();
    figure->refresh(); // again, now that the plot area has its size (decimation width)
    QCoreApplication::sendPostedEvents();
    return figure;
}

static void renderCanvas(FigureView *figure, QPainter &painter, QSize size)
{
    QWidget *canvas = figure->canvas();
    // A hidden figure's layout (a window never shown: the harness, --export-all) is applied by
    // render() itself, which pretends the window shown for it: after the scale below was taken
    // from the old size, so the first export came out enlarged and cut off at the right. One
    // render of a pixel applies it first.
    if (!canvas->isVisible()) {
        QImage pixel(1, 1, QImage::Format_ARGB32_Premultiplied);
        canvas->render(&pixel, QPoint(), QRegion(0, 0, 1, 1));
    }
    const QSize have = canvas->size();
    painter.save();
    if (have.width() > 0 && have.height() > 0 && have != size)
        painter.scale(double(size.width()) / have.width(), double(size.height()) / have.height());
    canvas->render(&painter, QPoint(), QRegion(),
                   QWidget::DrawWindowBackground | QWidget::DrawChildren);
    painter.restore();
}

bool FigureExporter::writePng(FigureView *figure, const QString &path, QSize size, QString *error)
{
    figure->ensureCurrent(); // a hidden tab's figure follows the selection when it is drawn
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(figure->theme().background);
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        renderCanvas(figure, painter, size);
    }
    if (!image.save(path, "PNG")) {
        if (error) *error = QObject::tr("Could not write %1").arg(path);
        return false;
    }
    return true;
}

bool FigureExporter::writeSvg(FigureView *figure, const QString &path, QSize size, QString *error)
{
    figure->ensureCurrent();
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    // The PNG's resolution: at QSvgGenerator's default of 72 dpi a 9 pt label was 9 user units
    // tall, against 12 px in the PNG (96 dpi): every text a quarter smaller than in the PNG.
    svg.setResolution(QImage(1, 1, QImage::Format_ARGB32_Premultiplied).logicalDpiY());
    svg.setTitle(figure->title());
    svg.setDescription(QStringLiteral("HeadLab figure: %1").arg(figure->figureId()));
    {
        QPainter painter;
        if (!painter.begin(&svg)) {
            if (error) *error = QObject::tr("Could not write %1").arg(path);
            return false;
        }
        painter.fillRect(QRect(QPoint(0, 0), size), figure->theme().background);
        renderCanvas(figure, painter, size);
    }
    if (!QFile::exists(path)) {
        if (error) *error = QObject::tr("Could not write %1").arg(path);
        return false;
    }
    return true;
}

bool FigureExporter::writeCsv(FigureView *figure, const QString &path, QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error) *error = QObject::tr("Could not write %1: %2").arg(path, file.errorString());
        return false;
    }
    figure->ensureCurrent();
    file.write(figure->csv().toUtf8());
    if (!file.commit()) {
        if (error) *error = QObject::tr("Could not write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

QStringList FigureExporter::exportAll(SessionModel *model, const QString &dir, QSize size,
                                      const ViewState &state, QString *error)
{
    QStringList written;
    if (!QDir().mkpath(dir)) {
        if (error) *error = QObject::tr("Could not create the folder %1").arg(dir);
        return written;
    }
    for (const auto &spec : allFigures()) {
        ViewState s = state;
        for (const auto &[k, v] : spec.overrides) s[k] = v;
        auto figure = offscreenCopy(model, spec.figureId, s, {}, size);
        if (figure && !figure->applies()) continue; // not this task's figure: no empty files
        if (spec.appliesTo && !spec.appliesTo(model->session())) continue;
        const QString stem = QDir(dir).filePath(spec.fileStem);
        QString why;
        if (!writePng(figure.get(), stem + ".png", size, &why) ||
            !writeSvg(figure.get(), stem + ".svg", size, &why) ||
            !writeCsv(figure.get(), stem + ".csv", &why)) {
            if (error) *error = why;
            return written;
        }
        written << stem + ".png" << stem + ".svg" << stem + ".csv";
    }
    return written;
}

} // namespace headlab::ui
