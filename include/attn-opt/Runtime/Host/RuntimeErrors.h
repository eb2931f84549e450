//===- RuntimeErrors.h - Errors the generated code reports ------*- C++ -*-===//
//
// Generated code checks at run time what the verifier could not (dynamic
// sizes that must agree, varlen lengths and offsets; docs/Semantics.md,
// "Dynamic sizes"). On a violation it calls
//
//   void attn_opt_runtime_error(int32_t code, int64_t a, int64_t b,
//                               int64_t c);
//
// once per failed check and skips the computation it guards (its result is
// unspecified). The host that runs the code defines the function: attn-run
// records the first error and fails with describeRuntimeError's message;
// a library build turns it into the call's status. Allocation failures of
// the generated code are reported the same way (OutOfMemory,
// AllocationTooLarge). Part of the LLVM-free
// host library; the compiler uses the same codes.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOST_RUNTIMEERRORS_H
#define ATTN_RUNTIME_HOST_RUNTIMEERRORS_H

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace mlir::attn {

/// The symbol generated code calls.
constexpr const char *kRuntimeErrorFunction = "attn_opt_runtime_error";

enum class RuntimeError : int32_t {
  /// Two sizes that must be equal differ: `a` packs the two operand
  /// dimensions (sizeOperandDim), `b` is the first's size, `c` the
  /// second's.
  SizeMismatch = 1,
  /// Entry `a` (packEntry) of a lengths operand is `b`, outside [0, `c`].
  LengthOutOfRange = 2,
  /// Entry `a` (packEntry) of an offsets operand is `b`, smaller than the
  /// entry before it, `c`.
  OffsetsDecreasing = 3,
  /// The first entry `a` (packEntry) of an offsets operand is `b`, not 0.
  OffsetsStart = 4,
  /// The last entry `a` (packEntry) of an offsets operand is `b`, beyond
  /// the `c` rows of the packed tensor.
  OffsetsBeyond = 5,
  /// The offsets operand `a` (packEntry, entry 0) has no entries.
  OffsetsEmpty = 6,
  /// A kernel library's entry (attn-compile): dimension `a & 0xffff` of
  /// argument `a >> 16` is `b` where the function takes `c` (a static
  /// size), or `b` is negative (`c` = -1). packArgumentDim packs `a`.
  ArgumentSize = 7,
  /// A kernel library's entry: dimension `a & 0xffff` of the buffer of
  /// result `a >> 16` is `b`, but the result has `c` (or `b` is negative:
  /// `c` = -1).
  ResultSize = 8,
  /// A kernel library's entry: the data (`b` = 0) or shape (`b` = 1)
  /// pointer of its `a`-th tensor (arguments, then results) is NULL, for a
  /// tensor that is not empty or has a rank.
  NullPointer = 9,
  /// Entry `a` (packEntry) of a page table, in use, is `b`, outside [0,
  /// `c`), the pages of the key/value pools.
  PageOutOfRange = 10,
  /// An allocation of the generated code (a result or a workspace) of `a`
  /// bytes failed (attn-check-allocations); `b` > 0: the bytes the system
  /// had available (a kernel library refused it up front).
  OutOfMemory = 11,
  /// The generated code would allocate a buffer of more than 2^47 bytes
  /// (kMaxTensorBytes; its byte count may not fit in 64 bits): `a` bytes per
  /// step of its dynamic sizes, the first of which is `b` and the product
  /// of the others `c` (saturated at INT64_MAX; 1 when there are none;
  /// attn-guard-allocation-sizes).
  AllocationTooLarge = 12,
  /// A kernel library's buffer of `a` bytes would exceed its limit `b`
  /// (PREFIX_set_max_memory) with `c` bytes held.
  MemoryLimit = 13,
  /// Sequence-parallel attention (attn-partition-sequence) runs on `a`
  /// ranks; its grid has `b`.
  SequenceRanks = 14,
  /// Sequence-parallel attention: rank `a` holds `b` rows of the sequence,
  /// its sharding gives it `c`; `a` = -1: on `b` ranks the key or value
  /// rows differ from the query rows.
  SequenceChunk = 15,
  /// Sequence-parallel attention: the segment ids operand `a` (an
  /// AttentionOperand, replicated on every rank) has `b` ids per row, the
  /// sharded sequence `c` positions.
  SequenceIds = 16,
  /// attn.attention_grad: dimension `a` of the output's cotangent
  /// (grad_output; `a` + 8: of the log-sum-exp's, grad_lse) is `b`, the
  /// forward output's (log-sum-exp's) `c`.
  GradientSize = 17,
};

/// Whether `code` is about sizes (a shape error) rather than the values of
/// lengths or offsets operands.
constexpr bool isShapeError(int32_t code) {
  return code == static_cast<int32_t>(RuntimeError::SizeMismatch) ||
         code == static_cast<int32_t>(RuntimeError::ArgumentSize) ||
         code == static_cast<int32_t>(RuntimeError::ResultSize) ||
         code == static_cast<int32_t>(RuntimeError::SequenceRanks) ||
         code == static_cast<int32_t>(RuntimeError::SequenceChunk) ||
         code == static_cast<int32_t>(RuntimeError::SequenceIds) ||
         code == static_cast<int32_t>(RuntimeError::GradientSize);
}

/// Whether `code` is about memory (status ATTN_OPT_ERROR_MEMORY of a kernel
/// library).
constexpr bool isMemoryError(int32_t code) {
  return code == static_cast<int32_t>(RuntimeError::OutOfMemory) ||
         code == static_cast<int32_t>(RuntimeError::AllocationTooLarge) ||
         code == static_cast<int32_t>(RuntimeError::MemoryLimit);
}

/// The function generated code calls after calling a function of its own
/// module that may fail (one with allocation checks), to learn whether the
/// running call has reported an error: `int32_t attn_opt_runtime_failed()`.
/// Hosts that define kRuntimeErrorFunction define it too.
constexpr const char *kRuntimeFailedFunction = "attn_opt_runtime_failed";

/// The function the generated code of a sequence-parallel module calls for
/// its MPI communicator: `int64_t attn_opt_communicator()`, the handle as an
/// integer (0: MPI_COMM_WORLD). Kernel libraries return what
/// PREFIX_set_communicator set on the calling thread; attn-run returns 0.
constexpr const char *kCommunicatorFunction = "attn_opt_communicator";

/// With attn-check-allocations' release-on-error (kernel libraries), the
/// generated code takes a mark of the calling thread's heap buffers on
/// entry to a function (and to a parallel iteration) that allocates,
/// `uint64_t __attn_rt_mark()`, and after a failed allocation frees those
/// allocated since, `void __attn_rt_release(uint64_t mark)`, before it
/// returns: an error leaks nothing (lib/KernelRuntime).
constexpr const char *kRuntimeMarkFunction = "__attn_rt_mark";
constexpr const char *kRuntimeReleaseFunction = "__attn_rt_release";

/// The operands of attn.attention by their ODS index (the order of the
/// op's arguments), as the errors name them: kQueryOperand, kKeyOperand, ...
/// (AttentionOperands.def, checked against ODS by the dialect).
enum AttentionOperand : int64_t {
#define ATTN_OPERAND(Name, printedName) k##Name##Operand,
#include "attn-opt/Runtime/Host/AttentionOperands.def"
};

/// The number of operands of attn.attention.
constexpr int64_t kNumAttentionOperands = 0
#define ATTN_OPERAND(Name, printedName) +1
#include "attn-opt/Runtime/Host/AttentionOperands.def"
    ;

/// The name of an AttentionOperand ("query_lengths").
const char *attentionOperandName(int64_t operand);

/// Packs (operand, dim) pairs for RuntimeError::SizeMismatch.
constexpr int64_t sizeOperandDim(int64_t operand, int64_t dim) {
  return operand * 8 + dim;
}
constexpr int64_t packSizeMismatch(int64_t first, int64_t second) {
  return first | (second << 16);
}
/// Packs (argument, dim) for RuntimeError::ArgumentSize and ResultSize.
constexpr int64_t packArgumentDim(int64_t argument, int64_t dim) {
  return (argument << 16) | dim;
}
/// Packs entry `index` of operand `operand` for the varlen errors.
constexpr int64_t packEntry(int64_t operand, int64_t index) {
  return (operand << 32) | index;
}

/// Writes the message of an error into `buffer` (snprintf's contract), e.g.
/// "attn.attention: dimension 0 of key (3) differs from dimension 0 of
/// query (2)" or "attn.attention: query_lengths[1] = 400 is outside [0,
/// 300], the rows of query". Uses nothing of the C++ library.
int formatRuntimeError(char *buffer, size_t size, int32_t code, int64_t a,
                       int64_t b, int64_t c);

/// The message of an error as a string.
inline std::string describeRuntimeError(int32_t code, int64_t a, int64_t b,
                                        int64_t c) {
  char buffer[256];
  formatRuntimeError(buffer, sizeof(buffer), code, a, b, c);
  return buffer;
}

/// The first error generated code reported, for a host whose
/// attn_opt_runtime_error (and attn_opt_runtime_failed) hooks record into
/// one (attn-run, attn-launch). Safe to call from the generated code's
/// threads. (Header-only: the kernel libraries' bitcode build of this
/// header's .cpp uses none of it.)
class FirstRuntimeError {
public:
  /// Keeps the message of the error unless one was recorded before.
  void record(int32_t code, int64_t a, int64_t b, int64_t c) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!first)
      first = describeRuntimeError(code, a, b, c);
  }
  /// Whether an error was recorded.
  bool failed() const {
    std::lock_guard<std::mutex> lock(mutex);
    return first.has_value();
  }
  /// The first error's message, if any.
  std::optional<std::string> message() const {
    std::lock_guard<std::mutex> lock(mutex);
    return first;
  }

private:
  mutable std::mutex mutex;
  std::optional<std::string> first;
};

} // namespace mlir::attn

#endif // ATTN_RUNTIME_HOST_RUNTIMEERRORS_H
