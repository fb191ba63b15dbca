// ColourTable.h — one colour table per session. The session's colour axis (heads, when swept) maps
// each of its values to one palette colour, its place among the axis' values in the sweep's order;
// every figure that colours lines by that axis reads the colour here, so that "n_H = 2" has the
// same colour in the loss curves, the small multiples and the figures against m, m_H and η, and
// keeps it while runs of other values are still training.
#pragma once

#include "core/session/Session.h"

#include <QString>
#include <QStringList>

#include <string>
#include <vector>

namespace headlab::ui {

struct ColourTable {
    std::string axis;   // the colour axis; empty when the session sweeps nothing to colour by
    QStringList values; // its values' labels in the sweep's order: value i has palette colour i
    // A value's colour (its place in `values`); -1 for a value the table lacks.
    int indexOf(const QString &label) const;
    // A run's colour: its value on the colour axis; -1 when it has none.
    int indexOf(const SessionRun &run) const;
    // The colour the given runs share, -1 when they differ or none has the axis (a line over
    // several values of the colour axis takes a colour of its own figure's).
    int sharedIndex(const std::vector<const SessionRun *> &runs) const;
};

// The session's colour axis: `heads` when the session sweeps it, else the first swept axis (in
// sweptAxes' order) that is not a replicate axis, preferring one with several values.
ColourTable colourTable(const Session &session);

} // namespace headlab::ui
