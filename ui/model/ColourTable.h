// ColourTable.h — one colour table per session. The session's colour axis (heads, when swept) maps
// each of its values to one palette colour, its place among the axis' values in the sweep's order;
// every figure that colours lines by that axis reads the colour here, so that "n_H = 2" has the
// same colour in the loss curves, the small multiples and the figures against m, m_H and η, and
// keeps it while runs of other values are still training.
#pragma once

#include "core/session/Session.h"

#include <QString>
#include <QStringList>

#include <map>
#include <set>
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

// The view key that fixes the heads axis's palette order ("1,2,3,4,6,12"): the lesson strip
// writes its head buttons there, so that a head count keeps its colour while presses add and
// remove others.
inline constexpr const char *kLessonColoursKey = "lesson_colours";

// The session's colour axis: `heads` when the session sweeps it, else the first swept axis (in
// sweptAxes' order) that is not a replicate axis, preferring one with several values. Its values
// are in the sweep's order. Where the view has kLessonColoursKey the axis is heads, even with one
// value, in that key's order (the sweep's values it lacks after them).
ColourTable colourTable(const Session &session);

// The colours of the figures' series palette (ChartTheme::series: Okabe and Ito's without its
// black, and five more kept apart for colour-blind readers; tests/ui checks the two agree): up to
// this many configurations each get one of their own.
inline constexpr int kPaletteColours = 12;

// A configuration: a run's labels but the axis a figure plots against (`plotted`, "lr") and the
// replicate axes (seeds): {d_model: "48", heads: "3"}.
using ConfigurationKey = std::map<std::string, std::string>;
ConfigurationKey configurationOf(const Session &session, const SessionRun &run,
                                 const std::string &plotted);

// The rest of a run's configuration: its labels but the axes a figure draws (`drawn`: its x, its
// lines, its panels) and the replicate axes, as "softcap=10 z_loss=1e-4" ("" where none is left).
// Values are the configuration labels (core/session/Replicates.h: a combination's row that sets
// qk_norm alone still has softcap 0); only axes whose values differ count. A figure's line, point or
// drawing style is one value of it, so that it pools replicates of one configuration only (issue
// 75: loss against m pooled five stabilizer groups as seeds).
class ConfigurationRest {
public:
    ConfigurationRest(const Session &session, std::set<std::string> drawn);
    QString operator()(const SessionRun &run) const;
    // The values over the session's runs, in the sweep's order.
    QStringList values() const { return m_values; }
    // A value as a legend names it: the axes where it differs from the value most runs have
    // ("qk_norm = gain" for the stabilizer grid's row that sets qk_norm alone), or its first axis
    // where it differs in none ("qk_rule = off").
    QString legendName(const QString &value) const;

private:
    std::map<std::string, std::string> m_usual; // each axis's most common value
    std::set<std::string> m_drawn;
    std::vector<std::string> m_axes; // configurationAxes(session)
    QStringList m_values;
};

// One colour per configuration, the same in every figure that draws configurations (Loss vs η and
// the Boundary tab's P(learned) and collapse views; issue 52): the session's configurations in the
// sweep's order, finished or not, so that a colour does not move while runs train.
//  - Up to kPaletteColours configurations: each its own palette colour, in the sweep's order.
//  - More (the 25 of Figure 2): the colour axis's colour (ColourTable: heads) and a shade per value
//    of the rest of the configuration (the width), which the figures' short legends name; where
//    the colour axis does not tell configurations apart, their place in the sweep.
struct ConfigurationColours {
    struct Style {
        int colour = -1; // a palette index; -1 for a configuration the session lacks
        int shade = 0;   // 0 … shades − 1, darker to lighter
    };
    std::map<ConfigurationKey, Style> of;
    int shades = 1;                          // > 1: colours name the colour axis, shades the rest
    ColourTable table;                       // the colour axis, when shades > 1
    std::vector<ConfigurationKey> shadeKeys; // the rest of a configuration, one per shade
    Style styleOf(const ConfigurationKey &key) const;
};
ConfigurationColours configurationColours(const Session &session, const std::string &plotted);

// An entry of a figure's short legend: a colour, or a shade (colour −1: of the text colour).
struct LegendEntry {
    QString name;
    int colour = -1;
    int shade = 0;
    int shades = 1;
};
// With shades: the colours used ("heads = 6"), then the shades ("d_model = 48"); else none.
std::vector<LegendEntry> shortLegendOf(const ConfigurationColours &colours);

} // namespace headlab::ui
