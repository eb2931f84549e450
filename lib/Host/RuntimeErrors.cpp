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
  auto dim = [](int64_t packed) {
    return "dimension " + std::to_string(packed % 8) + " of " +
           attentionOperandName(packed / 8);
  };
  switch (static_cast<RuntimeError>(code)) {
  case RuntimeError::SizeMismatch:
    return s + dim(a & 0xffff) + " (" + std::to_string(b) + ") differs from " +
           dim(a >> 16) + " (" + std::to_string(c) + ")";
  case RuntimeError::LengthOutOfRange:
    return s + "sequence " + std::to_string(a) + " has length " +
           std::to_string(b) + ", outside [0, " + std::to_string(c) + "]";
  case RuntimeError::OffsetsDecreasing:
    return s + "offset " + std::to_string(a) + " (" + std::to_string(b) +
           ") is smaller than offset " + std::to_string(a - 1) + " (" +
           std::to_string(c) + "): offsets must not decrease";
  case RuntimeError::OffsetsStart:
    return s + "the first offset is " + std::to_string(b) + ", not 0";
  case RuntimeError::OffsetsBeyond:
    return s + "the last offset (" + std::to_string(b) + ") lies beyond the " +
           std::to_string(c) + " rows of the packed tensor";
  }
  return s + "run-time error " + std::to_string(code);
}
