//===- TargetModel.cpp - What code generation knows of the CPU ------------===//

#include "attn-opt/Support/TargetModel.h"

#include <algorithm>
#include <string_view>

using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Target model and tile sizes
//===----------------------------------------------------------------------===//

std::optional<TargetModel> TargetModel::get(int64_t lanes, int64_t registers) {
  if (lanes != 4 && lanes != 8 && lanes != 16 && lanes != 32)
    return std::nullopt;
  if (registers == 0)
    registers = lanes >= 16 ? 32 : 16;
  if (registers < 8)
    return std::nullopt;
  TargetModel t;
  t.lanes = lanes;
  t.registers = registers;
  return t;
}

std::optional<TargetModel::Bf16Dot>
TargetModel::parseBf16Dot(const char *name) {
  std::string_view n(name);
  if (n == "none")
    return Bf16Dot::None;
  if (n == "native")
    return Bf16Dot::Native;
  if (n == "emulated")
    return Bf16Dot::Emulated;
  return std::nullopt;
}

TargetModel::Bf16Dot TargetModel::bf16DotFor(std::string_view cpu,
                                             bool hasAvx512Bf16) {
  if (!hasAvx512Bf16)
    return Bf16Dot::None;
  // znver4, znver5, ...: Zen 4 and later.
  constexpr std::string_view zen = "znver";
  if (cpu.substr(0, zen.size()) != zen)
    return Bf16Dot::None;
  int generation = 0;
  for (char c : cpu.substr(zen.size())) {
    if (c < '0' || c > '9')
      return Bf16Dot::None;
    generation = std::min(generation * 10 + (c - '0'), 1000);
  }
  return generation >= 4 ? Bf16Dot::Native : Bf16Dot::None;
}
