//===- OrderConstantGlobals.cpp - attn-order-constant-globals -------------===//
//
// Names and orders bufferization's constant globals by their first use, so
// that the same module prints the same IR whatever order One-Shot Module
// Bufferize happened to create them in.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNORDERCONSTANTGLOBALS
#include "attn-opt/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kPrefix = "__constant_";

/// A global bufferization made for a tensor constant.
bool isBufferizationConstant(memref::GlobalOp global) {
  return global.getConstant() && global.getSymName().starts_with(kPrefix);
}

/// Upstream's name of a constant of `type`: `__constant_` and the type's
/// shape and element type (`__constant_2x3xf32`).
std::string baseName(MemRefType type) {
  std::string name = kPrefix.str();
  llvm::raw_string_ostream os(name);
  for (int64_t d : type.getShape())
    os << d << 'x';
  os << type.getElementType();
  return name;
}

/// The text of a global's initial value, to order unused ones.
std::string valueText(memref::GlobalOp global) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << global.getType() << ' ' << global.getInitialValueAttr();
  return text;
}

struct OrderConstantGlobalsPass
    : public attn::impl::AttnOrderConstantGlobalsBase<
          OrderConstantGlobalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable table(module);
    // The constants by first use, then the unused ones by value.
    llvm::MapVector<Operation *, memref::GlobalOp> order;
    module.walk([&](memref::GetGlobalOp get) {
      auto global = table.lookup<memref::GlobalOp>(get.getName());
      if (global && isBufferizationConstant(global))
        order.insert({global, global});
    });
    SmallVector<std::pair<std::string, memref::GlobalOp>> unused;
    for (auto global : module.getOps<memref::GlobalOp>())
      if (isBufferizationConstant(global) && !order.count(global))
        unused.push_back({valueText(global), global});
    llvm::sort(unused,
               [](const auto &a, const auto &b) { return a.first < b.first; });
    for (auto &entry : unused)
      order.insert({entry.second, entry.second});
    if (order.empty())
      return;

    // Names no renamed global may take: every other symbol's.
    llvm::StringSet<> taken;
    for (Operation &op : module.getBody()->getOperations())
      if (auto name =
              op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
        if (!order.count(&op))
          taken.insert(name.getValue());
    // First out of the way (the new names may be the old names of others),
    // then upstream's names in the new order.
    SmallVector<memref::GlobalOp> globals;
    for (auto &entry : order)
      globals.push_back(entry.second);
    for (auto [i, global] : llvm::enumerate(globals))
      rename(module, global, "__attn_order_constant_" + std::to_string(i));
    for (memref::GlobalOp global : globals) {
      std::string base = baseName(global.getType());
      std::string name = base;
      for (int64_t k = 0; taken.contains(name); ++k)
        name = base + "_" + std::to_string(k);
      taken.insert(name);
      rename(module, global, name);
    }
    // The definitions at the start of the module, in that order.
    Block *body = module.getBody();
    for (memref::GlobalOp global : llvm::reverse(globals))
      global->moveBefore(body, body->begin());
  }

  /// Renames `global` and every use of it in `module`.
  void rename(ModuleOp module, memref::GlobalOp global, StringRef name) {
    auto attr = StringAttr::get(module.getContext(), name);
    if (failed(SymbolTable::replaceAllSymbolUses(global, attr, module)))
      return signalPassFailure();
    SymbolTable::setSymbolName(global, attr);
  }
};

} // namespace
