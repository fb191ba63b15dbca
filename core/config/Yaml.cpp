// Yaml.cpp — located YAML reading and exact number writing.
#include "core/config/Yaml.h"

#include "core/config/RunConfig.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>

namespace headlab {

namespace {

std::string locatedWhat(const std::string &file, int line, int column, const std::string &keyPath,
                        const std::string &message)
{
    std::string text = file;
    if (line > 0) text += ":" + std::to_string(line) + ":" + std::to_string(column);
    text += ": ";
    if (!keyPath.empty()) text += keyPath + ": ";
    return text + message;
}

} // namespace

SessionError::SessionError(std::string file, int line, int column, std::string keyPath,
                           std::string message)
    : std::runtime_error(locatedWhat(file, line, column, keyPath, message))
    , m_file(std::move(file))
    , m_line(line)
    , m_column(column)
    , m_keyPath(std::move(keyPath))
    , m_message(std::move(message))
{}

} // namespace headlab

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
        if (b == 0)
            length = 0;
        else if (b < 0x80)
            length = 1;
        else if ((b & 0xE0) == 0xC0 && b >= 0xC2)
            length = 2;
        else if ((b & 0xF0) == 0xE0)
            length = 3;
        else if ((b & 0xF8) == 0xF0 && b <= 0xF4)
            length = 4;
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
// `maxDepth` and unterminated quotes, naming where. `budget` counts the nodes still to be visited:
// an alias is visited again at each of its uses, so nested aliases ("billion laughs") would
// otherwise expand to more nodes than there are atoms in the universe, from a kilobyte of text.
void checkStructure(const YamlField &root, const std::string &text, const YAML::Node &node,
                    int depth, int maxDepth, size_t &budget)
{
    if (budget == 0) {
        YamlField at = root;
        at.mark = node.Mark();
        fail(
            at,
            "the document expands to more nodes than its text could hold (YAML aliases used within "
            "aliases); write the values out, or use fewer nested aliases");
    }
    --budget;
    if (node.IsScalar()) {
        const YAML::Mark mark = node.Mark();
        const auto pos = static_cast<size_t>(mark.pos);
        if (mark.pos >= 0 && pos < text.size() && (text[pos] == '"' || text[pos] == '\'') &&
            !quoteIsClosed(text, pos)) {
            YamlField at = root;
            at.mark = mark;
            fail(at,
                 std::string("unterminated quoted text: the closing ") + text[pos] + " is missing");
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
            checkStructure(root, text, element, depth + 1, maxDepth, budget);
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
            checkStructure(root, text, key, depth + 1, maxDepth, budget);
            checkStructure(root, text, it->second, depth + 1, maxDepth, budget);
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
            return row.substr(0, 3) == m &&
                   (row.size() == 3 || row[3] == ' ' || row[3] == '\t' || row[3] == '\r');
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
        const std::string_view steps =
            row.substr(open + kOpen.size(), middle - open - kOpen.size());
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

// Counts a document's nodes (scalars, nulls, aliases, lists, mappings) and their nesting from
// yaml-cpp's parser events, before any node is built, and throws a located SessionError at the
// first past `maxNodes` or `maxDepth`. A built node costs yaml-cpp ~460 bytes (0.7: 2 M values in
// 8 MB took validate 0.92 GB past its start), so the cap bounds the memory of YAML::Load to
// ~80 times the text, not only the text.
class NodeCounter : public YAML::EventHandler {
public:
    NodeCounter(const YamlField &root, size_t maxNodes, int maxDepth)
        : m_root(root)
        , m_maxNodes(maxNodes)
        , m_maxDepth(maxDepth)
    {}
    void OnDocumentStart(const YAML::Mark &) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark &mark, YAML::anchor_t) override { node(mark); }
    void OnAlias(const YAML::Mark &mark, YAML::anchor_t) override { node(mark); }
    void OnScalar(const YAML::Mark &mark, const std::string &, YAML::anchor_t,
                  const std::string &) override
    {
        node(mark);
    }
    void OnSequenceStart(const YAML::Mark &mark, const std::string &, YAML::anchor_t,
                         YAML::EmitterStyle::value) override
    {
        open(mark);
    }
    void OnSequenceEnd() override { --m_depth; }
    void OnMapStart(const YAML::Mark &mark, const std::string &, YAML::anchor_t,
                    YAML::EmitterStyle::value) override
    {
        open(mark);
    }
    void OnMapEnd() override { --m_depth; }

private:
    void node(const YAML::Mark &mark)
    {
        if (++m_nodes > m_maxNodes)
            failAt(m_root, mark, "",
                   "the document holds more than " + std::to_string(m_maxNodes) +
                       " YAML values (a HeadLab limit: one per 6 bytes of its text, 100000 in "
                       "any file), more than HeadLab writes; it would take memory far beyond "
                       "its size to read");
    }
    void open(const YAML::Mark &mark)
    {
        node(mark);
        if (++m_depth > m_maxDepth)
            failAt(m_root, mark, "",
                   "the document nests more than " + std::to_string(m_maxDepth) +
                       " levels deep; a HeadLab session needs far fewer");
    }
    const YamlField &m_root;
    size_t m_maxNodes, m_nodes = 0;
    int m_maxDepth, m_depth = 0;
};

// `text` with each top-level block named in `unread` (its key at column 0, to the next line that
// starts another top-level key) emptied: its key kept with no value, its other lines blank, so
// that every later line keeps its number. HeadLab writes these blocks and never reads them
// (a session's search_report:), so they are not built at all.
std::string withoutUnreadBlocks(const std::string &text, const std::vector<std::string> &unread)
{
    if (unread.empty()) return text;
    // A document written as one flow mapping ({...}) has no blocks: read whole.
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '#')
            i = std::min(text.find('\n', i), text.size());
        else if (text[i] == '{' || text[i] == '[')
            return text;
        else if (!std::isspace(static_cast<unsigned char>(text[i])))
            break;
    }
    std::string out;
    out.reserve(text.size());
    bool inBlock = false;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string_view line(text.data() + start, end - start);
        // A document marker (---, ...) ends a block too, so that a second document stays one.
        const bool topLevelKey =
            !line.empty() && (std::isalpha(static_cast<unsigned char>(line[0])) || line[0] == '_' ||
                              line[0] == '"' || line[0] == '\'' || line.rfind("---", 0) == 0 ||
                              line.rfind("...", 0) == 0);
        if (topLevelKey) {
            inBlock = false;
            for (const auto &key : unread)
                if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
                    line[key.size()] == ':') {
                    inBlock = true;
                    out.append(key).append(":");
                }
            if (!inBlock) out.append(line);
        } else if (!inBlock || line.empty() || line[0] == '#') {
            out.append(line); // a comment or blank line at column 0 does not end a block
        }
        if (end < text.size()) out.push_back('\n');
        start = end + 1;
    }
    return out;
}

} // namespace

const Curve *preparsedCurve(const YamlField &field)
{
    if (!field.curves || field.mark.is_null()) return nullptr;
    const auto it = field.curves->find(field.mark.line);
    return it == field.curves->end() ? nullptr : &it->second;
}

YamlField parseDocument(const std::string &original, const std::string &file,
                        const std::vector<std::string> &unread)
{
    constexpr int kMaxDepth = 64;
    // HeadLab's own files hold one value per 8.7 bytes of text or more (a run file's curves are
    // read from the text, not as values); a list of combinations, one per 5.4, passes up to 200,000
    // combinations, twice the runs a sweep may have. Denser than one per 6 is refused.
    constexpr size_t kBytesPerNode = 6, kMaxNodesBase = 100000;
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
    const std::string text = preparseCurves(withoutUnreadBlocks(original, unread), curves.get());
    if (!curves->empty()) root.curves = std::move(curves);
    if (const int second = secondDocumentLine(text); second > 0)
        throw SessionError(file, second, 1, "",
                           "a second YAML document ('---'); a session file holds exactly one");
    try {
        // Counted first: nothing is built for a document past the limits.
        std::istringstream stream(text);
        YAML::Parser parser(stream);
        NodeCounter counter(root, kMaxNodesBase + text.size() / kBytesPerNode, kMaxDepth);
        parser.HandleNextDocument(counter);
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
            } else if (c == '~' || text.compare(i, 4, "null") == 0 ||
                       text.compare(i, 3, "---") == 0) {
                break; // an explicit null or an empty explicit document: empty indeed
            }
        }
    }
    // Without aliases a document has fewer nodes than characters; aliases may reuse a part a few
    // times over, not without bound.
    size_t budget = 4 * text.size() + 10000;
    checkStructure(root, text, root.node, 0, kMaxDepth, budget);
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

} // namespace

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
    // DEL (0x7F) is not printable in YAML, and yaml-cpp escapes it only with every non-ASCII
    // character (as \u, which reads back to the same text): a generated sample can hold one.
    if (text.find('\x7f') != std::string::npos)
        out << YAML::EscapeNonAscii << YAML::DoubleQuoted << text;
    else if (ambiguous || text.find('\n') != std::string::npos)
        out << YAML::DoubleQuoted << text;
    else
        out << text;
}

std::map<std::string, std::string> readTextMap(const YamlField &field)
{
    std::map<std::string, std::string> map;
    if (!field.present() || field.isNull()) return map;
    for (const auto &[key, value] : entries(field)) map[key] = readString(value);
    return map;
}

void writeTextMap(YAML::Emitter &out, const std::map<std::string, std::string> &map)
{
    out << YAML::Flow << YAML::BeginMap;
    for (const auto &[key, value] : map) {
        out << YAML::Key << key << YAML::Value;
        writeText(out, value);
    }
    out << YAML::EndMap;
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

std::string normalisedName(const std::string &text)
{
    std::string result;
    for (char c : text)
        if (c != '_' && c != '-' && c != ' ')
            result += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return result;
}

void failUnknownName(const YamlField &field, const std::vector<std::string> &allowed)
{
    std::string message = "unknown value " + describeType(field.node);
    const std::string suggestion = isScalar(field) ? nearestKey(field.node.Scalar(), allowed) : "";
    if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
    message += " (expected one of ";
    for (size_t i = 0; i < allowed.size(); ++i) message += (i ? ", " : "") + allowed[i];
    fail(field, message + ")");
}

} // namespace headlab::yaml
