//===- Jit.cpp - JIT-compile and call a lowered function ------------------===//

#include "attn-opt/Runtime/JIT/Jit.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace mlir::attn;

JitFunction::~JitFunction() = default;

llvm::Expected<std::unique_ptr<JitFunction>>
JitFunction::compile(ModuleOp module, llvm::StringRef name,
                     llvm::ArrayRef<std::string> sharedLibs,
                     llvm::ArrayRef<std::pair<std::string, void *>> symbols) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;

  // Target the host CPU with all its features (AVX-512 where present).
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = builder->createTargetMachine();
  if (!tm)
    return tm.takeError();

  SmallVector<StringRef> libs(sharedLibs.begin(), sharedLibs.end());
  auto transformer = makeOptimizingTransformer(3, 0, tm->get());
  ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  options.sharedLibPaths = libs;
  // perf's JIT listener writes a jit-PID.dump under ~/.debug/jit (or the
  // temporary directory) on every run and never removes it: only when asked
  // for, to profile generated code with `perf inject --jit`.
  const char *perf = std::getenv("ATTN_OPT_PERF_JITDUMP");
  options.enablePerfNotificationListener = perf && *perf && *perf != '0';
  auto engine = ExecutionEngine::create(module, options, std::move(*tm));
  if (!engine)
    return engine.takeError();
  // Host functions the generated code calls (e.g. the run-time error hook).
  if (!symbols.empty())
    (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
      llvm::orc::SymbolMap map;
      for (const auto &[symbol, address] : symbols)
        map[interner(symbol)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                 llvm::JITSymbolFlags::Exported};
      return map;
    });
  (*engine)->initialize();

  std::unique_ptr<JitFunction> fn(new JitFunction());
  auto packed = (*engine)->lookupPacked(("_mlir_ciface_" + name).str());
  if (!packed)
    return packed.takeError();
  fn->packed = *packed;
  fn->engine = std::move(*engine);
  return fn;
}

llvm::Error JitFunction::call(llvm::ArrayRef<MemRefDescriptor *> args) {
  // The packed wrapper takes, for each argument, the address of its value;
  // the C interface's arguments are descriptor pointers.
  SmallVector<void *> values, slots;
  for (MemRefDescriptor *d : args)
    values.push_back(d->get());
  for (void *&v : values)
    slots.push_back(&v);
  packed(slots.data());
  return llvm::Error::success();
}

void *JitFunction::lookup(llvm::StringRef name) const {
  llvm::Expected<void *> address = engine->lookup(name);
  if (!address) {
    llvm::consumeError(address.takeError());
    return nullptr;
  }
  return *address;
}
