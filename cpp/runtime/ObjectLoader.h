//===- ObjectLoader.h - Loading kernel objects without LLVM -----*- C++ -*-===//
//
// A small loader for the relocatable ELF objects that adjit's CPU code
// generator emits for this host: the object's sections are laid out in one
// block of memory, relocated, and kept executable until unloaded (or for the
// process lifetime).
// Only libc is needed (mmap, mprotect, dlsym), so the runtime can run cached
// kernels without linking LLVM. x86-64 only for now; on other machines it
// fails cleanly and the caller falls back to another loader.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_OBJECTLOADER_H
#define ADJIT_RUNTIME_OBJECTLOADER_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace adjit {
namespace runtime {

/// Loads a relocatable ELF object (as produced by adjit's CPU code generator
/// for this host) into executable memory kept for the process lifetime,
/// resolving undefined symbols (libm's sinf, expf, memcpy, ...) in the process
/// with dlsym(RTLD_DEFAULT, ...). On success fills `addresses` (one per name,
/// same order) and returns true; on failure returns false and sets `error` to
/// a message naming what failed (an unsupported relocation type and its
/// number, an unresolved symbol's name, a missing entry name, a malformed or
/// wrong-architecture object, ...). Thread-safe; never throws.
/// The memory of a loaded object, for unloadObject.
struct LoadedBlock {
  void *start = nullptr;
  size_t size = 0;
};

bool loadObject(const void *data, size_t size,
                const std::vector<std::string> &names,
                std::vector<uint64_t> &addresses, std::string &error,
                LoadedBlock *block = nullptr);

/// Unmaps an object loaded by loadObject: none of its code may run after
/// (or be running).
void unloadObject(const LoadedBlock &block);

} // namespace runtime
} // namespace adjit

#endif // ADJIT_RUNTIME_OBJECTLOADER_H
