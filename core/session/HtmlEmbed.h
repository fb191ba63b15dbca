// HtmlEmbed.h — a session carried inside a report (headlab-cli report, File ▸ Export report): its
// text, byte for byte, in one element of the page,
//
//   <script type="application/x-headlab-session" id="headlab-session" data-bytes="N"
//           data-encoding="gzip">BASE64</script>
//
// which a browser neither shows nor runs: the text gzip-compressed (a build without zlib writes it
// as it is, data-encoding="identity"), then base64; N is the text's own length. Every reader of session files (readSessionText: the
// app, the CLI; the Python package reads the same element) opens a report as the session in it.
// Base64, so that no text of the session (a "</script>" in a note) can end the element early.
// Torch-free and Qt-free.
#pragma once

#include <string>

namespace headlab {

// Whether `path` names a report (.html or .htm): a session inside a page, read through
// sessionTextInHtml and never written over as a session file.
bool isHtmlReportPath(const std::string &path);
// The element that carries `sessionText`.
std::string sessionElement(const std::string &sessionText);
// What the report `html` read from `path` carries: `bytes` as the element holds them (gzip
// compressed where `gzip`), and the session text's length; SessionError naming `path` where it
// holds none, or one that does not decode.
struct EmbeddedSession {
    std::string bytes;
    bool gzip = false;
    size_t textBytes = 0;
};
EmbeddedSession embeddedSession(const std::string &path, const std::string &html);

std::string base64Encode(const std::string &bytes);
// false on a character outside the alphabet or a length that is not a multiple of 4.
bool base64Decode(const std::string &text, std::string *bytes);

} // namespace headlab
