#include "compiler/amdgpu/code_object_link.h"

#include <lld/Common/Driver.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <mutex>

#include "compiler/llvm_signals.h"

LLD_HAS_DRIVER(elf)

namespace manifold::compiler {
namespace {

// A private folder for one link's input and output (lld reads and writes files only), removed
// with everything in it when the link is done.
class ScratchFolder {
 public:
  explicit ScratchFolder(std::string* error) {
    if (std::error_code code = llvm::sys::fs::createUniqueDirectory("manifold-amdgpu", path_))
      *error = "cannot make a temporary folder: " + code.message();
  }
  ~ScratchFolder() {
    if (!path_.empty()) llvm::sys::fs::remove_directories(path_);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  bool ok() const { return !path_.empty(); }
  std::string file(const char* name) const {
    llvm::SmallString<256> joined(path_);
    llvm::sys::path::append(joined, name);
    return std::string(joined);
  }

 private:
  llvm::SmallString<256> path_;
};

}  // namespace

bool link_code_object(std::span<const uint8_t> object, std::vector<uint8_t>* code_object,
                      std::string* log) {
  keep_llvm_signal_handling_out();
  std::string error;
  ScratchFolder folder(&error);
  if (!folder.ok()) {
    *log += "error: linking the code object: " + error + "\n";
    return false;
  }
  const std::string input = folder.file("program.o"), output = folder.file("program.hsaco");
  {
    std::error_code code;
    llvm::raw_fd_ostream file(input, code);
    if (code) {
      *log +=
          "error: linking the code object: cannot write " + input + ": " + code.message() + "\n";
      return false;
    }
    file.write(reinterpret_cast<const char*>(object.data()), object.size());
  }
  // lld keeps its configuration in globals: one link at a time. A link that crashed inside lld
  // may leave them corrupt (canRunAgain false): later links are then refused.
  static std::mutex mutex;
  static bool usable = true;
  std::string messages;
  int status = 0;
  {
    std::lock_guard lock(mutex);
    if (!usable) {
      *log += "error: lld failed earlier in this process and cannot link again\n";
      return false;
    }
    // One thread: lld's thread pool would otherwise start inside the application.
    const char* args[] = {"ld.lld", "-shared",      "--no-undefined", "--threads=1",
                          "-o",     output.c_str(), input.c_str()};
    llvm::raw_string_ostream stream(messages);
    const ThreadSignalStackGuard stack_guard;
    const lld::Result result = lld::lldMain(args, stream, stream, {{lld::Gnu, &lld::elf::link}});
    usable = result.canRunAgain;
    status = result.retCode;
  }
  if (status != 0) {
    *log += messages + "error: linking the code object (lld) failed\n";
    return false;
  }
  auto linked = llvm::MemoryBuffer::getFile(output, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!linked) {
    *log += "error: lld wrote no code object: " + linked.getError().message() + "\n";
    return false;
  }
  const llvm::StringRef bytes = (*linked)->getBuffer();
  code_object->assign(bytes.begin(), bytes.end());
  return true;
}

}  // namespace manifold::compiler
