// ColourTable.cpp — the session's colour axis and the colours of its values.
#include "ui/model/ColourTable.h"

#include "core/session/Replicates.h"
#include "ui/model/HeatmapData.h"
#include "ui/model/RunMetrics.h"

#include <algorithm>

namespace headlab::ui {

int ColourTable::indexOf(const QString &label) const
{
    return int(values.indexOf(label));
}

int ColourTable::indexOf(const SessionRun &run) const
{
    if (axis.empty()) return -1;
    const auto it = run.labels.find(axis);
    return it == run.labels.end() ? -1 : indexOf(QString::fromStdString(it->second));
}

int ColourTable::sharedIndex(const std::vector<const SessionRun *> &runs) const
{
    int shared = -1;
    for (const SessionRun *run : runs) {
        const int i = indexOf(*run);
        if (i < 0 || (shared >= 0 && i != shared)) return -1;
        shared = i;
    }
    return shared;
}

ColourTable colourTable(const Session &session)
{
    const QStringList axes = sweptAxes(session);
    const auto replicates = replicateAxes(session);
    auto isReplicate = [&](const QString &a) {
        return std::find(replicates.begin(), replicates.end(), a.toStdString()) != replicates.end();
    };
    ColourTable table;
    // A lesson colours by head count even while one is pressed: its colours stay the same.
    const auto fixed = session.view.find(kLessonColoursKey);
    if (fixed != session.view.end() && axes.contains(QStringLiteral("heads"))) table.axis = "heads";
    for (bool several : {true, false})
        for (const QString &a : QStringList{QStringLiteral("heads")} + axes)
            if (table.axis.empty() && axes.contains(a) && !isReplicate(a) &&
                (!several || axisValueLabels(session, a.toStdString()).size() > 1))
                table.axis = a.toStdString();
    if (table.axis.empty()) return table;
    table.values = axisValueLabels(session, table.axis);
    if (table.axis == "heads" && fixed != session.view.end()) {
        QStringList ordered = QString::fromStdString(fixed->second).split(QLatin1Char(','));
        for (const QString &v : table.values)
            if (!ordered.contains(v)) ordered << v;
        table.values = ordered;
    }
    return table;
}

ConfigurationKey configurationOf(const Session &session, const SessionRun &run,
                                 const std::string &plotted)
{
    const auto replicates = replicateAxes(session);
    ConfigurationKey key;
    for (const auto &[axis, label] : run.labels)
        if (axis != plotted &&
            std::find(replicates.begin(), replicates.end(), axis) == replicates.end())
            key[axis] = label;
    return key;
}

ConfigurationRest::ConfigurationRest(const Session &session, std::set<std::string> drawn)
    : m_drawn(std::move(drawn))
    , m_axes(configurationAxes(session))
{
    for (const auto &axis : replicateAxes(session)) m_drawn.insert(axis);
    // Values as configurationLabels resolves them: a combination's row that sets qk_norm alone
    // still has softcap 0. An axis with one value tells no runs apart.
    std::map<std::string, std::map<std::string, int>> counts;
    for (const auto &run : session.runs)
        for (const auto &[axis, label] : configurationLabels(m_axes, run.labels, run.config))
            ++counts[axis][label];
    for (const auto &[axis, labels] : counts) {
        if (labels.size() < 2) m_drawn.insert(axis);
        int most = 0;
        for (const auto &[label, n] : labels)
            if (n > most) {
                most = n;
                m_usual[axis] = label;
            }
    }
    for (const auto &run : session.runs)
        if (const QString v = (*this)(run); !m_values.contains(v)) m_values << v;
}

QString ConfigurationRest::legendName(const QString &value) const
{
    if (value.isEmpty()) return value;
    QStringList differs;
    const QStringList parts = value.split(QLatin1Char(' '));
    for (const QString &part : parts) {
        const std::string axis = part.section(QLatin1Char('='), 0, 0).toStdString();
        const auto usual = m_usual.find(axis);
        if (usual == m_usual.end() ||
            part.section(QLatin1Char('='), 1).toStdString() != usual->second)
            differs << part;
    }
    return displayKey((differs.isEmpty() ? QStringList{parts.front()} : differs).join(' '));
}

QString ConfigurationRest::operator()(const SessionRun &run) const
{
    QStringList parts;
    const auto labels = configurationLabels(m_axes, run.labels, run.config);
    for (const auto &axis : m_axes) // in the axes' order
        if (const auto it = labels.find(axis); !m_drawn.count(axis) && it != labels.end())
            parts << QString::fromStdString(axis) + "=" + QString::fromStdString(it->second);
    return parts.join(' ');
}

ConfigurationColours::Style ConfigurationColours::styleOf(const ConfigurationKey &key) const
{
    const auto it = of.find(key);
    return it == of.end() ? Style{} : it->second;
}

ConfigurationColours configurationColours(const Session &session, const std::string &plotted)
{
    ConfigurationColours out;
    std::vector<ConfigurationKey> order; // the sweep's order
    for (const auto &run : session.runs) {
        ConfigurationKey key = configurationOf(session, run, plotted);
        if (out.of.emplace(key, ConfigurationColours::Style{int(order.size()), 0}).second)
            order.push_back(std::move(key));
    }
    if (int(order.size()) <= kPaletteColours) return out;
    // Too many for a colour each: the colour axis's colour, and a shade for the rest.
    const ColourTable table = colourTable(session);
    std::map<int, int> sharing; // colour -> configurations of it
    std::map<ConfigurationKey, ConfigurationColours::Style> styled;
    std::vector<ConfigurationKey> shadeKeys;
    for (const auto &key : order) {
        const auto value = key.find(table.axis);
        const int colour =
            value == key.end() ? -1 : table.indexOf(QString::fromStdString(value->second));
        if (colour < 0) return out; // the colour axis does not name every configuration
        ConfigurationKey rest = key;
        rest.erase(table.axis);
        auto at = std::find(shadeKeys.begin(), shadeKeys.end(), rest);
        if (at == shadeKeys.end()) at = shadeKeys.insert(shadeKeys.end(), rest);
        styled[key] = {colour, int(at - shadeKeys.begin())};
        ++sharing[colour];
    }
    int mostSharing = 1;
    for (const auto &[colour, count] : sharing) mostSharing = std::max(mostSharing, count);
    out.of = std::move(styled);
    out.table = table;
    if (mostSharing > 1) {
        out.shades = int(shadeKeys.size());
        out.shadeKeys = std::move(shadeKeys);
    } else {
        for (auto &[key, style] : out.of) style.shade = 0;
    }
    return out;
}

std::vector<LegendEntry> shortLegendOf(const ConfigurationColours &colours)
{
    std::vector<LegendEntry> out;
    if (colours.shades <= 1) return out;
    std::set<int> used;
    for (const auto &[key, style] : colours.of) used.insert(style.colour);
    for (int c = 0; c < colours.table.values.size(); ++c)
        if (used.count(c))
            out.push_back({axisValueText(colours.table.axis, colours.table.values[c]), c, 0, 1});
    // Written as the colours' entries are ("d_model = 48", not the key's "d_model=48").
    for (int k = 0; k < colours.shades; ++k) {
        QStringList rest;
        for (const auto &[axis, label] : colours.shadeKeys[size_t(k)])
            rest << QString::fromStdString(axis) + "=" + QString::fromStdString(label);
        out.push_back({displayKey(rest.join(' ')), -1, k, colours.shades});
    }
    return out;
}

} // namespace headlab::ui
