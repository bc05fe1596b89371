//===- object_loader_test.cpp - Standalone test for the ELF object loader -===//
//
// Loads real kernel objects (made by make_test_objects.py), runs their
// entries directly and checks the results against values computed here; then
// loads C and assembly objects covering the remaining relocation types, and
// checks the error paths. Returns nonzero on failure.
//
// From the repository root, with the adjit virtualenv active and a C
// compiler (for the C and assembly objects):
//   python cpp/runtime/test/make_test_objects.py /tmp/objs
//   g++ -std=c++17 -O2 -pthread -Icpp cpp/runtime/ObjectLoader.cpp cpp/runtime/OrderedAtomics.cpp
//       cpp/runtime/test/object_loader_test.cpp -ldl -lm -o /tmp/olt
//   /tmp/olt /tmp/objs
//
//===----------------------------------------------------------------------===//

#include "runtime/CpuLaunch.h"
#include "runtime/ObjectLoader.h"

#include <elf.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

using namespace adjit::runtime;

static int Failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);   \
      ++Failures;                                                              \
    }                                                                          \
  } while (0)

namespace {

std::string Dir;

std::vector<char> readObject(const std::string &name) {
  std::ifstream in(Dir + "/" + name, std::ios::binary);
  if (!in)
    std::fprintf(stderr, "cannot read %s/%s\n", Dir.c_str(), name.c_str());
  return {std::istreambuf_iterator<char>(in), {}};
}

/// Loads `object` and returns the addresses of `names` (zeros on failure).
std::vector<uint64_t> load(const std::string &object,
                           const std::vector<std::string> &names) {
  std::vector<char> bytes = readObject(object);
  std::vector<uint64_t> addresses;
  std::string error;
  if (!loadObject(bytes.data(), bytes.size(), names, addresses, error)) {
    std::fprintf(stderr, "FAILED to load %s: %s\n", object.c_str(),
                 error.c_str());
    ++Failures;
    return std::vector<uint64_t>(names.size(), 0);
  }
  return addresses;
}

/// The entry of kernel `kernel` in `<object>.o` (default: `<kernel>.o`).
CpuEntry loadEntry(const std::string &object, const std::string &kernel = "") {
  std::string name = kernel.empty() ? object : kernel;
  uint64_t entry = load(object + ".o", {name + "_cpu_entry"})[0];
  return reinterpret_cast<CpuEntry>(entry);
}

/// The error of loading `bytes`, which must fail.
std::string loadError(const std::vector<char> &bytes,
                      const std::vector<std::string> &names) {
  std::vector<uint64_t> addresses;
  std::string error;
  bool loaded = loadObject(bytes.data(), bytes.size(), names, addresses, error);
  CHECK(!loaded && !error.empty());
  std::printf("  refused as expected: %s\n", error.c_str());
  return error;
}

bool contains(const std::string &text, const std::string &part) {
  if (text.find(part) != std::string::npos)
    return true;
  std::fprintf(stderr, "  expected \"%s\" in \"%s\"\n", part.c_str(),
               text.c_str());
  return false;
}

/// The protection ("r-x", "rw-", ...) of the mapping holding `address`.
std::string protectionAt(uint64_t address) {
  std::ifstream maps("/proc/self/maps");
  unsigned long long begin, end;
  char dash, perms[5];
  std::string rest;
  while (maps >> std::hex >> begin >> dash >> end >> perms) {
    std::getline(maps, rest);
    if (begin <= address && address < end)
      return std::string(perms, 3);
  }
  return "?";
}

/// The first section of `type` in an object held in `bytes` (in place).
Elf64_Shdr *findSection(std::vector<char> &bytes, uint32_t type) {
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  auto *sections = reinterpret_cast<Elf64_Shdr *>(&bytes[header.e_shoff]);
  for (int i = 0; i < header.e_shnum; ++i)
    if (sections[i].sh_type == type)
      return &sections[i];
  return nullptr;
}

/// A ranked memref descriptor, as the launch code packs array arguments:
/// C-contiguous, strides in elements.
struct MemRef {
  void *allocated, *aligned;
  int64_t offset;
  int64_t sizesAndStrides[12];
  MemRef(void *data, std::vector<int64_t> shape)
      : allocated(data), aligned(data), offset(0) {
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      sizesAndStrides[d] = shape[d];
      sizesAndStrides[shape.size() + d] = stride;
      stride *= shape[d];
    }
  }
};

void run(CpuEntry entry, std::vector<void *> args, int64_t n) {
  if (!entry)
    return;
  const int64_t shape[4] = {n, 1, 1, 1};
  ErrorRecord record{};
  entry(args.data(), shape, 0, n, &record);
  CHECK(record.site == 0);
}

bool near(double actual, double expected, double tolerance) {
  return std::fabs(actual - expected) <=
         tolerance * std::fmax(1.0, std::fabs(expected));
}

//===-- Kernels -----------------------------------------------------------===//

void testSaxpy() {
  const int64_t n = 1003;
  std::vector<float> x(n), y(n), expected(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = 0.01f * i, y[i] = 1.0f - 0.5f * i;
    expected[i] = 2.5f * x[i] + y[i];
  }
  float a = 2.5f;
  MemRef xs(x.data(), {n}), ys(y.data(), {n});
  CpuEntry entry = loadEntry("saxpy");
  if (!entry)
    return;
  const int64_t shape[4] = {n, 1, 1, 1};
  std::vector<void *> args = {&a, &xs, &ys};
  ErrorRecord record{};
  entry(args.data(), shape, 0, 500, &record); // two chunks, as the pool splits
  entry(args.data(), shape, 500, n, &record);
  CHECK(record.site == 0);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i)
    bad += !near(y[i], expected[i], 1e-6);
  CHECK(bad == 0);
  CHECK(protectionAt(uint64_t(entry)) == "r-x");

  // A launch 3 threads larger than the arrays: its launch condition does not
  // hold, so this variant runs no thread and asks for the all-checked one...
  std::vector<float> big(n + 8, -1.0f);
  MemRef xs2(x.data(), {n}), ys2(big.data(), {n});
  std::vector<void *> args2 = {&a, &xs2, &ys2};
  const int64_t shape2[4] = {n + 3, 1, 1, 1};
  ErrorRecord unproven{};
  entry(args2.data(), shape2, 0, n + 3, &unproven);
  CHECK(unproven.site == kLaunchUnproven);
  for (float v : big)
    CHECK(v == -1.0f);
  // ...which skips the accesses past the end and reports the first (site 0,
  // the x[i] read) in the record; the arrays are untouched past their ends.
  CpuEntry checked = loadEntry("saxpy_all_checked", "saxpy");
  if (!checked)
    return;
  ErrorRecord failed{};
  checked(args2.data(), shape2, 0, n + 3, &failed);
  CHECK(failed.site == 1 && failed.thread == n);
  CHECK(failed.index[0] == n && failed.size[0] == n);
  for (int64_t i = 0; i < n; ++i)
    CHECK(big[i] == 2.5f * x[i] - 1.0f);
  for (int64_t i = n; i < n + 8; ++i)
    CHECK(big[i] == -1.0f);
}

void testLibmF32() {
  const int64_t n = 257;
  std::vector<float> x(n), out(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = -3.0f + 6.0f * i / (n - 1);
  MemRef xs(x.data(), {n}), outs(out.data(), {n});
  run(loadEntry("libm_f32"), {&xs, &outs}, n);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = x[i];
    double expected = std::sin(v) + std::exp(v * 0.5) +
                      std::pow(std::fabs(v) + 1.0, 1.5) + std::atan2(v, 2.0);
    bad += !near(out[i], expected, 1e-5);
  }
  CHECK(bad == 0);
}

void testLibmF64() {
  const int64_t n = 257;
  std::vector<double> x(n), out(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = -3.0 + 6.0 * i / (n - 1);
  MemRef xs(x.data(), {n}), outs(out.data(), {n});
  run(loadEntry("libm_f64"), {&xs, &outs}, n);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = x[i];
    double expected = std::cos(v) * std::exp(v) +
                      std::pow(std::fabs(v) + 1.0, 0.75) + std::log(v * v + 1);
    bad += !near(out[i], expected, 1e-12);
  }
  CHECK(bad == 0);
}

void testVec3Math() {
  const int64_t n = 101;
  const double offset[3] = {1.0, -2.0, 0.5};
  std::vector<float> a(3 * n), b(3 * n), lengths(n), normals(3 * n),
      crosses(3 * n);
  for (int64_t i = 0; i < 3 * n; ++i)
    a[i] = std::sin(0.37 * i) * 3, b[i] = std::cos(0.11 * i) - 0.25f;
  MemRef as(a.data(), {n, 3}), bs(b.data(), {n, 3}), ls(lengths.data(), {n}),
      ns(normals.data(), {n, 3}), cs(crosses.data(), {n, 3});
  run(loadEntry("vec3_math"), {&as, &bs, &ls, &ns, &cs}, n);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    double p[3];
    for (int c = 0; c < 3; ++c)
      p[c] = a[3 * i + c] + offset[c];
    double length = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    double cross[3];
    const float *bi = &b[3 * i];
    cross[0] = 2 * (p[1] * bi[2] - p[2] * bi[1]);
    cross[1] = 2 * (p[2] * bi[0] - p[0] * bi[2]);
    cross[2] = 2 * (p[0] * bi[1] - p[1] * bi[0]);
    bad += !near(lengths[i], length, 1e-5);
    for (int c = 0; c < 3; ++c) {
      bad += !near(normals[3 * i + c], p[c] / length, 1e-5);
      bad += !near(crosses[3 * i + c], cross[c], 1e-5);
    }
  }
  CHECK(bad == 0);
}

void testRowSums() {
  const int64_t n = 37, columns = 13;
  std::vector<float> m(n * columns), out(n, -1.0f);
  for (int64_t i = 0; i < n * columns; ++i)
    m[i] = 0.5f * (i % 7) - 1.0f;
  MemRef ms(m.data(), {n, columns}), outs(out.data(), {n});
  CpuEntry entry = loadEntry("row_sums");
  for (int32_t count : {13, 5, 0}) {
    run(entry, {&ms, &count, &outs}, n);
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      double expected = 0;
      for (int k = 0; k < count; ++k)
        expected += m[i * columns + k] * (k + 1);
      bad += !near(out[i], expected, 1e-5);
    }
    CHECK(bad == 0);
  }
}

void testHistogram() {
  const int64_t n = 1000;
  std::vector<int32_t> values(n), counts(4, 0);
  std::vector<float> total(1, 0.0f);
  int expectedCounts[4] = {};
  double expectedTotal = 0;
  for (int64_t i = 0; i < n; ++i) {
    values[i] = int32_t(i * 7 % 11);
    expectedCounts[values[i] % 4]++;
    expectedTotal += values[i] * 0.5;
  }
  MemRef vs(values.data(), {n}), cs(counts.data(), {4}), ts(total.data(), {1});
  run(loadEntry("histogram"), {&vs, &cs, &ts}, n);
  for (int k = 0; k < 4; ++k)
    CHECK(counts[k] == expectedCounts[k]);
  CHECK(total[0] == float(expectedTotal)); // exact: halves of small integers
}

void testAdjoint() {
  const int64_t n = 129;
  std::vector<float> x(n), y(n), xGrad(n, 0.0f), yGrad(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = -2.0f + 4.0f * i / (n - 1), yGrad[i] = 1.0f + 0.01f * i;
  MemRef xs(x.data(), {n}), ys(y.data(), {n}), xg(xGrad.data(), {n}),
      yg(yGrad.data(), {n});
  // Arguments: the primal ones, then one gradient per array. The adjoint
  // consumes (zeroes) the gradient of the overwritten y.
  std::vector<float> outputGrad = yGrad;
  uint64_t entry = load("sin_times_x_adjoint.o",
                        {"sin_times_x_adjoint_cpu_entry"})[0];
  run(reinterpret_cast<CpuEntry>(entry), {&xs, &ys, &xg, &yg}, n);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = x[i], dy = outputGrad[i];
    bad += !near(xGrad[i], dy * (std::cos(v) * v + std::sin(v)), 1e-5);
  }
  CHECK(bad == 0);
}

void testConcurrentLoads() {
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  std::vector<char> bytes = readObject("saxpy.o");
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::vector<uint64_t> addresses;
      std::string error;
      if (!loadObject(bytes.data(), bytes.size(), {"saxpy_cpu_entry"},
                      addresses, error))
        return;
      float a = float(t), x[4] = {1, 2, 3, 4}, y[4] = {};
      MemRef xs(x, {4}), ys(y, {4});
      run(reinterpret_cast<CpuEntry>(addresses[0]), {&a, &xs, &ys}, 4);
      ok[t] = y[3] == 4.0f * t;
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < 8; ++t)
    CHECK(ok[t]);
}

//===-- Other relocation types (C and assembly objects) -------------------===//

void testRelocCoverage(const std::string &object) {
  std::vector<uint64_t> f =
      load(object, {"cov_call_local", "cov_call_libm", "cov_bump_common",
                    "cov_fill_bss", "cov_has_hook", "cov_environ",
                    "cov_common_address", "common_counter", "local_table"});
  if (!f[0])
    return;
  CHECK(reinterpret_cast<int (*)(int)>(f[0])(5) == 16);
  float expected = std::sin(0.5f) + std::exp(0.5f) + std::cos(0.5f);
  CHECK(near(reinterpret_cast<float (*)(float)>(f[1])(0.5f), expected, 1e-6));
  CHECK(reinterpret_cast<int (*)(int)>(f[2])(3) == 3);
  CHECK(reinterpret_cast<int (*)(int)>(f[2])(4) == 7);
  CHECK(reinterpret_cast<double (*)(int)>(f[3])(512) == 511 * 512 / 2);
  CHECK(reinterpret_cast<int (*)()>(f[4])() == 0); // weak undefined is 0
  CHECK(reinterpret_cast<char **(*)()>(f[5])() == environ);
  CHECK(reinterpret_cast<uint64_t (*)()>(f[6])() == f[7]);
  CHECK(protectionAt(f[7]) == "rw-");
  CHECK(protectionAt(f[8]) == "rw-"); // .data, holding R_X86_64_64 pointers
}

void testAsmRelocs() {
  std::vector<uint64_t> f =
      load("asm_relocs.o", {"asm_target", "asm_through_pc64", "asm_through_got",
                            "asm_through_gotoff", "asm_absolute"});
  if (!f[0])
    return;
  CHECK(reinterpret_cast<uint64_t (*)()>(f[1])() == f[0]);
  CHECK(reinterpret_cast<uint64_t (*)()>(f[2])() == f[0]);
  CHECK(reinterpret_cast<uint64_t (*)()>(f[3])() == f[0]);
  CHECK(f[4] == 0x12345); // SHN_ABS
}

//===-- Errors ------------------------------------------------------------===//

void testErrors() {
  std::vector<char> saxpy = readObject("saxpy.o");
  if (saxpy.size() < 64)
    return;
  std::vector<std::string> entry = {"saxpy_cpu_entry"};

  CHECK(contains(loadError({saxpy.begin(), saxpy.begin() + 40}, entry),
                 "not an ELF object"));
  CHECK(contains(loadError({saxpy.begin(), saxpy.begin() + 200}, entry),
                 "malformed object"));
  CHECK(contains(
      loadError({saxpy.begin(), saxpy.begin() + saxpy.size() / 2}, entry),
      "malformed object"));
  std::string text = "this is not an object file, just some text......"
                     "..................................................";
  CHECK(contains(loadError({text.begin(), text.end()}, entry),
                 "not an ELF object"));
  CHECK(contains(loadError({}, entry), "not an ELF object"));

  std::vector<char> aarch64 = saxpy;
  aarch64[18] = char(183), aarch64[19] = 0; // e_machine = EM_AARCH64
  CHECK(contains(loadError(aarch64, entry),
                 "supports x86-64 objects only; this object is for machine "
                 "183"));

  CHECK(contains(loadError(saxpy, {"saxpy_cpu_entry", "no_such_kernel"}),
                 "no symbol 'no_such_kernel'"));
  CHECK(contains(loadError(readObject("missing_symbol.o"), {"call_missing"}),
                 "unresolved symbol 'adjit_test_missing_function'"));
  // Non-PIC code addresses its data with 32-bit absolute fields, which do
  // not reach the block: reported, not truncated.
  CHECK(contains(loadError(readObject("reloc_nopic.o"), {"cov_call_local"}),
                 "overflows the 32-bit"));

  // A section larger than the object.
  std::vector<char> oversized = saxpy;
  if (Elf64_Shdr *text = findSection(oversized, SHT_PROGBITS)) {
    text->sh_size = oversized.size();
    CHECK(contains(loadError(oversized, entry), "runs past its end"));
  }

  // The first relocation of libm_f32.o, made type 99.
  std::vector<char> badType = readObject("libm_f32.o");
  if (Elf64_Shdr *relocations = findSection(badType, SHT_RELA)) {
    Elf64_Rela rela;
    char *first = &badType[relocations->sh_offset];
    std::memcpy(&rela, first, sizeof(rela));
    rela.r_info = ELF64_R_INFO(ELF64_R_SYM(rela.r_info), 99);
    std::memcpy(first, &rela, sizeof(rela));
    CHECK(contains(loadError(badType, {"libm_f32_cpu_entry"}),
                   "unsupported x86-64 relocation type 99"));
  }
}

/// Loads randomly corrupted objects (never running them): each load must
/// fail cleanly or succeed, never crash (run this under ASan too).
void testCorruptObjects() {
  std::mt19937 random(1234);
  int refused = 0;
  for (const char *name : {"libm_f32.o", "vec3_math.o", "reloc_pic.o"}) {
    std::vector<char> object = readObject(name);
    for (int trial = 0; trial < 300 && !object.empty(); ++trial) {
      std::vector<char> corrupt = object;
      for (int flips = 1 + random() % 4; flips > 0; --flips)
        corrupt[random() % corrupt.size()] = char(random());
      if (trial % 10 == 0)
        corrupt.resize(random() % corrupt.size());
      std::vector<uint64_t> addresses;
      std::string error;
      refused += !loadObject(corrupt.data(), corrupt.size(), {}, addresses,
                             error);
    }
  }
  std::printf("  corrupted objects: %d of 900 refused, none crashed\n",
              refused);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OBJECT_DIR (from make_test_objects.py)\n",
                 argv[0]);
    return 2;
  }
  Dir = argv[1];
  testSaxpy();
  testLibmF32();
  testLibmF64();
  testVec3Math();
  testRowSums();
  testHistogram();
  testAdjoint();
  testConcurrentLoads();
  for (const char *object :
       {"reloc_pic.o", "reloc_pic_norelax.o", "reloc_pic_debug.o",
        "reloc_large.o"})
    testRelocCoverage(object);
  testAsmRelocs();
  testErrors();
  testCorruptObjects();
  if (Failures) {
    std::fprintf(stderr, "%d check(s) failed\n", Failures);
    return 1;
  }
  std::printf("object loader: all checks passed\n");
  return 0;
}
