// ProgressDisplay.h — the CLI's progress bar on stderr: the runs in progress and the whole sweep.
//
// On a terminal one status line is redrawn in place with \r (at most every 100 ms); otherwise a
// plain line is printed every `plainInterval` seconds, so logs stay readable. Finished-run lines
// are printed above the bar. Not thread-safe: the CLI's main thread owns it.
#pragma once

#include "core/config/RunResult.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

namespace headlab::cli {

class ProgressDisplay {
public:
    // `totalSteps`: the steps of every run this invocation trains; `runCount`: how many runs.
    ProgressDisplay(std::FILE *stream, int64_t totalSteps, int runCount,
                    double plainIntervalSeconds = 10.0);

    void update(const RunProgress &progress);           // latest numbers of one run
    void runFinished(int runIndex, int64_t totalSteps); // the run's steps count as done
    // Prints a line above the bar (clearing it first on a terminal).
    void printLine(const std::string &line);
    // Redraws (terminal) or prints a periodic line (not a terminal). `force` ignores the rate
    // limit.
    void draw(bool force = false);
    void finish(); // ends the bar's line on a terminal

    bool isTerminal() const { return m_terminal; }
    static std::string formatDuration(double seconds); // "1h02m", "3m12s", "12s", "?"

private:
    std::string statusLine() const;
    void clearLine();

    std::FILE *m_stream;
    bool m_terminal = false;
    int64_t m_totalSteps = 0;
    int m_runCount = 0;
    int m_runsFinished = 0;
    int64_t m_stepsOfFinishedRuns = 0;
    double m_plainInterval = 10.0;
    std::map<int, RunProgress> m_active; // runIndex -> latest progress
    std::chrono::steady_clock::time_point m_start;
    std::chrono::steady_clock::time_point m_lastDraw;
    bool m_barShown = false;
};

} // namespace headlab::cli
