// NoteCommand.cpp — headlab-cli note: a session's or a run's note and tags, shown or edited (the
// command table: CliCommands.cpp; the format: docs/SESSION_FORMAT.md, `note:`, `tags:`,
// `annotations:`).
#include "CliOptions.h"
#include "Commands.h"

#include "core/lab/SweepSession.h"
#include "core/session/RunFiles.h"
#include "core/session/Session.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headlab::cli {

namespace {

struct NoteArguments {
    std::string session;
    std::vector<std::string> runs;       // rows or run_ids; none: the session's own
    std::optional<std::string> text;     // --text: the note (empty clears it)
    std::vector<std::string> tag, untag; // --tag, --untag
    bool json = false;
};

void print(const std::string &what, const Annotation &a)
{
    std::string tags;
    for (const auto &t : a.tags) tags += (tags.empty() ? "" : " ") + t;
    std::printf("%s\n  tags: %s\n  note: %s\n", what.c_str(), tags.empty() ? "—" : tags.c_str(),
                a.note.empty() ? "—" : a.note.c_str());
}

int noteCommand(const NoteArguments &a)
{
    const char *me = "headlab-cli note";
    try {
        Session session = loadSweepRuns(a.session);
        expandSweep(session);
        // The annotations to show or change: the session's own, or each run's (by run_id).
        Annotations all = annotationsOf(session);
        std::vector<std::pair<std::string, Annotation *>> targets;
        if (a.runs.empty()) targets.push_back({"session " + session.name, &all.session});
        for (const auto &text : a.runs) {
            std::string error;
            const int row = findRun(session, text, &error);
            if (row < 0) {
                std::fprintf(stderr, "%s: %s: %s\n", me, a.session.c_str(), error.c_str());
                return kExitBadInput;
            }
            const std::string id = runId(session.runs[size_t(row)].config);
            targets.push_back({"run " + std::to_string(row) + " (" + id + ")", &all.runs[id]});
        }
        const bool change = a.text.has_value() || !a.tag.empty() || !a.untag.empty();
        for (auto &[what, annotation] : targets) {
            if (a.text) annotation->note = *a.text;
            std::string why;
            if (!annotation->retag(a.tag, a.untag, &why)) {
                std::fprintf(stderr, "%s: --tag %s\n", me, why.c_str());
                return kExitBadInput;
            }
        }
        setAnnotations(session, all); // the emptied ones dropped
        if (change) {
            // The writer lock, as keep and prune take it: refused while the session trains. A
            // session that holds its runs itself (an export) is written whole, atomically.
            if (session.resultsDir.empty()) {
                if (a.session.size() > 3 &&
                    a.session.compare(a.session.size() - 3, 3, ".gz") == 0) {
                    std::fprintf(
                        stderr,
                        "%s: %s is compressed: write it out first (headlab-cli export-yaml "
                        "%s -o S.yaml), then note S.yaml\n",
                        me, a.session.c_str(), a.session.c_str());
                    return kExitBadInput;
                }
                if (const std::string holder = SessionStore::lockHolder(a.session);
                    !holder.empty()) {
                    std::fprintf(stderr, "%s: %s is being written by %s\n", me, a.session.c_str(),
                                 holder.c_str());
                    return kExitBadInput;
                }
                saveSessionAtomic(session, a.session);
            } else {
                SessionStore store(a.session);
                store.saveSession(session);
            }
        }
        for (const auto &[what, annotation] : targets) print(what, *annotation);
        return kExitOk;
    } catch (const SessionError &e) {
        std::fprintf(stderr, "%s: %s\n", me, e.what());
        return kExitBadInput;
    }
}

CommandAction defineNote(CLI::App &app)
{
    auto a = std::make_shared<NoteArguments>();
    CLI::App *note =
        app.add_subcommand("note", "Show or edit the note and tags of a session or of its runs");
    note->footer(
        "Without --run, the session's own; with --run (repeatable), each run's, kept by "
        "its run_id.\nWithout --text, --tag or --untag, shows them. A tag is one word "
        "(letters, digits, _ . : + - /);\nthe run filter selects by it: tag=T, tag!=T.\n"
        "Example: headlab-cli note S.yaml --run 3 --tag outlier --text \"diverged at 3k\"");
    note->add_option("session", a->session, "The session file (SESSION.yaml)")->required();
    note->add_option("--run", a->runs, "A run: its row (0-based) or its run_id (repeatable)");
    note->add_option("--text", a->text, "The note, replacing the one there (\"\" clears it)");
    note->add_option("--tag", a->tag, "A tag to add (repeatable, or comma-separated)")
        ->delimiter(',');
    note->add_option("--untag", a->untag, "A tag to take away (repeatable, or comma-separated)")
        ->delimiter(',');
    return {note, [a] { return noteCommand(*a); }};
}

const CommandRegistration kNoteCommand(105, defineNote);

} // namespace

} // namespace headlab::cli
