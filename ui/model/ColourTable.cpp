// ColourTable.cpp — the session's colour axis and the colours of its values.
#include "ui/model/ColourTable.h"

#include "core/session/Replicates.h"
#include "ui/model/HeatmapData.h"

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
    for (bool several : {true, false})
        for (const QString &a : QStringList{QStringLiteral("heads")} + axes)
            if (table.axis.empty() && axes.contains(a) && !isReplicate(a) &&
                (!several || axisValueLabels(session, a.toStdString()).size() > 1))
                table.axis = a.toStdString();
    if (!table.axis.empty()) table.values = axisValueLabels(session, table.axis);
    return table;
}

} // namespace headlab::ui
