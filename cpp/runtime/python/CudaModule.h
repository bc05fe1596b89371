//===- CudaModule.h - adjit._runtime.cuda ----------------------*- C++ -*-===//
//
// The CUDA driver layer's bindings (CudaModule.cpp), kept apart from
// RuntimeModule.cpp, which registers them with one call.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_PYTHON_CUDAMODULE_H
#define ADJIT_RUNTIME_PYTHON_CUDAMODULE_H

#include <nanobind/nanobind.h>

namespace adjit {

/// Adds the submodule `cuda` (the CUDA driver layer) to adjit._runtime.
void defCuda(nanobind::module_ &parent);

} // namespace adjit

#endif // ADJIT_RUNTIME_PYTHON_CUDAMODULE_H
