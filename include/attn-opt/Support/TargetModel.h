//===- TargetModel.h - What code generation knows of the CPU ----*- C++ -*-===//
//
// A small model of the target CPU (vector lanes, registers, L1 size), from
// which the tile sizes of the fused attention kernels are derived
// (TileSizes.h). Plain C++, so that passes choosing block sizes and the
// kernel generator agree, and so that unit tests can check the choices.
//
// The model never reads the host: passes take it from their options
// (`vector-width`, `vector-registers`), whose defaults name a fixed target
// (AVX-512: 16 f32 lanes, 32 registers), so one command prints the same IR
// on every machine. Tools that compile for the machine they run on
// (attn-run) pass the host's model explicitly (Runtime/HostTarget.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_TARGETMODEL_H
#define ATTN_SUPPORT_TARGETMODEL_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace mlir::attn {

/// What the code generator knows of the target CPU.
struct TargetModel {
  /// f32 lanes of a vector register (16 with AVX-512, 8 with AVX2).
  int64_t lanes = 16;
  /// Vector registers (32 with AVX-512, 16 otherwise).
  int64_t registers = 32;
  /// Bytes of L1 data cache per core.
  int64_t l1Bytes = 48 * 1024;
  /// bf16 dot products of pairs (AVX512_BF16's `vdpbf16ps`: each f32 lane
  /// accumulates the products of two bf16 pairs): None (the kernels extend
  /// bf16 to f32), Native (x86vector.avx512.dot), or Emulated (the same
  /// kernels with the dot product spelled in portable vector ops, for
  /// testing them on CPUs without AVX512_BF16).
  enum class Bf16Dot { None, Native, Emulated };
  Bf16Dot bf16Dot = Bf16Dot::None;
  /// Parses the `bf16-dot` option (none, native, emulated).
  static std::optional<Bf16Dot> parseBf16Dot(const char *name);
  /// The bf16 dot products that pay on LLVM's CPU `cpu` (a name such as
  /// `znver5` or `emeraldrapids`) with or without AVX512_BF16: Native
  /// where `vdpbf16ps` issues at the rate of f32 FMAs, twice their
  /// multiply-adds (AMD Zen 4 and later); None elsewhere, where it issues
  /// at half that rate or less (Intel's Cooper Lake to Granite Rapids:
  /// measured on Emerald Rapids, a quarter of the FMAs' instructions per
  /// second, half their multiply-adds), so the pairs would halve the rate
  /// of f32 tiles that read bf16 K and V (docs/Kernels.md).
  static Bf16Dot bf16DotFor(std::string_view cpu, bool hasAvx512Bf16);

  /// The default target of the passes: AVX-512.
  static constexpr int64_t kDefaultLanes = 16;

  /// A model with `lanes` f32 lanes (4: SSE, 8: AVX2, 16: AVX-512, or 32)
  /// and `registers` vector registers (0: 32 with 16 or more lanes, 16
  /// otherwise, as on x86-64); std::nullopt for other lanes or fewer than 8
  /// registers.
  static std::optional<TargetModel> get(int64_t lanes, int64_t registers = 0);
};

} // namespace mlir::attn

#endif // ATTN_SUPPORT_TARGETMODEL_H
