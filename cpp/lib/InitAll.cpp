//===- InitAll.cpp - register everything adjit provides -------------------===//
//
// The compile stages and the pipelines between them. Python owns the ordered
// list of stages (adjit/compiler/stages.py); each step between two stages is
// one pipeline registered here, so a dumped stage replays with
// `adjit-opt --<pipeline> stage.mlir`. Each pipeline is built by a
// build*Pipeline function from its typed options (a PassPipelineOptions),
// which become the typed options of its passes.
//
//===----------------------------------------------------------------------===//

#include "adjit/InitAll.h"
#include "adjit/Adjoint.h"
#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"
#include "adjit/Tangent.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

using namespace mlir;
using namespace mlir::adjit;

void mlir::adjit::registerAdjitDialects(DialectRegistry &registry) {
  registry.insert<AdjitDialect, func::FuncDialect, math::MathDialect>();
  registerAdjointRules(registry);
  registerTangentRules(registry);
}

namespace {

/// canonicalize, cse: the clean-up after most steps.
void addCleanup(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void buildOptimizePipeline(OpPassManager &pm) {
  pm.addPass(createInlinerPass());
  pm.addPass(createAdjitExpandGradCalls());
  pm.addPass(createInlinerPass());
  addCleanup(pm);
  pm.addPass(createAdjitArrayAccess());
}

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

void buildDifferentiatePipeline(OpPassManager &pm,
                                const DifferentiateOptions &options) {
  pm.addPass(createInlinerPass());
  AdjitAdjointOptions adjoint;
  adjoint.keepPrimal = false;
  adjoint.checkpointBytes = options.checkpointBytes;
  adjoint.lanes = options.lanes;
  pm.addPass(createAdjitAdjoint(adjoint));
  addCleanup(pm);
}

struct DifferentiateForwardOptions
    : public PassPipelineOptions<DifferentiateForwardOptions> {
  Option<unsigned> lanes{*this, "lanes",
                         llvm::cl::desc("Tangents (seed directions) per float "
                                        "value (see adjit-tangent)"),
                         llvm::cl::init(1)};
};

void buildDifferentiateForwardPipeline(
    OpPassManager &pm, const DifferentiateForwardOptions &options) {
  pm.addPass(createInlinerPass());
  AdjitTangentOptions tangent;
  tangent.keepPrimal = false;
  tangent.lanes = options.lanes;
  pm.addPass(createAdjitTangent(tangent));
  addCleanup(pm);
}

struct CheckOptions : public PassPipelineOptions<CheckOptions> {
  Option<bool> bounds{*this, "bounds",
                      llvm::cl::desc("Check that array indices are in range"),
                      llvm::cl::init(true)};
  Option<bool> finite{*this, "finite",
                      llvm::cl::desc("Report NaN or infinity stored"),
                      llvm::cl::init(false)};
};

void buildCheckPipeline(OpPassManager &pm, const CheckOptions &options) {
  AdjitAccessChecksOptions checks;
  checks.bounds = options.bounds;
  checks.finite = options.finite;
  pm.addPass(createAdjitAccessChecks(checks));
  addCleanup(pm);
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
  Option<unsigned> simdWidth{
      *this, "simd-width",
      llvm::cl::desc("Run kernel bodies as SIMD programs over this many "
                     "threads (adjit-vectorize-threads; with noalias only)"),
      llvm::cl::init(0)};
};

void buildLowerCpuPipeline(OpPassManager &pm, const LowerCpuOptions &options) {
  pm.addPass(createAdjitAtomicOrder());
  AdjitLowerToStdOptions toStd;
  toStd.stridedArrays = options.stridedArrays;
  pm.addPass(createAdjitLowerToStd(toStd));
  AdjitCpuLaunchOptions launch;
  launch.noalias = options.noalias;
  launch.allChecked = options.allChecked;
  pm.addPass(createAdjitCpuLaunch(launch));
  addCleanup(pm);
  if (options.noalias && options.simdWidth > 1) {
    // (after the cleanup, which folds the checks the launch condition proved)
    AdjitVectorizeThreadsOptions simd;
    simd.width = options.simdWidth;
    pm.addPass(createAdjitVectorizeThreads(simd));
    addCleanup(pm);
  }
}

/// Vector to LLVM: matrix products (tile_matmul's vector.contract) become
/// outer products, one FMA of a broadcast element and a row per step (the
/// default lowers each result element to a dot product and reduction).
ConvertVectorToLLVMPassOptions vectorToLLVMOptions() {
  ConvertVectorToLLVMPassOptions options;
  options.vectorContractLowering = vector::VectorContractLowering::OuterProduct;
  return options;
}

struct CpuToLlvmOptions : public PassPipelineOptions<CpuToLlvmOptions> {
  Option<bool> orderedAtomics{
      *this, "ordered-atomics",
      llvm::cl::desc("Route float atomic adds through the runtime, which "
                     "applies them in thread order (adjit-defer-float-atomics)"),
      llvm::cl::init(true)};
  Option<bool> fastMath{
      *this, "fast-math",
      llvm::cl::desc("Inline polynomial code for f32 transcendental math "
                     "instead of libm calls (adjit-approximate-math)"),
      llvm::cl::init(false)};
};

void buildCpuToLlvmPipeline(OpPassManager &pm,
                            const CpuToLlvmOptions &options) {
  // Math ops with an LLVM intrinsic become intrinsics (vectorizable); the
  // rest become libm calls, resolved from the process at load. bf16 math
  // ops are done in f32, and each explicit conversion to bf16 is expanded
  // into integer ops rounding to nearest even (the x86 backend's f32 -> bf16
  // conversion flushes subnormals to zero). bf16 + - * / stay bf16 ops the
  // backend promotes one at a time (rounding after each, as Warp;
  // arith-emulate-unsupported-floats would keep chains in f32).
  math::MathExtendToSupportedTypesOptions extend;
  extend.extraTypeStrs = {"f16"};
  extend.targetTypeStr = "f32";
  pm.addPass(math::createMathExtendToSupportedTypes(extend));
  if (options.fastMath) // (before the scf lowering: sin/cos branch to libm)
    pm.addPass(createAdjitApproximateMath());
  pm.addPass(createSCFToControlFlowPass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVMOptions()));
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createAdjitApplyNoAlias());
  if (options.orderedAtomics)
    pm.addPass(createAdjitDeferFloatAtomics());
}

struct LowerGpuOptions : public PassPipelineOptions<LowerGpuOptions> {
  Option<bool> noalias{*this, "noalias",
                       llvm::cl::desc("Promise that array arguments of a "
                                      "launch do not overlap"),
                       llvm::cl::init(false)};
  Option<bool> stridedArrays{
      *this, "strided-arrays",
      llvm::cl::desc("Arrays may have any element strides (views)"),
      llvm::cl::init(false)};
};

void buildLowerGpuPipeline(OpPassManager &pm, const LowerGpuOptions &options) {
  AdjitLowerToStdOptions toStd;
  toStd.stridedArrays = options.stridedArrays;
  pm.addPass(createAdjitLowerToStd(toStd));
  AdjitGpuLaunchOptions launch;
  launch.noalias = options.noalias;
  pm.addPass(createAdjitGpuLaunch(launch));
  addCleanup(pm);
  pm.addPass(createAdjitMergeStackBuffers());
  pm.addPass(createAdjitGpuLoopBuffers());
  addCleanup(pm);
}

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

void buildGpuToPtxPipeline(OpPassManager &pm, const GpuToPtxOptions &options) {
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &gpuModule = pm.nest<gpu::GPUModuleOp>();
  gpuModule.addPass(createSCFToControlFlowPass());
  gpuModule.addPass(createConvertVectorToLLVMPass(vectorToLLVMOptions()));
  gpuModule.addPass(createConvertGpuOpsToNVVMOps());
  // Math ops without a libdevice function (ctpop, absi): LLVM intrinsics.
  gpuModule.addPass(createConvertMathToLLVMPass());
  addCleanup(gpuModule);
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createAdjitApplyNoAlias());
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
}

void registerPipelines() {
  PassPipelineRegistration<>(
      "adjit-optimize",
      "Stage adjit -> optimized: inline device functions (all but those "
      "with a custom adjoint), expand gradients of device functions "
      "(wp.grad), simplify (canonicalize, cse) and record the array access "
      "analysis on kernels",
      buildOptimizePipeline);
  PassPipelineRegistration<DifferentiateOptions>(
      "adjit-differentiate",
      "Stage optimized -> adjoint: inline device functions and replace each "
      "kernel by its adjoint kernel",
      buildDifferentiatePipeline);
  PassPipelineRegistration<DifferentiateForwardOptions>(
      "adjit-differentiate-forward",
      "Stage optimized (or adjoint) -> tangent: inline device functions and "
      "replace each kernel by its forward-mode tangent kernel",
      buildDifferentiateForwardPipeline);
  PassPipelineRegistration<CheckOptions>(
      "adjit-check",
      "Stage optimized or adjoint -> checked: guard every array access with "
      "a range check (proved once per launch where possible) and, with "
      "finite, report non-finite values stored",
      buildCheckPipeline);
  PassPipelineRegistration<LowerCpuOptions>(
      "adjit-lower-cpu",
      "Stage optimized -> cpu: decide how each kernel's atomics are ordered, "
      "lower arrays to memrefs and wrap kernels in packed CPU entry points",
      buildLowerCpuPipeline);
  PassPipelineRegistration<CpuToLlvmOptions>(
      "adjit-cpu-to-llvm",
      "Stage cpu -> llvm: lower everything to the LLVM dialect; with "
      "ordered-atomics (the default), float atomic adds become calls the "
      "runtime orders",
      buildCpuToLlvmPipeline);
  PassPipelineRegistration<LowerGpuOptions>(
      "adjit-lower-gpu",
      "Stage optimized -> gpu: lower arrays to memrefs, move kernels into "
      "gpu.module kernels and merge adjacent dynamic stack buffers",
      buildLowerGpuPipeline);
  PassPipelineRegistration<GpuToPtxOptions>(
      "adjit-gpu-to-ptx",
      "Stage gpu -> ptx: lower gpu.modules through NVVM to PTX in gpu.binary ops",
      buildGpuToPtxPipeline);
}

} // namespace

void mlir::adjit::registerAdjitPassesAndPipelines() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAdjitPasses();
    registerPipelines();
  });
}
