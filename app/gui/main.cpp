// main.cpp — the `headlab` desktop app: opens a session (the `default` preset when given none),
// or with `--session S.yaml --export-all DIR` writes every figure without showing a window.
#include "core/config/RunOrigin.h"
#include "ui/app/HeadlabApplication.h"

#include <QApplication>

int main(int argc, char **argv)
{
    headlab::setInvocation(argc, argv);          // each run records the command that trained it
    headlab::ui::prepareEnvironment(argc, argv); // offscreen platform for headless export
    QApplication app(argc, argv);
    return headlab::ui::runHeadlab(app);
}
