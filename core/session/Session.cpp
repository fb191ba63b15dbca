// Session.cpp — a session's own small functions (SessionData.h): which runs are pending, whether
// a run learned.
#include "core/session/SessionData.h"

#include "core/config/Files.h"
#include "core/metrics/Metrics.h"
#include "core/schema/TaskSpec.h"
#include "core/session/RunFiles.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string_view>

namespace headlab {

bool Annotation::hasTag(const std::string &tag) const
{
    return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

bool Annotation::retag(const std::vector<std::string> &tag, const std::vector<std::string> &untag,
                       std::string *why)
{
    for (const auto &t : tag)
        if (const std::string problem = validTag(t); !problem.empty()) {
            *why = problem;
            return false;
        }
    for (const auto &t : tag)
        if (!hasTag(t)) tags.push_back(t);
    for (const auto &t : untag) tags.erase(std::remove(tags.begin(), tags.end(), t), tags.end());
    return true;
}

Annotation mergeAnnotation(const Annotation &base, const Annotation &ours, const Annotation &theirs)
{
    Annotation merged;
    if (ours.note == theirs.note || theirs.note == base.note)
        merged.note = ours.note;
    else if (ours.note == base.note)
        merged.note = theirs.note;
    else // both changed it: where one cleared it the other's edit stays, else both are kept
        merged.note = ours.note.empty()     ? theirs.note
                      : theirs.note.empty() ? ours.note
                                            : ours.note + "\n\n" + theirs.note;
    // A tag stays where both have it, or where one side added it (the base lacked it): ours in
    // their order first, then theirs.
    for (const auto &tag : ours.tags)
        if (theirs.hasTag(tag) || !base.hasTag(tag)) merged.tags.push_back(tag);
    for (const auto &tag : theirs.tags)
        if (!ours.hasTag(tag) && !base.hasTag(tag)) merged.tags.push_back(tag);
    return merged;
}

Annotations mergeAnnotations(const Annotations &base, const Annotations &ours,
                             const Annotations &theirs)
{
    Annotations merged;
    merged.session = mergeAnnotation(base.session, ours.session, theirs.session);
    std::set<std::string> ids;
    for (const auto *side : {&base, &ours, &theirs})
        for (const auto &entry : side->runs) ids.insert(entry.first);
    auto of = [](const Annotations &a, const std::string &id) {
        const auto it = a.runs.find(id);
        return it == a.runs.end() ? Annotation{} : it->second;
    };
    for (const auto &id : ids)
        if (Annotation one = mergeAnnotation(of(base, id), of(ours, id), of(theirs, id));
            !one.empty())
            merged.runs[id] = std::move(one);
    return merged;
}

std::string validTag(const std::string &tag)
{
    const bool word =
        !tag.empty() && tag.size() <= 64 && std::all_of(tag.begin(), tag.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) ||
                   std::string_view("_.:+-/").find(c) != std::string_view::npos;
        });
    if (word) return "";
    const std::string shown = tag.size() > 40 ? tag.substr(0, 40) + "…" : tag;
    return "'" + shown + "': a tag is one word of letters, digits and _ . : + - / (at most 64)";
}

std::vector<std::string> tagsFromText(const std::string &text)
{
    std::vector<std::string> tags;
    std::string word;
    auto flush = [&] {
        if (!word.empty() && std::find(tags.begin(), tags.end(), word) == tags.end())
            tags.push_back(word);
        word.clear();
    };
    for (char c : text) {
        if (c == ',' || std::isspace(static_cast<unsigned char>(c)))
            flush();
        else
            word += c;
    }
    flush();
    return tags;
}

const Annotation &runAnnotation(const Session &session, size_t index)
{
    static const Annotation none;
    if (session.runAnnotations.empty() || index >= session.runs.size()) return none;
    const auto it = session.runAnnotations.find(runId(session.runs[index].config));
    return it == session.runAnnotations.end() ? none : it->second;
}

Annotations annotationsOf(const Session &session)
{
    return {session.annotation, session.runAnnotations};
}

void setAnnotations(Session &session, Annotations annotations)
{
    session.annotation = std::move(annotations.session);
    session.runAnnotations = std::move(annotations.runs);
    for (auto it = session.runAnnotations.begin(); it != session.runAnnotations.end();)
        it = it->second.empty() ? session.runAnnotations.erase(it) : std::next(it);
}

std::optional<bool> runLearned(const Session &session, const RunResult &result)
{
    const TaskSpec *spec = findTaskSpec(session.base.task.kind);
    if (spec && !spec->learnedMeaning) return std::nullopt;
    // A run of a task judged by its chance plateau, trained before the trainer gave it a verdict:
    // none (the paper's rule's ln 10 fallback is addition's).
    if (spec && spec->chancePlateau && !result.metrics.count(metric::kLeftChancePlateau) &&
        !result.metrics.count(metric::kLearned))
        return std::nullopt;
    return learned(result, session.learnedRule);
}

std::vector<int> pendingRuns(const Session &session)
{
    std::vector<int> pending;
    for (size_t i = 0; i < session.runs.size(); ++i)
        if ((!isFinished(session.runs[i].result.status) ||
             failedOnACheckpoint(session.runs[i].result)) &&
            (session.missingRunFiles.empty() ||
             !session.missingRunFiles.count(runFileName(session.runs[i].config))))
            pending.push_back(static_cast<int>(i));
    return pending;
}

std::string missingResultsMessage(const Session &session, const std::string &sessionPath)
{
    if (session.missingRunFiles.empty()) return {};
    const std::string runs = directoryOf(sessionPath) + "/" + session.resultsDir + "/runs/";
    return sessionPath + ": its index lists " + std::to_string(session.missingRunFiles.size()) +
           " finished run" + (session.missingRunFiles.size() == 1 ? "" : "s") +
           " whose result file" + (session.missingRunFiles.size() == 1 ? " is" : "s are") +
           " not in " + runs + " (e.g. " + *session.missingRunFiles.begin() +
           "): the results folder was moved, deleted or not copied with the session file. They "
           "are not trained again and the session file is not rewritten: put the folder back "
           "beside it (or remove those runs from its `runs:` list to train them anew).";
}

bool hasResult(const SessionRun &run)
{
    const RunResult &r = run.result;
    return r.status != RunStatus::Queued || r.stepsDone > 0 || !r.train.empty() || !r.test.empty();
}

} // namespace headlab
