// ReportCommand.cpp — headlab-cli report: a session as one web page that opens offline in any
// browser (core/report/HtmlReport.h, docs/REPORT.md), and the session back out of one.
#include "CliOptions.h"
#include "Commands.h"

#include "core/config/Files.h"
#include "core/report/HtmlReport.h"
#include "core/session/HtmlEmbed.h"
#include "core/session/RunFiles.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

namespace headlab::cli {

namespace {

std::string mib(uint64_t bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / (1 << 20));
    return text;
}

int reportCommand(const std::string &sessionPath, const std::string &output, bool extract,
                  int buckets)
{
    if (extract) { // the session a report carries, byte for byte
        if (!isHtmlReportPath(sessionPath))
            throw SessionError(sessionPath, 0, 0, "",
                               "--extract reads a report (REPORT.html), and this is not one");
        const std::string text = readSessionText(sessionPath);
        writeFileAtomic(output, text);
        std::printf("wrote %s (%zu bytes, the session inside %s)\n", output.c_str(), text.size(),
                    sessionPath.c_str());
        return kExitOk;
    }
    const Session session = loadSweepRuns(sessionPath);
    HtmlReportOptions options;
    options.curveBuckets = buckets;
    // A session that its file alone holds (an export, an archive, another report's) goes in as
    // the file holds it, so that it comes back byte for byte; any other as export-yaml writes it.
    options.sessionText = sessionFileText(session, sessionPath);
    const HtmlReportSummary s = writeHtmlReport(session, output, options);
    std::string figures;
    for (const auto &f : s.figures) figures += (figures.empty() ? "" : "; ") + f;
    std::printf("wrote %s (%s: %zu runs, %zu of %zu curve points drawn, the session's %s inside)\n"
                "figures: %s\n",
                output.c_str(), mib(s.bytes).c_str(), s.runs, s.drawnPoints, s.points,
                mib(s.sessionBytes).c_str(), figures.c_str());
    return kExitOk;
}

CommandAction defineReport(CLI::App &app)
{
    struct Arguments {
        std::string session, output;
        bool extract = false;
        int buckets = 300;
    };
    auto a = std::make_shared<Arguments>();
    CLI::App *report = app.add_subcommand(
        "report", "Write a session as one web page that opens offline in any browser");
    report->footer(
        "The page holds every figure of the session (values under the cursor, series toggled from\n"
        "the legend), the runs table with the run filter, notes and tags, a search's numbers and\n"
        "law, and the session itself: HeadLab and headlab-cli open REPORT.html as the session.\n"
        "Curves are drawn from at most 2 x BUCKETS points each; every point is in the session "
        "inside.\n"
        "Needs D3 (Debian's node-d3) where it is written, nothing where it is read.\n"
        "  headlab-cli report SESSION.yaml -o REPORT.html\n"
        "  headlab-cli report REPORT.html --extract -o SESSION.yaml   (the session, byte for "
        "byte)");
    report->add_option("session", a->session, "The session (SESSION.yaml, .yaml.gz or a report)")
        ->required();
    report->add_option("-o,--output", a->output, "The file to write (REPORT.html)")->required();
    report->add_flag("--extract", a->extract, "Write the session a report carries instead");
    report->add_option("--buckets", a->buckets, "Pixel columns each curve is decimated to")
        ->check(rangeValidator(20, 100000));
    return {report, [a] { return reportCommand(a->session, a->output, a->extract, a->buckets); }};
}

const CommandRegistration kReportCommand(55, defineReport);

} // namespace

} // namespace headlab::cli
