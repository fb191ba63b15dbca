// Highlight.cpp — see Highlight.h.
#include "ui/figures/Highlight.h"

#include <QAbstractSeries>
#include <QChart>
#include <QComboBox>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QSignalBlocker>

#include <algorithm>

namespace headlab::ui {

Highlight::Highlight(QWidget *owner, QHBoxLayout *controls)
    : QObject(owner)
    , m_box(new QComboBox(owner))
{
    m_box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_box->setToolTip(tr("Draw one configuration, or every line of one colour or shade, thick "
                         "and the others faint. Hovering a line or a legend entry does the same "
                         "while the mouse stays; a click on a legend entry keeps it"));
    m_box->addItem(tr("Highlight: none"), QString());
    m_box->setVisible(false);
    controls->addWidget(m_box);
    connect(m_box, &QComboBox::activated, this, [this] { keep(m_box->currentData().toString()); });
}

QString Highlight::entryKey(const LegendEntry &entry)
{
    return (entry.colour >= 0 ? QStringLiteral("colour:") : QStringLiteral("shade:")) + entry.name;
}

bool Highlight::legendFits(const QChart *chart, int entries)
{
    const double lineHeight = QFontMetricsF(chart->legend()->font()).height() * 1.45;
    return entries * lineHeight <= chart->size().height() - 60;
}

QLineSeries *Highlight::legendEntryLine(const LegendEntry &entry)
{
    auto *line = new QLineSeries();
    line->setName(entry.name);
    line->setProperty("highlight", entryKey(entry));
    line->setProperty("colour", entry.colour);
    line->setProperty("shade", entry.shade);
    line->setProperty("shades", entry.shades);
    return line;
}

void Highlight::offer(const std::vector<LegendEntry> &shortLegend,
                      const QStringList &configurations, const QStringList &texts)
{
    m_shortLegend = shortLegend;
    QList<std::pair<QString, QString>> wanted; // text, key
    for (const auto &entry : shortLegend)
        wanted.push_back({tr("every line of %1").arg(entry.name), entryKey(entry)});
    for (int i = 0; i < configurations.size(); ++i)
        wanted.push_back({texts.value(i, configurations[i]), lineKey(configurations[i])});
    bool same = m_box->count() == wanted.size() + 1;
    for (int i = 0; same && i < wanted.size(); ++i)
        same = m_box->itemData(i + 1).toString() == wanted[i].second &&
               m_box->itemText(i + 1) == wanted[i].first;
    if (!same) {
        const QSignalBlocker block(m_box);
        m_box->clear();
        m_box->addItem(tr("Highlight: none"), QString());
        for (const auto &[text, key] : wanted) m_box->addItem(text, key);
        m_box->setCurrentIndex(std::max(0, m_box->findData(m_kept)));
    }
    m_box->setVisible(configurations.size() > 1);
}

void Highlight::wireLegend(QChart *chart)
{
    for (auto *marker : chart->legend()->markers()) {
        if (marker->property("wired").toBool()) continue;
        marker->setProperty("wired", true);
        auto keyOf = [marker]() -> QString {
            const QAbstractSeries *series = marker->series();
            if (!series) return {};
            if (series->property("key").isValid())
                return lineKey(series->property("key").toString());
            return series->property("highlight").toString();
        };
        connect(marker, &QLegendMarker::hovered, this,
                [this, keyOf](bool on) { hover(on ? keyOf() : QString()); });
        connect(marker, &QLegendMarker::clicked, this, [this, keyOf] {
            const QString key = keyOf();
            if (!key.isEmpty()) keep(key == m_kept ? QString() : key);
        });
    }
}

void Highlight::keep(const QString &key)
{
    m_kept = key;
    m_box->setCurrentIndex(std::max(0, m_box->findData(key)));
    Q_EMIT changed();
    Q_EMIT keptChanged();
}

void Highlight::hover(const QString &key)
{
    if (key == m_hover) return;
    m_hover = key;
    Q_EMIT changed();
}

QString Highlight::active(const QChart *chart) const
{
    const QString key = m_hover.isEmpty() ? m_kept : m_hover;
    m_activeColour = m_activeShade = -1;
    // A kept key that names nothing drawn (a configuration not finished yet, another
    // session's) lights nothing and fades nothing.
    for (const auto *series : chart->series())
        if (series->property("key").isValid() && lit(key, series)) {
            m_activeColour = series->property("colour").toInt();
            m_activeShade = series->property("shade").toInt();
            m_activeShades = series->property("shades").toInt();
            return key;
        }
    return {};
}

void Highlight::fadeLegend(QChart *chart, const QString &active, const QColor &text) const
{
    QColor faded = text;
    faded.setAlphaF(0.35f);
    for (auto *series : chart->series()) {
        if (!series->property("key").isValid() && !series->property("highlight").isValid())
            continue;
        const bool on = shownLit(active, series);
        for (auto *marker : chart->legend()->markers(series))
            marker->setLabelBrush(on ? QBrush(text) : QBrush(faded));
    }
}

QStringList Highlight::keys() const
{
    QStringList out;
    for (int i = 1; i < m_box->count(); ++i) out << m_box->itemData(i).toString();
    return out;
}

bool Highlight::lit(const QString &key, const QAbstractSeries *series) const
{
    if (key.startsWith(QLatin1String("line:")))
        return series->property("key").toString() == key.mid(5);
    for (const auto &entry : m_shortLegend) {
        if (entryKey(entry) != key) continue;
        return entry.colour >= 0 ? series->property("colour").toInt() == entry.colour
                                 : series->property("shade").toInt() == entry.shade &&
                                       series->property("shades").toInt() == entry.shades;
    }
    return false;
}

bool Highlight::shownLit(const QString &active, const QAbstractSeries *series) const
{
    if (active.isEmpty()) return true;
    if (series->property("highlight").isValid()) { // an entry of the short legend
        const QString key = series->property("highlight").toString();
        if (key == active) return true;
        if (!active.startsWith(QLatin1String("line:"))) return false;
        for (const auto &entry : m_shortLegend) // the lit configuration's colour and shade
            if (entryKey(entry) == key)
                return entry.colour >= 0
                           ? entry.colour == m_activeColour
                           : entry.shade == m_activeShade && entry.shades == m_activeShades;
        return false;
    }
    return lit(active, series);
}

} // namespace headlab::ui
