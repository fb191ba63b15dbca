// main.cpp — headlab-cli, the headless front end: run, validate, presets, export-csv.
// The commands live in CliCommands.cpp; see `headlab-cli --help`.
#include "CliCommands.h"
#include "core/config/RunOrigin.h"

int main(int argc, char **argv)
{
    headlab::setInvocation(argc, argv); // each run records the command that trained it
    return headlab::cli::runCli(argc, argv);
}
