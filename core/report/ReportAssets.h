// ReportAssets.h — resources/report/ compiled in (cmake/EmbedText.cmake): the report's page with
// its placeholders, its style and its script.
#pragma once

#include <cstddef>

namespace headlab::detail {

extern const char kReportHtml[];
extern const size_t kReportHtml_size;
extern const char kReportCss[];
extern const size_t kReportCss_size;
extern const char kReportJs[];
extern const size_t kReportJs_size;

} // namespace headlab::detail
