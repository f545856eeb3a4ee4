// Debian's LLVM 22 is built with Polly linked into its tools: LTO and clang's back end call
// getPollyPluginInfo(), which lives in libPolly.a, an archive Debian does not ship. Manifold
// never uses Polly; in the static build this stub stands in (an empty plug-in).
#include <llvm/Plugins/PassPlugin.h>

llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly (absent)", "0", [](llvm::PassBuilder&) {}};
}

// lld's ELF driver initializes every target LLVM was built with (for LTO, which Manifold never
// asks of it: it links AMDGPU objects). The static build carries only Manifold's targets; the
// others' initializers are empty here.
#define MANIFOLD_ABSENT_TARGET(T)                    \
  extern "C" void LLVMInitialize##T##TargetInfo() {} \
  extern "C" void LLVMInitialize##T##Target() {}     \
  extern "C" void LLVMInitialize##T##TargetMC() {}   \
  extern "C" void LLVMInitialize##T##AsmPrinter() {} \
  extern "C" void LLVMInitialize##T##AsmParser() {}
MANIFOLD_ABSENT_TARGET(AArch64)
MANIFOLD_ABSENT_TARGET(ARM)
MANIFOLD_ABSENT_TARGET(AVR)
MANIFOLD_ABSENT_TARGET(BPF)
MANIFOLD_ABSENT_TARGET(Hexagon)
MANIFOLD_ABSENT_TARGET(Lanai)
MANIFOLD_ABSENT_TARGET(LoongArch)
MANIFOLD_ABSENT_TARGET(M68k)
MANIFOLD_ABSENT_TARGET(MSP430)
MANIFOLD_ABSENT_TARGET(Mips)
MANIFOLD_ABSENT_TARGET(PowerPC)
MANIFOLD_ABSENT_TARGET(RISCV)
MANIFOLD_ABSENT_TARGET(Sparc)
MANIFOLD_ABSENT_TARGET(SystemZ)
MANIFOLD_ABSENT_TARGET(VE)
MANIFOLD_ABSENT_TARGET(WebAssembly)
MANIFOLD_ABSENT_TARGET(XCore)
MANIFOLD_ABSENT_TARGET(Xtensa)
#undef MANIFOLD_ABSENT_TARGET
