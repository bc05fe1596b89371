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

#include <atomic>
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

/// The exit handshake (per extension module). Taking the GIL back can also
/// end the thread when finalization starts while it waits for the GIL (the
/// check above comes too early then), unwinding through nanobind frames
/// whose destructors need the GIL (an abort). So an atexit handler
/// (adjit/_interrupts.py calls each module's prepareForExit; atexit
/// handlers run before finalization) raises `exiting`, then lets the threads already retaking the GIL finish;
/// later retakes park, except on the thread that runs the exit.
inline std::atomic<bool> exiting{false};
inline std::atomic<int> retaking{0};
inline std::atomic<std::thread::id> exitingThread{};

[[noreturn]] inline void parkUntilTheProcessEnds() {
  for (;;)
    std::this_thread::sleep_for(std::chrono::hours(1));
}

/// Calls fn() without the GIL and returns its result; see above.
template <typename Fn> auto withoutGil(Fn &&fn) {
  PyThreadState *state = PyEval_SaveThread();
  auto retake = [state] {
    retaking.fetch_add(1);
    if ((exiting.load() &&
         exitingThread.load() != std::this_thread::get_id()) ||
        interpreterFinalizing()) {
      retaking.fetch_sub(1);
      parkUntilTheProcessEnds();
    }
    PyEval_RestoreThread(state);
    retaking.fetch_sub(1);
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

/// The atexit half of the handshake (called with the GIL): from now on
/// other threads park instead of retaking the GIL; those already retaking
/// get it (this thread lets go of it meanwhile, at most a second).
inline void prepareForExit() {
  exitingThread.store(std::this_thread::get_id());
  exiting.store(true);
  PyThreadState *state = PyEval_SaveThread();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (retaking.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  PyEval_RestoreThread(state);
}

} // namespace adjit

#endif // ADJIT_RUNTIME_PYTHON_WITHOUTGIL_H
