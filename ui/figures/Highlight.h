// Highlight.h — finding one configuration among many (issue 75: on the Figure 2 campaign 25
// lines whose colours repeat, and a legend of 25 entries). A figure's lines of a configuration
// carry its name in the property "key", and its colour, shade and shades; the Highlight box, a
// hover over a line or a legend entry, or a click on a legend entry, picks what is highlighted:
// one configuration, or every line of one colour (a head count) or one shade (a width) of the
// short legend. The figure draws the lit lines thick and the others faint.
//
// A key: "" none, "line:<configuration>", "colour:<short legend entry>", "shade:<entry>". The
// kept one is saved in the session's view (exports draw it); a hover holds while the mouse stays.
#pragma once

#include "ui/model/ColourTable.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <vector>

class QAbstractSeries;
class QChart;
class QComboBox;
class QHBoxLayout;
class QLineSeries;
class QWidget;

namespace headlab::ui {

class Highlight : public QObject {
    Q_OBJECT
public:
    // Puts the Highlight box on `controls`.
    Highlight(QWidget *owner, QHBoxLayout *controls);

    // What the box offers: the short legend's colours and shades, then each configuration
    // (their names as drawn, in the figure's order). Rebuilt only when it changed.
    void offer(const std::vector<LegendEntry> &shortLegend, const QStringList &configurations,
               const QStringList &texts);
    // Hover and click on the chart's legend entries of series that carry a key.
    void wireLegend(QChart *chart);

    QString kept() const { return m_kept; }
    void keep(const QString &key);  // emits keptChanged and changed
    void hover(const QString &key); // "" when the mouse leaves
    // The one drawn: the hover's, else the kept one; "" where it names no series of `chart` that
    // carries a configuration's key.
    QString active(const QChart *chart) const;
    // The legend's labels of the series not lit faded, the others in `text`.
    void fadeLegend(QChart *chart, const QString &active, const QColor &text) const;
    QStringList keys() const; // the box's, in its order
    // Whether a series of a configuration (its "key", "colour", "shade" and "shades") is lit.
    bool lit(const QString &key, const QAbstractSeries *series) const;
    // A series of the short legend (its property "highlight" names its key) or of a
    // configuration: whether it is drawn as lit when `active` is.
    bool shownLit(const QString &active, const QAbstractSeries *series) const;
    static QString lineKey(const QString &configuration)
    {
        return QStringLiteral("line:") + configuration;
    }
    static QString entryKey(const LegendEntry &entry);
    // Whether a legend of `entries` rows fits `chart`'s height; where it does not, a figure of
    // configurations lists its short legend instead (25 entries ran off the bottom).
    static bool legendFits(const QChart *chart, int entries);
    // An empty line whose legend entry stands for `entry`: its name, its key ("highlight") and
    // its colour, shade and shades, as a configuration's lines carry them. The caller pens it.
    static QLineSeries *legendEntryLine(const LegendEntry &entry);

Q_SIGNALS:
    void changed();     // the drawn highlight may have changed: restyle
    void keptChanged(); // save the view

private:
    QComboBox *m_box;
    QString m_kept, m_hover;
    std::vector<LegendEntry> m_shortLegend;
    // The colour and shade of the configuration active() found for a "line:" key: its entries
    // of the short legend stay lit with it.
    mutable int m_activeColour = -1, m_activeShade = -1, m_activeShades = 0;
};

} // namespace headlab::ui
