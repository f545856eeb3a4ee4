#include "scheduler/migration.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "core/device.h"
#include "core/platform.h"
#include "settings/settings.h"

namespace manifold {
namespace {

struct Planner {
  const Device& device;
  const void* queue;  // the command's in-order native queue, planned in its order (or null)
  Event& event;       // the command's
  std::vector<Transfer> transfers;
  bool backings_only = false;  // make_backings(): make the device's memory, plan nothing

  // Whether a copy at `place` of [offset, offset + size) may be read by this command: no copy
  // into it is still on its way from a queue that this command does not follow.
  static bool overlaps(const PendingCopy& p, size_t offset, size_t size) {
    return p.offset < offset + size && offset < p.offset + p.size;
  }
  bool settled(const std::vector<PendingCopy>& pending, MemoryPlace place, size_t offset,
               size_t size) const {
    for (const PendingCopy& p : pending)
      if (p.place == place && overlaps(p, offset, size) && !(queue && p.queue == queue))
        return false;
    return true;
  }

  // The place to copy a piece from: a settled copy, first on a device the target copies from
  // directly (peer copies beat a trip through host memory), then host memory, then any device.
  // A device place counts before its backing exists: the command that made the bytes current
  // there makes it when it runs, before this command's transfer. Empty: no settled copy.
  std::optional<MemoryPlace> source(MemObject& root, Residency::Places at, size_t offset,
                                    size_t size) {
    const auto& pending = root.pending_copies();
    std::optional<MemoryPlace> other;
    for (MemoryPlace p = kHostPlace + 1; p < kMaxMemoryPlaces; ++p) {
      if (!(at & Residency::bit(p)) || !settled(pending, p, offset, size)) continue;
      const Device* owner = Platform::get().device_at_place(p);
      if (owner && device.copies_directly_from(*owner)) return p;
      if (!other) other = p;
    }
    if ((at & Residency::bit(kHostPlace)) && settled(pending, kHostPlace, offset, size))
      return kHostPlace;
    return other;
  }

  void move(MemObject& root, size_t offset, size_t size, Residency::Places at, MemoryPlace place) {
    at &= ~Residency::bit(place);  // copy from elsewhere, never onto itself
    std::optional<MemoryPlace> from = source(root, at, offset, size);
    if (!from) {
      // Every copy is still on its way (a program whose readers race, or commands planned ahead
      // of the ones they follow): take the one a writer left, which is current (the write that
      // made it has completed or precedes this command): a place no copy is on its way to. Only
      // where there is none, any place that holds them.
      const auto& pending = root.pending_copies();
      const auto no_copy_to = [&](MemoryPlace p) {
        return std::none_of(pending.begin(), pending.end(), [&](const PendingCopy& c) {
          return c.place == p && overlaps(c, offset, size);
        });
      };
      for (MemoryPlace p = kHostPlace; p < kMaxMemoryPlaces && !from; ++p)
        if ((at & Residency::bit(p)) && no_copy_to(p)) from = p;
      for (MemoryPlace p = kHostPlace + 1; p < kMaxMemoryPlaces && !from; ++p)
        if (at & Residency::bit(p)) from = p;
      if (!from && (at & Residency::bit(kHostPlace))) from = kHostPlace;
      if (!from) return;  // no copy holds them: undefined
    }
    transfers.push_back({Ref<MemObject>(&root), offset, size, place, *from});
    root.pending_copies().push_back({offset, size, place, queue, Ref<Event>(&event)});
  }

  // `mem`'s bytes [offset, offset + size) used at `place` in the way `access` says.
  void use(MemObject& mem, size_t offset, size_t size, Access access, MemoryPlace place) {
    // Imported memory is one range every device uses in place: nothing ever moves.
    if (size == 0 || mem.imported()) return;
    if (backings_only) {
      if (place != kHostPlace && place == here() && !mem.image())
        const_cast<Device&>(device).make_backing(mem);
      return;
    }
    MemObject& root = const_cast<MemObject&>(mem.root());
    offset += mem.root_offset();
    const bool trace = settings().trace_migration;
    // The common case of a buffer used again where it already is (every launch of a kernel on
    // one GPU), seen without the lock: nothing moves and nothing changes. A planning of another
    // thread under way meanwhile is not ordered with this command (an application race).
    const auto in_place = [&](Residency::Places at) {
      return access == Access::Read ? (at & Residency::bit(place)) != 0
                                    : at == Residency::bit(place);
    };
    if (!trace && in_place(root.settled_places().load(std::memory_order_acquire))) return;
    std::lock_guard lock(root.residency_mutex());
    const size_t first_transfer = transfers.size();
    Residency& residency = root.residency();
    auto& pending = root.pending_copies();
    struct Publish {  // at every return, still under the lock
      MemObject& root;
      ~Publish() {
        root.settled_places().store(
            root.pending_copies().empty() ? root.residency().uniform_places() : 0,
            std::memory_order_release);
      }
    } publish{root};
    std::erase_if(pending, [](const PendingCopy& p) { return p.done->is_terminal(); });
    // In place once the copies in flight that kept the word above at 0 have landed.
    if (pending.empty() && !trace && in_place(residency.uniform_places())) return;
    if (access != Access::Overwrite) {
      residency.for_each(offset, size, [&](size_t o, size_t n, Residency::Places at) {
        // Copies in flight cover parts of a piece: split it where they begin and end, so that
        // each part is settled or not at each place as a whole.
        std::vector<size_t> cuts{o, o + n};
        for (const PendingCopy& p : pending)
          if (overlaps(p, o, n)) {
            if (p.offset > o) cuts.push_back(p.offset);
            if (p.offset + p.size < o + n) cuts.push_back(p.offset + p.size);
          }
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        for (size_t i = 0; i + 1 < cuts.size(); ++i) {
          const size_t part = cuts[i], part_size = cuts[i + 1] - cuts[i];
          // Missing here, or current here only once another queue's copy lands: copy (again:
          // the same bytes, so the two copies do not conflict).
          if (!(at & Residency::bit(place)) || !settled(pending, place, part, part_size))
            move(root, part, part_size, at, place);
        }
      });
    }
    if (trace) {
      std::fprintf(stderr, "[mig] ev=%p q=%p mem=%p %s [%zu,+%zu) at %u:", (void*)event.handle(),
                   queue, (void*)&root,
                   access == Access::Read        ? "R"
                   : access == Access::Overwrite ? "O"
                                                 : "U",
                   offset, size, place);
      for (size_t i = first_transfer; i < transfers.size(); ++i)
        std::fprintf(stderr, " move[%zu,+%zu) from %d", transfers[i].offset, transfers[i].size,
                     int(transfers[i].from));
      std::fprintf(stderr, "\n");
    }
    if (access == Access::Read) {
      residency.add(offset, size, place);
      return;
    }
    residency.set(offset, size, place);
    // Written: no other place holds these bytes any more. This command's own copies elsewhere
    // stay; its copy into the place it writes is its own input, which later commands (ordered
    // after it) never wait for.
    std::vector<PendingCopy> kept;
    for (PendingCopy& p : pending) {
      if (!overlaps(p, offset, size) || (&*p.done == &event && p.place != place)) {
        kept.push_back(std::move(p));
        continue;
      }
      if (p.offset < offset)
        kept.push_back({p.offset, offset - p.offset, p.place, p.queue, p.done});
      if (p.offset + p.size > offset + size)
        kept.push_back(
            {offset + size, p.offset + p.size - offset - size, p.place, p.queue, p.done});
    }
    pending.swap(kept);
  }
  void use(const Location& l, size_t size, Access access, MemoryPlace place) {
    if (l.mem) use(*l.mem, l.offset, size, access, place);
  }

  MemoryPlace here() const { return device.memory_place(); }

  void operator()(const NoOp&) {}
  void operator()(const CopyOp& op) {
    use(op.src, op.size, Access::Read, here());
    use(op.dst, op.size, Access::Overwrite, here());
  }
  void operator()(const CopyRectOp& op) {
    use(op.src, op.rect.src_span(), Access::Read, here());
    // The rows leave gaps whose bytes stay: the destination's current bytes are needed.
    use(op.dst, op.rect.dst_span(), Access::Update, here());
  }
  void operator()(const FillOp& op) { use(op.dst, op.size, Access::Overwrite, here()); }
  void operator()(const MapOp& op) {
    // A mapping is the buffer's host memory, whichever device's queue maps it. The application
    // writes the mapped bytes until the unmap, so a mapping for writing leaves them current
    // only in host memory.
    Access access = Access::Read;
    if (op.flags & CL_MAP_WRITE_INVALIDATE_REGION)
      access = Access::Overwrite;
    else if (op.flags & CL_MAP_WRITE)
      access = Access::Update;
    use(*op.mem, op.offset, op.size, access, kHostPlace);
  }
  void operator()(const UnmapOp&) {}
  void operator()(const MigrateOp& op) {
    const MemoryPlace place = (op.flags & CL_MIGRATE_MEM_OBJECT_HOST) ? kHostPlace : here();
    const Access access =
        (op.flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) ? Access::Overwrite : Access::Read;
    for (size_t i = 0; i < op.mems.size(); ++i) {
      MemObject& m = *op.mems[i];
      if (i < op.ranges.size())
        use(m, op.ranges[i].first, op.ranges[i].second, access, place);
      else
        use(m, 0, m.size(), access, place);
    }
  }
  void operator()(const KernelOp& op) {
    use_indirect_svm(op);
    const auto& args = op.launch->info.args;
    const auto& values = op.args->values;
    for (size_t i = 0; i < values.size() && i < args.size(); ++i) {
      const KernelArgValue& value = values[i];
      if (args[i].kind == compiler::ArgKind::Image && value.buffer) {
        // A read_only image is only read; write_only and read_write ones may be written in part.
        const bool reads_only = args[i].access == CL_KERNEL_ARG_ACCESS_READ_ONLY ||
                                args[i].access == CL_KERNEL_ARG_ACCESS_NONE;
        use(*value.buffer, 0, value.buffer->size(), reads_only ? Access::Read : Access::Update,
            here());
        continue;
      }
      if (args[i].kind != compiler::ArgKind::Buffer) continue;
      if (value.svm_allocation) {
        // The kernel may reach every byte of the allocation from the pointer (an offset into it
        // included); a const or __constant pointer only reads.
        const bool reads_only = args[i].address == CL_KERNEL_ARG_ADDRESS_CONSTANT ||
                                (args[i].type_qualifier & CL_KERNEL_ARG_TYPE_CONST) ||
                                (value.svm_allocation->flags() & CL_MEM_READ_ONLY);
        use(*value.svm_allocation, 0, value.svm_allocation->size(),
            reads_only ? Access::Read : Access::Update, here());
        continue;
      }
      if (!value.buffer) continue;
      // A kernel cannot write a __constant or const-qualified argument, nor a READ_ONLY buffer.
      const bool read_only = args[i].address == CL_KERNEL_ARG_ADDRESS_CONSTANT ||
                             (args[i].type_qualifier & CL_KERNEL_ARG_TYPE_CONST) ||
                             (value.buffer->flags() & CL_MEM_READ_ONLY);
      use(*value.buffer, 0, value.buffer->size(), read_only ? Access::Read : Access::Update,
          here());
    }
  }
  // Allocations the kernel reaches through pointers stored in memory (SVM_PTRS).
  void use_indirect_svm(const KernelOp& op) {
    for (const Ref<MemObject>& mem : op.args->svm_allocations)
      use(*mem, 0, mem->size(), Access::Update, here());
  }
  void operator()(const NativeKernelOp& op) {
    for (auto& [mem, slot] : op.mem_slots) use(*mem, 0, mem->size(), Access::Update, kHostPlace);
  }
  void operator()(const HostFunctionOp&) {}
  // In order: what one operation writes here, the next finds current here.
  void operator()(const SequenceOp& op) {
    for (const Operation& o : op.list->ops) std::visit(*this, o);
  }
};

}  // namespace

std::vector<Transfer> plan_migrations(Operation& op, const Device& device, const void* queue,
                                      Event& event) {
  Planner planner{device, queue, event, {}};
  std::visit(planner, op);
  return std::move(planner.transfers);
}

std::vector<Transfer> plan_range_uses(std::span<const RangeUse> uses, const Device& device,
                                      Event& event) {
  Planner planner{device, nullptr, event, {}};
  for (const RangeUse& u : uses) planner.use(*u.mem, u.offset, u.size, u.access, planner.here());
  return std::move(planner.transfers);
}

void make_backings(Operation& op, Device& device, Event& event) {
  Planner planner{device, nullptr, event, {}, /*backings_only=*/true};
  std::visit(planner, op);
}

}  // namespace manifold
