//===- OrderedAtomics.cpp - float atomic adds in thread order -------------===//

#include "OrderedAtomics.h"
#include "FloatHelpers.h"

#include <cstring>

using namespace adjit::runtime;

namespace {

template <typename T> void atomicAdd(T *target, T value) {
  T old;
  __atomic_load(target, &old, __ATOMIC_RELAXED);
  T sum;
  do {
    sum = old + value;
  } while (!__atomic_compare_exchange(target, &old, &sum, /*weak=*/true,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

struct NamedSymbol {
  const char *name;
  const void *address;
};
const NamedSymbol kRuntimeSymbols[] = {
    {"adjit_rt_atomic_add_f32", reinterpret_cast<const void *>(&adjit_rt_atomic_add_f32)},
    {"adjit_rt_atomic_add_f64", reinterpret_cast<const void *>(&adjit_rt_atomic_add_f64)},
    // compiler-rt/libgcc names LLVM calls; ours, so older libgccs work too.
    {"__truncsfbf2", reinterpret_cast<const void *>(&adjit_rt_truncsfbf2)},
    {"__truncdfbf2", reinterpret_cast<const void *>(&adjit_rt_truncdfbf2)},
    {"__truncsfhf2", reinterpret_cast<const void *>(&adjit_rt_truncsfhf2)},
    {"__truncdfhf2", reinterpret_cast<const void *>(&adjit_rt_truncdfhf2)},
    {"__extendhfsf2", reinterpret_cast<const void *>(&adjit_rt_extendhfsf2)},
};

} // namespace

void AddLog::reset(unsigned numParts) {
  parts.resize(numParts);
  for (Part &part : parts)
    part.entries.clear();
  mask = numParts - 1;
}

void AddLog::apply(unsigned part) const {
  for (const Entry &e : parts[part].entries) {
    if (e.target & 1) {
      auto *target = reinterpret_cast<double *>(e.target & ~uintptr_t(1));
      *target = *target + e.value;
    } else {
      auto *target = reinterpret_cast<float *>(e.target);
      *target = *target + static_cast<float>(e.value);
    }
  }
}

size_t AddLog::size() const {
  size_t n = 0;
  for (const Part &part : parts)
    n += part.entries.size();
  return n;
}

void AddLog::trim(size_t maxEntries) {
  for (Part &part : parts)
    if (part.entries.capacity() > maxEntries)
      std::vector<Entry>().swap(part.entries);
}

bool adjit::runtime::isCompilerRuntimeHelper(const char *name) {
  return std::strncmp(name, "__", 2) == 0;
}

const void *adjit::runtime::runtimeSymbol(const char *name) {
  for (const NamedSymbol &symbol : kRuntimeSymbols)
    if (std::strcmp(symbol.name, name) == 0)
      return symbol.address;
  return nullptr;
}

std::vector<const char *> adjit::runtime::runtimeSymbolNames() {
  std::vector<const char *> names;
  for (const NamedSymbol &symbol : kRuntimeSymbols)
    names.push_back(symbol.name);
  return names;
}

template <typename T> static void addFrom(ErrorRecord *record, T *target, T value) {
  AddLog *log = record ? record->addLog : nullptr;
  if (!log)
    atomicAdd(target, value);
  else if (log == kDirectAdds)
    *target = *target + value;
  else
    log->add(target, value);
}

void adjit_rt_atomic_add_f32(ErrorRecord *record, float *target, float value) {
  addFrom(record, target, value);
}

void adjit_rt_atomic_add_f64(ErrorRecord *record, double *target,
                             double value) {
  addFrom(record, target, value);
}
