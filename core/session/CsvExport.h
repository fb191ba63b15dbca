// CsvExport.h — a session's curves and run summaries as CSV, for plotting outside HeadLab.
//
// Two files (docs/SESSION_FORMAT.md, "CSV export"): runs.csv, one row per run with its labels,
// its key configuration, status and metrics; curves.csv, every curve point of every run in long
// format (run, curve, step, value). Torch-free and Qt-free.
#pragma once

#include "core/session/SessionData.h"

#include <string>
#include <vector>

namespace headlab {

struct CsvExportSummary {
    std::string runsPath;
    std::string curvesPath;
    size_t runs = 0;
    size_t points = 0;
};

// What an export holds beyond every run: `runs`, one entry per run, the runs to write (a run
// filter's selection, RunFilter::select; empty: every run; a run keeps its row number, `run`, in
// both files); `values`, run values (RunValues.h: STAT(CURVE), or a metric) as columns of
// runs.csv after the metrics, named by their keys.
struct CsvExportOptions {
    std::vector<bool> runs;
    std::vector<std::string> values;
};

// Writes runs.csv and curves.csv into `directory`, creating it if needed. Throws SessionError
// naming the file that could not be written.
CsvExportSummary exportSessionCsv(const Session &session, const std::string &directory,
                                  const CsvExportOptions &options = {});

} // namespace headlab
