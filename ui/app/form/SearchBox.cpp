// SearchBox.cpp — see SearchBox.h.
#include "ui/app/form/SearchBox.h"

#include "ui/app/form/FormParts.h"
#include "ui/model/RunMetrics.h"

#include "core/schema/Dimensions.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace headlab::ui {

using form::errorLabel;
using form::namedChoice;
using form::parseNumbers;

namespace {

// The range a new search along `axis` starts with: its dimension's (Dimensions.h).
std::pair<double, double> searchRangeOf(const std::string &axis)
{
    const SearchRange range = defaultSearchRange(axis).value_or(SearchRange{}); // listed: has one
    return {range.low, range.high};
}

} // namespace

SearchBox::SearchBox(QWidget *parent)
    : FormBox(tr("Boundary search"), parent)
{
    auto *form = new QFormLayout(this);
    m_on = new QCheckBox(tr("Boundary search: where P(learned) crosses ½"), this);
    m_on->setToolTip(
        tr("Instead of a list of values along one axis (η, or a width, a head count, ...), find "
           "for each configuration of the other axes the value where P(learned) crosses ½, with a "
           "95 % interval; rounds of runs are placed where that crossing is still uncertain "
           "(docs/SEARCH.md)"));
    form->addRow(m_on);
    m_rows = new QWidget(this);
    // One setting a line, label beside it, so that the dock stays narrow (three lines of several
    // settings each made the form 650 px wide, past a 1280-pixel screen's dock).
    auto *searchLines = new QFormLayout(m_rows);
    searchLines->setContentsMargins(0, 0, 0, 0);
    auto *searchAlong = new QHBoxLayout;
    m_axis = new QComboBox(this);
    for (const auto &axis : searchableDimensions()) {
        const std::string symbol = dimensionSymbol(axis); // "η (lr)"; the name where it has none
        m_axis->addItem(QString::fromStdString(symbol == axis ? axis : symbol + " (" + axis + ")"),
                        QString::fromStdString(axis));
    }
    m_axis->setToolTip(tr("The axis searched along; the session's other axes are the "
                          "configurations, each searched on its own"));
    m_from = new QLineEdit(this);
    m_to = new QLineEdit(this);
    for (auto *e : {m_from, m_to}) {
        e->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("0.0000316x")) + 12);
        e->setToolTip(tr("The searched range (search.range), searched on a log scale"));
    }
    searchAlong->addWidget(m_axis);
    searchAlong->addWidget(m_from, 1);
    searchAlong->addWidget(new QLabel(QStringLiteral("→"), this));
    searchAlong->addWidget(m_to, 1);
    m_replicates = new QSpinBox(this);
    m_replicates->setRange(1, 1000);
    m_replicates->setToolTip(tr("Runs per searched value, with the same seeds at every "
                                "value; for paired seeds, how many seeds start"));
    m_width = new QDoubleSpinBox(this);
    m_width->setDecimals(2);
    m_width->setRange(0.01, 5.0);
    m_width->setSingleStep(0.05);
    m_width->setSuffix(tr(" decades"));
    m_width->setToolTip(tr("Stop when η*'s 95 % interval is narrower than this (0.2: a "
                           "factor of 1.58)"));
    m_budget = new QSpinBox(this);
    m_budget->setRange(1, 100000);
    m_budget->setToolTip(tr("Most runs of one configuration"));
    m_countLabel = new QLabel(tr("replicates"), this);
    m_model = namedChoice(
        this,
        {{tr("a curve per configuration"), QStringLiteral("separate")},
         {tr("one model, law inside"), QStringLiteral("joint")}},
        tr("How η* is fitted: a logistic curve per configuration and the law through their "
           "crossings, or one model of every configuration with a shared slope and the law "
           "inside it, which stops configurations sooner where they follow the law "
           "(docs/SEARCH.md). The other is fitted too, as a check."));
    m_seeds = namedChoice(
        this,
        {{tr("a fresh one every run"), seedPlanName(SearchSpec::SeedPlan::Fresh)},
         {tr("the same at every value"), seedPlanName(SearchSpec::SeedPlan::Replicates)},
         {tr("paired, each searched on its own"), seedPlanName(SearchSpec::SeedPlan::Paired)}},
        tr("Which seeds the runs get. A fresh seed every run keeps outcomes independent whether or "
           "not seeds differ. The same seeds at every value (replicates) make a configuration's "
           "crossing those seeds' crossing. Paired seeds bisect each seed's own threshold and "
           "report whether each seed is monotone along the axis (docs/SEARCH.md)."));
    m_lawWidth = new QDoubleSpinBox(this);
    m_lawWidth->setDecimals(2);
    m_lawWidth->setRange(0.0, 5.0);
    m_lawWidth->setSingleStep(0.05);
    m_lawWidth->setSpecialValueText(tr("off"));
    m_lawWidth->setToolTip(
        tr("One model only (search.law_width): configurations search on, within their budget, "
           "until the law's α interval is this narrow; off: each stops at its own interval. With "
           "five configurations the scatter about the law keeps α's interval above about 0.27 "
           "(docs/SEARCH.md)."));
    searchLines->addRow(tr("along"), searchAlong);
    searchLines->addRow(m_countLabel, m_replicates);
    searchLines->addRow(tr("interval"), m_width);
    searchLines->addRow(tr("budget"), m_budget);
    searchLines->addRow(tr("seeds"), m_seeds);
    searchLines->addRow(tr("fitted as"), m_model);
    searchLines->addRow(tr("law α to"), m_lawWidth);
    form->addRow(m_rows);
    m_error = errorLabel(this);
    form->addRow(m_error);
    for (auto *s : {m_replicates, m_budget})
        connect(s, &QSpinBox::valueChanged, this, &SearchBox::edited);
    connect(m_width, &QDoubleSpinBox::valueChanged, this, &SearchBox::edited);
    for (auto *e : {m_from, m_to}) connect(e, &QLineEdit::textChanged, this, &SearchBox::edited);
    connect(m_model, &QComboBox::currentIndexChanged, this, &SearchBox::edited);
    connect(m_lawWidth, &QDoubleSpinBox::valueChanged, this, &SearchBox::edited);
    // The law's width is the joint model's: offered only with it.
    auto lawWidthFollowsModel = [this] {
        m_lawWidth->setEnabled(m_model->currentData().toString() == QLatin1String("joint"));
    };
    connect(m_model, &QComboBox::currentIndexChanged, this, lawWidthFollowsModel);
    lawWidthFollowsModel();
    connect(m_seeds, &QComboBox::currentIndexChanged, this, [this] {
        // The count means seeds for paired seeds (8 to start with), runs per value otherwise.
        const bool paired = seedPlan() == SearchSpec::SeedPlan::Paired;
        const SearchSpec loaded = m_loaded.value_or(SearchSpec{});
        m_replicates->setMinimum(paired ? 2 : 1);
        m_replicates->setValue(paired ? loaded.seeds : loaded.replicates);
        updateControls();
        Q_EMIT edited();
    });
    connect(m_on, &QCheckBox::toggled, this, [this] {
        updateControls();
        Q_EMIT searchChanged();
        Q_EMIT edited();
    });
    // Another axis: its default range, or the loaded search's when it searched that axis.
    connect(m_axis, &QComboBox::currentIndexChanged, this, [this] {
        if (m_loading) return;
        const std::string axis = m_axis->currentData().toString().toStdString();
        const auto [low, high] = m_loaded && m_loaded->axis == axis
                                     ? std::pair(m_loaded->low, m_loaded->high)
                                     : searchRangeOf(axis);
        m_from->setText(exactNumber(low));
        m_to->setText(exactNumber(high));
        updateControls();
        Q_EMIT searchChanged();
        Q_EMIT edited();
    });
    updateControls();
}

void SearchBox::load(const Session &session)
{
    const QSignalBlocker block(this); // edited() and searchChanged() are for the person's edits
    m_loading = true;
    m_loaded = session.search;
    const SearchSpec spec = session.search.value_or(SearchSpec{});
    m_on->setChecked(session.search.has_value());
    m_axis->setCurrentIndex(std::max(0, m_axis->findData(QString::fromStdString(spec.axis))));
    const auto [low, high] =
        session.search ? std::pair(spec.low, spec.high) : searchRangeOf(spec.axis);
    m_from->setText(exactNumber(low));
    m_to->setText(exactNumber(high));
    m_seeds->setCurrentIndex(
        std::max(0, m_seeds->findData(QString::fromLatin1(seedPlanName(spec.seedPlan)))));
    m_replicates->setValue(spec.paired() ? spec.seeds : spec.replicates);
    m_width->setValue(spec.intervalWidth);
    m_budget->setValue(spec.budget);
    m_model->setCurrentIndex(spec.model == SearchSpec::Model::Joint ? 1 : 0);
    m_lawWidth->setValue(spec.lawWidth);
    m_loading = false;
    updateControls();
}

void SearchBox::build(Session &def, const Session &loaded, QStringList &errs) const
{
    if (!m_on->isChecked()) {
        def.search.reset();
    } else {
        SearchSpec spec = loaded.search.value_or(SearchSpec{});
        const std::string axis = m_axis->currentData().toString().toStdString();
        // η: too large a step fails (decreasing); another axis: told by the data (auto), unless
        // the loaded search along the same axis said otherwise.
        if (!loaded.search || loaded.search->axis != axis)
            spec.direction =
                axis == "lr" ? SearchSpec::Direction::Decreasing : SearchSpec::Direction::Auto;
        spec.axis = axis;
        const auto from =
            parseNumbers(m_from->text(), QStringLiteral("search.range[0]"), &errs, false);
        const auto to = parseNumbers(m_to->text(), QStringLiteral("search.range[1]"), &errs, false);
        if (from.size() == 1 && to.size() == 1) {
            spec.low = from.front();
            spec.high = to.front();
            if (!(spec.low < spec.high))
                errs << tr("search.range: from (%1) must be below to (%2)")
                            .arg(exactNumber(spec.low), exactNumber(spec.high));
            else if (spec.logScale && !(spec.low > 0))
                errs << tr("search.range: %1 is searched on a log scale: from (%2) must be "
                           "positive")
                            .arg(QString::fromStdString(axis), exactNumber(spec.low));
        } else if (from.size() > 1 || to.size() > 1) {
            errs << tr("search.range: one number each side");
        }
        spec.seedPlan = seedPlan();
        spec.replicates =
            spec.seedPlan == SearchSpec::SeedPlan::Replicates ? m_replicates->value() : 1;
        if (spec.paired()) {
            spec.seeds = m_replicates->value();
            if (spec.seeds < 2)
                errs << tr("search.seeds: paired seeds need 2 or more, got %1").arg(spec.seeds);
        }
        spec.intervalWidth = m_width->value();
        spec.budget = m_budget->value();
        spec.model = m_model->currentData().toString() == QLatin1String("joint")
                         ? SearchSpec::Model::Joint
                         : SearchSpec::Model::Separate;
        // Kept in the box, applied with the joint model only (the box is disabled otherwise).
        spec.lawWidth = spec.model == SearchSpec::Model::Joint ? m_lawWidth->value() : 0.0;
        if (spec.model == SearchSpec::Model::Joint && !spec.logScale)
            errs << tr("search.model: the joint model needs a log-scaled search; %1 is searched "
                       "on a linear scale")
                        .arg(QString::fromStdString(axis));
        if (spec.model == SearchSpec::Model::Joint && spec.paired())
            errs << tr("search.model: paired seeds have their own model (one slope with each "
                       "seed's offset, per configuration); choose a curve per configuration, or "
                       "fresh seeds for the joint model");
        if (spec.budget < spec.initialPoints * spec.replicates)
            errs << tr("search.budget: %1 runs per configuration is fewer than round 0 (%2 points "
                       "× %3 replicates)")
                        .arg(spec.budget)
                        .arg(spec.initialPoints)
                        .arg(spec.replicates);
        def.search = spec;
    }
    if (def.search) // the search chooses its axis's values and the seeds
        std::erase_if(def.axes, [&](const SweepAxis &a) {
            return a.name == def.search->axis || a.name == "seed";
        });
}

SearchSpec::SeedPlan SearchBox::seedPlan() const
{
    return seedPlanNamed(m_seeds->currentData().toString().toStdString())
        .value_or(SearchSpec::SeedPlan::Fresh);
}

void SearchBox::updateControls()
{
    m_rows->setEnabled(m_on->isChecked());
    const SearchSpec::SeedPlan plan = seedPlan();
    m_replicates->setEnabled(plan != SearchSpec::SeedPlan::Fresh);
    m_countLabel->setText(plan == SearchSpec::SeedPlan::Paired ? tr("seeds") : tr("replicates"));
}

bool SearchBox::searching() const
{
    return m_on->isChecked();
}

std::string SearchBox::axis() const
{
    return m_axis->currentData().toString().toStdString();
}

} // namespace headlab::ui
