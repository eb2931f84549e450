//===- Passes.h - GPU passes of attn-opt's pipeline -------------*- C++ -*-===//

#ifndef ATTN_GPU_PASSES_H
#define ATTN_GPU_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn-opt/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn-opt/GPU/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_GPU_PASSES_H
