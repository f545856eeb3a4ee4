// The conversions of an OpenCL printf format string, parsed once for both pipelines: the CPU's
// (compiler/printf.cpp, vector arguments' lanes and widths) and NVPTX's (compiler/
// nvptx_pipeline.cpp, rewriting the format for CUDA's vprintf).
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace manifold::compiler {

// %[flags][width][.precision][vN][length]conversion
struct PrintfConversion {
  size_t begin = 0, end = 0;  // the directive in the format, '%' to the conversion letter
  unsigned vector = 0;        // element count of %vN, 0 for scalars
  std::string length;         // hh h hl l
  char letter = 0;            // 0 when the format ends first
};

inline std::vector<PrintfConversion> parse_printf_format(std::string_view format) {
  std::vector<PrintfConversion> out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') continue;
    if (i + 1 < format.size() && format[i + 1] == '%') {
      ++i;
      continue;
    }
    PrintfConversion c;
    c.begin = i++;
    while (i < format.size() && std::string_view("-+ #0").find(format[i]) != std::string_view::npos)
      ++i;
    while (i < format.size() &&
           (std::isdigit(static_cast<unsigned char>(format[i])) || format[i] == '.'))
      ++i;
    if (i < format.size() && format[i] == 'v') {
      ++i;
      while (i < format.size() && std::isdigit(static_cast<unsigned char>(format[i])))
        c.vector = c.vector * 10 + unsigned(format[i++] - '0');
    }
    while (i < format.size() && (format[i] == 'h' || format[i] == 'l')) c.length += format[i++];
    if (i < format.size()) c.letter = format[i];
    c.end = i + 1;
    out.push_back(c);
  }
  return out;
}

}  // namespace manifold::compiler
