// SessionYaml.cpp — located YAML reading, exact number writing, and the RunConfig mapping.
#include "core/SessionYaml.h"

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>

namespace headlab::yaml {

// ---------------------------------------------------------------------------------------------
// Locations and structure

void failAt(const YamlField &field, const YAML::Mark &mark, const std::string &path,
            const std::string &message)
{
    const bool known = !mark.is_null() && mark.line >= 0;
    throw SessionError(field.file, known ? mark.line + 1 : 0, known ? mark.column + 1 : 0, path,
                       message);
}

void fail(const YamlField &field, const std::string &message)
{
    failAt(field, field.mark, field.path, message);
}

namespace {

// The first byte of `text` that is not part of valid UTF-8 (or is NUL), with its line and column
// (1-based), or false when the text is clean. YAML is Unicode: Latin-1 text saved back unchanged
// would make the file unreadable to other YAML readers.
bool findInvalidUtf8(const std::string &text, size_t *offset, int *line, int *column)
{
    int l = 1, c = 1;
    const auto *bytes = reinterpret_cast<const unsigned char *>(text.data());
    const size_t n = text.size();
    for (size_t i = 0; i < n;) {
        const unsigned char b = bytes[i];
        size_t length = 0;
        if (b == 0) length = 0;
        else if (b < 0x80) length = 1;
        else if ((b & 0xE0) == 0xC0 && b >= 0xC2) length = 2;
        else if ((b & 0xF0) == 0xE0) length = 3;
        else if ((b & 0xF8) == 0xF0 && b <= 0xF4) length = 4;
        bool valid = length > 0 && i + length <= n;
        for (size_t k = 1; valid && k < length; ++k) valid = (bytes[i + k] & 0xC0) == 0x80;
        if (valid && length == 3) {
            const unsigned cp = ((b & 0x0Fu) << 12) | ((bytes[i + 1] & 0x3Fu) << 6);
            valid = cp >= 0x800 && !(cp >= 0xD800 && cp <= 0xDFFF);
        }
        if (valid && length == 4) {
            const unsigned cp = ((b & 0x07u) << 18) | ((bytes[i + 1] & 0x3Fu) << 12);
            valid = cp >= 0x10000 && cp <= 0x10FFFF;
        }
        if (!valid) {
            *offset = i;
            *line = l;
            *column = c;
            return true;
        }
        if (b == '\n') {
            ++l;
            c = 1;
        } else {
            ++c;
        }
        i += length;
    }
    return false;
}

// True when the quoted scalar that starts at text[pos] has its closing quote. yaml-cpp reads a
// double-quoted scalar whose closing quote is missing to the end of the file, taking every key
// after it for text; the user should hear about the quote, not about the keys it swallowed.
bool quoteIsClosed(const std::string &text, size_t pos)
{
    const char quote = text[pos];
    for (size_t j = pos + 1; j < text.size(); ++j) {
        if (quote == '"' && text[j] == '\\') {
            ++j;
        } else if (text[j] == quote) {
            if (quote == '\'' && j + 1 < text.size() && text[j + 1] == '\'') {
                ++j; // '' is an escaped quote inside single quotes
                continue;
            }
            return true;
        }
    }
    return false;
}

// Refuses duplicate keys (YAML forbids them; yaml-cpp keeps both), nesting deeper than
// `maxDepth` and unterminated quotes, naming where.
void checkStructure(const YamlField &root, const std::string &text, const YAML::Node &node,
                    int depth, int maxDepth)
{
    if (node.IsScalar()) {
        const YAML::Mark mark = node.Mark();
        const auto pos = static_cast<size_t>(mark.pos);
        if (mark.pos >= 0 && pos < text.size() && (text[pos] == '"' || text[pos] == '\'') &&
            !quoteIsClosed(text, pos)) {
            YamlField at = root;
            at.mark = mark;
            fail(at, std::string("unterminated quoted text: the closing ") + text[pos] +
                         " is missing");
        }
        return;
    }
    if (depth > maxDepth) {
        YamlField at = root;
        at.mark = node.Mark();
        fail(at, "the document nests more than " + std::to_string(maxDepth) +
                     " levels deep; a HeadLab session needs far fewer");
    }
    if (node.IsSequence()) {
        for (const auto &element : node)
            checkStructure(root, text, element, depth + 1, maxDepth);
    } else if (node.IsMap()) {
        std::map<std::string, YAML::Mark> seen;
        for (auto it = node.begin(); it != node.end(); ++it) {
            const YAML::Node key = it->first; // a copy: the iterator's pair is a temporary
            if (key.IsScalar()) {
                const auto [first, inserted] = seen.emplace(key.Scalar(), key.Mark());
                if (!inserted) {
                    YamlField at = root;
                    at.mark = key.Mark();
                    fail(at, "duplicate key '" + key.Scalar() + "' (first at line " +
                                 std::to_string(first->second.line + 1) +
                                 "); each key may appear once");
                }
            }
            checkStructure(root, text, key, depth + 1, maxDepth);
            checkStructure(root, text, it->second, depth + 1, maxDepth);
        }
    }
}

// The line (1-based) where a second YAML document begins, or 0. Document markers ("---", "...")
// stand at the start of a line and cannot occur inside a scalar (YAML 1.2, c-forbidden), so a
// scan of line starts finds them: a "---" after content, or content after "...". yaml-cpp's
// LoadAll would tell too, but it never returns on some malformed texts (a lone ',' yields empty
// documents forever; fixed upstream after 0.8) and parses everything a second time.
int secondDocumentLine(const std::string &text)
{
    bool content = false, ended = false;
    int line = 1;
    for (size_t start = 0; start < text.size(); ++line) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string_view row(text.data() + start, end - start);
        start = end + 1;
        auto marker = [&](const char *m) {
            return row.substr(0, 3) == m && (row.size() == 3 || row[3] == ' ' || row[3] == '\t' ||
                                             row[3] == '\r');
        };
        if (marker("---")) {
            if (content || ended) return line;
            content = true; // the first document's explicit start; what follows is its content
            continue;
        }
        if (marker("...")) {
            ended = content;
            continue;
        }
        const size_t first = row.find_first_not_of(" \t\r");
        if (first == std::string_view::npos || row[first] == '#') continue;
        if (!content && row[first] == '%') continue; // a directive
        if (ended) return line;
        content = true;
    }
    return 0;
}

// "100, 200, 300" -> numbers with `parse`; false unless every item reads exactly.
template <typename T, typename Parse>
bool parseList(std::string_view text, std::vector<T> *out, Parse parse)
{
    out->clear();
    size_t start = 0;
    while (start < text.size() && text[start] == ' ') ++start;
    if (start == text.size()) return true;
    for (;;) {
        size_t comma = text.find(',', start);
        const size_t end = comma == std::string_view::npos ? text.size() : comma;
        size_t last = end;
        while (last > start && text[last - 1] == ' ') --last;
        T value{};
        if (last == start || !parse(std::string(text.substr(start, last - start)), &value))
            return false;
        out->push_back(value);
        if (comma == std::string_view::npos) return true;
        start = comma + 1;
        while (start < text.size() && text[start] == ' ') ++start;
    }
}

// Reads the one-line curves of `text` into `curves` and returns the text with their lists
// emptied (PreparsedCurves).
std::string preparseCurves(const std::string &text, PreparsedCurves *curves)
{
    constexpr std::string_view kOpen = kCurveOpen, kMiddle = kCurveMiddle, kClose = kCurveClose;
    std::string out;
    size_t copied = 0;
    int line = 0;
    for (size_t start = 0; start < text.size(); ++line) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string_view row(text.data() + start, end - start);
        const size_t lineStart = start;
        start = end + 1;
        const size_t open = row.find(kOpen);
        if (open == std::string_view::npos) continue;
        const size_t middle = row.find(kMiddle, open + kOpen.size());
        if (middle == std::string_view::npos) continue;
        size_t close = row.size();
        while (close > 0 && (row[close - 1] == ' ' || row[close - 1] == '\r')) --close;
        if (close < kClose.size() || row.substr(close - kClose.size(), kClose.size()) != kClose ||
            close - kClose.size() < middle + kMiddle.size())
            continue;
        const std::string_view steps = row.substr(open + kOpen.size(), middle - open - kOpen.size());
        const std::string_view values =
            row.substr(middle + kMiddle.size(), close - kClose.size() - middle - kMiddle.size());
        if (steps.find_first_of("[]{}#'\"") != std::string_view::npos ||
            values.find_first_of("[]{}#'\"") != std::string_view::npos)
            continue;
        std::vector<int64_t> s;
        std::vector<double> v;
        if (!parseList(steps, &s, parseInt) || !parseList(values, &v, parseNumber) ||
            s.size() != v.size())
            continue;
        Curve curve(s.size());
        for (size_t i = 0; i < s.size(); ++i) curve[i] = {s[i], v[i]};
        (*curves)[line] = std::move(curve);
        // Copy up to the first '[', then the emptied lists.
        const size_t from = lineStart + open + kOpen.size();
        out.append(text, copied, from - copied);
        out.append("], values: []}");
        copied = lineStart + close;
    }
    if (copied == 0) return text;
    out.append(text, copied, std::string::npos);
    return out;
}

} // namespace

const Curve *preparsedCurve(const YamlField &field)
{
    if (!field.curves || field.mark.is_null()) return nullptr;
    const auto it = field.curves->find(field.mark.line);
    return it == field.curves->end() ? nullptr : &it->second;
}

YamlField parseDocument(const std::string &original, const std::string &file)
{
    constexpr int kMaxDepth = 64;
    YamlField root;
    root.file = file;
    size_t offset = 0;
    int line = 0, column = 0;
    if (findInvalidUtf8(original, &offset, &line, &column)) {
        const std::string &text = original;
        char byte[8];
        std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[offset]));
        throw SessionError(file, line, column, "",
                           text[offset] == 0
                               ? std::string("a NUL byte: this is not a YAML text file")
                               : std::string("not valid UTF-8 (byte ") + byte +
                                     "); YAML files are UTF-8: convert it, e.g. with "
                                     "iconv -f latin1 -t utf-8");
    }
    auto curves = std::make_shared<PreparsedCurves>();
    const std::string text = preparseCurves(original, curves.get());
    if (!curves->empty()) root.curves = std::move(curves);
    if (const int second = secondDocumentLine(text); second > 0)
        throw SessionError(file, second, 1, "",
                           "a second YAML document ('---'); a session file holds exactly one");
    try {
        root.node = YAML::Load(text);
    } catch (const YAML::DeepRecursion &e) {
        failAt(root, e.mark, "",
               "the document nests more than " + std::to_string(kMaxDepth) + " levels deep");
    } catch (const YAML::ParserException &e) {
        // yaml-cpp's messages are lower-case phrases such as "illegal map value".
        failAt(root, e.mark, "", "malformed YAML: " + e.msg);
    } catch (const YAML::Exception &e) {
        failAt(root, e.mark, "", "malformed YAML: " + e.msg);
    }
    root.mark = root.node.IsDefined() ? root.node.Mark() : YAML::Mark();
    if (root.mark.is_null()) {
        root.mark.line = 0;
        root.mark.column = 0;
    }
    if (!root.node.IsDefined() || root.node.IsNull()) {
        // yaml-cpp reads some malformed texts (a lone ',') as an empty document: say so.
        for (size_t i = 0, line = 1, column = 1; i < text.size(); ++i, ++column) {
            const char c = text[i];
            if (c == '\n') {
                ++line;
                column = 0;
            } else if (c == '#') {
                while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
            } else if (!std::isspace(static_cast<unsigned char>(c)) && c != '~' &&
                       text.compare(i, 4, "null") != 0 && text.compare(i, 3, "---") != 0) {
                throw SessionError(file, static_cast<int>(line), static_cast<int>(column), "",
                                   std::string("malformed YAML: unexpected '") + c + "'");
            } else if (c == '~' || text.compare(i, 4, "null") == 0 || text.compare(i, 3, "---") == 0) {
                break; // an explicit null or an empty explicit document: empty indeed
            }
        }
    }
    checkStructure(root, text, root.node, 0, kMaxDepth);
    return root;
}

std::string joinPath(const std::string &parent, const std::string &key)
{
    return parent.empty() ? key : parent + "." + key;
}

namespace {

size_t editDistance(const std::string &a, const std::string &b)
{
    std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
            // Transposition of two neighbours counts as one edit ("d_mdoel").
        }
        std::swap(previous, current);
    }
    return previous[b.size()];
}

std::string describeType(const YAML::Node &node)
{
    if (!node.IsDefined()) return "nothing";
    switch (node.Type()) {
    case YAML::NodeType::Null:
        return "nothing";
    case YAML::NodeType::Sequence:
        return "a list";
    case YAML::NodeType::Map:
        return "a mapping";
    case YAML::NodeType::Scalar:
        return "'" + node.Scalar() + "'";
    default:
        return "an undefined value";
    }
}

std::string lower(std::string text)
{
    for (auto &c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

} // namespace

std::string nearestKey(const std::string &key, const std::vector<std::string> &allowed)
{
    std::string best;
    size_t bestDistance = std::numeric_limits<size_t>::max();
    for (const auto &candidate : allowed) {
        const size_t distance = editDistance(lower(key), lower(candidate));
        if (distance < bestDistance) {
            bestDistance = distance;
            best = candidate;
        }
    }
    const size_t limit = std::max<size_t>(2, key.size() / 3);
    return bestDistance <= limit ? best : std::string();
}

void requireMap(const YamlField &field)
{
    if (!field.node.IsDefined() || !field.node.IsMap())
        fail(field, "expected a mapping (key: value lines), got " + describeType(field.node));
}

void checkKeys(const YamlField &field, const std::vector<std::string> &allowed)
{
    requireMap(field);
    for (auto it = field.node.begin(); it != field.node.end(); ++it) {
        const YAML::Node keyNode = it->first; // a copy: `it->first` lives in a temporary proxy
        const std::string key = keyNode.IsScalar() ? keyNode.Scalar() : std::string("?");
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
        std::string message = "unknown key '" + key + "'";
        const std::string suggestion = nearestKey(key, allowed);
        if (!suggestion.empty()) {
            message += "; did you mean '" + suggestion + "'?";
        } else {
            message += "; expected one of ";
            for (size_t i = 0; i < allowed.size(); ++i) message += (i ? ", " : "") + allowed[i];
        }
        failAt(field, keyNode.Mark(), joinPath(field.path, key), message);
    }
}

YamlField child(const YamlField &map, const std::string &key)
{
    YamlField result;
    result.file = map.file;
    result.curves = map.curves;
    result.path = joinPath(map.path, key);
    result.mark = map.mark;
    if (map.node.IsDefined() && map.node.IsMap()) {
        for (auto it = map.node.begin(); it != map.node.end(); ++it) {
            if (it->first.IsScalar() && it->first.Scalar() == key) {
                result.node = it->second;
                result.mark = it->second.Mark();
                // A key with no value ("lr:") has a null node that points past it: point at the
                // key.
                if (result.mark.is_null() || it->second.IsNull()) result.mark = it->first.Mark();
                return result;
            }
        }
    }
    result.node = YAML::Node(YAML::NodeType::Undefined);
    return result;
}

YamlField item(const YamlField &sequence, size_t index)
{
    YamlField result;
    result.file = sequence.file;
    result.curves = sequence.curves;
    result.path = sequence.path + "[" + std::to_string(index) + "]";
    result.node = sequence.node[index];
    result.mark = result.node.Mark();
    if (result.mark.is_null()) result.mark = sequence.mark;
    return result;
}

std::vector<YamlField> items(const YamlField &sequence)
{
    if (!sequence.node.IsDefined() || !sequence.node.IsSequence())
        fail(sequence, "expected a list, got " + describeType(sequence.node));
    std::vector<YamlField> result;
    for (size_t i = 0; i < sequence.node.size(); ++i) result.push_back(item(sequence, i));
    return result;
}

std::vector<std::pair<std::string, YamlField>> entries(const YamlField &map)
{
    requireMap(map);
    std::vector<std::pair<std::string, YamlField>> result;
    for (auto it = map.node.begin(); it != map.node.end(); ++it) {
        if (!it->first.IsScalar())
            failAt(map, it->first.Mark(), map.path, "keys must be plain text");
        const std::string key = it->first.Scalar();
        YamlField value;
        value.file = map.file;
        value.curves = map.curves;
        value.path = joinPath(map.path, key);
        value.node = it->second;
        value.mark = it->second.Mark();
        if (value.mark.is_null() || it->second.IsNull()) value.mark = it->first.Mark();
        result.emplace_back(key, value);
    }
    return result;
}

// ---------------------------------------------------------------------------------------------
// Scalars

bool parseInt(const std::string &text, int64_t *out)
{
    if (text.empty()) return false;
    const char *begin = text.data();
    const char *end = begin + text.size();
    if (*begin == '+') ++begin;
    int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || ptr != end) return false;
    *out = value;
    return true;
}

bool parseNumber(const std::string &text, double *out)
{
    if (text.empty()) return false;
    const std::string t = lower(text);
    if (t == ".nan" || t == "nan") {
        *out = std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    if (t == ".inf" || t == "+.inf" || t == "inf" || t == "+inf") {
        *out = std::numeric_limits<double>::infinity();
        return true;
    }
    if (t == "-.inf" || t == "-inf") {
        *out = -std::numeric_limits<double>::infinity();
        return true;
    }
    // Decimal only: no hex floats, no "infinity", no leading/trailing space.
    for (char c : t)
        if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == '+' ||
              c == '-'))
            return false;
    const char *begin = text.c_str();
    char *end = nullptr;
    errno = 0;
    const double value = std::strtod(begin, &end);
    if (end != begin + text.size()) return false;
    // ERANGE on underflow still gives the nearest denormal or zero, which is what was written.
    *out = value;
    return true;
}

std::string formatNumber(double value)
{
    if (std::isnan(value)) return ".nan";
    if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    std::string text(buffer, result.ptr);
    const auto e = text.find('e');
    if (e != std::string::npos && text.find('.') == std::string::npos) text.insert(e, ".0");
    return text;
}

bool isScalar(const YamlField &field)
{
    return field.node.IsDefined() && field.node.IsScalar();
}

int64_t readInt(const YamlField &field)
{
    int64_t value = 0;
    if (isScalar(field) && parseInt(field.node.Scalar(), &value)) return value;
    double number = 0;
    if (isScalar(field) && parseNumber(field.node.Scalar(), &number))
        fail(field, "expected an integer, got " + field.node.Scalar());
    fail(field, "expected an integer, got " + describeType(field.node));
}

uint64_t readUnsigned(const YamlField &field)
{
    if (isScalar(field)) {
        const std::string &text = field.node.Scalar();
        uint64_t value = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc() && ptr == text.data() + text.size() && !text.empty()) return value;
        int64_t signedValue = 0;
        if (parseInt(text, &signedValue) && signedValue < 0)
            fail(field, "must be at least 0, got " + text);
    }
    fail(field, "expected a non-negative integer, got " + describeType(field.node));
}

double readNumber(const YamlField &field)
{
    double value = 0;
    if (isScalar(field) && parseNumber(field.node.Scalar(), &value)) return value;
    fail(field, "expected a number, got " + describeType(field.node));
}

bool readBool(const YamlField &field)
{
    if (isScalar(field)) {
        const std::string t = lower(field.node.Scalar());
        if (t == "true" || t == "yes" || t == "on") return true;
        if (t == "false" || t == "no" || t == "off") return false;
    }
    fail(field, "expected true or false, got " + describeType(field.node));
}

std::string readString(const YamlField &field)
{
    if (!field.node.IsDefined() || field.node.IsNull()) return {};
    if (!field.node.IsScalar()) fail(field, "expected text, got " + describeType(field.node));
    return field.node.Scalar();
}

int64_t readIntAtLeast(const YamlField &field, int64_t minimum)
{
    const int64_t value = readInt(field);
    if (value < minimum)
        fail(field,
             "must be at least " + std::to_string(minimum) + ", got " + std::to_string(value));
    return value;
}

int64_t readIntInRange(const YamlField &field, int64_t minimum, int64_t maximum)
{
    const int64_t value = readIntAtLeast(field, minimum);
    if (value > maximum) fail(field, beyondLimit(maximum, value));
    return value;
}

double readPositive(const YamlField &field)
{
    const double value = readNumber(field);
    if (!(value > 0) || std::isinf(value))
        fail(field, "must be a finite number > 0, got " + formatNumber(value));
    return value;
}

double readNumberInRange(const YamlField &field, double low, bool lowInclusive, double high,
                         bool highInclusive)
{
    const double value = readNumber(field);
    const bool aboveLow = lowInclusive ? value >= low : value > low;
    const bool belowHigh = highInclusive ? value <= high : value < high;
    if (!(aboveLow && belowHigh)) {
        fail(field, std::string("must be in ") + (lowInclusive ? "[" : "(") + formatNumber(low) +
                        ", " + formatNumber(high) + (highInclusive ? "]" : ")") + ", got " +
                        formatNumber(value));
    }
    return value;
}

// ---------------------------------------------------------------------------------------------
// Writing

void writeText(YAML::Emitter &out, const std::string &text)
{
    const std::string t = lower(text);
    double number = 0;
    const bool ambiguous = text.empty() || parseNumber(text, &number) || t == "true" ||
                           t == "false" || t == "yes" || t == "no" || t == "on" || t == "off" ||
                           t == "null" || t == "~" ||
                           std::isspace(static_cast<unsigned char>(text.front())) ||
                           std::isspace(static_cast<unsigned char>(text.back()));
    // Line breaks too are written double-quoted (as \n): a literal block would add a final one.
    if (ambiguous || text.find('\n') != std::string::npos)
        out << YAML::DoubleQuoted << text;
    else
        out << text;
}

void writeNumber(YAML::Emitter &out, double value)
{
    out << formatNumber(value);
}

std::string curveText(const Curve &curve)
{
    std::string out(kCurveOpen);
    for (size_t i = 0; i < curve.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(curve[i].step);
    }
    out += kCurveMiddle;
    for (size_t i = 0; i < curve.size(); ++i) {
        if (i) out += ", ";
        out += formatNumber(curve[i].value);
    }
    out += kCurveClose;
    return out;
}

// ---------------------------------------------------------------------------------------------
// Enums: the names toString() gives, plus the documented snake_case spellings, compared without
// case, '_', '-' or spaces.

namespace {

std::string normalised(const std::string &text)
{
    std::string result;
    for (char c : text)
        if (c != '_' && c != '-' && c != ' ')
            result += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return result;
}

template <typename Enum>
struct EnumName {
    Enum value;
    const char *name; // the documented spelling
};

template <typename Enum>
Enum readEnum(const YamlField &field, std::initializer_list<EnumName<Enum>> names)
{
    const std::string text = readString(field);
    if (isScalar(field)) {
        for (const auto &n : names) {
            if (normalised(text) == normalised(n.name) ||
                normalised(text) == normalised(toString(n.value)))
                return n.value;
        }
    }
    std::vector<std::string> allowed;
    for (const auto &n : names) allowed.push_back(n.name);
    std::string message = "unknown value " + describeType(field.node);
    const std::string suggestion = nearestKey(text, allowed);
    if (!suggestion.empty() && isScalar(field)) message += "; did you mean '" + suggestion + "'?";
    message += " (expected one of ";
    for (size_t i = 0; i < allowed.size(); ++i) message += (i ? ", " : "") + allowed[i];
    fail(field, message + ")");
}

const std::initializer_list<EnumName<TaskKind>> kTaskKinds = {
    {TaskKind::Addition, "addition"},
    {TaskKind::NearestNeighbour, "nearest_neighbour"},
    {TaskKind::Text, "text"}};
const std::initializer_list<EnumName<Objective>> kObjectives = {
    {Objective::NextToken, "next_token"},
    {Objective::Answer, "answer"},
    {Objective::Regression, "regression"}};
const std::initializer_list<EnumName<OptimizerKind>> kOptimizers = {
    {OptimizerKind::Adam, "adam"}, {OptimizerKind::AdamW, "adamw"}};
const std::initializer_list<EnumName<ScheduleKind>> kSchedules = {
    {ScheduleKind::Constant, "constant"}, {ScheduleKind::WarmupCosine, "warmup_cosine"}};
const std::initializer_list<EnumName<NormKind>> kNorms = {{NormKind::LayerNorm, "layer_norm"},
                                                          {NormKind::UnitScale, "unit_scale"}};
const std::initializer_list<EnumName<NormPlacement>> kPlacements = {
    {NormPlacement::PreNorm, "pre_norm"}, {NormPlacement::PostNorm, "post_norm"}};
const std::initializer_list<EnumName<Activation>> kActivations = {{Activation::Gelu, "gelu"},
                                                                  {Activation::Relu, "relu"}};
const std::initializer_list<EnumName<LogitScale>> kLogitScales = {
    {LogitScale::InvSqrtHeadDim, "inv_sqrt_head_dim"},
    {LogitScale::InvHeadDim, "inv_head_dim"},
    {LogitScale::None, "none"}};

// head_dim / ffn_width: an integer >= 0, or "auto" (0: derived).
int64_t readAutoInt(const YamlField &field, int64_t maximum)
{
    if (isScalar(field) && lower(field.node.Scalar()) == "auto") return 0;
    int64_t value = 0;
    if (!isScalar(field) || !parseInt(field.node.Scalar(), &value))
        fail(field, "expected an integer or auto, got " + describeType(field.node));
    if (value < 0) fail(field, "must be at least 0 (or auto), got " + std::to_string(value));
    if (value > maximum) fail(field, beyondLimit(maximum, value));
    return value;
}

std::string readDevice(const YamlField &field)
{
    const std::string device = readString(field);
    if (device == "auto" || device == "cpu" || device == "cuda") return device;
    int64_t index = 0;
    if (device.rfind("cuda:", 0) == 0 && parseInt(device.substr(5), &index) && index >= 0)
        return device;
    fail(field, "unknown device '" + device + "' (expected auto, cpu, cuda or cuda:N)");
}

const std::vector<std::string> kAdditionKeys = {"train_pairs", "test_pairs", "test_pair_base"};
const std::vector<std::string> kNearestNeighbourKeys = {"point_dim", "num_points"};
const std::vector<std::string> kTextKeys = {
    "text_path",     "context_length", "validation_fraction", "corpus_bytes", "sample_prompt",
    "sample_length", "sample_count",   "sample_temperature",  "sample_seed"};

TaskConfig readTask(const YamlField &field)
{
    std::vector<std::string> allowed = {"kind"};
    for (const auto *keys : {&kAdditionKeys, &kNearestNeighbourKeys, &kTextKeys})
        allowed.insert(allowed.end(), keys->begin(), keys->end());
    checkKeys(field, allowed);
    TaskConfig task;
    if (auto f = child(field, "kind"); f.present()) task.kind = readEnum(f, kTaskKinds);
    const std::vector<std::string> &own = task.kind == TaskKind::Addition ? kAdditionKeys
                                          : task.kind == TaskKind::NearestNeighbour
                                              ? kNearestNeighbourKeys
                                              : kTextKeys;
    for (const auto &[key, value] : entries(field)) {
        if (key == "kind" || std::find(own.begin(), own.end(), key) != own.end()) continue;
        const char *owner =
            std::find(kAdditionKeys.begin(), kAdditionKeys.end(), key) != kAdditionKeys.end()
                ? "addition"
            : std::find(kTextKeys.begin(), kTextKeys.end(), key) != kTextKeys.end()
                ? "text"
                : "nearest_neighbour";
        fail(value,
             std::string("is an option of task kind ") + owner + ", not " + toString(task.kind));
    }
    if (auto f = child(field, "train_pairs"); f.present()) task.trainPairs = readIntInRange(f, 1, RunLimits::kMaxTrainPairs);
    if (auto f = child(field, "test_pairs"); f.present()) task.testPairs = readIntInRange(f, 1, RunLimits::kMaxTestPairs);
    if (auto f = child(field, "test_pair_base"); f.present())
        task.testPairBase = readIntInRange(f, 0, RunLimits::kMaxPairBase);
    if (auto f = child(field, "point_dim"); f.present()) task.pointDim = readIntInRange(f, 1, RunLimits::kMaxDModel);
    if (auto f = child(field, "num_points"); f.present()) task.numPoints = readIntInRange(f, 2, RunLimits::kMaxPoints);
    if (auto f = child(field, "text_path"); f.present()) task.textPath = readString(f);
    if (auto f = child(field, "context_length"); f.present())
        task.contextLength = readIntInRange(f, 2, RunLimits::kMaxContextLength);
    if (auto f = child(field, "validation_fraction"); f.present())
        task.validationFraction = readNumberInRange(f, 0.0, false, 1.0, false);
    if (auto f = child(field, "corpus_bytes"); f.present()) task.corpusBytes = readIntInRange(f, 1, RunLimits::kMaxCorpusBytes);
    if (auto f = child(field, "sample_prompt"); f.present()) task.samplePrompt = readString(f);
    if (auto f = child(field, "sample_length"); f.present())
        task.sampleLength = readIntInRange(f, 0, RunLimits::kMaxSampleLength);
    if (auto f = child(field, "sample_count"); f.present()) task.sampleCount = readIntInRange(f, 0, RunLimits::kMaxSampleCount);
    if (auto f = child(field, "sample_temperature"); f.present())
        task.sampleTemperature =
            readNumberInRange(f, 0, true, std::numeric_limits<double>::infinity(), false);
    if (auto f = child(field, "sample_seed"); f.present()) task.sampleSeed = readUnsigned(f);
    return task;
}

ModelConfig readModel(const YamlField &field)
{
    checkKeys(field, {"d_model", "heads", "layers", "head_dim", "ffn_width", "activation", "norm",
                      "placement", "final_norm", "causal", "bias", "zero_init_outputs",
                      "logit_scale", "width_multiplier"});
    ModelConfig model;
    if (auto f = child(field, "d_model"); f.present()) model.dModel = readIntInRange(f, 1, RunLimits::kMaxDModel);
    const YamlField heads = child(field, "heads");
    const YamlField layers = child(field, "layers");
    if (heads.present() && heads.node.IsSequence()) {
        model.heads.clear();
        if (heads.node.size() > static_cast<size_t>(RunLimits::kMaxLayers))
            fail(heads, beyondLimit(RunLimits::kMaxLayers, int64_t(heads.node.size()), "layers"));
        for (const auto &h : items(heads))
            model.heads.push_back(readIntInRange(h, 1, RunLimits::kMaxHeads));
        if (model.heads.empty()) fail(heads, "needs at least one layer's head count");
        if (layers.present()) {
            const int64_t n = readIntInRange(layers, 1, RunLimits::kMaxLayers);
            if (n != model.layers())
                fail(layers, std::to_string(n) + " layers, but heads lists " +
                                 std::to_string(model.layers()) +
                                 " (leave layers out when heads is a list)");
        }
    } else {
        const int64_t perLayer =
            heads.present() ? readIntInRange(heads, 1, RunLimits::kMaxHeads) : model.heads.front();
        const int64_t n =
            layers.present() ? readIntInRange(layers, 1, RunLimits::kMaxLayers) : model.layers();
        model.heads.assign(static_cast<size_t>(n), perLayer);
    }
    if (auto f = child(field, "head_dim"); f.present()) model.headDim = readAutoInt(f, RunLimits::kMaxDModel);
    if (auto f = child(field, "ffn_width"); f.present()) model.ffnWidth = readAutoInt(f, RunLimits::kMaxFfnWidth);
    if (auto f = child(field, "activation"); f.present())
        model.activation = readEnum(f, kActivations);
    if (auto f = child(field, "norm"); f.present()) model.norm = readEnum(f, kNorms);
    if (auto f = child(field, "placement"); f.present()) model.placement = readEnum(f, kPlacements);
    if (auto f = child(field, "final_norm"); f.present()) model.finalNorm = readBool(f);
    if (auto f = child(field, "causal"); f.present()) model.causal = readBool(f);
    if (auto f = child(field, "bias"); f.present()) model.bias = readBool(f);
    if (auto f = child(field, "zero_init_outputs"); f.present())
        model.zeroInitOutputs = readBool(f);
    if (auto f = child(field, "logit_scale"); f.present())
        model.logitScale = readEnum(f, kLogitScales);
    if (auto f = child(field, "width_multiplier"); f.present())
        model.widthMultiplier = readIntInRange(f, 1, RunLimits::kMaxWidthMultiplier);
    return model;
}

PhaseConfig readPhase(const YamlField &field)
{
    checkKeys(field, {"name", "objective", "steps", "batch_size", "lr", "optimizer", "schedule"});
    PhaseConfig phase;
    if (auto f = child(field, "name"); f.present()) phase.name = readString(f);
    if (auto f = child(field, "objective"); f.present()) phase.objective = readEnum(f, kObjectives);
    if (auto f = child(field, "steps"); f.present()) phase.steps = readIntInRange(f, 0, RunLimits::kMaxSteps);
    if (auto f = child(field, "batch_size"); f.present()) phase.batchSize = readIntInRange(f, 1, RunLimits::kMaxBatchSize);
    if (auto f = child(field, "lr"); f.present()) {
        if (isScalar(f) && lower(f.node.Scalar()) == "scanned") {
            phase.useScannedLr = true;
        } else {
            double value = 0;
            if (!isScalar(f) || !parseNumber(f.node.Scalar(), &value))
                fail(f, "expected a learning rate or 'scanned', got " + describeType(f.node));
            phase.useScannedLr = false;
            phase.lr = readPositive(f);
        }
    }
    if (auto f = child(field, "optimizer"); f.present()) {
        checkKeys(f, {"kind", "beta1", "beta2", "eps", "weight_decay"});
        if (auto g = child(f, "kind"); g.present()) phase.optimizer.kind = readEnum(g, kOptimizers);
        if (auto g = child(f, "beta1"); g.present())
            phase.optimizer.beta1 = readNumberInRange(g, 0, true, 1, false);
        if (auto g = child(f, "beta2"); g.present())
            phase.optimizer.beta2 = readNumberInRange(g, 0, true, 1, false);
        if (auto g = child(f, "eps"); g.present()) phase.optimizer.eps = readPositive(g);
        if (auto g = child(f, "weight_decay"); g.present())
            phase.optimizer.weightDecay =
                readNumberInRange(g, 0, true, std::numeric_limits<double>::infinity(), false);
    }
    if (auto f = child(field, "schedule"); f.present()) {
        checkKeys(f, {"kind", "warmup_fraction"});
        if (auto g = child(f, "kind"); g.present()) phase.schedule.kind = readEnum(g, kSchedules);
        if (auto g = child(f, "warmup_fraction"); g.present())
            phase.schedule.warmupFraction = readNumberInRange(g, 0, true, 1, true);
    }
    return phase;
}

} // namespace

LogitScale readLogitScale(const YamlField &field)
{
    return readEnum(field, kLogitScales);
}

RunConfig readRunConfig(const YamlField &field)
{
    checkKeys(field, {"task", "model", "phases", "lr", "qk_rule", "eval_every", "log_every",
                      "eval_batches", "seed", "init_seed", "data_seed", "device", "tf32"});
    RunConfig config;
    if (auto f = child(field, "task"); f.present()) config.task = readTask(f);
    if (auto f = child(field, "model"); f.present()) config.model = readModel(f);
    const YamlField phases = child(field, "phases");
    if (!phases.present()) fail(phases, "missing: a run needs at least one training phase");
    if (phases.node.IsSequence() && phases.node.size() > static_cast<size_t>(RunLimits::kMaxPhases))
        fail(phases, beyondLimit(RunLimits::kMaxPhases, int64_t(phases.node.size()), "phases"));
    for (const auto &p : items(phases)) config.phases.push_back(readPhase(p));
    if (config.phases.empty()) fail(phases, "needs at least one phase");
    if (auto f = child(field, "lr"); f.present()) config.lr = readPositive(f);
    if (auto f = child(field, "qk_rule"); f.present()) {
        checkKeys(f, {"enabled", "reference_head_dim"});
        if (auto g = child(f, "enabled"); g.present()) config.qkRule.enabled = readBool(g);
        if (auto g = child(f, "reference_head_dim"); g.present())
            config.qkRule.referenceHeadDim = readPositive(g);
    }
    if (auto f = child(field, "eval_every"); f.present()) config.evalEvery = readIntInRange(f, 1, RunLimits::kMaxSteps);
    if (auto f = child(field, "log_every"); f.present()) config.logEvery = readIntInRange(f, 1, RunLimits::kMaxSteps);
    if (auto f = child(field, "eval_batches"); f.present())
        config.evalBatches = readIntInRange(f, 0, RunLimits::kMaxSteps);
    if (auto f = child(field, "seed"); f.present())
        config.initSeed = config.dataSeed = readUnsigned(f);
    if (auto f = child(field, "init_seed"); f.present()) config.initSeed = readUnsigned(f);
    if (auto f = child(field, "data_seed"); f.present()) config.dataSeed = readUnsigned(f);
    if (auto f = child(field, "device"); f.present()) config.device = readDevice(f);
    if (auto f = child(field, "tf32"); f.present()) config.tf32 = readBool(f);
    return config;
}

void writeRunConfig(YAML::Emitter &out, const RunConfig &config)
{
    out << YAML::BeginMap;

    const TaskConfig &task = config.task;
    out << YAML::Key << "task" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "kind" << YAML::Value << toString(task.kind);
    switch (task.kind) {
    case TaskKind::Addition:
        out << YAML::Key << "train_pairs" << YAML::Value << task.trainPairs;
        out << YAML::Key << "test_pairs" << YAML::Value << task.testPairs;
        out << YAML::Key << "test_pair_base" << YAML::Value << task.testPairBase;
        break;
    case TaskKind::NearestNeighbour:
        out << YAML::Key << "point_dim" << YAML::Value << task.pointDim;
        out << YAML::Key << "num_points" << YAML::Value << task.numPoints;
        break;
    case TaskKind::Text:
        out << YAML::Key << "text_path" << YAML::Value;
        writeText(out, task.textPath);
        out << YAML::Key << "context_length" << YAML::Value << task.contextLength;
        out << YAML::Key << "validation_fraction" << YAML::Value
            << formatNumber(task.validationFraction);
        out << YAML::Key << "corpus_bytes" << YAML::Value << task.corpusBytes;
        out << YAML::Key << "sample_prompt" << YAML::Value;
        writeText(out, task.samplePrompt);
        out << YAML::Key << "sample_length" << YAML::Value << task.sampleLength;
        out << YAML::Key << "sample_count" << YAML::Value << task.sampleCount;
        out << YAML::Key << "sample_temperature" << YAML::Value
            << formatNumber(task.sampleTemperature);
        out << YAML::Key << "sample_seed" << YAML::Value << task.sampleSeed;
        break;
    }
    out << YAML::EndMap;

    const ModelConfig &model = config.model;
    out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "d_model" << YAML::Value << model.dModel;
    const bool constantHeads =
        !model.heads.empty() && std::all_of(model.heads.begin(), model.heads.end(),
                                            [&](int64_t h) { return h == model.heads.front(); });
    if (constantHeads) {
        out << YAML::Key << "heads" << YAML::Value << model.heads.front();
        out << YAML::Key << "layers" << YAML::Value << model.layers();
    } else {
        out << YAML::Key << "heads" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (auto h : model.heads) out << h;
        out << YAML::EndSeq;
    }
    out << YAML::Key << "head_dim" << YAML::Value;
    if (model.headDim > 0)
        out << model.headDim;
    else
        out << "auto";
    out << YAML::Key << "ffn_width" << YAML::Value;
    if (model.ffnWidth > 0)
        out << model.ffnWidth;
    else
        out << "auto";
    out << YAML::Key << "activation" << YAML::Value << toString(model.activation);
    out << YAML::Key << "norm" << YAML::Value << toString(model.norm);
    out << YAML::Key << "placement" << YAML::Value << toString(model.placement);
    out << YAML::Key << "final_norm" << YAML::Value << model.finalNorm;
    out << YAML::Key << "causal" << YAML::Value << model.causal;
    out << YAML::Key << "bias" << YAML::Value << model.bias;
    out << YAML::Key << "zero_init_outputs" << YAML::Value << model.zeroInitOutputs;
    out << YAML::Key << "logit_scale" << YAML::Value << toString(model.logitScale);
    out << YAML::Key << "width_multiplier" << YAML::Value << model.widthMultiplier;
    out << YAML::EndMap;

    out << YAML::Key << "phases" << YAML::Value << YAML::BeginSeq;
    for (const auto &phase : config.phases) {
        out << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value;
        writeText(out, phase.name);
        out << YAML::Key << "objective" << YAML::Value << toString(phase.objective);
        out << YAML::Key << "steps" << YAML::Value << phase.steps;
        out << YAML::Key << "batch_size" << YAML::Value << phase.batchSize;
        out << YAML::Key << "lr" << YAML::Value;
        if (phase.useScannedLr)
            out << "scanned";
        else
            out << formatNumber(phase.lr);
        out << YAML::Key << "optimizer" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "kind" << YAML::Value << toString(phase.optimizer.kind);
        out << YAML::Key << "beta1" << YAML::Value << formatNumber(phase.optimizer.beta1);
        out << YAML::Key << "beta2" << YAML::Value << formatNumber(phase.optimizer.beta2);
        out << YAML::Key << "eps" << YAML::Value << formatNumber(phase.optimizer.eps);
        out << YAML::Key << "weight_decay" << YAML::Value
            << formatNumber(phase.optimizer.weightDecay);
        out << YAML::EndMap;
        out << YAML::Key << "schedule" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "kind" << YAML::Value << toString(phase.schedule.kind);
        out << YAML::Key << "warmup_fraction" << YAML::Value
            << formatNumber(phase.schedule.warmupFraction);
        out << YAML::EndMap;
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;

    out << YAML::Key << "lr" << YAML::Value << formatNumber(config.lr);
    out << YAML::Key << "qk_rule" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "enabled" << YAML::Value << config.qkRule.enabled;
    out << YAML::Key << "reference_head_dim" << YAML::Value
        << formatNumber(config.qkRule.referenceHeadDim);
    out << YAML::EndMap;
    out << YAML::Key << "eval_every" << YAML::Value << config.evalEvery;
    out << YAML::Key << "log_every" << YAML::Value << config.logEvery;
    out << YAML::Key << "eval_batches" << YAML::Value << config.evalBatches;
    if (config.initSeed == config.dataSeed) {
        out << YAML::Key << "seed" << YAML::Value << config.initSeed;
    } else {
        out << YAML::Key << "init_seed" << YAML::Value << config.initSeed;
        out << YAML::Key << "data_seed" << YAML::Value << config.dataSeed;
    }
    out << YAML::Key << "device" << YAML::Value << config.device;
    out << YAML::Key << "tf32" << YAML::Value << config.tf32;
    out << YAML::EndMap;
}

std::string canonicalYaml(const RunConfig &config)
{
    YAML::Emitter out;
    out << YAML::Flow;
    writeRunConfig(out, config);
    return out.c_str();
}

} // namespace headlab::yaml
