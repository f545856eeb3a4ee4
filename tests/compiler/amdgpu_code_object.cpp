#include "amdgpu_code_object.h"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

namespace amdgpu_test {
namespace {

uint64_t number(const llvm::msgpack::DocNode& node) {
  if (node.getKind() == llvm::msgpack::Type::UInt) return node.getUInt();
  if (node.getKind() == llvm::msgpack::Type::Int) return static_cast<uint64_t>(node.getInt());
  return 0;
}

std::string text(const llvm::msgpack::DocNode& node) {
  return node.getKind() == llvm::msgpack::Type::String ? node.getString().str() : std::string();
}

llvm::msgpack::DocNode* field(llvm::msgpack::MapDocNode map, llvm::msgpack::Document& doc,
                              const char* key) {
  auto it = map.find(doc.getNode(llvm::StringRef(key)));
  return it == map.end() ? nullptr : &it->second;
}

bool read_metadata(llvm::StringRef blob, CodeObject* out, std::string* error) {
  llvm::msgpack::Document doc;
  if (!doc.readFromBlob(blob, /*Multi=*/false) ||
      doc.getRoot().getKind() != llvm::msgpack::Type::Map) {
    *error = "the metadata note is no msgpack map";
    return false;
  }
  llvm::msgpack::MapDocNode& root = doc.getRoot().getMap();
  if (const auto* target = field(root, doc, "amdhsa.target")) out->processor = text(*target);
  auto* kernels = field(root, doc, "amdhsa.kernels");
  if (!kernels || kernels->getKind() != llvm::msgpack::Type::Array) {
    *error = "the metadata has no amdhsa.kernels";
    return false;
  }
  for (llvm::msgpack::DocNode& node : kernels->getArray()) {
    if (node.getKind() != llvm::msgpack::Type::Map) continue;
    llvm::msgpack::MapDocNode kernel = node.getMap();
    KernelMetadata meta;
    const auto get = [&](const char* key) { return field(kernel, doc, key); };
    if (const auto* v = get(".kernarg_segment_size")) meta.kernarg_segment_size = number(*v);
    if (const auto* v = get(".group_segment_fixed_size"))
      meta.group_segment_fixed_size = number(*v);
    if (const auto* v = get(".wavefront_size")) meta.wavefront_size = number(*v);
    if (const auto* v = get(".max_flat_workgroup_size")) meta.max_flat_workgroup_size = number(*v);
    if (const auto* v = get(".uses_dynamic_stack"))
      meta.uses_dynamic_stack = v->getKind() == llvm::msgpack::Type::Boolean && v->getBool();
    if (auto* args = get(".args"); args && args->getKind() == llvm::msgpack::Type::Array)
      for (llvm::msgpack::DocNode& a : args->getArray()) {
        if (a.getKind() != llvm::msgpack::Type::Map) continue;
        KernelArgument arg;
        llvm::msgpack::MapDocNode map = a.getMap();
        if (const auto* v = field(map, doc, ".offset")) arg.offset = number(*v);
        if (const auto* v = field(map, doc, ".size")) arg.size = number(*v);
        if (const auto* v = field(map, doc, ".value_kind")) arg.value_kind = text(*v);
        if (const auto* v = field(map, doc, ".address_space")) arg.address_space = text(*v);
        meta.args.push_back(arg);
      }
    const auto* name = get(".name");
    out->kernels[name ? text(*name) : std::string()] = meta;
  }
  return true;
}

}  // namespace

std::optional<CodeObject> read_code_object(std::span<const uint8_t> bytes, std::string* error) {
  const llvm::StringRef data(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  auto file = llvm::object::ELF64LEFile::create(data);
  if (!file) {
    *error = "not an ELF file: " + llvm::toString(file.takeError());
    return std::nullopt;
  }
  CodeObject out;
  const auto& header = file->getHeader();
  out.machine = header.e_machine;
  out.os_abi = header.e_ident[llvm::ELF::EI_OSABI];
  out.abi_version = header.e_ident[llvm::ELF::EI_ABIVERSION];
  out.type = header.e_type;
  auto sections = file->sections();
  if (!sections) {
    *error = llvm::toString(sections.takeError());
    return std::nullopt;
  }
  bool found_note = false;
  for (const auto& section : *sections) {
    if (section.sh_type == llvm::ELF::SHT_DYNSYM) {
      auto symbols = file->symbols(&section);
      auto names = file->getStringTableForSymtab(section);
      if (!symbols || !names) {
        llvm::consumeError(symbols.takeError());
        llvm::consumeError(names.takeError());
        *error = "unreadable .dynsym";
        return std::nullopt;
      }
      for (const auto& symbol : llvm::drop_begin(*symbols)) {  // entry 0 is the null symbol
        auto name = symbol.getName(*names);
        if (!name) {
          llvm::consumeError(name.takeError());
          continue;
        }
        (symbol.isUndefined() ? out.undefined_symbols : out.defined_symbols).push_back(name->str());
      }
    }
    if (section.sh_type != llvm::ELF::SHT_NOTE) continue;
    llvm::Error note_error = llvm::Error::success();
    for (const auto& note : file->notes(section, note_error)) {
      if (note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA) continue;
      const llvm::ArrayRef<uint8_t> desc = note.getDesc(section.sh_addralign);
      if (!read_metadata(llvm::StringRef(reinterpret_cast<const char*>(desc.data()), desc.size()),
                         &out, error))
        return std::nullopt;
      found_note = true;
    }
    if (note_error) {
      *error = llvm::toString(std::move(note_error));
      return std::nullopt;
    }
  }
  if (!found_note) {
    *error = "no NT_AMDGPU_METADATA note";
    return std::nullopt;
  }
  return out;
}

}  // namespace amdgpu_test
