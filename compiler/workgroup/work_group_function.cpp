// The work-group function around the regions: its entry block (the context's words, the
// scratch layout of spill slots, private memory and lane states, the kernel's arguments and
// __local variables), then the regions one after another with a dispatch between them, or in
// sub-group mode the scheduler that runs the sub-groups in turn.
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/workgroup.h"
#include "compiler/workgroup/passes.h"

namespace manifold::compiler::workgroup {

Function* KernelLowering::build_work_group_function() {
  llvm::LLVMContext& c = context_;
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr_, ptr_}, false);
  Function* wg = Function::Create(type, llvm::GlobalValue::ExternalLinkage, entry_name_, module_);
  // The item-loop form keeps the kernel's vector types: the CPU pipeline's scalarizer passes
  // it by (compiler/cpu_pipeline.cpp).
  if (form_ == Form::ItemLoop) wg->addFnAttr(kKeepVectorsAttribute);
  wg->setCallingConv(llvm::CallingConv::C);
  wg->addFnAttr(llvm::Attribute::NoUnwind);
  wg->addFnAttr(llvm::Attribute::NoRecurse);
  wg->addParamAttr(0, llvm::Attribute::NoAlias);
  wg->addParamAttr(0, llvm::Attribute::ReadOnly);
  wg->addParamAttr(1, llvm::Attribute::NoAlias);
  wg->addParamAttr(1, llvm::Attribute::ReadOnly);
  Value* args = wg->getArg(0);
  Value* ctx = wg->getArg(1);
  args->setName("args");
  ctx->setName("ctx");

  BasicBlock* entry = BasicBlock::Create(c, "entry", wg);
  IRBuilder<> b(entry);
  llvm::MDNode* invariant = llvm::MDNode::get(c, {});
  auto load_word = [&](unsigned index, llvm::Type* type, const char* name) {
    Value* address = b.CreateConstInBoundsGEP1_64(i64_, ctx, index);
    llvm::LoadInst* load = b.CreateLoad(type, address, name);
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant);
    return load;
  };
  Uniforms& u = uniforms_;
  for (unsigned d = 0; d < 3; ++d) {
    using namespace context_word;
    u.group_id[d] = load_word(kGroupId + d, i64_, "group.id");
    u.local_size[d] = load_word(kLocalSize + d, i64_, "local.size");
    u.enqueued[d] = load_word(kEnqueuedLocalSize + d, i64_, "enqueued.size");
    u.num_groups[d] = load_word(kNumGroups + d, i64_, "num.groups");
    u.global_size[d] = load_word(kGlobalSize + d, i64_, "global.size");
    u.global_offset[d] = load_word(kGlobalOffset + d, i64_, "global.offset");
  }
  u.work_dim = load_word(context_word::kWorkDim, i64_, "work.dim");
  u.scratch = load_word(context_word::kScratch, ptr_, "scratch");
  // A __local pointer, as the static __local variables placed in it are (see the arguments below).
  u.local_memory =
      load_word(context_word::kLocalMemory, llvm::PointerType::get(c, 3), "local.memory");
  u.collective_scratch = load_word(context_word::kCollectiveScratch, ptr_, "collective.scratch");
  Value* items = b.CreateMul(b.CreateMul(u.enqueued[0], u.enqueued[1]), u.enqueued[2], "items");
  // The slot arrays lie one after another, each 64-byte aligned, with a cache line between
  // arrays of small elements: arrays a multiple of 4 KiB apart (items * 64 bytes each, as the
  // reservation is counted) make the loads of one slot wait for the stores to another (4K
  // aliasing), which slowed loops carrying many values per work-item about eightfold. The
  // per-work-item reservation (align_to(size, 64) per slot) holds the lines for groups of 4 or
  // more work-items; smaller groups get none.
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(i64_, v); };
  Value* line_gap =
      b.CreateSelect(b.CreateICmpUGE(items, constant(4)), constant(64), constant(0), "line.gap");
  u.items =
      b.CreateMul(b.CreateMul(u.local_size[0], u.local_size[1]), u.local_size[2], "group.items");
  // The sub-group exchange slots come first: the scratch is 128-byte aligned, as a double16 is.
  u.exchange = u.scratch;
  Value* exchange_bytes = b.CreateMul(items, constant(uses_exchange_ ? kExchangeBytes : 0));
  Value* next = exchange_bytes;
  for (uint64_t size : slot_sizes_) {
    u.slot_base.push_back(b.CreateGEP(i8_, u.scratch, next));
    Value* bytes = b.CreateAnd(b.CreateAdd(b.CreateMul(items, constant(size)), constant(63)),
                               constant(~uint64_t{63}));
    next = b.CreateAdd(next, size <= 32 ? b.CreateAdd(bytes, line_gap) : bytes);
  }
  u.private_base = b.CreateGEP(
      i8_, u.scratch,
      b.CreateAdd(exchange_bytes, b.CreateMul(items, llvm::ConstantInt::get(i64_, slot_bytes_))),
      "private.base");
  u.lane_state =
      b.CreateGEP(i8_, u.private_base,
                  b.CreateMul(items, llvm::ConstantInt::get(i64_, private_bytes_)), "lane.state");
  for (llvm::Type* type : uniform_types_)
    u.uniform_slots.push_back(b.CreateAlloca(type, nullptr, "uniform.slot"));

  // Kernel arguments: args[i] points at the argument's bytes.
  llvm::ValueToValueMapTy base_map;
  for (llvm::Argument& arg : kernel_.args()) {
    Value* slot = b.CreateConstInBoundsGEP1_64(ptr_, args, arg.getArgNo());
    Value* bytes = b.CreateLoad(ptr_, slot, "arg.bytes");
    Value* value;
    if (arg.hasByValAttr()) {
      // The work-items only read it (clang copies byval arguments before writing them).
      value = bytes;
    } else if (auto* pointer = llvm::dyn_cast<llvm::PointerType>(arg.getType())) {
      // Loaded with its own type (every space is host memory here): a cast would let the
      // optimizer fold __local pointers into generic ones, and the later passes that know
      // __local memory (compiler/cpu_local_atomics.h) would lose them.
      value = b.CreateLoad(pointer, bytes, arg.getName());
    } else {
      value = b.CreateAlignedLoad(arg.getType(), bytes, llvm::Align(1), arg.getName());
    }
    base_map[&arg] = value;
  }

  // Static __local variables used by this kernel live in the group's local memory block.
  uint64_t local_bytes = 0;
  for (llvm::GlobalVariable& global : module_.globals()) {
    if (global.getAddressSpace() != 3) continue;
    bool used_here = false;
    for (llvm::User* user : global.users())
      if (auto* inst = llvm::dyn_cast<Instruction>(user))
        used_here |= inst->getFunction() == &kernel_;
    if (!used_here) continue;
    const uint64_t alignment = std::max<uint64_t>(global.getAlign().valueOrOne().value(), 16);
    const uint64_t offset = align_to(local_bytes, alignment);
    local_bytes = offset + layout_.getTypeAllocSize(global.getValueType());
    base_map[&global] =
        b.CreateGEP(i8_, u.local_memory, llvm::ConstantInt::get(i64_, offset), global.getName());
  }
  exec_.static_local_size = align_to(local_bytes, 128);

  std::vector<BasicBlock*> preheaders;
  for (Region& region : regions_)
    preheaders.push_back(BasicBlock::Create(c, "region" + std::to_string(region.id), wg));
  BasicBlock* finish = BasicBlock::Create(c, "finish", wg);
  llvm::ReturnInst::Create(c, finish);
  if (sub_group_mode_) {
    emit_sub_group_scheduler(b, wg, base_map, preheaders, finish);
    return wg;
  }
  b.CreateBr(preheaders[0]);

  for (Region& region : regions_) {
    RegionEnd end = emit_region(region, wg, base_map, preheaders[region.id]);
    IRBuilder<> at(end.done);
    auto target_block = [&](unsigned target) {
      return target == kExit ? finish : preheaders[target];
    };
    if (!end.next) {
      at.CreateUnreachable();
    } else if (end.targets.size() == 1) {
      at.CreateBr(target_block(end.targets[0]));
    } else {
      llvm::SwitchInst* choose = at.CreateSwitch(end.next, finish, end.targets.size());
      for (unsigned target : end.targets)
        if (target != kExit)
          choose->addCase(llvm::ConstantInt::get(llvm::cast<llvm::IntegerType>(i32_), target),
                          preheaders[target]);
    }
  }
  return wg;
}

void KernelLowering::emit_sub_group_scheduler(IRBuilder<>& b, Function* wg,
                                              llvm::ValueToValueMapTy& base_map,
                                              const std::vector<BasicBlock*>& preheaders,
                                              BasicBlock* finish) {
  llvm::LLVMContext& c = context_;
  Uniforms& u = uniforms_;
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(i64_, v); };
  auto state_constant = [&](uint32_t v) { return llvm::ConstantInt::get(i32_, v); };
  auto state_of = [&](Value* lane) { return b.CreateGEP(i32_, u.lane_state, lane); };
  Value* width = constant(sub_group_size_);
  Value* sub_groups =
      b.CreateUDiv(b.CreateAdd(u.items, constant(sub_group_size_ - 1)), width, "sub.groups");

  // Every work-item starts at region 0.
  BasicBlock* entry = b.GetInsertBlock();
  BasicBlock* init = BasicBlock::Create(c, "lanes.init", wg);
  BasicBlock* round = BasicBlock::Create(c, "round", wg);
  b.CreateBr(init);
  b.SetInsertPoint(init);
  llvm::PHINode* init_lane = b.CreatePHI(i64_, 2, "init.lane");
  init_lane->addIncoming(constant(0), entry);
  b.CreateStore(state_constant(0), state_of(init_lane));
  Value* init_next = b.CreateAdd(init_lane, constant(1));
  init_lane->addIncoming(init_next, init);
  b.CreateCondBr(b.CreateICmpULT(init_next, u.items), init, round);

  // A round runs each sub-group in turn until all its work-items wait at a work-group barrier
  // or returned.
  BasicBlock* sub_group = BasicBlock::Create(c, "sub.group", wg);
  BasicBlock* pick = BasicBlock::Create(c, "pick", wg);
  BasicBlock* dispatch = BasicBlock::Create(c, "dispatch", wg);
  BasicBlock* no_region = BasicBlock::Create(c, "no.region", wg);
  BasicBlock* sub_group_latch = BasicBlock::Create(c, "sub.group.latch", wg);
  BasicBlock* release = BasicBlock::Create(c, "release", wg);
  BasicBlock* round_end = BasicBlock::Create(c, "round.end", wg);
  b.SetInsertPoint(round);
  b.CreateBr(sub_group);
  b.SetInsertPoint(sub_group);
  llvm::PHINode* index = b.CreatePHI(i64_, 2, "sub.group.id");
  index->addIncoming(constant(0), round);
  u.sub_group_begin = b.CreateMul(index, width, "sub.group.begin");
  u.sub_group_end =
      b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b.CreateAdd(u.sub_group_begin, width), u.items,
                              nullptr, "sub.group.end");
  b.CreateBr(pick);

  // The region the sub-group runs next: the earliest any of its work-items stands at.
  b.SetInsertPoint(pick);
  Value* count = b.CreateSub(u.sub_group_end, u.sub_group_begin);
  Value* last = b.CreateSub(u.sub_group_end, constant(1));
  Value* earliest = state_constant(kExit);
  for (unsigned lane = 0; lane < sub_group_size_; ++lane) {
    Value* at = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin,
                                        b.CreateAdd(u.sub_group_begin, constant(lane)), last);
    Value* state = b.CreateLoad(i32_, state_of(at));
    state = b.CreateSelect(b.CreateICmpULT(constant(lane), count), state, state_constant(kExit));
    earliest = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, earliest, state);
  }
  b.CreateCondBr(b.CreateICmpULT(earliest, state_constant(kWaitsForGroup)), dispatch,
                 sub_group_latch);
  b.SetInsertPoint(dispatch);
  llvm::SwitchInst* choose = b.CreateSwitch(earliest, no_region, preheaders.size());
  for (const Region& region : regions_)
    choose->addCase(llvm::cast<llvm::ConstantInt>(state_constant(region.id)),
                    preheaders[region.id]);
  new llvm::UnreachableInst(c, no_region);

  for (Region& region : regions_) {
    RegionEnd end = emit_region(region, wg, base_map, preheaders[region.id]);
    llvm::BranchInst::Create(pick, end.done);
  }

  b.SetInsertPoint(sub_group_latch);
  Value* index_next = b.CreateAdd(index, constant(1));
  index->addIncoming(index_next, sub_group_latch);
  b.CreateCondBr(b.CreateICmpULT(index_next, sub_groups), sub_group, release);

  // Every work-item now waits at the same work-group barrier, or returned: all go on past it.
  b.SetInsertPoint(release);
  llvm::PHINode* lane = b.CreatePHI(i64_, 2, "release.lane");
  lane->addIncoming(constant(0), sub_group_latch);
  llvm::PHINode* all_returned = b.CreatePHI(b.getInt1Ty(), 2, "all.returned");
  all_returned->addIncoming(b.getTrue(), sub_group_latch);
  Value* state = b.CreateLoad(i32_, state_of(lane));
  Value* returned = b.CreateICmpEQ(state, state_constant(kExit));
  b.CreateStore(
      b.CreateSelect(returned, state, b.CreateAnd(state, state_constant(~kWaitsForGroup))),
      state_of(lane));
  Value* all_returned_next = b.CreateAnd(all_returned, returned);
  Value* lane_next = b.CreateAdd(lane, constant(1));
  lane->addIncoming(lane_next, release);
  all_returned->addIncoming(all_returned_next, release);
  b.CreateCondBr(b.CreateICmpULT(lane_next, u.items), release, round_end);
  b.SetInsertPoint(round_end);
  b.CreateCondBr(all_returned_next, finish, round);
}

}  // namespace manifold::compiler::workgroup
