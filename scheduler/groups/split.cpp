#include "scheduler/groups/split.h"

#include <algorithm>
#include <cstdio>

#include "scheduler/groups/group_device.h"

namespace manifold {
namespace {

// The dimensions worth splitting, the slowest-varying first (rows before columns: the parts'
// writes are then contiguous in row-major data).
std::vector<unsigned> split_dimensions(const compiler::NDRange& range) {
  std::vector<unsigned> dims;
  for (unsigned d = range.work_dim; d-- > 0;)
    if (range.num_groups(d) >= 2) dims.push_back(d);
  return dims;
}

// Divides the groups of dimension `d` among the members by `shares`: contiguous ranges in member
// order, each member with a share getting at least one group while groups last.
std::vector<KernelPart> divide(const compiler::NDRange& range, unsigned d,
                               std::span<const double> shares) {
  const size_t total = range.num_groups(d);
  std::vector<KernelPart> parts;
  double cumulative = 0;
  size_t first = 0;
  // Members with a share not yet given their range; the last of them takes what is left.
  size_t later =
      size_t(std::count_if(shares.begin(), shares.end(), [](double s) { return s > 0; }));
  for (size_t m = 0; m < shares.size() && first < total; ++m) {
    if (shares[m] <= 0) continue;
    cumulative += shares[m];
    --later;
    size_t end = later == 0 ? total : size_t(cumulative * double(total) + 0.5);
    // Members after this one with a share keep a group each (a probe's sliver rounds to none).
    end = std::clamp(end, first + 1, std::max(first + 1, total - std::min(total, later)));
    KernelPart part;
    part.member = m;
    part.range = range;
    part.range.group_first[d] = first;
    part.range.group_count[d] = end - first;
    part.groups = end - first;
    for (unsigned o = 0; o < range.work_dim; ++o)
      if (o != d) part.groups *= range.num_groups(o);
    parts.push_back(std::move(part));
    first = end;
  }
  return parts;
}

struct RootRange {
  const MemObject* root;
  size_t first, end;
  size_t member;
};

bool overlaps(const RootRange& a, const RootRange& b) {
  return a.root == b.root && a.first < b.end && b.first < a.end;
}

// Fills the parts' uses from the kernel's footprint; an explanation when some part's writes are
// not known or overlap another member's.
std::string add_footprint_uses(const KernelOp& op, const GroupDevice& group,
                               std::vector<KernelPart>& parts) {
  const compiler::KernelInfo& info = op.launch->info;
  const auto& values = op.args->values;
  std::vector<std::span<const uint8_t>> arg_bytes;
  for (const KernelArgValue& v : values) arg_bytes.emplace_back(v.bytes);
  std::vector<RootRange> written;
  for (KernelPart& part : parts) {
    for (size_t a = 0; a < values.size() && a < info.args.size(); ++a) {
      if (info.args[a].kind != compiler::ArgKind::Buffer) continue;
      // The footprint counts from the argument's pointer: a buffer's start, or an SVM pointer
      // anywhere in its allocation (whose residency then holds the bytes).
      MemObject* arg_mem = values[a].buffer.get();
      size_t base = 0;
      if (!arg_mem && values[a].svm_allocation) {
        arg_mem = values[a].svm_allocation.get();
        base = size_t(static_cast<std::byte*>(values[a].svm_pointer) - arg_mem->host_data());
      }
      // Fine-grain SVM and imported memory: every member uses the same pages in place, so
      // nothing moves and the parts' writes meet there as a single device's would.
      if (!arg_mem || arg_mem->imported()) continue;
      MemObject& mem = *arg_mem;
      const compiler::PartFootprint f =
          compiler::evaluate_part(info.footprint, a, part.range, arg_bytes);
      const bool read_only = info.args[a].address == CL_KERNEL_ARG_ADDRESS_CONSTANT ||
                             (info.args[a].type_qualifier & CL_KERNEL_ARG_TYPE_CONST) ||
                             (mem.flags() & CL_MEM_READ_ONLY);
      // In bytes of `mem`, within it.
      const auto clip = [&](compiler::ByteRange r) {
        r.end = std::min<uint64_t>(r.end, mem.size() - base);
        r.first = std::min(r.first, r.end);
        return compiler::ByteRange{r.first + base, r.end + base};
      };
      if (!read_only) {
        if (!f.writes) return "what it writes to argument " + std::to_string(a) + " is not proven";
        std::vector<compiler::ByteRange> pieces = f.write_pieces;
        if (pieces.empty()) pieces.push_back(*f.writes);
        for (const compiler::ByteRange& piece : pieces) {
          const compiler::ByteRange w = clip(piece);
          if (w.empty()) continue;
          // Bytes of the range the part does not write stay as they were: they come along.
          part.reads.push_back({&mem, w.first, w.end - w.first, Access::Read});
          part.writes.push_back({&mem, w.first, w.end - w.first, Access::Overwrite});
          written.push_back(
              {&mem.root(), mem.root_offset() + w.first, mem.root_offset() + w.end, part.member});
        }
      }
      if (!f.reads) {
        part.reads.push_back({&mem, 0, mem.size(), Access::Read});
      } else if (const compiler::ByteRange r = clip(*f.reads); !r.empty()) {
        part.reads.push_back({&mem, r.first, r.end - r.first, Access::Read});
      }
    }
  }
  const auto place = [&](size_t member) { return group.members()[member]->memory_place(); };
  for (size_t i = 0; i < written.size(); ++i)
    for (size_t j = i + 1; j < written.size(); ++j)
      if (place(written[i].member) != place(written[j].member) && overlaps(written[i], written[j]))
        return "the parts' writes overlap";
  return {};
}

// Why a launch cannot run in parts on members of different memories (empty: it can).
std::string blocker_across_memories(const KernelOp& op) {
  const compiler::KernelFootprint& footprint = op.launch->info.footprint;
  if (!footprint.analyzed) return "the binary has no footprint";
  if (!footprint.whole_reason.empty()) return footprint.whole_reason;
  // Allocations reached through pointers in memory have no footprint of their own; fine-grain
  // ones need none (their pages are every member's).
  if (std::any_of(op.args->svm_allocations.begin(), op.args->svm_allocations.end(),
                  [](const Ref<MemObject>& a) { return !a->imported(); }))
    return "coarse-grain SVM pointers given with clSetKernelExecInfo";
  const auto& args = op.launch->info.args;
  for (size_t a = 0; a < args.size() && a < op.args->values.size(); ++a) {
    const KernelArgValue& value = op.args->values[a];
    if (args[a].kind == compiler::ArgKind::Image) return "image arguments";
    // A pointer outside the SVM allocations is host memory, which not every member reaches.
    if (value.svm_pointer && !value.svm_allocation) return "SVM pointers to host memory";
  }
  return {};
}

size_t largest_share(std::span<const double> shares) {
  return size_t(std::max_element(shares.begin(), shares.end()) - shares.begin());
}

}  // namespace

std::string launch_key(const KernelOp& op) {
  const compiler::NDRange& r = op.range;
  char shape[128];
  std::snprintf(shape, sizeof shape, "/%u/%zux%zux%zu/%zux%zux%zu", r.work_dim, r.global_size[0],
                r.global_size[1], r.global_size[2], r.local_size[0], r.local_size[1],
                r.local_size[2]);
  return op.launch->info.name + shape;
}

KernelSplit plan_kernel_split(const KernelOp& op, const GroupDevice& group,
                              std::span<const double> shares_in) {
  KernelSplit split;
  const auto& members = group.members();
  std::vector<double> shares(shares_in.begin(), shares_in.end());
  shares.resize(members.size(), 0.0);
  // A member that runs only whole NDRanges takes no part.
  for (size_t m = 0; m < members.size(); ++m)
    if (!members[m]->runs_partial_ranges()) shares[m] = 0;
  const auto whole = [&](std::string why, size_t member) {
    KernelPart part;
    part.member = member;
    part.range = op.range;
    part.groups = 1;
    for (unsigned d = 0; d < op.range.work_dim; ++d) part.groups *= op.range.num_groups(d);
    split.parts = {std::move(part)};
    split.by_footprint = false;
    split.why_whole = std::move(why);
    return split;
  };
  const compiler::KernelFootprint& footprint = op.launch->info.footprint;
  // Each member has its own copy of the program's variables: such kernels stay on the first.
  if (footprint.program_variables) return whole("program-scope variables", 0);
  const size_t with_share =
      size_t(std::count_if(shares.begin(), shares.end(), [](double s) { return s > 0; }));
  // Whole launches go to the fastest member (by the original shares: any member runs those).
  std::vector<double> original(shares_in.begin(), shares_in.end());
  original.resize(members.size(), 0.0);
  const size_t best = with_share ? largest_share(shares) : largest_share(original);
  if (with_share < 2)
    return whole(with_share ? "one member has every share" : "no member runs parts", best);
  const std::vector<unsigned> dims = split_dimensions(op.range);
  if (dims.empty()) return whole("a single work-group", best);
  bool one_memory = true;
  for (const Ref<Device>& m : members)
    one_memory = one_memory && m->memory_place() == members.front()->memory_place();
  if (one_memory) {
    split.parts = divide(op.range, dims.front(), shares);
    return split;
  }
  if (std::string why = blocker_across_memories(op); !why.empty()) return whole(why, best);
  std::string why;
  for (unsigned d : dims) {
    std::vector<KernelPart> parts = divide(op.range, d, shares);
    why = add_footprint_uses(op, group, parts);
    if (why.empty()) {
      split.parts = std::move(parts);
      split.by_footprint = true;
      return split;
    }
  }
  return whole(why, best);
}

}  // namespace manifold
