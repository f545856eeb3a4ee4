// Debian's LLVM 22 is built with Polly linked into its tools: LTO and clang's back end call
// getPollyPluginInfo(), which lives in libPolly.a, an archive Debian does not ship. Manifold
// never uses Polly; in the static build this stub stands in (an empty plug-in).
#include <llvm/Plugins/PassPlugin.h>

llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly (absent)", "0", [](llvm::PassBuilder&) {}};
}
