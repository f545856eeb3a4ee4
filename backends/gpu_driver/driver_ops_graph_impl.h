// A command buffer's operations on a driver GPU as one executable graph (driver_ops.h).
#pragma once

#include <mutex>
#include <vector>

#include "backends/gpu_driver/driver_ops.h"
#include "core/log.h"

namespace manifold::gpu {

namespace detail {

// A command buffer's operations on one GPU as one executable graph: kernel, memcpy and
// memset nodes whose edges are the recorded sync points and queue order, made at finalize (or at
// the list's first run on the device) and then launched once per enqueue. A list changed by mutable
// dispatch shares it: its kernel nodes are brought up to date (cuGraphExecKernelNodeSetParams
// leaves launches already made alone).
template <class V>
struct RecordedGraph {
  std::mutex mutex;  // enqueues of one command buffer into several streams at once
  bool tried = false, usable = false;
  DriverDevice<V>* device = nullptr;
  typename DriverStreamApi<V>::Chain chain;
  std::vector<int> node_of;           // per operation: its node in chain.nodes, or -1
  std::vector<LaunchRecord> kernels;  // per operation: what its kernel node launches
  uint64_t version = 0;               // of the list the nodes match
  ~RecordedGraph() {
    if (device) DriverStreamApi<V>::destroy_chain(*device, chain);
  }
};

template <class V>
bool DriverOps<V>::run_recorded(const OperationList& list) {
  if (!a.has_graphs || !a.cuGraphAddMemcpyNode || !a.cuGraphAddMemsetNode) return false;
  auto graph = list.native.get<RecordedGraph<V>>(&device);
  std::lock_guard lock(graph->mutex);
  if (!ready_launch_states(list)) return false;
  building_graph = true;  // only staged (graph) preparations look at it
  if (!graph->tried) {
    graph->tried = true;
    graph->usable = build(list, *graph);
    graph->version = list.native.version();
    if (!graph->usable)
      log_debug("%s: a command buffer's operations run one by one (no graph for them)", V::kName);
  }
  if (!graph->usable) return false;
  if (graph->version != list.native.version()) {
    if (!refresh(list, *graph)) return false;
    graph->version = list.native.version();
  }
  check_driver_call<V>(a.cuGraphLaunch(graph->chain.exec, stream), "command-buffer graph launch");
  return true;
}

// Programs whose kernels read the shim's launch state (offsets, work_dim) get it written in
// stream order before the graph, once per program; a graph cannot hold two different states.
template <class V>
bool DriverOps<V>::ready_launch_states(const OperationList& list) {
  for (const Operation& op : list.ops) {
    const auto* k = std::get_if<KernelOp>(&op);
    if (!k) continue;
    auto& program =
        const_cast<DriverProgram<V>&>(static_cast<const DriverProgram<V>&>(k->program()));
    if (!program.launch_state) continue;
    const compiler::NDRange& r = k->range;
    if (r.global_offset[0] || r.global_offset[1] || r.global_offset[2]) return false;
    const unsigned dims = program.launch_plain_dims.load(std::memory_order_acquire);
    if (dims == r.work_dim) continue;
    // Another kernel of this list already wanted the program's state for other dimensions.
    for (const Operation& earlier : list.ops) {
      if (&earlier == &op) break;
      const auto* e = std::get_if<KernelOp>(&earlier);
      if (e && &e->program() == &k->program() && e->range.work_dim != r.work_dim) return false;
    }
    write_launch_state(program, state_of(r));
  }
  return true;
}

template <class V>
bool DriverOps<V>::build(const OperationList& list, RecordedGraph<V>& g) {
  device.make_current();
  g.device = &device;
  typename DriverStreamApi<V>::Chain& c = g.chain;
  c.ctx = device.context();
  if (a.cuGraphCreate(&c.graph, 0) != CUDA_SUCCESS) return false;
  g.node_of.assign(list.ops.size(), -1);
  g.kernels.resize(list.ops.size());
  std::vector<void*> pointers;
  // The edges: each operation's recorded waits. `reach[i]`: the nodes that waiting for
  // operation i means waiting for (itself; for a barrier, what it waits for).
  const bool edges = list.after.size() == list.ops.size();
  std::vector<std::vector<CUgraphNode>> reach(list.ops.size());
  std::vector<CUgraphNode> waits;
  for (size_t i = 0; i < list.ops.size(); ++i) {
    const Operation& op = list.ops[i];
    waits.clear();
    if (!edges) {  // a plain chain
      if (!c.nodes.empty()) waits.push_back(c.nodes.back());
    } else {
      for (uint32_t d : list.after[i])
        for (CUgraphNode n : reach[d])
          if (std::find(waits.begin(), waits.end(), n) == waits.end()) waits.push_back(n);
    }
    if (std::holds_alternative<NoOp>(op)) {  // a barrier: no node, its waits pass through
      reach[i] = waits;
      continue;
    }
    CUgraphNode node = nullptr;
    const CUgraphNode* previous = waits.empty() ? nullptr : waits.data();
    const size_t deps = waits.size();
    CUresult r = CUDA_SUCCESS;
    if (const auto* k = std::get_if<KernelOp>(&op)) {
      if (!prepare(*k, g.kernels[i], /*staged=*/true)) return false;  // split or stateful
      const CUDA_KERNEL_NODE_PARAMS p =
          DriverStreamApi<V>::node_params(g.kernels[i], pointers, c.ctx);
      r = a.cuGraphAddKernelNode(&node, c.graph, previous, deps, &p);
    } else if (const auto* copy = std::get_if<CopyOp>(&op)) {
      if (!copy->src.mem || !copy->dst.mem) return false;
      CUDA_MEMCPY3D m{};
      m.srcMemoryType = m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
      m.srcDevice = device_at(copy->src);
      m.dstDevice = device_at(copy->dst);
      m.srcPitch = m.dstPitch = m.WidthInBytes = copy->size;
      m.srcHeight = m.dstHeight = m.Height = m.Depth = 1;
      r = a.cuGraphAddMemcpyNode(&node, c.graph, previous, deps, &m, device.context());
    } else if (const auto* rect = std::get_if<CopyRectOp>(&op)) {
      if (!rect->src.mem || !rect->dst.mem || !slices_whole_rows_apart(rect->rect) ||
          repeats_one_row(rect->rect) || device_spans_meet(*rect))
        return false;
      const CUDA_MEMCPY3D m = rect_params(*rect);
      r = a.cuGraphAddMemcpyNode(&node, c.graph, previous, deps, &m, device.context());
    } else if (const auto* fill = std::get_if<FillOp>(&op)) {
      CUDA_MEMSET_NODE_PARAMS p{};
      p.dst = device_at(fill->dst);
      p.elementSize = uniform(*fill, 1) ? 1 : uniform(*fill, 2) ? 2 : uniform(*fill, 4) ? 4 : 0;
      if (!p.elementSize || p.dst % p.elementSize) return false;  // wider patterns: one by one
      std::memcpy(&p.value, fill->pattern.data(), p.elementSize);
      p.width = fill->size / p.elementSize;
      p.height = 1;
      p.pitch = fill->size;
      r = a.cuGraphAddMemsetNode(&node, c.graph, previous, deps, &p, device.context());
    } else {
      return false;
    }
    if (r != CUDA_SUCCESS) return false;
    g.node_of[i] = static_cast<int>(c.nodes.size());
    c.nodes.push_back(node);
    reach[i] = {node};
  }
  return !c.nodes.empty() && a.cuGraphInstantiate(&c.exec, c.graph, 0) == CUDA_SUCCESS;
}

template <class V>
bool DriverOps<V>::refresh(const OperationList& list, RecordedGraph<V>& g) {
  if (list.ops.size() != g.node_of.size()) return false;
  LaunchRecord& record = thread_launch_record();
  for (size_t i = 0; i < list.ops.size(); ++i) {
    const auto* k = std::get_if<KernelOp>(&list.ops[i]);
    const bool was_kernel = g.kernels[i].function != nullptr;
    if (!k) {
      if (was_kernel) return false;  // now an empty range: one by one
      continue;
    }
    if (!was_kernel || !prepare(*k, record, /*staged=*/true)) return false;
    if (record.same_launch(g.kernels[i])) continue;
    if (DriverStreamApi<V>::set_chain_node(g.chain, g.node_of[i], record) != CL_SUCCESS)
      return false;
    g.kernels[i] = record;
  }
  return true;
}

}  // namespace detail

template <class V>
void DriverDevice<V>::prepare_recorded(const OperationList& list) {
  const Api& a = api();
  if (!a.has_graphs || !a.cuGraphAddMemcpyNode || !a.cuGraphAddMemsetNode) return;
  auto graph = list.native.get<detail::RecordedGraph<V>>(this);
  std::lock_guard lock(graph->mutex);
  if (graph->tried) return;
  graph->tried = true;
  graph->version = list.native.version();
  try {
    detail::DriverOps<V> ops(*this, nullptr);
    ops.building_graph = true;
    graph->usable = ops.build(list, *graph);
  } catch (const Error& e) {
    // The operations go one by one; the enqueue reports what fails then.
    log_debug("%s: no graph for a command buffer: %s", V::kName, e.what());
    graph->usable = false;
  }
}

}  // namespace manifold::gpu
