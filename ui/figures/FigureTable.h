// FigureTable.h — the figure table: one row per figure the app draws.
//
// A row gives the figure's id (the name in `view: {chart: ...}`, --figure, view-state keys and
// CSV export), the aliases older sessions use, its tab's title, the files "Export all" writes
// (stem and view-state overrides), the tasks it applies to, and its factory. The window's tabs,
// the app's --figure option and its help, Export all and the session's view all come from here;
// adding a figure is a FigureView in its own file and one row.
#pragma once

#include "ui/figures/FigureView.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <typeinfo>

namespace headlab {
struct Session;
}

namespace headlab::ui {

class SessionModel;

struct FigureExport {
    QString fileStem; // "fig2_heatmap"
    QString figureId; // "heatmap"
    ViewState overrides;
    // Whether this view means anything for a session beyond its figure's own rule (the collapse
    // against the fitted α: a boundary search); null: whenever the figure applies.
    bool (*appliesTo)(const Session &session) = nullptr;
};

// How a row makes its view, and the view's class: a view finds its row, and so its id, by its
// class (FigureView::figureId), so no view names its id a second time.
struct FigureFactory {
    FigureView *(*make)(SessionModel *model, QWidget *parent) = nullptr;
    const std::type_info *type = nullptr;
};

template <typename View>
FigureFactory figureFactory()
{
    return {[](SessionModel *model, QWidget *parent) -> FigureView * {
                return new View(model, parent);
            },
            &typeid(View)};
}

struct FigureSpec {
    QString id;                  // "heatmap"
    QStringList aliases;         // other names accepted for it: "final_loss_vs_lr", ...
    const char *tab = "";        // the tab's title (translated where shown)
    QList<FigureExport> exports; // what Export all writes for it
    // When it applies: to a session of one of `tasks`, or one `appliesTo` accepts (the
    // head-schedule figure: a text session, or any session sweeping head schedules); with neither,
    // to every session.
    QStringList tasks;
    bool (*appliesTo)(const Session &session) = nullptr;
    FigureFactory view;
};

// Every figure, in tab order.
const QList<FigureSpec> &figureTable();
// A row added to the table, after the others, for as long as this object lives: the window's
// tabs, --figure, Export all and view state see it (the recipe tests add a dummy figure this way).
// Make it before the windows that should show it.
class ScopedFigure {
public:
    explicit ScopedFigure(FigureSpec row);
    ~ScopedFigure();
    ScopedFigure(const ScopedFigure &) = delete;
    ScopedFigure &operator=(const ScopedFigure &) = delete;

private:
    QString m_id;
};

// The row whose id or alias is `name`, or nullptr.
const FigureSpec *findFigure(const QString &name);
// The row that makes views of `view`'s class, or nullptr (a panel inside a figure).
const FigureSpec *figureOf(const FigureView &view);
// The id for `name` (an id or an alias). An unknown name sets `error` to a sentence naming the
// nearest figure and listing all ids, and returns an empty string.
QString resolveFigure(const QString &name, QString *error);
// Whether the figure means anything for `session`.
bool figureApplies(const FigureSpec &spec, const Session &session);
// "loss, heatmap, scaling, lr, grid, rank, heads"
QString figureIdList();
// Every figure the app has, by id, in tab order.
QStringList figureIds();
// The figure of an id or alias; nullptr for an unknown name.
FigureView *createFigure(const QString &id, SessionModel *model, QWidget *parent = nullptr);

} // namespace headlab::ui
