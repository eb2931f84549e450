//===- RuntimeErrors.cpp - Errors the generated code reports --------------===//

#include "attn-opt/Host/RuntimeErrors.h"

using namespace mlir::attn;

const char *mlir::attn::attentionOperandName(int64_t operand) {
  static const char *const names[] = {
      "query",         "key",         "value",         "bias",
      "gate",          "segments",    "key_segments",  "projection",
      "query_lengths", "key_lengths", "query_offsets", "key_offsets"};
  if (operand < 0 || operand >= static_cast<int64_t>(std::size(names)))
    return "an operand";
  return names[operand];
}

std::string mlir::attn::describeRuntimeError(int32_t code, int64_t a, int64_t b,
                                             int64_t c) {
  std::string s = "attn.attention: ";
  // "query_lengths[3]" of a packEntry value.
  auto entry = [](int64_t packed) {
    return std::string(attentionOperandName(packed >> 32)) + "[" +
           std::to_string(packed & 0xffffffff) + "]";
  };
  // The operand whose rows a lengths or offsets operand describes.
  auto rowsOf = [](int64_t packed) {
    int64_t operand = packed >> 32;
    return std::string(operand == kQueryLengthsOperand ||
                               operand == kQueryOffsetsOperand
                           ? "query"
                           : "key");
  };
  auto dim = [](int64_t packed) {
    return "dimension " + std::to_string(packed % 8) + " of " +
           attentionOperandName(packed / 8);
  };
  switch (static_cast<RuntimeError>(code)) {
  case RuntimeError::SizeMismatch:
    return s + dim(a & 0xffff) + " (" + std::to_string(b) + ") differs from " +
           dim(a >> 16) + " (" + std::to_string(c) + ")";
  case RuntimeError::LengthOutOfRange:
    return s + entry(a) + " = " + std::to_string(b) + " is outside [0, " +
           std::to_string(c) + "], the rows of " + rowsOf(a);
  case RuntimeError::OffsetsDecreasing:
    return s + entry(a) + " = " + std::to_string(b) +
           " is smaller than the entry before it (" + std::to_string(c) +
           "): offsets must not decrease";
  case RuntimeError::OffsetsStart:
    return s + entry(a) + " = " + std::to_string(b) +
           ": the first offset must be 0";
  case RuntimeError::OffsetsBeyond:
    return s + entry(a) + " = " + std::to_string(b) + " lies beyond the " +
           std::to_string(c) + " rows of " + rowsOf(a);
  case RuntimeError::OffsetsEmpty:
    return s + attentionOperandName(a >> 32) +
           " is empty: it needs N + 1 entries for N sequences";
  }
  return s + "run-time error " + std::to_string(code);
}
