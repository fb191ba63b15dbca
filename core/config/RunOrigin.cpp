// RunOrigin.cpp — timestamps, host name, build commit and command line for RunOrigin.
#include "core/config/RunOrigin.h"

#include <climits>
#include <ctime>
#include <mutex>
#include <unistd.h>

namespace headlab {

// Generated at every build by cmake/HeadlabCommit.cmake (rewritten only when the commit changes).
extern const char *const kHeadlabBuildCommit;

namespace {
constexpr const char *kUtcFormat = "%Y-%m-%dT%H:%M:%SZ";

std::mutex &invocationMutex()
{
    static std::mutex m;
    return m;
}
std::string &invocationText()
{
    static std::string text;
    return text;
}

// An argument as a POSIX shell reads it back: as it is when it holds only safe characters, else
// in single quotes.
std::string shellQuoted(const std::string &arg)
{
    if (!arg.empty() &&
        arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                              "_-+=./:,@%") == std::string::npos)
        return arg;
    std::string out = "'";
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}
} // namespace

std::string utcTimestamp()
{
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, kUtcFormat, &utc);
    return text;
}

int64_t utcSeconds(const std::string &timestamp)
{
    std::tm t{};
    const char *end = ::strptime(timestamp.c_str(), kUtcFormat, &t);
    if (!end || *end != '\0') return -1;
    return int64_t(::timegm(&t));
}

std::string hostName()
{
    char name[HOST_NAME_MAX + 1] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "";
    return name;
}

std::string buildCommit()
{
    return kHeadlabBuildCommit;
}

void setInvocation(int argc, const char *const *argv)
{
    std::string text;
    for (int i = 0; i < argc; ++i) {
        std::string arg = argv[i];
        if (i == 0) // the program's name, not where it was built
            if (const auto slash = arg.rfind('/'); slash != std::string::npos)
                arg = arg.substr(slash + 1);
        text += (i ? " " : "") + shellQuoted(arg);
    }
    std::lock_guard<std::mutex> lock(invocationMutex());
    invocationText() = text;
}

const std::string &invocation()
{
    std::lock_guard<std::mutex> lock(invocationMutex());
    return invocationText();
}

RunOrigin originNow()
{
    RunOrigin o;
    o.startedAt = utcTimestamp();
    o.host = hostName();
    o.commit = buildCommit();
    o.command = invocation();
    return o;
}

} // namespace headlab
