//===- AdjitModule.cpp - the adjit._adjit nanobind module (the compiler) --===//
//
// Registration of the dialect and passes with the upstream MLIR Python
// bindings, and what Python asks of the compiler's C++: host object code,
// the array access analysis and the names of generated symbols. Everything
// goes through the C API (adjit-c/Adjit.h). Running kernels is the job of
// the separate adjit._runtime module, which has no MLIR.
//
//===----------------------------------------------------------------------===//

#include "adjit-c/Adjit.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/Pass.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include "runtime/python/WithoutGil.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace nb = nanobind;

namespace {

/// Takes ownership of a malloc'ed C string from the C API.
std::string takeString(char *s) {
  std::string out = s ? s : "";
  std::free(s);
  return out;
}

nb::bytes compileToObject(MlirOperation module, int optLevel) {
  char *object = nullptr, *error = nullptr;
  size_t size = 0;
  int failed = adjit::withoutGil([&] {
    return adjitCompileToObject(module, optLevel, &object, &size, &error);
  });
  if (failed)
    throw std::runtime_error("CPU code generation failed: " +
                             takeString(error));
  nb::bytes result(object, size);
  std::free(object);
  return result;
}

void appendText(MlirStringRef text, void *out) {
  static_cast<std::string *>(out)->append(text.data, text.length);
}

std::string diagnosticText(MlirDiagnostic diagnostic) {
  std::string text;
  mlirDiagnosticPrint(diagnostic, appendText, &text);
  return text;
}

/// The error diagnostics of a pipeline run, kept with their locations
/// (uniqued in the context, so valid after the run).
struct CapturedErrors {
  std::mutex mutex; // (passes may run on several threads)
  std::vector<std::tuple<std::string, MlirLocation,
                         std::vector<std::pair<std::string, MlirLocation>>>>
      errors;
};

MlirLogicalResult captureError(MlirDiagnostic diagnostic, void *data) {
  if (mlirDiagnosticGetSeverity(diagnostic) != MlirDiagnosticError)
    return mlirLogicalResultFailure(); // (not handled: the next handler prints it)
  auto *captured = static_cast<CapturedErrors *>(data);
  std::vector<std::pair<std::string, MlirLocation>> notes;
  for (intptr_t i = 0, e = mlirDiagnosticGetNumNotes(diagnostic); i < e; ++i) {
    MlirDiagnostic note = mlirDiagnosticGetNote(diagnostic, i);
    notes.emplace_back(diagnosticText(note), mlirDiagnosticGetLocation(note));
  }
  std::lock_guard<std::mutex> lock(captured->mutex);
  captured->errors.emplace_back(diagnosticText(diagnostic),
                                mlirDiagnosticGetLocation(diagnostic),
                                std::move(notes));
  return mlirLogicalResultSuccess();
}

/// Runs a textual pass pipeline on `op` without holding the GIL (other
/// Python threads run meanwhile; nothing of Python is touched). Returns the
/// error diagnostics, each (message, location, [(note, location)]): empty
/// on success. A pipeline that does not parse raises ValueError.
nb::list runPipeline(MlirOperation op, const std::string &pipeline) {
  MlirContext context = mlirOperationGetContext(op);
  MlirPassManager pm = mlirPassManagerCreate(context); // (on builtin.module)
  std::string parseError;
  MlirLogicalResult parsed = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreate(pipeline.data(), pipeline.size()), appendText,
      &parseError);
  if (mlirLogicalResultIsFailure(parsed)) {
    mlirPassManagerDestroy(pm);
    throw nb::value_error(("invalid pass pipeline '" + pipeline +
                           "': " + parseError)
                              .c_str());
  }
  CapturedErrors captured;
  MlirDiagnosticHandlerID handler = mlirContextAttachDiagnosticHandler(
      context, captureError, &captured, nullptr);
  MlirLogicalResult ran = adjit::withoutGil(
      [&] { return mlirPassManagerRunOnOp(pm, op); });
  mlirContextDetachDiagnosticHandler(context, handler);
  mlirPassManagerDestroy(pm);
  nb::list out;
  for (auto &[message, location, notes] : captured.errors) {
    nb::list noteList;
    for (auto &[text, at] : notes)
      noteList.append(nb::make_tuple(text, at));
    out.append(nb::make_tuple(message, location, noteList));
  }
  if (mlirLogicalResultIsFailure(ran) && out.size() == 0)
    out.append(nb::make_tuple(std::string("the pass pipeline failed"),
                              mlirOperationGetLocation(op), nb::list()));
  return out;
}

std::vector<uint64_t>
loadObjectWithJit(nb::bytes object, const std::vector<std::string> &names,
                  const std::map<std::string, uint64_t> &symbols) {
  std::vector<const char *> cnames;
  for (const std::string &name : names)
    cnames.push_back(name.c_str());
  std::vector<const char *> symbolNames;
  std::vector<uint64_t> symbolAddresses;
  for (const auto &[name, address] : symbols) {
    symbolNames.push_back(name.c_str());
    symbolAddresses.push_back(address);
  }
  std::vector<uint64_t> addresses(names.size());
  char *error = nullptr;
  if (adjitLoadObject(object.c_str(), object.size(), cnames.data(),
                      cnames.size(), addresses.data(), symbolNames.data(),
                      symbolAddresses.data(), symbolNames.size(), &error))
    throw std::runtime_error("cannot load kernel object: " +
                             takeString(error));
  return addresses;
}

std::vector<uint32_t> kernelArgumentAccess(MlirOperation module) {
  std::vector<uint32_t> flags(64);
  size_t count = 0;
  if (adjitKernelArgumentAccess(module, flags.data(), flags.size(), &count))
    throw std::runtime_error("the module holds no adjit kernel");
  if (count > flags.size()) {
    flags.resize(count);
    adjitKernelArgumentAccess(module, flags.data(), flags.size(), &count);
  }
  flags.resize(count);
  return flags;
}

} // namespace

NB_MODULE(_adjit, m) {
  m.doc() = "adjit's compiler: MLIR registration, passes and code generation";
  // The exit handshake of withoutGil (runtime/python/WithoutGil.h), called
  // by adjit/_interrupts.py's atexit handler.
  m.def("_prepare_for_exit", &adjit::prepareForExit);

  m.def(
      "register_dialects",
      [](MlirDialectRegistry registry) { adjitRegisterDialects(registry); },
      nb::arg("registry"),
      "Adds the adjit dialect to an mlir.ir.DialectRegistry.");
  m.def(
      "register_dialect",
      [](MlirContext context, bool load) {
        MlirDialectHandle handle = mlirGetDialectHandle__adjit__();
        mlirDialectHandleRegisterDialect(handle, context);
        if (load)
          mlirDialectHandleLoadDialect(handle, context);
      },
      nb::arg("context"), nb::arg("load") = true,
      "Registers (and loads) the adjit dialect in an existing context.");
  m.def(
      "derivative_rules",
      [](MlirContext context) {
        return takeString(adjitDerivativeRules(context));
      },
      nb::arg("context"),
      "The derivative rules attached in `context`, and the ops the rule table "
      "gives one mode only (adjitDerivativeRules in adjit-c/Adjit.h).");
  m.def("register_passes", &adjitRegisterPassesAndPipelines,
        "Registers the adjit passes and stage pipelines globally.");

  m.def("run_pipeline", &runPipeline, nb::arg("op"), nb::arg("pipeline"),
        "Runs a pass pipeline ('builtin.module(...)') on `op` without the "
        "GIL; returns its error diagnostics as (message, location, notes) "
        "(empty: it succeeded).");
  m.def("compile_to_object", &compileToObject, nb::arg("module"),
        nb::arg("opt_level") = 3,
        "Compiles an LLVM-dialect module to a host object file (bytes).");
  m.def("load_object_with_jit", &loadObjectWithJit, nb::arg("object"),
        nb::arg("names"), nb::arg("symbols") = std::map<std::string, uint64_t>{},
        "Links an object into the process JIT; returns the addresses of "
        "`names` (where the runtime's own loader does not support the "
        "host). `symbols`: name -> address of functions the object calls "
        "that the process does not export (_runtime.runtime_symbols()).");
  m.def("kernel_argument_access", &kernelArgumentAccess, nb::arg("module"),
        "The array access analysis of the module's kernel: one "
        "AdjitArgumentAccess bit mask per argument.");
  m.attr("ACCESS_FLAGS") = std::map<std::string, int>{
      {"READ", AdjitAccessRead},
      {"WRITE", AdjitAccessWrite},
      {"OWN_ELEMENT", AdjitAccessOwnElement},
      {"FLOAT_MIN_MAX", AdjitAccessFloatMinMax}};
  m.attr("ATTRIBUTE_NAMES") = std::map<std::string, std::string>{
      {"kernel", adjitAttributeName(AdjitAttributeKernel)},
      {"arg_names", adjitAttributeName(AdjitAttributeArgNames)},
      {"custom_adjoint", adjitAttributeName(AdjitAttributeCustomAdjoint)},
      {"custom_tangent", adjitAttributeName(AdjitAttributeCustomTangent)},
      {"check_sites", adjitAttributeName(AdjitAttributeCheckSites)},
      {"ranged_args", adjitAttributeName(AdjitAttributeRangedArgs)},
      {"atomic_order", adjitAttributeName(AdjitAttributeAtomicOrder)}};
  m.def(
      "symbol_name",
      [](const std::string &kernel, const std::string &kind) {
        AdjitSymbolKind k;
        if (kind == "adjoint")
          k = AdjitSymbolAdjoint;
        else if (kind == "cpu_entry")
          k = AdjitSymbolCpuEntry;
        else if (kind == "gpu_module")
          k = AdjitSymbolGpuModule;
        else if (kind == "tangent")
          k = AdjitSymbolTangent;
        else
          throw nb::value_error(
              "kind is 'adjoint', 'tangent', 'cpu_entry' or 'gpu_module'");
        return takeString(adjitSymbolName(kernel.c_str(), k));
      },
      nb::arg("kernel"), nb::arg("kind"),
      "The name of a symbol the passes derive from a kernel's name.");
  m.def(
      "host_target", [] { return takeString(adjitHostTargetDescription()); },
      "triple/cpu/features LLVM compiles CPU kernels for on this machine.");
}
