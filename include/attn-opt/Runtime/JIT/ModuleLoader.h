//===- ModuleLoader.h - Load a module and find the function to run -*- C++
//-*-===//
//
// Shared by attn-run and the scalar reference checker: parses a file,
// picks the entry function (named, or the only public one with a body) and
// recovers the source names of its arguments (`%query` -> "query"; "argN"
// where the source has none), which name the inputs on the command line and
// in saved .npy files.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_JIT_MODULELOADER_H
#define ATTN_RUNTIME_JIT_MODULELOADER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::attn {

struct LoadedModule {
  OwningOpRef<ModuleOp> module;
  func::FuncOp entry;
  std::vector<std::string> argNames;
  /// The source names of the arguments of every function with a body
  /// ("" where the source has none).
  std::map<std::string, std::vector<std::string>> argNamesByFunction;
};

/// Parses and verifies `path`, reporting parse and verifier diagnostics
/// through `sourceMgr`. `entryName` may be empty. Without `pickEntry`, no
/// entry is chosen (tools that take every public function).
llvm::Expected<LoadedModule> loadModule(MLIRContext &context,
                                        llvm::SourceMgr &sourceMgr,
                                        llvm::StringRef path,
                                        llvm::StringRef entryName,
                                        bool pickEntry = true);

} // namespace mlir::attn

#endif // ATTN_RUNTIME_JIT_MODULELOADER_H
