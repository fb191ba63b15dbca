// main.cpp — headlab-cli, the headless front end: run, validate, presets, export-csv.
// The commands live in CliCommands.cpp; see `headlab-cli --help`.
#include "CliCommands.h"

int main(int argc, char **argv)
{
    return headlab::cli::runCli(argc, argv);
}
