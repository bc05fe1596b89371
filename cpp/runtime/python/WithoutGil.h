//===- WithoutGil.h - running C++ without the GIL, safe at exit -*- C++ -*-===//
//
// nb::gil_scoped_release takes the GIL back in its destructor. When the
// interpreter is finalizing, PyEval_RestoreThread ends the calling (daemon)
// thread by unwinding it, and unwinding out of a destructor terminates the
// process ("terminate called without an active exception"): a program that
// exited while a daemon thread was in a launch, a backward pass or a compile
// aborted. withoutGil takes the GIL back in normal flow, and once the
// interpreter is finalizing not at all: the thread parks until the process
// ends (what Python 3.14 does itself).
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_PYTHON_WITHOUTGIL_H
#define ADJIT_RUNTIME_PYTHON_WITHOUTGIL_H

#include <Python.h>

#include <chrono>
#include <thread>
#include <type_traits>
#include <utility>

namespace adjit {

inline bool interpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/// Calls fn() without the GIL and returns its result; see above.
template <typename Fn> auto withoutGil(Fn &&fn) {
  PyThreadState *state = PyEval_SaveThread();
  auto retake = [state] {
    while (interpreterFinalizing())
      std::this_thread::sleep_for(std::chrono::hours(1));
    PyEval_RestoreThread(state);
  };
  using Result = decltype(std::forward<Fn>(fn)());
  try {
    if constexpr (std::is_void_v<Result>) {
      std::forward<Fn>(fn)();
      retake();
    } else {
      Result result = std::forward<Fn>(fn)();
      retake();
      return result;
    }
  } catch (...) {
    retake();
    throw;
  }
}

} // namespace adjit

#endif // ADJIT_RUNTIME_PYTHON_WITHOUTGIL_H
