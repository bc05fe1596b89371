//===- InitAll.cpp - register everything adjit provides -------------------===//
//
// The compile stages and the pipelines between them. Python owns the ordered
// list of stages (adjit/compiler/stages.py); each step between two stages is
// one pipeline registered here, so a dumped stage replays with
// `adjit-opt --<pipeline> stage.mlir`.
//
//===----------------------------------------------------------------------===//

#include "adjit/InitAll.h"
#include "adjit/Adjoint.h"
#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"
#include "adjit/Tangent.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"

#include <mutex>

using namespace mlir;

void mlir::adjit::registerAdjitDialects(DialectRegistry &registry) {
  registry.insert<AdjitDialect, func::FuncDialect, math::MathDialect>();
  registerAdjointRules(registry);
  registerTangentRules(registry);
}

namespace {

/// Appends a textual pipeline of upstream and adjit passes to `pm`.
void appendPipeline(OpPassManager &pm, StringRef pipeline) {
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error(
        llvm::Twine("adjit: cannot build pipeline: ") + pipeline);
}

struct LowerCpuOptions : public PassPipelineOptions<LowerCpuOptions> {
  Option<bool> noalias{*this, "noalias",
                       llvm::cl::desc("Promise that array arguments of a "
                                      "launch do not overlap"),
                       llvm::cl::init(false)};
  Option<bool> allChecked{
      *this, "all-checked",
      llvm::cl::desc("Compile for launch conditions that do not hold"),
      llvm::cl::init(false)};
  Option<bool> stridedArrays{
      *this, "strided-arrays",
      llvm::cl::desc("Arrays may have any element strides (views)"),
      llvm::cl::init(false)};
};

struct CheckOptions : public PassPipelineOptions<CheckOptions> {
  Option<bool> bounds{*this, "bounds",
                      llvm::cl::desc("Check that array indices are in range"),
                      llvm::cl::init(true)};
  Option<bool> finite{*this, "finite",
                      llvm::cl::desc("Report NaN or infinity stored"),
                      llvm::cl::init(false)};
};

struct DifferentiateOptions : public PassPipelineOptions<DifferentiateOptions> {
  Option<int64_t> checkpointBytes{
      *this, "checkpoint-bytes",
      llvm::cl::desc("Per-thread bytes of loop states a loop reversal may "
                     "keep (see adjit-adjoint)"),
      llvm::cl::init(0)};
  Option<unsigned> lanes{*this, "lanes",
                         llvm::cl::desc("Adjoints (seeds) per float value "
                                        "(see adjit-adjoint)"),
                         llvm::cl::init(1)};
};

struct DifferentiateForwardOptions
    : public PassPipelineOptions<DifferentiateForwardOptions> {
  Option<unsigned> lanes{*this, "lanes",
                         llvm::cl::desc("Tangents (seed directions) per float "
                                        "value (see adjit-tangent)"),
                         llvm::cl::init(1)};
};

struct CpuToLlvmOptions : public PassPipelineOptions<CpuToLlvmOptions> {
  Option<bool> orderedAtomics{
      *this, "ordered-atomics",
      llvm::cl::desc("Route float atomic adds through the runtime, which "
                     "applies them in thread order (adjit-defer-float-atomics)"),
      llvm::cl::init(true)};
};

struct LowerGpuOptions : public PassPipelineOptions<LowerGpuOptions> {
  Option<bool> noalias{*this, "noalias",
                       llvm::cl::desc("Promise that array arguments of a "
                                      "launch do not overlap"),
                       llvm::cl::init(false)};
};

struct GpuToPtxOptions : public PassPipelineOptions<GpuToPtxOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("The SM to generate PTX for"),
                           llvm::cl::init("sm_80")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features, e.g. +ptx80"),
                               llvm::cl::init("+ptx80")};
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("LLVM optimization level"),
                            llvm::cl::init(3)};
};

void registerPipelines() {
  PassPipelineRegistration<>(
      "adjit-optimize",
      "Stage adjit -> optimized: inline device functions (all but those "
      "with a custom adjoint), expand gradients of device functions "
      "(wp.grad), simplify (canonicalize, cse) and record the array access "
      "analysis on kernels",
      [](OpPassManager &pm) {
        appendPipeline(pm, "inline,adjit-expand-grad-calls,inline,canonicalize,"
                           "cse,adjit-array-access");
      });
  PassPipelineRegistration<DifferentiateOptions>(
      "adjit-differentiate",
      "Stage optimized -> adjoint: inline device functions and replace each "
      "kernel by its adjoint kernel",
      [](OpPassManager &pm, const DifferentiateOptions &options) {
        appendPipeline(pm, "inline,adjit-adjoint{keep-primal=false "
                           "checkpoint-bytes=" +
                               std::to_string(options.checkpointBytes) +
                               " lanes=" + std::to_string(options.lanes) +
                               "},canonicalize,cse");
      });
  PassPipelineRegistration<DifferentiateForwardOptions>(
      "adjit-differentiate-forward",
      "Stage optimized (or adjoint) -> tangent: inline device functions and "
      "replace each kernel by its forward-mode tangent kernel",
      [](OpPassManager &pm, const DifferentiateForwardOptions &options) {
        appendPipeline(pm, "inline,adjit-tangent{keep-primal=false lanes=" +
                               std::to_string(options.lanes) +
                               "},canonicalize,cse");
      });
  PassPipelineRegistration<CheckOptions>(
      "adjit-check",
      "Stage optimized or adjoint -> checked: guard every array access with "
      "a range check (proved once per launch where possible) and, with "
      "finite, report non-finite values stored",
      [](OpPassManager &pm, const CheckOptions &options) {
        appendPipeline(pm, std::string("adjit-access-checks{bounds=") +
                               (options.bounds ? "true" : "false") +
                               " finite=" + (options.finite ? "true" : "false") +
                               "},canonicalize,cse");
      });
  PassPipelineRegistration<LowerCpuOptions>(
      "adjit-lower-cpu",
      "Stage optimized -> cpu: decide how each kernel's atomics are ordered, "
      "lower arrays to memrefs and wrap kernels in packed CPU entry points",
      [](OpPassManager &pm, const LowerCpuOptions &options) {
        appendPipeline(pm, std::string("adjit-atomic-order,adjit-lower-to-std{"
                                       "strided-arrays=") +
                               (options.stridedArrays ? "true" : "false") +
                               "},adjit-cpu-launch{noalias=" +
                               (options.noalias ? "true" : "false") +
                               " all-checked=" +
                               (options.allChecked ? "true" : "false") +
                               "},canonicalize,cse");
      });
  PassPipelineRegistration<CpuToLlvmOptions>(
      "adjit-cpu-to-llvm",
      "Stage cpu -> llvm: lower everything to the LLVM dialect; with "
      "ordered-atomics (the default), float atomic adds become calls the "
      "runtime orders",
      [](OpPassManager &pm, const CpuToLlvmOptions &options) {
        // Math ops with an LLVM intrinsic become intrinsics (vectorizable);
        // the rest become libm calls, resolved from the process at load.
        // bf16 math ops are done in f32, and each explicit conversion to
        // bf16 is expanded into integer ops rounding to nearest even (the x86
        // backend's f32 -> bf16 conversion flushes subnormals to zero). bf16
        // + - * / stay bf16 ops the backend promotes one at a time (rounding
        // after each, as Warp; arith-emulate-unsupported-floats would keep
        // chains in f32).
        appendPipeline(pm, std::string("convert-scf-to-cf,"
                                       "math-extend-to-supported-types{"
                                       "extra-types=f16 target-type=f32},"
                                       "arith-expand{include-bf16=true},"
                                       "convert-math-to-llvm,"
                                       "convert-math-to-libm,convert-vector-to-llvm,"
                                       "convert-to-llvm,reconcile-unrealized-casts,"
                                       "adjit-apply-noalias") +
                               (options.orderedAtomics ? ",adjit-defer-float-atomics" : ""));
      });
  PassPipelineRegistration<LowerGpuOptions>(
      "adjit-lower-gpu",
      "Stage optimized -> gpu: lower arrays to memrefs, move kernels into "
      "gpu.module kernels and merge adjacent dynamic stack buffers",
      [](OpPassManager &pm, const LowerGpuOptions &options) {
        appendPipeline(pm, std::string("adjit-lower-to-std,adjit-gpu-launch{"
                                       "noalias=") +
                               (options.noalias ? "true" : "false") +
                               "},canonicalize,cse,adjit-merge-stack-buffers,"
                               "canonicalize,cse");
      });
  PassPipelineRegistration<GpuToPtxOptions>(
      "adjit-gpu-to-ptx",
      "Stage gpu -> ptx: lower gpu.modules through NVVM to PTX in gpu.binary ops",
      [](OpPassManager &pm, const GpuToPtxOptions &options) {
        appendPipeline(pm, (llvm::Twine("nvvm-attach-target{chip=") +
                            options.chip + " features=" + options.features +
                            " O=" + llvm::Twine(options.optLevel) +
                            "},gpu.module(convert-scf-to-cf,convert-vector-to-llvm,"
                            "convert-gpu-to-nvvm,"
                            // math ops without a libdevice function (ctpop,
                            // absi): LLVM intrinsics
                            "convert-math-to-llvm,"
                            "canonicalize,cse),reconcile-unrealized-casts,"
                            "adjit-apply-noalias,gpu-module-to-binary{format=isa}")
                               .str());
      });
}

} // namespace

void mlir::adjit::registerAdjitPassesAndPipelines() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAdjitPasses();
    registerPipelines();
  });
}
