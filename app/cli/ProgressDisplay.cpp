// ProgressDisplay.cpp — progress bar and ETA for headlab-cli run.
#include "ProgressDisplay.h"

#include <algorithm>
#include <cmath>

#include <sys/ioctl.h>
#include <unistd.h>

namespace headlab::cli {

ProgressDisplay::ProgressDisplay(std::FILE *stream, int64_t totalSteps, int runCount,
                                 double plainIntervalSeconds)
    : m_stream(stream)
    , m_terminal(::isatty(::fileno(stream)) != 0)
    , m_totalSteps(totalSteps)
    , m_runCount(runCount)
    , m_plainInterval(plainIntervalSeconds)
    , m_start(std::chrono::steady_clock::now())
    , m_lastDraw(m_start)
{}

std::string ProgressDisplay::formatDuration(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0) return "?";
    const auto total = static_cast<int64_t>(std::llround(seconds));
    char buffer[32];
    if (total >= 3600)
        std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", static_cast<long long>(total / 3600),
                      static_cast<long long>(total / 60 % 60));
    else if (total >= 60)
        std::snprintf(buffer, sizeof buffer, "%lldm%02llds", static_cast<long long>(total / 60),
                      static_cast<long long>(total % 60));
    else
        std::snprintf(buffer, sizeof buffer, "%llds", static_cast<long long>(total));
    return buffer;
}

void ProgressDisplay::update(const RunProgress &progress)
{
    m_active[progress.runIndex] = progress;
}

void ProgressDisplay::runFinished(int runIndex, int64_t totalSteps)
{
    m_active.erase(runIndex);
    ++m_runsFinished;
    m_stepsOfFinishedRuns += totalSteps;
}

std::string ProgressDisplay::statusLine() const
{
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    int64_t done = m_stepsOfFinishedRuns;
    for (const auto &[index, p] : m_active) done += p.step;
    done = std::min(done, m_totalSteps);
    const double fraction =
        m_totalSteps > 0 ? static_cast<double>(done) / static_cast<double>(m_totalSteps) : 0.0;
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
    const double eta = rate > 0 ? static_cast<double>(m_totalSteps - done) / rate : -1.0;

    constexpr int kBarWidth = 20;
    const int filled = static_cast<int>(fraction * kBarWidth);
    std::string line = "[" + std::string(static_cast<size_t>(filled), '#') +
                       std::string(static_cast<size_t>(kBarWidth - filled), '-') + "]";
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, " %3.0f%%  %d/%d runs  ETA %s", 100.0 * fraction,
                  m_runsFinished, m_runCount, formatDuration(eta).c_str());
    line += buffer;

    if (m_active.size() == 1) {
        const auto &[index, p] = *m_active.begin();
        std::snprintf(buffer, sizeof buffer, "  | run %d: %lld/%lld steps, %.0f steps/s, ETA %s",
                      index, static_cast<long long>(p.step), static_cast<long long>(p.totalSteps),
                      p.stepsPerSecond, formatDuration(p.etaSeconds).c_str());
        line += buffer;
    } else if (m_active.size() > 1) {
        int64_t minStep = INT64_MAX, maxTotal = 0;
        double maxEta = 0, rateSum = 0;
        for (const auto &[index, p] : m_active) {
            minStep = std::min(minStep, p.step);
            maxTotal = std::max(maxTotal, p.totalSteps);
            maxEta = std::max(maxEta, p.etaSeconds);
            rateSum += p.stepsPerSecond;
        }
        std::snprintf(buffer, sizeof buffer, "  | %zu runs: %lld/%lld steps, %.0f steps/s, ETA %s",
                      m_active.size(), static_cast<long long>(minStep),
                      static_cast<long long>(maxTotal), rateSum, formatDuration(maxEta).c_str());
        line += buffer;
    }
    return line;
}

void ProgressDisplay::clearLine()
{
    if (m_terminal && m_barShown) {
        std::fputs("\r\x1b[K", m_stream);
        m_barShown = false;
    }
}

void ProgressDisplay::printLine(const std::string &line)
{
    clearLine();
    std::fprintf(m_stream, "%s\n", line.c_str());
    std::fflush(m_stream);
    if (m_terminal) draw(true);
}

void ProgressDisplay::draw(bool force)
{
    const auto now = std::chrono::steady_clock::now();
    const double sinceLast = std::chrono::duration<double>(now - m_lastDraw).count();
    if (m_terminal) {
        if (!force && sinceLast < 0.1) return;
        std::string line = statusLine();
        winsize size{};
        const size_t width = ::ioctl(::fileno(m_stream), TIOCGWINSZ, &size) == 0 && size.ws_col > 0
                                 ? size.ws_col
                                 : 120;
        if (line.size() >= width) line.resize(width - 1);
        std::fprintf(m_stream, "\r\x1b[K%s", line.c_str());
        m_barShown = true;
    } else {
        if (!force && sinceLast < m_plainInterval) return;
        std::fprintf(m_stream, "progress %s\n", statusLine().c_str());
    }
    std::fflush(m_stream);
    m_lastDraw = now;
}

void ProgressDisplay::finish()
{
    if (m_terminal && m_barShown) {
        std::fputs("\n", m_stream);
        m_barShown = false;
    }
    std::fflush(m_stream);
}

} // namespace headlab::cli
