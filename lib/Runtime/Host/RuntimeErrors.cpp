//===- RuntimeErrors.cpp - Errors the generated code reports --------------===//
//
// Formats into a caller's buffer with snprintf only: the kernel libraries of
// attn-compile link this file (as bitcode) and must not need the C++
// standard library.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Runtime/Host/RuntimeErrors.h"

#include <cinttypes>
#include <cstdio>

using namespace mlir::attn;

const char *mlir::attn::attentionOperandName(int64_t operand) {
  static const char *const names[] = {
#define ATTN_OPERAND(Name, printedName) printedName,
#include "attn-opt/Runtime/Host/AttentionOperands.def"
  };
  if (operand < 0 || operand >= static_cast<int64_t>(std::size(names)))
    return "an operand";
  return names[operand];
}

/// The operand whose rows a lengths or offsets operand (of a packEntry
/// value) describes.
static const char *rowsOf(int64_t packed) {
  int64_t operand = packed >> 32;
  return operand == kQueryLengthsOperand || operand == kQueryOffsetsOperand
             ? "query"
             : "key";
}

int mlir::attn::formatRuntimeError(char *buffer, size_t size, int32_t code,
                                   int64_t a, int64_t b, int64_t c) {
  const char *op = "attn.attention: ";
  // "query_lengths[3]" of a packEntry value.
  const char *entryName = attentionOperandName(a >> 32);
  int64_t entryIndex = a & 0xffffffff;
  switch (static_cast<RuntimeError>(code)) {
  case RuntimeError::SizeMismatch:
    return snprintf(buffer, size,
                    "%sdimension %" PRId64 " of %s (%" PRId64
                    ") differs from dimension %" PRId64 " of %s (%" PRId64 ")",
                    op, (a & 0xffff) % 8,
                    attentionOperandName((a & 0xffff) / 8), b, (a >> 16) % 8,
                    attentionOperandName((a >> 16) / 8), c);
  case RuntimeError::LengthOutOfRange:
    return snprintf(buffer, size,
                    "%s%s[%" PRId64 "] = %" PRId64 " is outside [0, %" PRId64
                    "], the rows of %s",
                    op, entryName, entryIndex, b, c, rowsOf(a));
  case RuntimeError::OffsetsDecreasing:
    return snprintf(buffer, size,
                    "%s%s[%" PRId64 "] = %" PRId64
                    " is smaller than the entry before it (%" PRId64
                    "): offsets must not decrease",
                    op, entryName, entryIndex, b, c);
  case RuntimeError::OffsetsStart:
    return snprintf(buffer, size,
                    "%s%s[%" PRId64 "] = %" PRId64
                    ": the first offset must be 0",
                    op, entryName, entryIndex, b);
  case RuntimeError::OffsetsBeyond:
    return snprintf(buffer, size,
                    "%s%s[%" PRId64 "] = %" PRId64 " lies beyond the %" PRId64
                    " rows of %s",
                    op, entryName, entryIndex, b, c, rowsOf(a));
  case RuntimeError::OffsetsEmpty:
    return snprintf(buffer, size,
                    "%s%s is empty: it needs N + 1 entries for N sequences", op,
                    entryName);
  case RuntimeError::ArgumentSize:
    if (c < 0)
      return snprintf(buffer, size,
                      "dimension %" PRId64 " of argument %" PRId64
                      " is %" PRId64 ": sizes must not be negative",
                      a & 0xffff, a >> 16, b);
    return snprintf(buffer, size,
                    "dimension %" PRId64 " of argument %" PRId64 " is %" PRId64
                    ", the function takes %" PRId64,
                    a & 0xffff, a >> 16, b, c);
  case RuntimeError::ResultSize:
    if (c < 0)
      return snprintf(buffer, size,
                      "dimension %" PRId64 " of the buffer of result %" PRId64
                      " is %" PRId64 ": sizes must not be negative",
                      a & 0xffff, a >> 16, b);
    return snprintf(buffer, size,
                    "dimension %" PRId64 " of the buffer of result %" PRId64
                    " is %" PRId64 ", the result has %" PRId64,
                    a & 0xffff, a >> 16, b, c);
  case RuntimeError::PageOutOfRange:
    return snprintf(buffer, size,
                    "%s%s[%" PRId64 "] = %" PRId64 " is outside [0, %" PRId64
                    "), the pages of key and value",
                    op, entryName, entryIndex, b, c);
  case RuntimeError::OutOfMemory:
    if (b > 0)
      return snprintf(buffer, size,
                      "out of memory: the generated code needs a buffer of "
                      "%" PRId64 " bytes, the system has %" PRId64 " available",
                      a, b);
    return snprintf(buffer, size,
                    "out of memory: the generated code could not allocate "
                    "%" PRId64 " bytes",
                    a);
  case RuntimeError::MemoryLimit:
    return snprintf(buffer, size,
                    "out of memory: the generated code needs a buffer of "
                    "%" PRId64 " bytes, beyond the library's limit of %" PRId64
                    " bytes (set_max_memory) with %" PRId64 " held",
                    a, b, c);
  case RuntimeError::AllocationTooLarge:
    if (c == 1)
      return snprintf(buffer, size,
                      "the generated code would allocate more than 2^47 "
                      "bytes (%" PRId64 " bytes x %" PRId64 ")",
                      a, b);
    return snprintf(buffer, size,
                    "the generated code would allocate more than 2^47 bytes "
                    "(%" PRId64 " bytes x %" PRId64 " x %" PRId64 ")",
                    a, b, c);
  case RuntimeError::SequenceRanks:
    return snprintf(buffer, size,
                    "sequence-parallel attention runs on %" PRId64
                    " ranks, its shard.grid has %" PRId64,
                    a, b);
  case RuntimeError::SequenceChunk:
    if (a < 0)
      return snprintf(buffer, size,
                      "sequence-parallel attention: on %" PRId64
                      " rank(s) the key or value chunk has other rows than "
                      "the query chunk",
                      b);
    return snprintf(buffer, size,
                    "sequence-parallel attention: rank %" PRId64
                    " holds %" PRId64 " rows of the sequence, its chunk has "
                    "%" PRId64,
                    a, b, c);
  case RuntimeError::SequenceIds:
    return snprintf(buffer, size,
                    "sequence-parallel attention: %s has %" PRId64
                    " ids per row, the sharded sequence has %" PRId64
                    " positions (every rank passes the ids of the whole "
                    "sequence)",
                    attentionOperandName(a), b, c);
  case RuntimeError::GradientSize:
    return snprintf(buffer, size,
                    "attn.attention_grad: dimension %" PRId64
                    " of %s is %" PRId64 ", the attention's %s has %" PRId64,
                    a % 8, a >= 8 ? "grad_lse" : "grad_output", b,
                    a >= 8 ? "log-sum-exp" : "output", c);
  case RuntimeError::NullPointer:
    return snprintf(buffer, size,
                    "the %s pointer of tensor %" PRId64
                    " (arguments, then results) is NULL",
                    b ? "shape" : "data", a);
  }
  return snprintf(buffer, size, "%srun-time error %d", op, code);
}
