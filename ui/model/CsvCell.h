// CsvCell.h — a text cell of a figure's CSV, written as every HeadLab CSV writes one
// (core/config/Files.h, csvField): quoted where it must be, and never a formula.
#pragma once

#include "core/config/Files.h"

#include <QString>

namespace headlab::ui {

inline QString csvCell(const QString &text)
{
    return QString::fromStdString(csvField(text.toStdString()));
}

inline QString csvCell(const std::string &text)
{
    return QString::fromStdString(csvField(text));
}

} // namespace headlab::ui
