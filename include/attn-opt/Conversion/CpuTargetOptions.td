//===- CpuTargetOptions.td - The CPU target of kernel passes -*- tablegen -*-===//
//
// The options that describe the CPU target to every pass that generates CPU
// kernels (attn-flash, attn-lower-pointwise, attn-block-sparse,
// attn-linear-kernels, attn-lsh-kernels, attn-vectorize-contractions),
// defined once. Passes never read the host: attn-run and attn-compile ask
// the host's target model and pass these.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_CPUTARGETOPTIONS_TD
#define ATTN_CONVERSION_CPUTARGETOPTIONS_TD

include "mlir/Pass/PassBase.td"

/// The vector width and register count of the target (TargetModel).
defvar Attn_CpuTargetOptions = [
  Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
         "f32 lanes per vector register of the target (4: SSE, 8: AVX2, "
         "16: AVX-512)">,
  Option<"vectorRegisters", "vector-registers", "int64_t", /*default=*/"0",
         "vector registers of the target (0: 32 with 16 lanes, else 16)">,
];

/// Whether bf16 dot products of pairs are used (TargetModel::Bf16Dot).
defvar Attn_Bf16DotOption =
  Option<"bf16Dot", "bf16-dot", "std::string", /*default=*/"\"none\"",
         "bf16 dot products of pairs: none (bf16 extended to f32), native "
         "(AVX512_BF16 vdpbf16ps, x86vector.avx512.dot) or emulated (the "
         "same kernels in portable vector ops, for tests)">;

/// A pass that generates CPU kernels: it takes the target options, and a
/// derived pass adds its own with
/// `let options = !listconcat(Attn_CpuTargetOptions, [...])`.
class Attn_CpuKernelPass<string passArg, string operation = "">
    : Pass<passArg, operation> {
  let options = Attn_CpuTargetOptions;
}

#endif // ATTN_CONVERSION_CPUTARGETOPTIONS_TD
