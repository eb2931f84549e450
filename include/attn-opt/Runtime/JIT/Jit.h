//===- Jit.h - JIT-compile and call a lowered function ----------*- C++ -*-===//
//
// Wraps mlir::ExecutionEngine for attn-run: compiles a module already lowered
// to the LLVM dialect for the host CPU (all its features, -O3), then calls a
// function through its C interface (`llvm.emit_c_interface`), passing memref
// descriptors.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_JIT_JIT_H
#define ATTN_RUNTIME_JIT_JIT_H

#include "attn-opt/Runtime/Host/MemRefDescriptor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;

namespace attn {

class JitFunction {
public:
  ~JitFunction();

  /// JIT-compiles `module` (LLVM dialect) and looks up `name`'s C interface.
  /// `sharedLibs` are loaded first (the OpenMP runtime, MLIR's runner
  /// utilities); `symbols` are host functions the code may call, by name.
  static llvm::Expected<std::unique_ptr<JitFunction>>
  compile(ModuleOp module, llvm::StringRef name,
          llvm::ArrayRef<std::string> sharedLibs,
          llvm::ArrayRef<std::pair<std::string, void *>> symbols = {});

  /// Calls the function with pointers to memref descriptors, one per
  /// argument (inputs, then out-parameters).
  llvm::Error call(llvm::ArrayRef<MemRefDescriptor *> args);

  /// The address of symbol `name` of the compiled module, or null when it
  /// has none.
  void *lookup(llvm::StringRef name) const;

private:
  JitFunction() = default;
  std::unique_ptr<ExecutionEngine> engine;
  void (*packed)(void **) = nullptr;
};

} // namespace attn
} // namespace mlir

#endif // ATTN_RUNTIME_JIT_JIT_H
