#include "bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

namespace manifold_tool {

std::string format_value(double value) {
  char text[32];
  double magnitude = std::fabs(value);
  if (magnitude >= 100)
    std::snprintf(text, sizeof text, "%.0f", value);
  else if (magnitude >= 10)
    std::snprintf(text, sizeof text, "%.1f", value);
  else if (magnitude >= 0.1)
    std::snprintf(text, sizeof text, "%.2f", value);
  else
    std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

std::string cell_text(const Cell& cell) {
  switch (cell.state) {
    case CellState::kMissing:
      return "-";
    case CellState::kValue:
      return format_value(cell.value);
    case CellState::kFail:
      return "FAIL";
    case CellState::kError:
      return "ERROR";
    case CellState::kCrash:
      return "CRASH";
    case CellState::kTimeout:
      return "TIMEOUT";
  }
  return "?";
}

bool has_problems(const Report& report) {
  for (const auto& subject : report.subjects)
    for (const auto& [name, cell] : subject.cells)
      if (cell.state != CellState::kValue && cell.state != CellState::kMissing) return true;
  return false;
}

namespace {

struct RatioColumn {
  size_t manifold, peer;
  std::string header;
};

// Manifold's subjects against every other subject of the same type.
std::vector<RatioColumn> ratio_columns(const Report& report) {
  std::vector<RatioColumn> columns;
  for (size_t m = 0; m < report.subjects.size(); ++m) {
    if (!report.subjects[m].manifold) continue;
    for (size_t p = 0; p < report.subjects.size(); ++p) {
      const Subject& peer = report.subjects[p];
      if (peer.manifold || peer.type != report.subjects[m].type) continue;
      columns.push_back({m, p, report.subjects[m].label + " vs " + peer.label});
    }
  }
  return columns;
}

const Cell* find_cell(const Subject& subject, const char* metric) {
  auto it = subject.cells.find(metric);
  return it == subject.cells.end() ? nullptr : &it->second;
}

// How many times better Manifold's figure is (>1: Manifold is faster), when both are numbers.
std::optional<double> speedup(const Subject& manifold, const Subject& peer,
                              const MetricInfo& metric) {
  const Cell* ours = find_cell(manifold, metric.name);
  const Cell* theirs = find_cell(peer, metric.name);
  if (!ours || !theirs || ours->state != CellState::kValue || theirs->state != CellState::kValue)
    return {};
  if (ours->value <= 0 || theirs->value <= 0) return {};
  return metric.higher_is_better ? ours->value / theirs->value : theirs->value / ours->value;
}

std::string ratio_text(std::optional<double> ratio) {
  if (!ratio) return "";
  return format_value(*ratio) + "x";
}

std::string pad(const std::string& text, size_t width) {
  // Widths count bytes; every text here is ASCII.
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

// The rows and cells of the main table, shared by the text and Markdown renderings.
struct Grid {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

Grid build_grid(const Report& report) {
  Grid grid;
  auto columns = ratio_columns(report);
  grid.header = {"metric", "unit"};
  for (const auto& subject : report.subjects) grid.header.push_back(subject.label);
  for (const auto& column : columns) grid.header.push_back(column.header);
  for (const auto& metric : kMetrics) {
    bool any = false;
    for (const auto& subject : report.subjects) any = any || find_cell(subject, metric.name);
    if (!any) continue;
    std::vector<std::string> row = {
        metric.name, std::string(metric.unit) + (metric.higher_is_better ? " ^" : " v")};
    for (const auto& subject : report.subjects) {
      const Cell* cell = find_cell(subject, metric.name);
      row.push_back(cell ? cell_text(*cell) : "-");
    }
    for (const auto& column : columns)
      row.push_back(ratio_text(
          speedup(report.subjects[column.manifold], report.subjects[column.peer], metric)));
    grid.rows.push_back(row);
  }
  return grid;
}

// A device group's splits as a grid: metric, kernel, NDRange, then one column per member.
Grid split_grid(const Subject& subject) {
  Grid grid;
  grid.header = {"metric", "kernel", "NDRange"};
  size_t members = 0;
  for (const auto& split : subject.splits) members = std::max(members, split.fractions.size());
  for (size_t m = 0; m < members; ++m) grid.header.push_back("member " + std::to_string(m));
  for (const auto& split : subject.splits) {
    std::vector<std::string> row = {split.metric, split.kernel, split.range};
    for (size_t m = 0; m < members; ++m) {
      char text[32] = "-";
      if (m < split.fractions.size()) std::snprintf(text, sizeof text, "%.3f", split.fractions[m]);
      row.push_back(text);
    }
    grid.rows.push_back(std::move(row));
  }
  return grid;
}

struct Target {
  std::string text, measured;
  bool met;
};

// The performance targets for Manifold's CPU device (against PoCL, the plain C++ loop and fixed
// limits), judged only where the peer they compare with ran in this report.
std::vector<Target> cpu_targets(const Report& report) {
  const Subject *manifold = nullptr, *pocl = nullptr, *host = nullptr;
  for (const auto& subject : report.subjects) {
    if (subject.manifold && subject.type == "CPU" && !manifold) manifold = &subject;
    if (subject.label.rfind("PoCL CPU", 0) == 0 && !pocl) pocl = &subject;
    if (subject.label == "Host C++" && !host) host = &subject;
  }
  std::vector<Target> targets;
  if (!manifold) return targets;
  auto value = [](const Subject* subject, const char* metric) -> std::optional<double> {
    if (!subject) return {};
    const Cell* cell = find_cell(*subject, metric);
    if (!cell || cell->state != CellState::kValue) return {};
    return cell->value;
  };
  auto relative = [&](const char* text, const char* metric, const Subject* peer, double factor,
                      bool at_most) {
    auto ours = value(manifold, metric), theirs = value(peer, metric);
    if (!peer) return;
    if (!ours || !theirs) {
      targets.push_back({text, "no figure", false});
      return;
    }
    double ratio = *ours / *theirs;
    targets.push_back(
        {text, format_value(ratio) + "x", at_most ? ratio <= factor : ratio >= factor});
  };
  auto absolute = [&](const char* text, const char* metric, double limit, const char* unit) {
    auto ours = value(manifold, metric);
    if (!ours) {
      targets.push_back({text, "no figure", false});
      return;
    }
    targets.push_back({text, format_value(*ours) + " " + unit, *ours <= limit});
  };
  // A build from SPIR-V skips the frontend, so it must take less than one from OpenCL C.
  auto faster_than_own = [&](const char* text, const char* metric, const char* reference) {
    auto ours = value(manifold, metric), baseline = value(manifold, reference);
    if (!ours || !baseline) {
      targets.push_back({text, "no figure", false});
      return;
    }
    targets.push_back({text, format_value(*ours / *baseline) + "x", *ours < *baseline});
  };
  relative("cold build <= 1/3 of PoCL's", "build_cold_ms", pocl, 1.0 / 3, true);
  faster_than_own("cold build from SPIR-V < from OpenCL C", "build_il_cold_ms", "build_cold_ms");
  faster_than_own("cached build from SPIR-V < from OpenCL C", "build_il_cached_ms",
                  "build_cached_ms");
  absolute("cached build <= 5 ms", "build_cached_ms", 5, "ms");
  relative("local-memory reduction >= 10x PoCL", "reduce_gbs", pocl, 10, false);
  relative("naive sgemm >= 5x PoCL", "sgemm_naive_gflops", pocl, 5, false);
  relative("triad >= 0.95x the plain C++ loop", "triad_gbs", host, 0.95, false);
  absolute("empty-kernel round trip <= 5 us", "roundtrip_us", 5, "us");
  // Per kernel of a replayed 100-kernel command buffer.
  absolute("command-buffer replay <= 0.3 us/kernel", "cmdbuf_replay_us", 0.3, "us");
  return targets;
}

std::vector<std::string> problem_notes(const Report& report) {
  std::vector<std::string> notes;
  for (const auto& subject : report.subjects) {
    int not_reached = 0;
    for (const auto& metric : kMetrics) {
      const Cell* cell = find_cell(subject, metric.name);
      if (!cell || cell->state == CellState::kValue || cell->note.empty()) continue;
      // After a crash or hang, one line for the metrics that never ran.
      if (cell->note.rfind("not reached", 0) == 0) {
        ++not_reached;
        continue;
      }
      notes.push_back(subject.label + " " + metric.name + ": " + cell_text(*cell) + " - " +
                      cell->note);
    }
    if (not_reached)
      notes.push_back(subject.label + ": " + std::to_string(not_reached) +
                      " further metrics not reached");
  }
  return notes;
}
// The headline comparison, spelled out: each Manifold device's round trip against each peer's.
std::vector<std::string> headline_lines(const Report& report) {
  std::vector<std::string> lines;
  const MetricInfo* metric = find_metric("roundtrip_us");
  for (const auto& column : ratio_columns(report)) {
    const Subject& ours = report.subjects[column.manifold];
    const Subject& theirs = report.subjects[column.peer];
    auto ratio = speedup(ours, theirs, *metric);
    if (!ratio) continue;
    std::string verdict = *ratio >= 1
                              ? ours.label + " is " + format_value(*ratio) + "x faster"
                              : theirs.label + " is " + format_value(1 / *ratio) + "x faster";
    lines.push_back(ours.label + " " + format_value(find_cell(ours, metric->name)->value) +
                    " us, " + theirs.label + " " +
                    format_value(find_cell(theirs, metric->name)->value) + " us: " + verdict);
  }
  return lines;
}

// A grid as aligned text; columns from `first_numeric` on are right-aligned.
void print_grid(std::ostringstream& out, const Grid& grid, size_t first_numeric,
                const std::string& indent = {}) {
  std::vector<size_t> widths(grid.header.size());
  for (size_t c = 0; c < grid.header.size(); ++c) {
    widths[c] = grid.header[c].size();
    for (const auto& row : grid.rows) widths[c] = std::max(widths[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string text = row[c];
      if (c >= first_numeric && text.size() < widths[c])
        text = std::string(widths[c] - text.size(), ' ') + text;
      line += pad(text, widths[c]) + (c + 1 < row.size() ? "  " : "");
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print_row(grid.header);
  for (const auto& row : grid.rows) print_row(row);
}

}  // namespace

std::string render_text(const Report& report) {
  std::ostringstream out;
  print_grid(out, build_grid(report), 2);
  out << "(^ higher is better, v lower is better; \"A vs B\" = how many times faster A is than "
         "B)\n";
  for (const auto& subject : report.subjects) {
    if (subject.splits.empty()) continue;
    out << "\nSplit on " << subject.label
        << " (each member's fraction of the work-groups of the kernel's last launch):\n";
    print_grid(out, split_grid(subject), 3, "  ");
  }
  auto targets = cpu_targets(report);
  if (!targets.empty()) {
    out << "\nPerformance targets for Manifold's CPU device:\n";
    for (const auto& target : targets)
      out << "  " << (target.met ? "met    " : "not met") << "  " << pad(target.text, 40)
          << target.measured << "\n";
  }
  auto notes = problem_notes(report);
  if (!notes.empty()) {
    out << "\nProblems:\n";
    for (const auto& note : notes) out << "  " << note << "\n";
  }
  return out.str();
}

std::string render_markdown(const Report& report) {
  const MachineInfo& machine = report.machine;
  std::ostringstream out;
  out << "# manifold bench: " << machine.date << ", " << machine.host << ", commit "
      << machine.commit << "\n\n";
  out << "| | |\n|---|---|\n";
  out << "| date (UTC) | " << machine.date << " |\n";
  out << "| machine | " << machine.host << ": " << machine.cpu << ", " << machine.cores
      << " hardware threads, " << machine.memory << " |\n";
  out << "| system | " << machine.os << ", Linux " << machine.kernel << " |\n";
  out << "| commit | " << machine.commit
      << (machine.uncommitted_changes ? ", plus uncommitted changes in the working tree" : "")
      << " |\n";
  out << "| mode | " << (report.quick ? "`--quick`" : "full") << " |\n";
  out << "| load average (1/5/15 min) | before " << machine.load_before << "; after "
      << machine.load_after << " |\n\n";

  out << "## Devices\n\n| column | what |\n|---|---|\n";
  for (const auto& subject : report.subjects)
    out << "| " << subject.label << " | " << subject.description << " |\n";

  // A busy machine (others building) depresses and scatters absolute figures.
  double load = std::atof(machine.load_before.c_str());
  if (machine.cores > 0 && load > 0.5 * machine.cores)
    out << "\n> The machine was busy during this run (load average " << machine.load_before
        << " on " << machine.cores
        << " hardware threads): absolute figures are low and noisy. Every column ran on "
        << "the same busy machine within minutes, so the ratios are the figures to read.\n";

  auto headlines = headline_lines(report);
  if (!headlines.empty()) {
    out << "\n## Headline: empty-kernel round trip (enqueue + clFinish)\n\n";
    for (const auto& line : headlines) out << "- " << line << "\n";
  }

  Grid grid = build_grid(report);
  out << "\n## Results\n\n";
  out << "Higher is better for ^, lower for v. A column \"A vs B\" gives how many times faster A "
         "is than B "
         "(>1: A wins), whichever direction the metric runs. FAIL: the result was checked and "
         "wrong; "
         "ERROR: an OpenCL call failed; CRASH/TIMEOUT: the device's worker process died or "
         "hung.\n\n";
  out << "|";
  for (const auto& header : grid.header) out << " " << header << " |";
  out << "\n|";
  for (size_t c = 0; c < grid.header.size(); ++c) out << (c < 2 ? "---|" : "---:|");
  out << "\n";
  for (const auto& row : grid.rows) {
    out << "|";
    for (size_t c = 0; c < row.size(); ++c)
      out << " " << (c == 0 ? "`" + row[c] + "`" : row[c]) << " |";
    out << "\n";
  }

  for (const auto& subject : report.subjects) {
    if (subject.splits.empty()) continue;
    Grid splits = split_grid(subject);
    out << "\n## Split on " << subject.label
        << "\n\nEach member's fraction of the work-groups of the kernel's last launch in the "
           "metric "
           "(`CL_KERNEL_GROUP_SPLIT_MFLD`); NDRange: global size / local size.\n\n|";
    for (const auto& header : splits.header) out << " " << header << " |";
    out << "\n|";
    for (size_t c = 0; c < splits.header.size(); ++c) out << (c < 3 ? "---|" : "---:|");
    out << "\n";
    for (const auto& row : splits.rows) {
      out << "|";
      for (size_t c = 0; c < row.size(); ++c)
        out << " " << (c < 2 ? "`" + row[c] + "`" : row[c]) << " |";
      out << "\n";
    }
  }

  auto targets = cpu_targets(report);
  if (!targets.empty()) {
    out << "\n## Performance targets (Manifold CPU)\n\n| target | measured | |\n|---|---|---|\n";
    for (const auto& target : targets)
      out << "| " << target.text << " | " << target.measured << " | "
          << (target.met ? "met" : "**not met**") << " |\n";
  }

  out << "\n## What each metric measures\n\n";
  out << "Sizes" << (report.quick ? " (`--quick`)" : "") << ": sgemm n = " << report.sizes.sgemm_n
      << ", n-body " << report.sizes.nbody_bodies << " bodies, streams and transfers "
      << (report.sizes.stream_bytes >> 20) << " MiB per buffer, round trip median of "
      << report.sizes.roundtrip_iterations << ", enqueue throughput over "
      << report.sizes.enqueue_kernels << " kernels (median of " << kEnqueueRuns
      << " runs), kernels: median of " << report.sizes.stream_repeats << " (streams) / "
      << report.sizes.sgemm_repeats << " (sgemm) runs after a warm-up; build: median of "
      << report.sizes.build_samples
      << " fresh processes (after one discarded process that brings the platform's files into "
         "the OS file cache).\n\n";
  for (const auto& metric : kMetrics)
    out << "- `" << metric.name << "` (" << metric.unit << "): " << metric.what << "\n";

  auto notes = problem_notes(report);
  if (!notes.empty()) {
    out << "\n## Problems\n\n";
    for (const auto& note : notes) out << "- " << note << "\n";
  }
  return out.str();
}

}  // namespace manifold_tool
