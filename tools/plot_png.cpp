// The results as a PNG bar chart, with no plotting library: one panel per metric, one horizontal
// bar per device, drawn into an RGB raster with a built-in 5x7 font and encoded with zlib.
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>

#include "bench_report.h"

namespace manifold_tool {
namespace {

// Classic 5x7 font for ASCII 32..126 (descenders of g j p q y in an eighth row): five column bytes
// per glyph, bit 0 is the top row.
constexpr uint8_t kFont[95][5] = {
    {0x00, 0x00, 0x00, 0x00, 0x00}, {0x00, 0x00, 0x5F, 0x00, 0x00}, {0x00, 0x07, 0x00, 0x07, 0x00},
    {0x14, 0x7F, 0x14, 0x7F, 0x14}, {0x24, 0x2A, 0x7F, 0x2A, 0x12}, {0x23, 0x13, 0x08, 0x64, 0x62},
    {0x36, 0x49, 0x55, 0x22, 0x50}, {0x00, 0x05, 0x03, 0x00, 0x00}, {0x00, 0x1C, 0x22, 0x41, 0x00},
    {0x00, 0x41, 0x22, 0x1C, 0x00}, {0x08, 0x2A, 0x1C, 0x2A, 0x08}, {0x08, 0x08, 0x3E, 0x08, 0x08},
    {0x00, 0x50, 0x30, 0x00, 0x00}, {0x08, 0x08, 0x08, 0x08, 0x08}, {0x00, 0x60, 0x60, 0x00, 0x00},
    {0x20, 0x10, 0x08, 0x04, 0x02}, {0x3E, 0x51, 0x49, 0x45, 0x3E}, {0x00, 0x42, 0x7F, 0x40, 0x00},
    {0x42, 0x61, 0x51, 0x49, 0x46}, {0x21, 0x41, 0x45, 0x4B, 0x31}, {0x18, 0x14, 0x12, 0x7F, 0x10},
    {0x27, 0x45, 0x45, 0x45, 0x39}, {0x3C, 0x4A, 0x49, 0x49, 0x30}, {0x01, 0x71, 0x09, 0x05, 0x03},
    {0x36, 0x49, 0x49, 0x49, 0x36}, {0x06, 0x49, 0x49, 0x29, 0x1E}, {0x00, 0x36, 0x36, 0x00, 0x00},
    {0x00, 0x56, 0x36, 0x00, 0x00}, {0x08, 0x14, 0x22, 0x41, 0x00}, {0x14, 0x14, 0x14, 0x14, 0x14},
    {0x00, 0x41, 0x22, 0x14, 0x08}, {0x02, 0x01, 0x51, 0x09, 0x06}, {0x32, 0x49, 0x79, 0x41, 0x3E},
    {0x7E, 0x11, 0x11, 0x11, 0x7E}, {0x7F, 0x49, 0x49, 0x49, 0x36}, {0x3E, 0x41, 0x41, 0x41, 0x22},
    {0x7F, 0x41, 0x41, 0x22, 0x1C}, {0x7F, 0x49, 0x49, 0x49, 0x41}, {0x7F, 0x09, 0x09, 0x09, 0x01},
    {0x3E, 0x41, 0x49, 0x49, 0x7A}, {0x7F, 0x08, 0x08, 0x08, 0x7F}, {0x00, 0x41, 0x7F, 0x41, 0x00},
    {0x20, 0x40, 0x41, 0x3F, 0x01}, {0x7F, 0x08, 0x14, 0x22, 0x41}, {0x7F, 0x40, 0x40, 0x40, 0x40},
    {0x7F, 0x02, 0x0C, 0x02, 0x7F}, {0x7F, 0x04, 0x08, 0x10, 0x7F}, {0x3E, 0x41, 0x41, 0x41, 0x3E},
    {0x7F, 0x09, 0x09, 0x09, 0x06}, {0x3E, 0x41, 0x51, 0x21, 0x5E}, {0x7F, 0x09, 0x19, 0x29, 0x46},
    {0x46, 0x49, 0x49, 0x49, 0x31}, {0x01, 0x01, 0x7F, 0x01, 0x01}, {0x3F, 0x40, 0x40, 0x40, 0x3F},
    {0x1F, 0x20, 0x40, 0x20, 0x1F}, {0x3F, 0x40, 0x38, 0x40, 0x3F}, {0x63, 0x14, 0x08, 0x14, 0x63},
    {0x07, 0x08, 0x70, 0x08, 0x07}, {0x61, 0x51, 0x49, 0x45, 0x43}, {0x00, 0x7F, 0x41, 0x41, 0x00},
    {0x02, 0x04, 0x08, 0x10, 0x20}, {0x00, 0x41, 0x41, 0x7F, 0x00}, {0x04, 0x02, 0x01, 0x02, 0x04},
    {0x40, 0x40, 0x40, 0x40, 0x40}, {0x00, 0x01, 0x02, 0x04, 0x00}, {0x20, 0x54, 0x54, 0x54, 0x78},
    {0x7F, 0x48, 0x44, 0x44, 0x38}, {0x38, 0x44, 0x44, 0x44, 0x20}, {0x38, 0x44, 0x44, 0x48, 0x7F},
    {0x38, 0x54, 0x54, 0x54, 0x18}, {0x08, 0x7E, 0x09, 0x01, 0x02}, {0x18, 0xA4, 0xA4, 0xA4, 0x7C},
    {0x7F, 0x08, 0x04, 0x04, 0x78}, {0x00, 0x44, 0x7D, 0x40, 0x00}, {0x40, 0x80, 0x84, 0x7D, 0x00},
    {0x7F, 0x10, 0x28, 0x44, 0x00}, {0x00, 0x41, 0x7F, 0x40, 0x00}, {0x7C, 0x04, 0x18, 0x04, 0x78},
    {0x7C, 0x08, 0x04, 0x04, 0x78}, {0x38, 0x44, 0x44, 0x44, 0x38}, {0xFC, 0x24, 0x24, 0x24, 0x18},
    {0x18, 0x24, 0x24, 0x18, 0xFC}, {0x7C, 0x08, 0x04, 0x04, 0x08}, {0x48, 0x54, 0x54, 0x54, 0x20},
    {0x04, 0x3F, 0x44, 0x40, 0x20}, {0x3C, 0x40, 0x40, 0x20, 0x7C}, {0x1C, 0x20, 0x40, 0x20, 0x1C},
    {0x3C, 0x40, 0x30, 0x40, 0x3C}, {0x44, 0x28, 0x10, 0x28, 0x44}, {0x1C, 0xA0, 0xA0, 0xA0, 0x7C},
    {0x44, 0x64, 0x54, 0x4C, 0x44}, {0x00, 0x08, 0x36, 0x41, 0x00}, {0x00, 0x00, 0x7F, 0x00, 0x00},
    {0x00, 0x41, 0x36, 0x08, 0x00}, {0x08, 0x04, 0x08, 0x10, 0x08},
};

struct Rgb {
  uint8_t r, g, b;
};

class Canvas {
 public:
  Canvas(int width, int height)
      : width_(width), height_(height), pixels_(static_cast<size_t>(width) * height * 3, 255) {}
  int width() const { return width_; }
  int height() const { return height_; }

  void fill(int x, int y, int w, int h, Rgb color) {
    for (int row = std::max(0, y); row < std::min(height_, y + h); ++row)
      for (int col = std::max(0, x); col < std::min(width_, x + w); ++col) {
        uint8_t* p = &pixels_[(static_cast<size_t>(row) * width_ + col) * 3];
        p[0] = color.r;
        p[1] = color.g;
        p[2] = color.b;
      }
  }

  // Text at (x, y) = top-left, each font pixel drawn as a scale x scale square.
  void text(int x, int y, const std::string& text, Rgb color, int scale = 2) {
    for (char c : text) {
      int glyph = (c < 32 || c > 126) ? '?' - 32 : c - 32;
      for (int col = 0; col < 5; ++col)
        for (int row = 0; row < 8; ++row)
          if (kFont[glyph][col] & (1 << row))
            fill(x + col * scale, y + row * scale, scale, scale, color);
      x += 6 * scale;
    }
  }
  static int text_width(const std::string& text, int scale = 2) {
    return static_cast<int>(text.size()) * 6 * scale;
  }

  const std::vector<uint8_t>& pixels() const { return pixels_; }

 private:
  int width_, height_;
  std::vector<uint8_t> pixels_;
};

void put_u32(std::vector<uint8_t>& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

void put_chunk(std::vector<uint8_t>& out, const char* type, const std::vector<uint8_t>& data) {
  put_u32(out, static_cast<uint32_t>(data.size()));
  size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  uLong crc = crc32(0, out.data() + start, static_cast<uInt>(out.size() - start));
  put_u32(out, static_cast<uint32_t>(crc));
}

bool encode_png(const Canvas& canvas, std::vector<uint8_t>& png) {
  // Scanlines, each behind filter byte 0 (none).
  std::vector<uint8_t> raw;
  size_t stride = static_cast<size_t>(canvas.width()) * 3;
  for (int row = 0; row < canvas.height(); ++row) {
    raw.push_back(0);
    raw.insert(raw.end(), canvas.pixels().begin() + row * stride,
               canvas.pixels().begin() + (row + 1) * stride);
  }
  uLongf compressed_size = compressBound(static_cast<uLong>(raw.size()));
  std::vector<uint8_t> compressed(compressed_size);
  if (compress2(compressed.data(), &compressed_size, raw.data(), static_cast<uLong>(raw.size()),
                9) != Z_OK)
    return false;
  compressed.resize(compressed_size);

  const uint8_t signature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  png.assign(signature, signature + 8);
  std::vector<uint8_t> header;
  put_u32(header, static_cast<uint32_t>(canvas.width()));
  put_u32(header, static_cast<uint32_t>(canvas.height()));
  header.insert(header.end(), {8, 2, 0, 0, 0});  // 8-bit RGB, deflate, no filter, no interlace
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", compressed);
  put_chunk(png, "IEND", {});
  return true;
}

// Steady colours per implementation, so the same device looks the same in every panel.
Rgb subject_color(const Subject& subject, size_t index) {
  if (subject.manifold)
    return subject.type == "GPU" ? Rgb{0x1f, 0x5f, 0xbf} : Rgb{0x2a, 0x8a, 0xd8};
  if (subject.label.rfind("PoCL", 0) == 0) return {0xe0, 0x7b, 0x22};
  if (subject.label.rfind("NVIDIA", 0) == 0) return {0x5c, 0xa8, 0x2c};
  if (subject.label.rfind("CUDA", 0) == 0) return {0x2e, 0x6b, 0x1a};
  if (subject.label.rfind("Host", 0) == 0) return {0x80, 0x80, 0x80};
  const Rgb others[] = {{0x9b, 0x59, 0xb6}, {0xc0, 0x39, 0x2b}, {0x16, 0xa0, 0x85}};
  return others[index % 3];
}

}  // namespace

bool write_plot_png(const Report& report, const std::string& path, std::string& error) {
  const Rgb ink{0x20, 0x20, 0x20}, grey{0x70, 0x70, 0x70}, red{0xc0, 0x20, 0x20},
      rule{0xdd, 0xdd, 0xdd};
  const int columns = 2, panel_width = 640, margin = 16, title_height = 64, row_height = 22;

  // The panels: metrics that at least one subject has a cell for.
  std::vector<const MetricInfo*> metrics;
  for (const auto& metric : kMetrics) {
    bool any = false;
    for (const auto& subject : report.subjects) any = any || subject.cells.count(metric.name);
    if (any) metrics.push_back(&metric);
  }
  size_t label_chars = 8;
  for (const auto& subject : report.subjects)
    label_chars = std::max(label_chars, subject.label.size());
  int label_width = Canvas::text_width(std::string(label_chars, 'x')) + 8;
  auto rows_of = [&](const MetricInfo* metric) {
    int rows = 0;
    for (const auto& subject : report.subjects) rows += subject.cells.count(metric->name) ? 1 : 0;
    return rows;
  };
  int panel_height = 0;
  for (const auto* metric : metrics)
    panel_height = std::max(panel_height, 30 + rows_of(metric) * row_height + 12);
  int panel_rows = static_cast<int>((metrics.size() + columns - 1) / columns);
  Canvas canvas(columns * panel_width + margin, title_height + panel_rows * panel_height + margin);

  canvas.text(margin, 12,
              "manifold bench  " + report.machine.date + "  " + report.machine.host + "  commit " +
                  report.machine.commit + (report.machine.uncommitted_changes ? "+" : "") +
                  (report.quick ? "  (--quick)" : ""),
              ink, 2);
  canvas.text(margin, 36,
              report.machine.cpu.substr(0, 70) + ", " + std::to_string(report.machine.cores) +
                  " threads. Bars: longer is better (time metrics are drawn as 1/time).",
              grey, 1);

  for (size_t m = 0; m < metrics.size(); ++m) {
    const MetricInfo& metric = *metrics[m];
    int x0 = margin + static_cast<int>(m % columns) * panel_width;
    int y0 = title_height + static_cast<int>(m / columns) * panel_height;
    canvas.fill(x0, y0, panel_width - margin, 1, rule);
    canvas.text(x0, y0 + 8,
                std::string(metric.name) + "  [" + metric.unit + ", " +
                    (metric.higher_is_better ? "higher" : "lower") + " is better]",
                ink, 2);
    // Bars are proportional to the figure's "goodness": the value, or its inverse for times.
    double best = 0;
    for (const auto& subject : report.subjects) {
      auto it = subject.cells.find(metric.name);
      if (it != subject.cells.end() && it->second.state == CellState::kValue &&
          it->second.value > 0)
        best = std::max(best, metric.higher_is_better ? it->second.value : 1.0 / it->second.value);
    }
    int bar_x = x0 + label_width;
    int bar_space = panel_width - margin - label_width - Canvas::text_width("00000 us") - 8;
    int y = y0 + 30;
    for (size_t s = 0; s < report.subjects.size(); ++s) {
      const Subject& subject = report.subjects[s];
      auto it = subject.cells.find(metric.name);
      if (it == subject.cells.end()) continue;
      const Cell& cell = it->second;
      canvas.text(x0, y + 3, subject.label, ink, 2);
      if (cell.state == CellState::kValue && cell.value > 0 && best > 0) {
        double goodness = metric.higher_is_better ? cell.value : 1.0 / cell.value;
        int length = std::max(2, static_cast<int>(bar_space * goodness / best));
        canvas.fill(bar_x, y + 2, length, row_height - 6, subject_color(subject, s));
        canvas.text(bar_x + length + 6, y + 3, format_value(cell.value), ink, 2);
      } else {
        canvas.text(bar_x, y + 3, cell_text(cell), red, 2);
      }
      y += row_height;
    }
  }

  std::vector<uint8_t> png;
  if (!encode_png(canvas, png)) {
    error = "zlib compression failed";
    return false;
  }
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  if (!out) {
    error = "cannot write the file";
    return false;
  }
  return true;
}

}  // namespace manifold_tool
