// HeadlabApplication.h — what `headlab` does with its command line.
//
//   headlab                                   the window, on the `default` preset
//   headlab S.yaml | --session S.yaml         the window, on a saved session
//   headlab --preset NAME                     the window, on a built-in preset
//   headlab --session S.yaml --export-all DIR every figure as PNG, SVG and CSV; no window
//   headlab --start --screenshot F.png --screenshot-after 20
//                                             start the sweep, save a picture of the window
//                                             after 20 s, and quit (scripts/screenshot.sh)
//   headlab --latency ...                     on exit, print the event-loop latency (how late a
//                                             5 ms timer fired on the GUI thread)
#pragma once

class QApplication;

namespace headlab::ui {

// Before QApplication exists: selects the offscreen platform for --export-all when none is set,
// so that headless export works without a display.
void prepareEnvironment(int argc, char **argv);
int runHeadlab(QApplication &app);

} // namespace headlab::ui
