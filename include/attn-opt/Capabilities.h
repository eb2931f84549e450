//===- Capabilities.h - Every generator's capability, printed ---*- C++ -*-===//
//
// The registry of what each generator of code supports (the capabilities
// of Dialect/Attn/IR/AttentionFeatures.h, defined beside their generators)
// and its printed forms: JSON (for tests), a Markdown table
// (docs/Kernels.md, checked by test/Tools/capabilities-doc.test) and a
// Python module (attn_opt/_capabilities.py, generated at build time; the
// package's refusals read it). `attn-compile --capabilities=FORMAT`
// prints them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CAPABILITIES_H
#define ATTN_CAPABILITIES_H

#include "attn-opt/Dialect/Attn/IR/AttentionFeatures.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::attn {

/// Every generator's capability, the reference lowering first.
llvm::ArrayRef<const Capability *> getAttentionCapabilities();

/// Prints the registry as `format`: "json", "markdown" or "python"; false
/// for another format.
bool printCapabilities(llvm::raw_ostream &os, llvm::StringRef format);

} // namespace mlir::attn

#endif // ATTN_CAPABILITIES_H
