// SchemaCommand.cpp — headlab-cli schema: the keys each record of a session or run file may hold,
// as JSON, written from the readers' own tables (core/session/SessionYaml.h sessionSchemaJson).
#include "CliOptions.h"
#include "Commands.h"

#include "core/session/SessionYaml.h"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace headlab::cli {

// ---------------------------------------------------------------------------------------------
// The command: its options and help (CLI11), registered with the command table.

namespace {

CommandAction defineSchema(CLI::App &app)
{
    CLI::App *schema = app.add_subcommand(
        "schema", "Print the keys each record of a session or run file may hold, as JSON");
    schema->footer("The same key tables the readers check (core/session/SessionYaml.h): the Python "
                   "package ships\nthem as python/headlab/schema.json, and tests/python checks "
                   "that the two agree.");
    return {schema, [] {
                std::fputs(sessionSchemaJson().c_str(), stdout);
                return kExitOk;
            }};
}

const CommandRegistration kSchemaCommand(40, defineSchema);

} // namespace

} // namespace headlab::cli
