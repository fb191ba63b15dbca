// SearchSummary.h — a boundary search's report for a person (the text `headlab-cli summary`, `run`
// and `slurm` print) and as CSV (one row per configuration: `summary --csv`).
#pragma once

#include "core/session/search/SearchReport.h"

#include <string>

namespace headlab {

std::string searchSummaryText(const SearchReport &report);
std::string searchSummaryCsv(const SearchReport &report);

} // namespace headlab
