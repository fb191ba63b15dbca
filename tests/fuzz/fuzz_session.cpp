// fuzz_session.cpp — libFuzzer target for the session loader that `headlab-cli validate` uses.
//
// Each input is parsed as a session (and as a run file); what parses is expanded (sweeps of up to
// kMaxExpanded runs, so that one input costs milliseconds), written, parsed again and written
// again: the second text must equal the first, or the round trip lost or changed something.
// Any crash, sanitizer report (ASan, UBSan) or failed round trip is a finding. Built and run by
// scripts/fuzz.sh; inputs that once found a defect live in tests/fuzz/regressions/.
#include "core/session/Session.h"
#include "core/session/SessionStore.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr size_t kMaxExpanded = 512;

size_t sweepSize(const headlab::Session &s)
{
    if (s.search) { // a search's runs are its probes' replicates
        size_t probed = 0;
        for (const auto &probe : s.search->probes) probed += size_t(probe.replicates);
        if (probed > kMaxExpanded) return probed;
    }
    size_t n = s.combinations.empty() ? 1 : s.combinations.size();
    for (const auto &axis : s.axes) {
        n *= axis.values.size();
        if (n > kMaxExpanded) return n;
    }
    return n;
}

[[noreturn]] void roundTripFailed(const char *what, const std::string &first,
                                  const std::string &second)
{
    std::fprintf(stderr, "round trip changed the %s\n--- first ---\n%s\n--- second ---\n%s\n", what,
                 first.c_str(), second.c_str());
    std::abort();
}

void checkSession(const std::string &text)
{
    headlab::Session session;
    try {
        session = headlab::sessionFromYaml(text, "fuzz.yaml");
        if (sweepSize(session) <= kMaxExpanded) headlab::expandSweep(session);
    } catch (const headlab::SessionError &) {
        return; // refused with a located message: the expected outcome for most inputs
    }
    const std::string first = headlab::sessionToYaml(session);
    headlab::Session again;
    try {
        again = headlab::sessionFromYaml(first, "written.yaml");
        if (sweepSize(again) <= kMaxExpanded) headlab::expandSweep(again);
    } catch (const headlab::SessionError &e) {
        std::fprintf(stderr, "what HeadLab wrote does not load: %s\n%s\n", e.what(), first.c_str());
        std::abort();
    }
    const std::string second = headlab::sessionToYaml(again);
    if (second != first) roundTripFailed("session", first, second);
}

void checkRunFile(const std::string &text)
{
    headlab::SessionRun run;
    try {
        run = headlab::runFromYaml(text, "fuzz-run.yaml");
    } catch (const headlab::SessionError &) {
        return;
    }
    const std::string first = headlab::runToYaml(run);
    try {
        const std::string second = headlab::runToYaml(headlab::runFromYaml(first, "written.yaml"));
        if (second != first) roundTripFailed("run", first, second);
    } catch (const headlab::SessionError &e) {
        std::fprintf(stderr, "a run file HeadLab wrote does not load: %s\n%s\n", e.what(),
                     first.c_str());
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    checkSession(text);
    checkRunFile(text);
    return 0;
}
