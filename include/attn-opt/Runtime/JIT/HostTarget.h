//===- HostTarget.h - The target model of the host CPU ----------*- C++ -*-===//
//
// For tools that compile for the machine they run on (attn-run's JIT): the
// target model (vector lanes, registers) from the host's CPU features, to
// pass to the pipelines' `vector-width` and `vector-registers` options.
// Passes themselves never read the host (see Support/TargetModel.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_JIT_HOSTTARGET_H
#define ATTN_RUNTIME_JIT_HOSTTARGET_H

#include "attn-opt/Support/TargetModel.h"

namespace mlir::attn {

/// The host's model: 16 lanes and 32 registers with AVX-512F, 8 and 16 with
/// AVX or AVX2, else 4 and 16; bf16 dot products (native) with
/// AVX512_BF16 and AVX-512F where they pay (TargetModel::bf16DotFor).
TargetModel hostTargetModel();

} // namespace mlir::attn

#endif // ATTN_RUNTIME_JIT_HOSTTARGET_H
