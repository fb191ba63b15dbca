// SearchSummary.h — a boundary search's report for a person (the text `headlab-cli summary`, `run`
// and `slurm` print) and as CSV (one row per configuration: `summary --csv`).
#pragma once

#include "core/session/search/SearchReport.h"

#include <string>

namespace headlab {

std::string searchSummaryText(const SearchReport &report);
// The crossing's symbol: "η*" for a search along lr, else "AXIS*".
std::string crossingSymbol(const std::string &axis);
std::string searchSummaryCsv(const SearchReport &report);

} // namespace headlab
