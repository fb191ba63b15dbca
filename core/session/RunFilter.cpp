// RunFilter.cpp — see RunFilter.h.
#include "core/session/RunFilter.h"

#include "core/config/Yaml.h"
#include "core/session/Replicates.h"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>

namespace headlab {

namespace {

bool number(const std::string &text, double *out)
{
    return yaml::parseNumber(text, out);
}

// A whole number as typed or stored (decimal digits, a sign), exactly: seeds are 64-bit, beyond
// what a double tells apart (18446744073709551610 and …614 are one double).
bool integer(const std::string &text, __int128 *out)
{
    size_t i = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
    if (i == text.size() || text.size() - i > 30 ||
        text.find_first_not_of("0123456789", i) != std::string::npos)
        return false;
    __int128 value = 0;
    for (size_t k = i; k < text.size(); ++k) value = value * 10 + (text[k] - '0');
    *out = text[0] == '-' ? -value : value;
    return true;
}

template <typename T>
bool compareAs(T a, const std::string &op, T b)
{
    return op == "<"    ? a < b
           : op == "<=" ? a <= b
           : op == ">"  ? a > b
           : op == ">=" ? a >= b
           : op == "="  ? a == b
                        : a != b;
}

// Two values of one key: as integers where both are, else as numbers where both are, else (= and
// != alone) as text. nullopt: not comparable by `op`.
std::optional<bool> compareValues(const std::string &a, const std::string &op, const std::string &b)
{
    __int128 i = 0, j = 0;
    if (integer(a, &i) && integer(b, &j)) return compareAs(i, op, j);
    double x = 0, y = 0;
    if (number(a, &x) && number(b, &y)) return compareAs(x, op, y);
    if (op == "=" || op == "!=") return (a == b) == (op == "=");
    return std::nullopt;
}

// A typed term in a message, quoted; a long one shortened to its ends and its length, so that no
// message grows with what was typed (a 40,000-character word once widened the window to 32,767 px).
std::string quoted(const std::string &text)
{
    constexpr size_t kMost = 40, kEnd = 16;
    if (text.size() <= kMost) return "'" + text + "'";
    return "'" + text.substr(0, kEnd) + "\u2026" + text.substr(text.size() - kEnd) + "' (" +
           std::to_string(text.size()) + " characters)";
}

} // namespace

RunFilter RunFilter::parse(const std::string &text, const Session &session)
{
    RunFilter filter;
    std::set<std::string> keys;
    for (const auto &axis : configurationAxes(session)) keys.insert(axis);
    std::set<std::string> metrics;
    for (const auto &run : session.runs)
        for (const auto &[name, value] : run.result.metrics) metrics.insert(name);
    std::istringstream words(text);
    std::string word;
    while (words >> word) {
        if (word == "learned" || word == "!learned" || word == "not-learned") {
            filter.terms.push_back({"learned", "", word == "learned" ? "1" : "0"});
            continue;
        }
        const size_t at = word.find_first_of("=!<>");
        if (at == 0 || at == std::string::npos) {
            filter.error = quoted(word) + ": expected KEY=VALUE, KEY<X, status=S or learned";
            break;
        }
        Term term{word.substr(0, at), "", ""};
        for (const char *op : {"==", "!=", "<=", ">=", "=", "<", ">"})
            if (word.compare(at, std::string(op).size(), op) == 0) {
                term.op = op;
                break;
            }
        term.value = word.substr(at + term.op.size());
        if (term.op == "==") term.op = "="; // as Python and pandas write it
        if (term.op.empty() || term.value.empty()) {
            filter.error = quoted(word) + ": expected KEY=VALUE, KEY<X, status=S or learned";
            break;
        }
        const bool ordered = term.op != "=" && term.op != "!=";
        double x = 0;
        if (ordered && !number(term.value, &x)) {
            filter.error = quoted(word) + ": " + term.op + " compares numbers, and " +
                           quoted(term.value) + " is not one";
            break;
        }
        if (term.key == "status") {
            RunStatus status;
            if (!parseRunStatus(term.value, &status) || ordered) {
                filter.error = quoted(word) + ": status is one of queued, running, paused, done, " +
                               "diverged, failed, stopped (= or !=)";
                break;
            }
        } else if (!keys.count(term.key) && !metrics.count(term.key)) {
            std::string known;
            for (const auto &k : keys) known += k + ", ";
            filter.error = quoted(word) + ": no axis or metric " + quoted(term.key) +
                           " (axes: " + known +
                           "status, learned, or a metric such as final_test_loss)";
            break;
        }
        filter.terms.push_back(term);
    }
    if (!filter.error.empty()) filter.terms.clear();
    if (!filter.terms.empty()) filter.labels = configurationLabels(session);
    // A term that asks for a value no run of the session has: the filter stands (the run may
    // come), and the note says so with the values there are.
    if (!filter.terms.empty()) {
        for (const Term &t : filter.terms) {
            if (t.op != "=" || !keys.count(t.key)) continue;
            std::set<std::string> values;
            bool any = false;
            for (const auto &runLabels : filter.labels) {
                const auto it = runLabels.find(t.key);
                if (it == runLabels.end()) continue;
                values.insert(it->second);
                any = any || compareValues(it->second, "=", t.value).value_or(false);
            }
            if (any) continue;
            std::string list;
            for (const auto &v : values) {
                if (list.size() > 60) {
                    list += ", …";
                    break;
                }
                list += (list.empty() ? "" : ", ") + v;
            }
            filter.note = "no run has " + t.key + " = " + quoted(t.value) +
                          (list.empty() ? "" : " (its values: " + list + ")");
            break;
        }
    }
    return filter;
}

bool RunFilter::accepts(const Session &session, size_t index,
                        const std::map<std::string, std::string> &labels) const
{
    const SessionRun &run = session.runs[index];
    for (const Term &t : terms) {
        if (t.key == "learned" && t.op.empty()) {
            const auto verdict = runLearned(session, run.result);
            if (!verdict || *verdict != (t.value == "1")) return false;
            continue;
        }
        if (t.key == "status") {
            if ((toString(run.result.status) == t.value) != (t.op == "=")) return false;
            continue;
        }
        std::string text;
        const auto label = labels.find(t.key);
        const auto metric = run.result.metrics.find(t.key);
        if (label != labels.end()) {
            text = label->second;
        } else if (metric != run.result.metrics.end()) {
            text = yaml::formatNumber(metric->second);
        } else {
            return false; // no value on this key: left out
        }
        if (!compareValues(text, t.op, t.value).value_or(false)) return false;
    }
    return true;
}

} // namespace headlab
