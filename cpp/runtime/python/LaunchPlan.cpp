//===- LaunchPlan.cpp - the CPU launch fast path: one C++ call ------------===//
//
// A LaunchPlan is made by adjit.backends.cpu after a launch of a kernel ran
// through the general path: it remembers that launch's variant and the kind
// of each argument (an adjit Array of one dtype and rank, C-contiguous and
// writable; or a float32/float64/int32/int64/bool value). A later launch
// whose arguments are of the same kinds and whose arrays do not overlap is
// checked, packed and run here in one call. Anything else, or any doubt,
// is declined before anything happened (run() returns False) and the
// general path runs the launch with its full checks and its error messages.
//
//===----------------------------------------------------------------------===//

#include "LaunchPlan.h"

#include "CpuLaunch.h"
#include "KernelArgs.h"
#include "ThreadPool.h"
#include "WithoutGil.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;
using namespace adjit::runtime;

namespace {

/// Launch extents a plan takes (larger launches: the general path, which
/// also checks a linear int32 tid()).
constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();
/// An ordered kernel's launch of fewer threads runs serially (as
/// adjit.backends.cpu decides; larger ones: the general path, which times
/// both orders).
constexpr int64_t kOrderedMinThreads = int64_t(1) << 16;
/// Arguments a plan takes.
constexpr size_t kMaxPlanArgs = 64;

enum class Kind { Array, Float32, Float64, Int32, Int64, Bool };

Kind kindNamed(const std::string &name) {
  static const std::pair<const char *, Kind> kinds[] = {
      {"array", Kind::Array},   {"float32", Kind::Float32},
      {"float64", Kind::Float64}, {"int32", Kind::Int32},
      {"int64", Kind::Int64},   {"bool", Kind::Bool}};
  for (const auto &[spelling, kind] : kinds)
    if (name == spelling)
      return kind;
  throw nb::value_error(("LaunchPlan: unknown argument kind " + name).c_str());
}

struct Param {
  Kind kind;
  // Arrays: the Array's dtype (compared by identity only, never used: the
  // caller keeps it alive), its buffer's buffer protocol format and rank
  // (component dimensions included), and whether the kernel writes it (its
  // version is bumped).
  PyObject *dtype = nullptr;
  std::string format;
  int ndim = 0;
  bool written = false;
};

/// The buffers of a launch's arrays, released when the launch is over.
class HeldBuffers {
public:
  ~HeldBuffers() {
    for (size_t i = 0; i < count; ++i)
      PyBuffer_Release(&views[i]);
  }
  /// The buffer of `object`, writable and with strides; nullptr (no error
  /// set) if it has none.
  Py_buffer *take(PyObject *object) {
    Py_buffer *view = &views[count];
    if (PyObject_GetBuffer(object, view, PyBUF_STRIDES | PyBUF_FORMAT | PyBUF_WRITABLE) != 0) {
      PyErr_Clear();
      return nullptr;
    }
    ++count;
    return view;
  }

private:
  Py_buffer views[kMaxPlanArgs];
  size_t count = 0;
};

/// `value` as a double if it is exactly a Python float or int that fits.
bool asDouble(PyObject *value, double &out) {
  if (PyFloat_CheckExact(value)) {
    out = PyFloat_AS_DOUBLE(value);
    return true;
  }
  if (PyLong_CheckExact(value)) {
    out = PyLong_AsDouble(value);
    if (out == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    return true;
  }
  return false;
}

/// `value` as an integer in [low, high] if it is exactly a Python int.
bool asInteger(PyObject *value, int64_t low, int64_t high, int64_t &out) {
  if (!PyLong_CheckExact(value))
    return false;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  if (v < low || v > high)
    return false;
  out = v;
  return true;
}

/// The launch extents of `dim` (an int or a tuple of 1-4 ints), each in
/// [0, kMaxExtent], with at most kMaxExtent threads in all.
bool launchShape(PyObject *dim, int64_t shape[4], int64_t &total) {
  std::fill(shape, shape + 4, int64_t(1));
  if (PyLong_CheckExact(dim)) {
    if (!asInteger(dim, 0, kMaxExtent, shape[0]))
      return false;
    total = shape[0];
    return true;
  }
  if (!PyTuple_CheckExact(dim) || PyTuple_GET_SIZE(dim) < 1 ||
      PyTuple_GET_SIZE(dim) > 4)
    return false;
  total = 1;
  for (Py_ssize_t d = 0; d < PyTuple_GET_SIZE(dim); ++d) {
    if (!asInteger(PyTuple_GET_ITEM(dim, d), 0, kMaxExtent, shape[d]))
      return false;
    total *= shape[d];
    if (total > kMaxExtent)
      return false;
  }
  return true;
}

} // namespace

namespace adjit {

class LaunchPlan {
public:
  LaunchPlan(uintptr_t entry, int atomicOrder, nb::type_object arrayType,
             nb::type_object ndarrayType, nb::list params)
      : entry_(entry), arrayType_(arrayType.ptr()), ndarrayType_(ndarrayType.ptr()) {
    if (atomicOrder < 0 || atomicOrder > int(AtomicOrder::Serial))
      throw nb::value_error("LaunchPlan: atomic_order is one of ATOMIC_ORDERS' values");
    atomicOrder_ = AtomicOrder(atomicOrder);
    if (nb::len(params) > kMaxPlanArgs)
      throw nb::value_error("LaunchPlan: too many arguments");
    for (nb::handle p : params) {
      nb::tuple spec = nb::cast<nb::tuple>(p);
      Param param;
      param.kind = kindNamed(nb::cast<std::string>(spec[0]));
      if (param.kind == Kind::Array) {
        if (spec.size() != 5)
          throw nb::value_error("LaunchPlan: an array is (\"array\", dtype, format, ndim, written)");
        param.dtype = spec[1].ptr();
        param.format = nb::cast<std::string>(spec[2]);
        param.ndim = nb::cast<int>(spec[3]);
        param.written = nb::cast<bool>(spec[4]);
        if (param.ndim < 1 || param.ndim > int(kMaxArrayRank))
          throw nb::value_error("LaunchPlan: array rank out of range");
      }
      params_.push_back(std::move(param));
    }
  }

  /// Runs a launch of `dim` with the arguments `inputs` + `outputs` (lists
  /// or tuples). Returns False if the plan does not fit them (nothing was
  /// done), None once the launch ran, or its first failed check as
  /// launch_cpu reports it.
  nb::object run(nb::handle dim, nb::handle inputs, nb::handle outputs) {
    int64_t shape[4], total = 0;
    if (!launchShape(dim.ptr(), shape, total))
      return nb::bool_(false);
    AtomicOrder order = atomicOrder_;
    if (order == AtomicOrder::Ordered) {
      if (total >= kOrderedMinThreads && ThreadPool::global().numThreads() > 1)
        return nb::bool_(false);
      order = AtomicOrder::Serial;
    }
    PyObject *const *in = nullptr, *const *out = nullptr;
    Py_ssize_t nIn = 0, nOut = 0;
    if (!items(inputs.ptr(), in, nIn) || !items(outputs.ptr(), out, nOut) ||
        size_t(nIn + nOut) != params_.size())
      return nb::bool_(false);

    ArgSlot slots[kMaxPlanArgs];
    void *pointers[kMaxPlanArgs];
    std::pair<uintptr_t, uintptr_t> spans[kMaxPlanArgs];
    PyObject *writtenArrays[kMaxPlanArgs];
    size_t nSpans = 0, nWritten = 0;
    HeldBuffers buffers;
    for (size_t i = 0; i < params_.size(); ++i) {
      PyObject *arg = Py_ssize_t(i) < nIn ? in[i] : out[i - nIn];
      const Param &param = params_[i];
      pointers[i] = slots[i].bytes;
      if (param.kind == Kind::Array) {
        Py_buffer *view = arrayBuffer(arg, param, buffers);
        if (view == nullptr)
          return nb::bool_(false);
        auto *desc = reinterpret_cast<MemRefDescriptor *>(slots[i].bytes);
        desc->allocated = desc->aligned = view->buf;
        desc->offset = 0;
        for (int d = 0; d < param.ndim; ++d) {
          desc->sizesAndStrides[d] = view->shape[d];
          desc->sizesAndStrides[param.ndim + d] = view->strides[d] / view->itemsize;
        }
        if (view->len > 0) {
          auto begin = reinterpret_cast<uintptr_t>(view->buf);
          spans[nSpans++] = {begin, begin + uintptr_t(view->len)};
        }
        if (param.written)
          writtenArrays[nWritten++] = arg;
        continue;
      }
      if (!packValue(arg, param.kind, slots[i].bytes))
        return nb::bool_(false);
    }
    // The variant was compiled for arrays that do not overlap.
    for (size_t a = 0; a < nSpans; ++a)
      for (size_t b = a + 1; b < nSpans; ++b)
        if (spans[a].first < spans[b].second && spans[b].first < spans[a].second)
          return nb::bool_(false);
    // Every check passed: the arrays written get new versions (as the
    // general path does before it runs a launch).
    for (size_t w = 0; w < nWritten; ++w)
      if (!bumpVersion(writtenArrays[w]))
        throw nb::python_error();

    ErrorRecord record{};
    adjit::withoutGil([&] {
      launchCpu(reinterpret_cast<CpuEntry>(entry_), pointers, shape, total,
                &record, order);
      std::fflush(stdout);
    });
    if (record.site == 0)
      return nb::none();
    if (record.site == kLaunchUnproven)
      return nb::bool_(false); // nothing ran: the general path runs the all-checked variant
    auto words = [](const int64_t(&w)[AdjitRecordMaxRank]) {
      return nb::make_tuple(w[0], w[1], w[2], w[3]);
    };
    return nb::make_tuple(record.site - 1, record.thread, words(record.index),
                          words(record.size));
  }

private:
  static bool items(PyObject *sequence, PyObject *const *&items, Py_ssize_t &n) {
    if (PyList_CheckExact(sequence)) {
      items = &PyList_GET_ITEM(sequence, 0);
      n = PyList_GET_SIZE(sequence);
      return true;
    }
    if (PyTuple_CheckExact(sequence)) {
      items = &PyTuple_GET_ITEM(sequence, 0);
      n = PyTuple_GET_SIZE(sequence);
      return true;
    }
    return false;
  }

  /// The held buffer of `arg` if it is an adjit Array of the plan's dtype
  /// whose buffer is a C-contiguous, writable numpy array of its format
  /// and rank; else nullptr.
  Py_buffer *arrayBuffer(PyObject *arg, const Param &param, HeldBuffers &buffers) const {
    if (Py_TYPE(arg) != reinterpret_cast<PyTypeObject *>(arrayType_))
      return nullptr;
    static PyObject *bufferName = PyUnicode_InternFromString("_buffer");
    static PyObject *dtypeName = PyUnicode_InternFromString("dtype");
    nb::object dtype = nb::steal(PyObject_GetAttr(arg, dtypeName));
    if (!dtype.is_valid()) {
      PyErr_Clear();
      return nullptr;
    }
    if (dtype.ptr() != param.dtype)
      return nullptr;
    nb::object buffer = nb::steal(PyObject_GetAttr(arg, bufferName));
    if (!buffer.is_valid()) {
      PyErr_Clear();
      return nullptr;
    }
    if (Py_TYPE(buffer.ptr()) != reinterpret_cast<PyTypeObject *>(ndarrayType_))
      return nullptr;
    Py_buffer *view = buffers.take(buffer.ptr());
    // (the held view keeps the buffer's memory alive; the Array keeps the
    // buffer object)
    if (view == nullptr || view->ndim != param.ndim || view->format == nullptr ||
        param.format != view->format || !PyBuffer_IsContiguous(view, 'C'))
      return nullptr;
    return view;
  }

  static bool packValue(PyObject *value, Kind kind, unsigned char *slot) {
    switch (kind) {
    case Kind::Float32: {
      double v;
      if (!asDouble(value, v))
        return false;
      float f = float(v);
      if (std::isfinite(v) && !std::isfinite(f))
        return false; // out of float32's range: the general path says so
      std::memcpy(slot, &f, sizeof f);
      return true;
    }
    case Kind::Float64: {
      double v;
      if (!asDouble(value, v))
        return false;
      std::memcpy(slot, &v, sizeof v);
      return true;
    }
    case Kind::Int32: {
      int64_t v;
      if (!asInteger(value, std::numeric_limits<int32_t>::min(),
                     std::numeric_limits<int32_t>::max(), v))
        return false;
      int32_t i = int32_t(v);
      std::memcpy(slot, &i, sizeof i);
      return true;
    }
    case Kind::Int64: {
      int64_t v;
      if (!asInteger(value, std::numeric_limits<int64_t>::min(),
                     std::numeric_limits<int64_t>::max(), v))
        return false;
      std::memcpy(slot, &v, sizeof v);
      return true;
    }
    case Kind::Bool:
      if (value != Py_True && value != Py_False)
        return false;
      slot[0] = value == Py_True;
      return true;
    case Kind::Array:
      break;
    }
    return false;
  }

  /// array._storage.version += 1
  static bool bumpVersion(PyObject *array) {
    static PyObject *storageName = PyUnicode_InternFromString("_storage");
    static PyObject *versionName = PyUnicode_InternFromString("version");
    nb::object storage = nb::steal(PyObject_GetAttr(array, storageName));
    if (!storage.is_valid())
      return false;
    nb::object version = nb::steal(PyObject_GetAttr(storage.ptr(), versionName));
    if (!version.is_valid())
      return false;
    nb::object next = nb::steal(PyNumber_Add(version.ptr(), nb::int_(1).ptr()));
    return next.is_valid() && PyObject_SetAttr(storage.ptr(), versionName, next.ptr()) == 0;
  }

  uintptr_t entry_;
  AtomicOrder atomicOrder_;
  // Compared by identity only; the caller keeps them (and the dtypes) alive.
  // (A plan holds no reference: a dtype's class can reach the kernel that
  // holds the plan, a cycle the garbage collector could not see through C++.)
  PyObject *arrayType_, *ndarrayType_;
  std::vector<Param> params_;
};

void defLaunchPlan(nb::module_ &m) {
  nb::class_<LaunchPlan>(
      m, "LaunchPlan",
      "The fast path of CPU launches of one kernel variant with arguments of "
      "fixed kinds (adjit.backends.cpu makes them).")
      .def(nb::init<uintptr_t, int, nb::type_object, nb::type_object, nb::list>(),
           nb::arg("entry"), nb::arg("atomic_order"), nb::arg("array_type"),
           nb::arg("ndarray_type"), nb::arg("params"),
           "params: per argument (\"array\", dtype, buffer format, buffer "
           "rank, written) or (\"float32\"|\"float64\"|\"int32\"|\"int64\"|"
           "\"bool\",). The caller keeps `entry`'s code loaded, and the "
           "types and dtypes alive, while the plan is used.")
      .def("run", &LaunchPlan::run, nb::arg("dim"), nb::arg("inputs"),
           nb::arg("outputs"),
           "Runs a launch if the plan fits its arguments: False if it does "
           "not (nothing was done), None once it ran, or its first failed "
           "check as launch_cpu returns it.");
}

} // namespace adjit
