// RunFilter.cpp — see RunFilter.h.
#include "core/session/RunFilter.h"

#include "core/config/Yaml.h"
#include "core/metrics/RunValues.h"
#include "core/session/Replicates.h"

#include <algorithm>
#include <cmath>
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

// The run statuses (RunResult.h's table): "queued, running, ...".
std::string statusList()
{
    std::string list;
    for (const auto &name : runStatusNames()) list += (list.empty() ? "" : ", ") + name;
    return list;
}

// A typed term in a message, quoted; a long one shortened to its ends and its length, so that no
// message grows with what was typed (a 40,000-character word once widened the window to 32,767 px).
std::string quoted(const std::string &text)
{
    constexpr size_t kMost = 40, kEnd = 16;
    std::string out(1, '\'');
    if (text.size() <= kMost) return out.append(text).append(1, '\'');
    return out.append(text, 0, kEnd)
        .append("\u2026")
        .append(text, text.size() - kEnd, kEnd)
        .append("' (")
        .append(std::to_string(text.size()))
        .append(" characters)");
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
    // A key a value is read at: an axis, a metric a run has, or STAT(CURVE); "" when it is one,
    // else why not.
    auto unknownKey = [&](const std::string &word, const std::string &key) -> std::string {
        std::string why;
        if (keys.count(key) || metrics.count(key) || isRunValueKey(key, &why)) return "";
        if (!why.empty()) return quoted(word) + ": " + why;
        std::string known;
        for (const auto &k : keys) known += k + ", ";
        return quoted(word) + ": no axis or metric " + quoted(key) + " (axes: " + known +
               "status, learned, tag, a metric such as final_test_loss, or STAT(CURVE) such as "
               "min(test_loss))";
    };
    std::istringstream words(text);
    std::string word;
    while (words >> word) {
        if (word == "learned" || word == "!learned" || word == "not-learned") {
            filter.terms.push_back({"learned", "", word == "learned" ? "1" : "0"});
            continue;
        }
        // best:K[:KEY], worst:K[:KEY], !outliers[:KEY]: over the runs together.
        const size_t colon = word.find(':');
        const std::string head = word.substr(0, colon);
        if (head == "best" || head == "worst" || head == "!outliers") {
            Term term{kRunFilterRankKey, head, ""};
            std::string rest = colon == std::string::npos ? "" : word.substr(colon + 1);
            if (head != "!outliers") {
                const size_t next = rest.find(':');
                term.value = rest.substr(0, next);
                rest = next == std::string::npos ? "" : rest.substr(next + 1);
                __int128 k = 0;
                if (!integer(term.value, &k) || k < 1 || k > 1000000000) {
                    filter.error = quoted(word) + ": expected " + head + ":K or " + head +
                                   ":K:KEY, K a whole number from 1";
                    break;
                }
            } else if (colon != std::string::npos && rest.empty()) {
                filter.error = quoted(word) + ": expected !outliers or !outliers:KEY";
                break;
            }
            if (!rest.empty()) term.key = rest;
            if (const std::string why = unknownKey(word, term.key); !why.empty()) {
                filter.error = why;
                break;
            }
            filter.terms.push_back(term);
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
        if (term.key == "tag") {
            if (ordered || !validTag(term.value).empty()) {
                filter.error = quoted(word) + ": tag=T or tag!=T, T one word (a run's tags)";
                break;
            }
        } else if (term.key == "status") {
            RunStatus status;
            if (!parseRunStatus(term.value, &status) || ordered) {
                filter.error = quoted(word) + ": status is one of " + statusList() + " (= or !=)";
                break;
            }
        } else if (const std::string why = unknownKey(word, term.key); !why.empty()) {
            filter.error = why;
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
        if (t.key == "tag") {
            if (runAnnotation(session, index).hasTag(t.value) != (t.op == "=")) return false;
            continue;
        }
        if (t.overRuns()) continue; // select's
        std::string text;
        const auto label = labels.find(t.key);
        if (label != labels.end()) {
            text = label->second;
        } else if (const auto value = runValue(run.result, t.key)) {
            text = yaml::formatNumber(*value);
        } else {
            return false; // no value on this key: left out
        }
        if (!compareValues(text, t.op, t.value).value_or(false)) return false;
    }
    return true;
}

bool RunFilter::overRuns() const
{
    return std::any_of(terms.begin(), terms.end(), [](const Term &t) { return t.overRuns(); });
}

namespace {

// The q-quantile of sorted values, linearly between the two nearest ((n − 1)·q: numpy's default,
// which the Python package uses).
double quantile(const std::vector<double> &sorted, double q)
{
    const double at = double(sorted.size() - 1) * q;
    const size_t below = size_t(std::floor(at));
    const size_t above = std::min(below + 1, sorted.size() - 1);
    return sorted[below] + (sorted[above] - sorted[below]) * (at - double(below));
}

} // namespace

std::vector<bool> RunFilter::select(const Session &session, const std::vector<bool> &among) const
{
    std::vector<bool> in(session.runs.size(), true);
    if (among.size() == in.size()) in = among;
    if (terms.empty()) return in;
    const std::vector<std::map<std::string, std::string>> own =
        labels.size() == session.runs.size() ? std::vector<std::map<std::string, std::string>>{}
                                             : configurationLabels(session);
    const auto &runLabels = own.empty() ? labels : own;
    for (size_t i = 0; i < in.size(); ++i) in[i] = in[i] && accepts(session, i, runLabels[i]);
    for (const Term &t : terms) {
        if (!t.overRuns()) continue;
        const bool lower = lowerIsBetter(t.key);
        std::vector<std::pair<size_t, double>> values; // the runs still in with a value
        for (size_t i = 0; i < in.size(); ++i)
            if (in[i])
                if (const auto v = runValue(session.runs[i].result, t.key))
                    values.push_back({i, *v});
        if (t.op == "!outliers") {
            std::vector<double> finite;
            for (const auto &[i, v] : values)
                if (std::isfinite(v)) finite.push_back(v);
            std::sort(finite.begin(), finite.end());
            const bool fenced = finite.size() >= 4;
            const double q1 = fenced ? quantile(finite, 0.25) : 0;
            const double q3 = fenced ? quantile(finite, 0.75) : 0;
            for (const auto &[i, v] : values) {
                const bool out =
                    !std::isfinite(v) ||
                    (fenced && (lower ? v > q3 + 3 * (q3 - q1) : v < q1 - 3 * (q3 - q1)));
                if (out) in[i] = false;
            }
            continue;
        }
        // best / worst: the K first by value, the better first for best.
        const bool ascending = (t.op == "best") == lower;
        std::vector<std::pair<size_t, double>> ranked;
        for (const auto &[i, v] : values)
            if (!std::isnan(v)) ranked.push_back({i, v});
        std::stable_sort(ranked.begin(), ranked.end(), [ascending](const auto &a, const auto &b) {
            return ascending ? a.second < b.second : a.second > b.second;
        });
        const size_t k = std::stoul(t.value);
        std::vector<bool> kept(in.size(), false);
        for (size_t r = 0; r < ranked.size() && r < k; ++r) kept[ranked[r].first] = true;
        for (size_t i = 0; i < in.size(); ++i) in[i] = in[i] && kept[i];
    }
    return in;
}

const char *runFilterHelp()
{
    static const std::string help =
        "Terms separated by spaces, all of which a run must meet:\n"
        "  AXIS=VALUE, AXIS!=VALUE   any swept axis (heads=12, qk_norm=gain)\n"
        "  KEY<X, <=, >, >=          a number: an axis, a metric (final_test_loss) or a "
        "statistic of a curve, STAT(CURVE): final, min, max, best or mean_last of test_loss, "
        "train_loss, test_accuracy, ... (min(test_loss)<0.5)\n"
        "  status=S                  " +
        statusList() +
        "\n"
        "  learned, !learned         the session's verdict\n"
        "  tag=T, tag!=T             runs with (without) the tag T\n"
        "  best:K, worst:K           the K best or worst runs by final(test_loss), or by KEY "
        "(best:10:min(test_loss))\n"
        "  !outliers                 without runs whose final(test_loss), or KEY "
        "(!outliers:KEY), is not finite or beyond 3 inter-quartile ranges on the worse side";
    return help.c_str();
}

} // namespace headlab
