// FigureTable.cpp — the rows of the figure table.
#include "ui/figures/FigureTable.h"

#include "ui/figures/BoundaryChartView.h"
#include "ui/figures/GroupPanelsView.h"
#include "ui/figures/HeadScheduleChartView.h"
#include "ui/figures/HeatmapView.h"
#include "ui/figures/InsideHeadsView.h"
#include "ui/figures/LearningRateChartView.h"
#include "ui/figures/LossChartView.h"
#include "ui/figures/ParallelCoordinatesView.h"
#include "ui/figures/RankChartView.h"
#include "ui/figures/ScalingChartView.h"
#include "ui/figures/SmallMultiplesView.h"

#include "ui/model/SessionModel.h"

#include "core/config/Yaml.h"
#include "core/schema/TaskSpec.h"
#include "core/session/RunFiles.h"
#include "core/session/Session.h"
#include "ui/model/RunMetrics.h"

#include <stdexcept>

namespace headlab::ui {

namespace {

// Inside the heads: runs that logged per-head statistics, or are training (their live maps).
bool looksInsideHeads(const Session &session)
{
    for (const auto &run : session.runs) {
        if (run.result.status == RunStatus::Running || run.result.status == RunStatus::Paused)
            return true;
        for (const auto &[name, curve] : run.result.extra)
            if (isHeadCurve(name)) return true;
    }
    return false;
}

bool sweepsHeadSchedules(const Session &session)
{
    for (const auto &axis : session.axes)
        if (axis.name == "head_schedule") return true;
    for (const auto &run : session.runs)
        if (run.labels.count("head_schedule")) return true;
    return false;
}

// Tasks whose test loss is logged per group (addition's answer digits).
bool hasGroups(const Session &session)
{
    const TaskSpec *spec = findTaskSpec(session.base.task.kind);
    return spec && !spec->groupCurvePrefix.empty() && spec->groups;
}

bool isBoundarySearch(const Session &session)
{
    return session.search.has_value();
}

bool givesVerdictsOn(const Session &session)
{
    return givesVerdicts(session);
}

// α known: a boundary search fits it; a grid has one where the figure was given one (lr.alpha).
bool hasAlpha(const Session &session)
{
    return givesVerdicts(session) && (isBoundarySearch(session) || session.view.count("lr.alpha"));
}

QList<FigureSpec> &rows()
{
    static QList<FigureSpec> table = {
        {"loss",
         {"curves", "loss_curves"},
         QT_TRANSLATE_NOOP("Figure", "Loss curves"),
         {{"fig1_loss_curves", "loss", {{"loss.digits", "false"}}},
          {"fig1_loss_per_digit", "loss", {{"loss.digits", "true"}}}},
         {},
         nullptr,
         figureFactory<LossChartView>()},
        {"heatmap",
         {"trainability", "final_loss_heatmap"},
         QT_TRANSLATE_NOOP("Figure", "Heatmap"),
         {{"fig2_heatmap", "heatmap", {}},
          {"fig2_heatmap_p_learned", "heatmap", {{"heatmap.stat", "p_learned"}}},
          {"search_critical_lr_heatmap",
           "heatmap",
           {{"heatmap.stat", "critical_lr"}},
           isBoundarySearch}},
         {},
         nullptr,
         figureFactory<HeatmapView>()},
        {"scaling",
         {"loss_vs_m", "loss_vs_mh", "final_loss_vs_m"},
         QT_TRANSLATE_NOOP("Figure", "Loss vs m, m_H"),
         {{"fig3_loss_vs_m", "scaling", {{"scaling.x", "m"}}},
          {"fig3_loss_vs_mH", "scaling", {{"scaling.x", "m_H"}}}},
         {},
         nullptr,
         figureFactory<ScalingChartView>()},
        {"lr",
         {"loss_vs_lr", "final_loss_vs_lr", "collapse"},
         QT_TRANSLATE_NOOP("Figure", "Loss vs η"),
         {{"fig4_loss_vs_lr", "lr", {{"lr.x", "lr"}}},
          {"fig4_loss_vs_lr_sqrt_mH", "lr", {{"lr.x", "lr_sqrt_mh"}}},
          {"search_collapse_fitted_alpha", "lr", {{"lr.x", "lr_mh_alpha"}}, isBoundarySearch},
          // The paper's collapse: P(learned) against η·√m_H, and against η·m_H^α where α is
          // known (a search's fitted one, or one chosen in the figure), for grids and searches
          // of a task that gives verdicts.
          {"fig4_p_learned_vs_lr_sqrt_mH",
           "lr",
           {{"lr.x", "lr_sqrt_mh"}, {"lr.y", "p_learned"}},
           givesVerdictsOn},
          {"fig4_p_learned_vs_lr_mh_alpha",
           "lr",
           {{"lr.x", "lr_mh_alpha"}, {"lr.y", "p_learned"}},
           hasAlpha}},
         {},
         nullptr,
         figureFactory<LearningRateChartView>()},
        {"boundary",
         {"search", "critical_lr", "eta_star"},
         QT_TRANSLATE_NOOP("Figure", "Boundary"),
         {{"search_eta_star_vs_mH", "boundary", {{"boundary.mode", "law"}}},
          {"search_p_learned_vs_eta", "boundary", {{"boundary.mode", "curves"}}},
          {"search_p_learned_collapse_half", "boundary", {{"boundary.mode", "collapse_half"}}},
          {"search_p_learned_collapse_fitted", "boundary", {{"boundary.mode", "collapse"}}},
          {"search_rounds", "boundary", {{"boundary.mode", "rounds"}}}},
         {},
         isBoundarySearch,
         figureFactory<BoundaryChartView>()},
        {"grid",
         {"all_runs", "small_multiples"},
         QT_TRANSLATE_NOOP("Figure", "All runs"),
         {{"fig5_small_multiples", "grid", {}}},
         {},
         nullptr,
         figureFactory<SmallMultiplesView>()},
        {"coords",
         {"parallel", "parallel_coordinates"},
         QT_TRANSLATE_NOOP("Figure", "Parallel coordinates"),
         {{"all_runs_parallel_coordinates", "coords", {}}},
         {},
         nullptr,
         figureFactory<ParallelCoordinatesView>()},
        {"groups",
         {"digits", "per_digit", "per_group"},
         QT_TRANSLATE_NOOP("Figure", "Per digit / group"),
         {{"fig1_loss_per_digit_panels", "groups", {}}},
         {},
         hasGroups,
         figureFactory<GroupPanelsView>()},
        {"rank",
         {"loss_vs_rank"},
         QT_TRANSLATE_NOOP("Figure", "Loss vs rank"),
         {{"nn_loss_vs_rank", "rank", {}}},
         {"nearest_neighbour"},
         nullptr,
         figureFactory<RankChartView>()},
        {"heads",
         {"head_progression", "total_heads", "loss_vs_total_heads"},
         QT_TRANSLATE_NOOP("Figure", "Loss vs total heads"),
         {{"heads_loss_and_speed_vs_total_heads", "heads", {}}},
         {"text"},
         sweepsHeadSchedules,
         figureFactory<HeadScheduleChartView>()},
        {"inside",
         {"attention", "heads_inside", "head_stats", "ablation"},
         QT_TRANSLATE_NOOP("Figure", "Inside the heads"),
         {{"heads_inside", "inside", {}}},
         {},
         looksInsideHeads,
         figureFactory<InsideHeadsView>()},
    };
    return table;
}

} // namespace

const QList<FigureSpec> &figureTable()
{
    return rows();
}

ScopedFigure::ScopedFigure(FigureSpec row)
    : m_id(row.id)
{
    if (findFigure(m_id))
        throw std::logic_error("ScopedFigure: a figure '" + m_id.toStdString() +
                               "' exists already");
    rows().append(std::move(row));
}

ScopedFigure::~ScopedFigure()
{
    rows().removeIf([this](const FigureSpec &row) { return row.id == m_id; });
}

const FigureSpec *findFigure(const QString &name)
{
    for (const auto &spec : figureTable())
        if (spec.id == name || spec.aliases.contains(name)) return &spec;
    return nullptr;
}

QString figureIdList()
{
    QStringList ids;
    for (const auto &spec : figureTable()) ids << spec.id;
    return ids.join(QStringLiteral(", "));
}

QString resolveFigure(const QString &name, QString *error)
{
    if (const FigureSpec *spec = findFigure(name)) return spec->id;
    std::vector<std::string> names;
    for (const auto &spec : figureTable()) {
        names.push_back(spec.id.toStdString());
        for (const auto &alias : spec.aliases) names.push_back(alias.toStdString());
    }
    const std::string near = yaml::nearestKey(name.toStdString(), names);
    QString message = QStringLiteral("unknown figure '%1'").arg(name);
    if (!near.empty()) {
        const FigureSpec *spec = findFigure(QString::fromStdString(near));
        message += QStringLiteral("; did you mean '%1'?")
                       .arg(spec ? spec->id : QString::fromStdString(near));
    }
    message += QStringLiteral(" (the figures are %1)").arg(figureIdList());
    if (error) *error = message;
    return {};
}

const FigureSpec *figureOf(const FigureView &view)
{
    for (const auto &spec : figureTable())
        if (*spec.view.type == typeid(view)) return &spec;
    return nullptr;
}

bool figureApplies(const FigureSpec &spec, const Session &session)
{
    if (spec.tasks.isEmpty() && !spec.appliesTo) return true;
    return spec.tasks.contains(QString::fromStdString(session.base.task.kind)) ||
           (spec.appliesTo && spec.appliesTo(session));
}

QStringList figureIds()
{
    QStringList ids;
    for (const auto &spec : figureTable()) ids << spec.id;
    return ids;
}

// A view's id and rule are its row's (FigureView.h), defined here where the table is.
QString FigureView::figureId() const
{
    const FigureSpec *row = figureOf(*this);
    return row ? row->id : QString();
}

bool FigureView::applies() const
{
    const FigureSpec *row = figureOf(*this);
    return !row || figureApplies(*row, m_model->session());
}

FigureView *createFigure(const QString &id, SessionModel *model, QWidget *parent)
{
    const FigureSpec *spec = findFigure(id);
    return spec ? spec->view.make(model, parent) : nullptr;
}

} // namespace headlab::ui
