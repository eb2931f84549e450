//===- Capabilities.h - What each lowering of attn.attention supports -*-===//
//
// The capabilities (Dialect/Attn/IR/AttentionFeatures.h) of the
// conversions' generators of code: each is defined beside its generator
// and read by its pass before it rewrites an op; the registry
// (InitAttn.h, getAttentionCapabilities) lists them with the dialect
// transforms' for attn-compile --capabilities, the Python package and
// docs/Kernels.md.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_CAPABILITIES_H
#define ATTN_CONVERSION_CAPABILITIES_H

#include "attn-opt/Dialect/Attn/IR/AttentionFeatures.h"

namespace mlir::attn {

/// The reference lowering (convert-attn-to-linalg): every feature.
const Capability &getReferenceLoweringCapability();
/// The CPU tile kernel (attn-flash, attn-lower-pointwise, attn-block-sparse;
/// AttnKernel's frame with AttnToTiles' target).
const Capability &getCpuKernelCapability();
/// The GPU kernels (convert-attn-to-gpu).
const Capability &getGpuKernelCapability();
/// The fused CPU backward (attn-flash-backward).
const Capability &getFusedBackwardCapability();
/// The reference gradient (convert-attn-grad-to-linalg), `L x L`.
const Capability &getReferenceGradientCapability();
/// The linear-time gradient of kernelized attention (the linear form of
/// convert-attn-grad-to-linalg).
const Capability &getLinearGradientCapability();

} // namespace mlir::attn

#endif // ATTN_CONVERSION_CAPABILITIES_H
