//===- KernelLibrary.h - Kernel libraries with a C ABI ----------*- C++ -*-===//
//
// What attn-compile builds from a module (docs/Library.md): each public
// function becomes an entry of a C ABI,
//
//   int32_t PREFIX_NAME(const T *arg0, const int64_t *arg0_shape, ...,
//                       T *result0, const int64_t *result0_shape, ...);
//
// taking each tensor as a pointer to dense row-major data and its sizes
// (static sizes are checked, dynamic ones taken), returning a status; the
// library also exports PREFIX_last_error, PREFIX_set_num_threads,
// PREFIX_num_threads and PREFIX_signatures (JSON). The MLIR side adds the
// entries (attn-export-entries) before the CPU pipeline; this side
// describes them (for the header and the JSON), and after the pipeline
// turns the LLVM dialect into the library's LLVM module: the C functions,
// the run-time support (kernel-runtime.bc), everything else internal.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_KERNELLIBRARY_KERNELLIBRARY_H
#define ATTN_RUNTIME_KERNELLIBRARY_KERNELLIBRARY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::attn {

/// A tensor of an entry's C signature.
struct EntryTensor {
  /// The C parameter name: the source name of an argument (`%query`) where
  /// it is a C identifier, else argN; resultN for results.
  std::string name;
  /// The MLIR element type ("f32", "bf16", "i32") and its C type
  /// ("float", "uint16_t", "int32_t").
  std::string elementType, cType;
  /// Sizes; ShapedType::kDynamic for `?`.
  llvm::SmallVector<int64_t> shape;
  /// For a result: per dimension, the (argument, dimension) whose size it
  /// has when it is dynamic and the function's IR says so (through
  /// ReifyRankedShapedTypeOpInterface, destination operands, casts), else
  /// (-1, -1). Lets callers size result buffers (the Python package).
  llvm::SmallVector<std::pair<int64_t, int64_t>> sizeOf;
};

/// One exported function.
struct Entry {
  /// The MLIR function and the C symbol (PREFIX_function).
  std::string function, symbol;
  llvm::SmallVector<EntryTensor> args, results;
};

/// Whether `name` can be a C identifier that is not a keyword.
bool isCIdentifier(llvm::StringRef name);

/// The entries `module` will export: its public functions with bodies, in
/// order. `argNames` maps a function to its arguments' source names (may
/// be empty). Diagnoses (on the function) types the C ABI cannot take.
/// Call before attn-export-entries.
FailureOr<std::vector<Entry>> describeEntries(
    ModuleOp module, llvm::StringRef prefix,
    const std::map<std::string, std::vector<std::string>> &argNames);

/// The C header declaring `entries` and the library's functions.
std::string emitHeader(llvm::ArrayRef<Entry> entries, llvm::StringRef prefix,
                       llvm::StringRef source);

/// The entries as JSON (what PREFIX_signatures returns).
std::string emitSignatures(llvm::ArrayRef<Entry> entries,
                           llvm::StringRef prefix);

/// Translates `module` (the LLVM dialect, after attn-export-entries and the
/// CPU pipeline) to LLVM IR for `tm`, adds the C entry functions, links
/// the run-time support from `runtimeBitcode`, renames its API functions
/// to the prefix, makes everything else internal and optimizes (-O3).
llvm::Expected<std::unique_ptr<llvm::Module>>
buildLibraryModule(ModuleOp module, llvm::LLVMContext &context,
                   llvm::ArrayRef<Entry> entries, llvm::StringRef prefix,
                   llvm::StringRef runtimeBitcode, llvm::TargetMachine &tm);

} // namespace mlir::attn

#endif // ATTN_RUNTIME_KERNELLIBRARY_KERNELLIBRARY_H
