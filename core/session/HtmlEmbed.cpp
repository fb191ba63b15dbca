// HtmlEmbed.cpp — see HtmlEmbed.h.
#include "core/session/HtmlEmbed.h"

#include "core/config/Yaml.h"

#include <array>
#include <cstdint>
#include <string>

#ifdef HEADLAB_HAVE_ZLIB
#include <zlib.h>
#endif

namespace headlab {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr const char *kOpening =
    "<script type=\"application/x-headlab-session\" id=\"headlab-session\"";

bool endsWithText(const std::string &text, const std::string &tail)
{
    if (text.size() < tail.size()) return false;
    for (size_t i = 0; i < tail.size(); ++i) {
        char c = text[text.size() - tail.size() + i];
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
        if (c != tail[i]) return false;
    }
    return true;
}
} // namespace

bool isHtmlReportPath(const std::string &path)
{
    return endsWithText(path, ".html") || endsWithText(path, ".htm");
}

std::string base64Encode(const std::string &bytes)
{
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 |
                           uint32_t(uint8_t(bytes[i + 1])) << 8 | uint8_t(bytes[i + 2]);
        for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
    }
    if (const size_t left = bytes.size() - i; left > 0) {
        uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
        if (left == 2) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += left == 2 ? kAlphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

bool base64Decode(const std::string &text, std::string *bytes)
{
    std::array<int, 256> value;
    value.fill(-1);
    for (int i = 0; i < 64; ++i) value[uint8_t(kAlphabet[i])] = i;
    if (text.size() % 4 != 0) return false;
    bytes->clear();
    bytes->reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        const bool last = i + 4 == text.size();
        const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
        uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = text[i + k];
            const int d = (k >= 4 - pad) ? 0 : value[uint8_t(c)];
            if (d < 0) return false;
            v = v << 6 | uint32_t(d);
        }
        bytes->push_back(char(v >> 16));
        if (pad < 2) bytes->push_back(char(v >> 8 & 255));
        if (pad < 1) bytes->push_back(char(v & 255));
    }
    return true;
}

namespace {
// gzip (RFC 1952) at level 9, with no name and no time in its header: the same text gives the same
// report. Empty where zlib is not there.
std::string gzipped(const std::string &text)
{
#ifdef HEADLAB_HAVE_ZLIB
    z_stream z{};
    if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) return {};
    std::string out(deflateBound(&z, uLong(text.size())) + 32, '\0');
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(text.data()));
    z.avail_in = uInt(text.size());
    z.next_out = reinterpret_cast<Bytef *>(out.data());
    z.avail_out = uInt(out.size());
    const int status = deflate(&z, Z_FINISH);
    out.resize(out.size() - z.avail_out);
    deflateEnd(&z);
    return status == Z_STREAM_END ? out : std::string();
#else
    (void)text;
    return {};
#endif
}
} // namespace

std::string sessionElement(const std::string &sessionText)
{
    const std::string packed = gzipped(sessionText);
    return std::string(kOpening) + " data-bytes=\"" + std::to_string(sessionText.size()) +
           "\" data-encoding=\"" + (packed.empty() ? "identity" : "gzip") + "\">" +
           base64Encode(packed.empty() ? sessionText : packed) + "</script>";
}

EmbeddedSession embeddedSession(const std::string &path, const std::string &html)
{
    const size_t at = html.find(kOpening);
    if (at == std::string::npos)
        throw SessionError(path, 0, 0, "",
                           "is a web page without a HeadLab session in it (a report written by "
                           "headlab-cli report or File ▸ Export report carries one)");
    const size_t open = html.find('>', at);
    const size_t close = html.find("</script>", at);
    if (open == std::string::npos || close == std::string::npos || open > close)
        throw SessionError(path, 0, 0, "", "holds a HeadLab session element that is cut short");
    const std::string tag = html.substr(at, open - at);
    auto attribute = [&](const std::string &name) {
        const size_t from = tag.find(" " + name + "=\"");
        if (from == std::string::npos) return std::string();
        const size_t begin = from + name.size() + 3;
        return tag.substr(begin, tag.find('"', begin) - begin);
    };
    EmbeddedSession out;
    const std::string size = attribute("data-bytes");
    const std::string encoding = attribute("data-encoding");
    out.gzip = encoding == "gzip";
    std::string encoded = html.substr(open + 1, close - open - 1);
    std::erase_if(encoded, [](char c) { return c == '\n' || c == '\r' || c == ' '; });
    if (size.empty() || size.size() > 12 ||
        size.find_first_not_of("0123456789") != std::string::npos ||
        !(out.gzip || encoding == "identity") || !base64Decode(encoded, &out.bytes) ||
        (!out.gzip && std::to_string(out.bytes.size()) != size))
        throw SessionError(path, 0, 0, "",
                           "holds a HeadLab session that is damaged (it does not decode to the " +
                               size + " bytes it says)");
    out.textBytes = std::stoull(size);
    return out;
}

} // namespace headlab
