//===- OrderedAtomics.h - float atomic adds in thread order -----*- C++ -*-===//
//
// The runtime half of deterministic float atomics. The compiler classifies
// each kernel (adjit-atomic-order) and routes its float atomic adds through
// adjit_rt_atomic_add_f32/f64 (adjit-defer-float-atomics), which get the
// error record of the threads that call them. An "ordered" launch gives each
// chunk of threads a record pointing at the chunk's AddLog, where the calls
// append; after the chunks, the logs are applied in chunk order, which is
// thread order, so every element receives its adds in the order of a
// one-thread run whatever the number of threads. With no log, the calls add
// atomically.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_ORDEREDATOMICS_H
#define ADJIT_RUNTIME_ORDEREDATOMICS_H

#include "KernelArgs.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace adjit {
namespace runtime {

/// How a launch runs a kernel's atomics (the kernel's adjit.atomic_order).
enum class AtomicOrder : int {
  Parallel = 0, ///< every core, atomics as they come
  Ordered = 1,  ///< every core, float adds logged and applied in thread order
  Serial = 2,   ///< one core, threads in index order
};

/// The float atomic adds of one chunk of threads, in the order they were
/// made, split into parts by the memory they add into: parts are disjoint,
/// so different parts can be applied in parallel.
class AddLog {
public:
  /// Empties the log (keeping its memory) and splits it into `numParts`
  /// parts, a power of two.
  void reset(unsigned numParts);
  void add(float *target, float value) {
    append(reinterpret_cast<uintptr_t>(target), value);
  }
  void add(double *target, double value) {
    append(reinterpret_cast<uintptr_t>(target) | 1, value);
  }
  /// Performs the adds of part `part`, in order.
  void apply(unsigned part) const;
  size_t size() const;
  /// Frees the memory of parts that grew beyond `maxEntries`.
  void trim(size_t maxEntries);

private:
  /// An add: the element's address (low bit set for a double), and the
  /// value (a float converts to double and back exactly).
  struct Entry {
    Entry(uintptr_t target, double value) : target(target), value(value) {}
    uintptr_t target;
    double value;
  };
  void append(uintptr_t target, double value) {
    // Built in place: a copy from the stack would be two 8-byte stores read
    // back as one 16-byte load, which stalls store forwarding at every add.
    parts[(target >> 6) & mask].entries.emplace_back(target, value);
  }
  /// One cache line per part: the threads running neighbouring chunks
  /// would otherwise write the same line at every add.
  struct alignas(64) Part {
    std::vector<Entry> entries;
  };
  std::vector<Part> parts;
  uintptr_t mask = 0;
};

/// The address of a runtime function compiled kernels call, by symbol name;
/// nullptr for other names. Object loaders resolve these first.
const void *runtimeSymbol(const char *name);

/// Whether `name` is a compiler-runtime helper's (libgcc/compiler-rt: "__"
/// names). Loaders take these from runtimeSymbol only, never the process:
/// the host's set depends on its compiler's version.
bool isCompilerRuntimeHelper(const char *name);

/// The names runtimeSymbol knows.
std::vector<const char *> runtimeSymbolNames();

} // namespace runtime
} // namespace adjit

extern "C" {
void adjit_rt_atomic_add_f32(adjit::runtime::ErrorRecord *record, float *target,
                             float value);
void adjit_rt_atomic_add_f64(adjit::runtime::ErrorRecord *record,
                             double *target, double value);
}

#endif // ADJIT_RUNTIME_ORDEREDATOMICS_H
