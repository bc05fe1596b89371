//===- HostInfo.cpp - which CPU this process runs on ----------------------===//

#include "HostInfo.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__linux__)
#include <sys/auxv.h>
#endif

namespace {

void appendHex(std::string &out, uint64_t word) {
  char buffer[20];
  std::snprintf(buffer, sizeof(buffer), "-%llx",
                static_cast<unsigned long long>(word));
  out += buffer;
}

} // namespace

#if defined(__x86_64__) || defined(__i386__)

std::string adjit::runtime::hostId() {
  unsigned eax, ebx, ecx, edx;
  __cpuid(0, eax, ebx, ecx, edx);
  unsigned maxLeaf = eax;
  char vendor[13];
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  vendor[12] = '\0';
  std::string id = std::string("x86_64-") + vendor;

  // Signature (family, model, stepping) and the basic feature words; ebx
  // holds the APIC id of the core we happen to run on, so it is skipped.
  __cpuid(1, eax, ebx, ecx, edx);
  bool osSavesState = ecx & (1u << 27); // OSXSAVE: xgetbv is available
  appendHex(id, eax);
  appendHex(id, ecx);
  appendHex(id, edx);
  if (maxLeaf >= 7) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    appendHex(id, ebx);
    appendHex(id, ecx);
    appendHex(id, edx);
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    appendHex(id, eax);
  }
  __cpuid(0x80000000, eax, ebx, ecx, edx);
  if (eax >= 0x80000001) {
    __cpuid(0x80000001, eax, ebx, ecx, edx);
    appendHex(id, ecx);
    appendHex(id, edx);
  }
  // Which vector registers the OS saves (AVX, AVX-512): code using them
  // runs only where they are enabled.
  if (osSavesState) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    appendHex(id, (static_cast<uint64_t>(hi) << 32) | lo);
  }
  return id;
}

#else

std::string adjit::runtime::hostId() {
#if defined(__aarch64__)
  std::string id = "aarch64";
#else
  std::string id = "unknown-arch";
#endif
#if defined(__linux__)
  appendHex(id, getauxval(AT_HWCAP));
  appendHex(id, getauxval(AT_HWCAP2));
#endif
  return id;
}

#endif
