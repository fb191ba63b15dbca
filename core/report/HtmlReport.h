// HtmlReport.h — a session as one web page that any browser opens offline (headlab-cli report,
// File ▸ Export report; docs/REPORT.md):
//  - every figure the session's data make (the loss curves with the task's plateau lines, the
//    trainability heatmap over width × heads, the learned fraction against η·√m_H, a search's
//    crossings and law), drawn as SVG by D3, with values under the cursor and series toggled
//    from the legend;
//  - the runs table, selected by the run filter's grammar (RunFilter.h) over values computed here
//    (RunValues.h), so that the page and headlab-cli select the same runs;
//  - the session's note and tags, each run's, the lesson text of a classroom preset, and a
//    search's summary as `headlab-cli summary` prints it;
//  - the session itself (HtmlEmbed.h), which HeadLab reopens and the page offers as a download.
// Curves are decimated (CurveDecimation.h) to `curveBuckets` pixel columns; every point is in the
// embedded session. Torch-free and Qt-free.
#pragma once

#include "core/session/SessionData.h"

#include <cstdint>
#include <string>

namespace headlab {

struct HtmlReportOptions {
    int curveBuckets = 300; // each curve drawn from at most 2 · curveBuckets points
    // D3's script (d3.min.js); "" looks in HEADLAB_D3_JS, then where Debian's node-d3 and
    // libjs-d3 install it.
    std::string d3Path;
    // The session's text as its file holds it (reopened byte for byte); "" writes the session as
    // saveSession does (every result inline).
    std::string sessionText;
};

struct HtmlReportSummary {
    std::string path;
    uint64_t bytes = 0;        // of the page
    uint64_t sessionBytes = 0; // of the session inside it, before compression
    size_t runs = 0;
    size_t points = 0;                // curve points of the session
    size_t drawnPoints = 0;           // of them drawn in the page
    std::vector<std::string> figures; // the figures it holds, by title
};

// The page's text.
std::string htmlReport(const Session &session, const HtmlReportOptions &options,
                       HtmlReportSummary *summary = nullptr);
// Writes it to `path` atomically; SessionError naming the file that could not be read or written.
HtmlReportSummary writeHtmlReport(const Session &session, const std::string &path,
                                  const HtmlReportOptions &options = {});
// The text of the session file at `path` where that file alone holds exactly `session` (an export,
// a .yaml.gz archive, a report, a session whose results are inline and unchanged): a report then
// carries the file byte for byte (HtmlReportOptions::sessionText). "" where it does not (results
// in SESSION.results/ or in shards, runs set aside, edits not saved), and the report carries the
// session as export-yaml writes it.
std::string sessionFileText(const Session &session, const std::string &path);
// Where D3 is read from (the option, HEADLAB_D3_JS, Debian's paths); "" when nowhere.
std::string findD3Script(const std::string &given = "");

} // namespace headlab
