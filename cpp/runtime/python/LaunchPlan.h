//===- LaunchPlan.h - adjit._runtime.LaunchPlan ----------------*- C++ -*-===//
//
// The CPU launch fast path (LaunchPlan.cpp), registered by RuntimeModule.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_PYTHON_LAUNCHPLAN_H
#define ADJIT_RUNTIME_PYTHON_LAUNCHPLAN_H

#include <nanobind/nanobind.h>

namespace adjit {

/// Adds the class LaunchPlan to adjit._runtime.
void defLaunchPlan(nanobind::module_ &m);

} // namespace adjit

#endif // ADJIT_RUNTIME_PYTHON_LAUNCHPLAN_H
