//===- CpuObject.cpp - host object code for CPU kernels -------------------===//
//
// An LLVM-dialect module is translated to LLVM IR, optimized at -O3 for the
// host CPU (so loops over thread indices are vectorized with the widest SIMD
// the machine has) and emitted as a relocatable object. The runtime loads
// such objects itself (cpp/runtime/ObjectLoader.h) on x86-64; elsewhere they
// are linked into a process-wide ORC JIT here, one JITDylib per object so
// kernels of the same name never collide.
//
//===----------------------------------------------------------------------===//

#include "adjit-c/Adjit.h"

#include "mlir/CAPI/IR.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/Scalarizer.h"
#include "llvm/TargetParser/Host.h"

#include <atomic>
#include <cstring>
#include <mutex>

using namespace llvm;

namespace {

/// The scalarizer, except on kernel bodies that adjit-vectorize-threads
/// made SIMD programs (their vectors are lanes of threads, already wide).
struct ScalarizeThreadBodies : PassInfoMixin<ScalarizeThreadBodies> {
  PreservedAnalyses run(Function &fn, FunctionAnalysisManager &analyses) {
    if (fn.hasFnAttribute("adjit-simd"))
      return PreservedAnalyses::all();
    return ScalarizerPass().run(fn, analyses);
  }
};

} // namespace

namespace {

char *copyString(StringRef s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    InitializeNativeTargetAsmParser();
  });
}

std::string hostFeatures() {
  SubtargetFeatures features;
  for (auto &feature : sys::getHostCPUFeatures())
    features.AddFeature(feature.first(), feature.second);
  return features.getString();
}

std::unique_ptr<TargetMachine> createHostTargetMachine(std::string &error) {
  initializeNativeTarget();
  Triple triple(sys::getProcessTriple());
  const Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  TargetOptions options;
  return std::unique_ptr<TargetMachine>(target->createTargetMachine(
      triple, sys::getHostCPUName(), hostFeatures(), options, Reloc::PIC_,
      std::nullopt, CodeGenOptLevel::Aggressive));
}

/// The process-wide JIT that cached and fresh kernel objects are linked into.
orc::LLJIT *processJit(std::string &error) {
  static std::unique_ptr<orc::LLJIT> jit;
  static std::once_flag once;
  static std::string initError;
  std::call_once(once, [] {
    initializeNativeTarget();
    auto built = orc::LLJITBuilder().create();
    if (!built) {
      initError = toString(built.takeError());
      return;
    }
    jit = std::move(*built);
  });
  if (!jit)
    error = initError;
  return jit.get();
}

} // namespace

char *adjitHostTargetDescription(void) {
  return copyString((sys::getProcessTriple() + "/" + sys::getHostCPUName() +
                     "/" + hostFeatures())
                        .str());
}

int adjitCompileToObject(MlirOperation moduleOp, int optLevel, char **object,
                         size_t *objectSize, char **error) {
  std::string message;
  auto module = dyn_cast<mlir::ModuleOp>(unwrap(moduleOp));
  if (!module) {
    *error = copyString("expected a builtin.module");
    return 1;
  }
  mlir::DialectRegistry registry;
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  LLVMContext llvmContext;
  std::unique_ptr<Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule) {
    *error = copyString("translation of the LLVM dialect to LLVM IR failed");
    return 1;
  }
  std::unique_ptr<TargetMachine> tm = createHostTargetMachine(message);
  if (!tm) {
    *error = copyString("no host target: " + message);
    return 1;
  }
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());

  // The standard optimization pipeline (what clang -O3 runs).
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PassBuilder pb(tm.get());
  // Kernel bodies compute on small vectors (vec3, mat33 rows). Splitting them
  // into scalars just before the loop vectorizer lets it widen the loop over
  // thread indices instead: 8 or 16 threads per SIMD instruction rather than
  // one thread's 3 components. (Not the SIMD bodies of
  // adjit-vectorize-threads, which are not inlined into the entry.)
  pb.registerVectorizerStartEPCallback(
      [](FunctionPassManager &fpm, OptimizationLevel) {
        fpm.addPass(ScalarizeThreadBodies());
        fpm.addPass(InstCombinePass());
        fpm.addPass(EarlyCSEPass());
      });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  OptimizationLevel level = optLevel <= 0   ? OptimizationLevel::O0
                            : optLevel == 1 ? OptimizationLevel::O1
                            : optLevel == 2 ? OptimizationLevel::O2
                                            : OptimizationLevel::O3;
  ModulePassManager mpm = level == OptimizationLevel::O0
                              ? pb.buildO0DefaultPipeline(level)
                              : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(*llvmModule, mam);

  SmallVector<char, 0> buffer;
  raw_svector_ostream stream(buffer);
  legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, stream, nullptr,
                              CodeGenFileType::ObjectFile)) {
    *error = copyString("the host target cannot emit object files");
    return 1;
  }
  codegen.run(*llvmModule);
  *objectSize = buffer.size();
  *object = static_cast<char *>(std::malloc(buffer.size()));
  std::memcpy(*object, buffer.data(), buffer.size());
  return 0;
}

int adjitLoadObject(const char *object, size_t size, const char **names,
                    size_t numNames, uint64_t *addresses,
                    const char **symbolNames, const uint64_t *symbolAddresses,
                    size_t numSymbols, char **error) {
  std::string message;
  orc::LLJIT *jit = processJit(message);
  if (!jit) {
    *error = copyString("cannot create the JIT: " + message);
    return 1;
  }
  static std::atomic<uint64_t> counter{0};
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto dylib = jit->createJITDylib("adjit_object_" + std::to_string(counter++));
  if (!dylib) {
    *error = copyString(toString(dylib.takeError()));
    return 1;
  }
  // Kernels may call libm (sinf, expf, ...): resolve from the process.
  auto generator = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit->getDataLayout().getGlobalPrefix());
  if (!generator) {
    *error = copyString(toString(generator.takeError()));
    return 1;
  }
  dylib->addGenerator(std::move(*generator));
  orc::SymbolMap given;
  for (size_t i = 0; i < numSymbols; ++i)
    given[jit->mangleAndIntern(symbolNames[i])] = {
        orc::ExecutorAddr(symbolAddresses[i]), JITSymbolFlags::Exported};
  if (Error err = dylib->define(orc::absoluteSymbols(std::move(given)))) {
    *error = copyString(toString(std::move(err)));
    return 1;
  }
  auto buffer = MemoryBuffer::getMemBufferCopy(StringRef(object, size),
                                               "adjit-kernel-object");
  if (Error err = jit->addObjectFile(*dylib, std::move(buffer))) {
    *error = copyString(toString(std::move(err)));
    return 1;
  }
  for (size_t i = 0; i < numNames; ++i) {
    auto address = jit->lookup(*dylib, names[i]);
    if (!address) {
      *error = copyString(toString(address.takeError()));
      return 1;
    }
    addresses[i] = address->getValue();
  }
  return 0;
}
