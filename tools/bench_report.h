// Results of one `manifold bench` run, and their renderings: a text table (stdout), Markdown
// (bench/results/), and a PNG bar chart.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench_metrics.h"

namespace manifold_tool {

enum class CellState { kMissing, kValue, kFail, kError, kCrash, kTimeout };

struct Cell {
  CellState state = CellState::kMissing;
  double value = 0;
  std::string note;  // why a FAIL/ERROR/CRASH happened
};

// How a device group divided one kernel of a metric: each member's fraction of the work-groups of
// the kernel's last launch (CL_KERNEL_GROUP_SPLIT_MFLD).
struct GroupSplit {
  std::string metric, kernel;
  std::string range;  // "GLOBAL[/LOCAL]", dimensions joined by x
  std::vector<double> fractions;
};

// One column of the table: an OpenCL device, the host C++ reference, or an external peer program.
struct Subject {
  std::string label;        // "Manifold CPU"
  std::string type;         // "CPU" / "GPU": ratios compare subjects of one type
  bool manifold = false;    // ratio columns compare Manifold's subjects against the others
  std::string description;  // device name, driver version...
  std::map<std::string, Cell> cells;
  std::vector<GroupSplit> splits;  // a device group's: in the order the metrics ran
};

struct MachineInfo {
  std::string date, host, cpu, memory, os, kernel, commit, load_before, load_after;
  unsigned cores = 0;
  bool uncommitted_changes = false;  // the build had changes beyond `commit` in its working tree
};

struct Report {
  MachineInfo machine;
  bool quick = false;
  BenchSizes sizes{};
  std::vector<Subject> subjects;
};

// "12.3", "0.845", "4330".
std::string format_value(double value);
std::string cell_text(const Cell& cell);
bool has_problems(const Report& report);

std::string render_text(const Report& report);
std::string render_markdown(const Report& report);

// Writes the bar chart; false with `error` set when the file cannot be written.
bool write_plot_png(const Report& report, const std::string& path, std::string& error);

}  // namespace manifold_tool
