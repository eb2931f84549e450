//===- MaskEmitter.cpp - Emit IR that evaluates a mask pattern ------------===//

#include "attn-opt/Dialect/Attn/Utils/MaskEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::attn;
using mask::Node;

Value MaskEmitter::constant(ImplicitLocOpBuilder &b, Type type, int64_t v) {
  if (auto vec = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b,
        DenseElementsAttr::get(vec, b.getIntegerAttr(vec.getElementType(), v)));
  return arith::ConstantOp::create(b, b.getIntegerAttr(type, v));
}

/// Returns a boolean constant shaped like `like`.
static Value boolConstant(ImplicitLocOpBuilder &b, Value like, bool v) {
  Type i1 = b.getI1Type();
  if (auto vec = dyn_cast<VectorType>(like.getType()))
    return arith::ConstantOp::create(
        b, DenseElementsAttr::get(vec.clone(i1), b.getBoolAttr(v)));
  return arith::ConstantOp::create(b, b.getBoolAttr(v));
}

namespace {
/// Small arithmetic helpers over one index-like type.
struct Ops {
  ImplicitLocOpBuilder &b;
  Type type;

  Value cst(int64_t v) { return MaskEmitter::constant(b, type, v); }
  Value add(Value x, int64_t v) {
    return v == 0 ? x : arith::AddIOp::create(b, x, cst(v)).getResult();
  }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, int64_t v) {
    return cmp(p, x, cst(v));
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value either(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value isMultiple(Value x, int64_t d) {
    if (d == 1)
      return boolConstant(b, x, true);
    return cmp(arith::CmpIPredicate::eq, arith::RemSIOp::create(b, x, cst(d)),
               0);
  }
  Value floorDiv(Value x, int64_t d) {
    return arith::FloorDivSIOp::create(b, x, cst(d));
  }
  /// `lo <= x <= hi`.
  Value inRange(Value x, int64_t lo, int64_t hi) {
    if (lo == hi)
      return cmp(arith::CmpIPredicate::eq, x, lo);
    return both(cmp(arith::CmpIPredicate::sge, x, lo),
                cmp(arith::CmpIPredicate::sle, x, hi));
  }
};
} // namespace

/// Membership of `x` in a sorted token list, as range checks over the runs of
/// consecutive tokens (BigBird's global blocks are one run).
static Value inTokens(Ops &ops, Value x, const std::vector<int64_t> &tokens) {
  Value result;
  for (size_t s = 0; s < tokens.size();) {
    size_t e = s;
    while (e + 1 < tokens.size() && tokens[e + 1] == tokens[e] + 1)
      ++e;
    Value in = ops.inRange(x, tokens[s], tokens[e]);
    result = result ? ops.either(result, in) : in;
    s = e + 1;
  }
  return result;
}

Value MaskEmitter::emitNode(ImplicitLocOpBuilder &b, const Node &node,
                            Value head, Value q, Value i, Value k) const {
  Ops ops{b, i.getType()};
  using P = arith::CmpIPredicate;
  switch (node.kind) {
  case Node::Kind::All:
    return boolConstant(b, i, true);
  case Node::Kind::Causal:
    return ops.cmp(P::sle, k, i);
  case Node::Kind::Window:
    return ops.both(ops.cmp(P::sge, k, ops.add(i, -node.before)),
                    ops.cmp(P::sle, k, ops.add(i, node.after)));
  case Node::Kind::Dilated: {
    Value delta = ops.sub(k, i);
    return ops.both(ops.inRange(delta, -node.before, node.after),
                    ops.isMultiple(delta, node.dilation));
  }
  case Node::Kind::Global:
    return ops.either(inTokens(ops, i, node.tokens),
                      inTokens(ops, k, node.tokens));
  case Node::Kind::Strided:
    return ops.isMultiple(ops.sub(i, k), node.stride);
  case Node::Kind::Fixed: {
    Value sameBlock = ops.cmp(P::eq, ops.floorDiv(k, node.stride),
                              ops.floorDiv(i, node.stride));
    Value summary =
        ops.cmp(P::sge, arith::RemSIOp::create(b, k, ops.cst(node.stride)),
                node.stride - node.summary);
    return ops.either(sameBlock, summary);
  }
  case Node::Kind::Table:
    return table(b, node, ops.floorDiv(q, node.blockSize),
                 ops.floorDiv(k, node.blockSize));
  case Node::Kind::Segments:
    return segments(b, q, k);
  case Node::Kind::Union:
  case Node::Kind::Intersect: {
    Value acc;
    for (const Node &child : node.children) {
      Value c = emitNode(b, child, head, q, i, k);
      if (!acc)
        acc = c;
      else
        acc = node.kind == Node::Kind::Union ? ops.either(acc, c)
                                             : ops.both(acc, c);
    }
    return acc;
  }
  case Node::Kind::PerHead: {
    // select(head == 0, p0, select(head == 1, p1, ...)), last as default.
    Value acc = emitNode(b, node.children.back(), head, q, i, k);
    for (int64_t h = static_cast<int64_t>(node.children.size()) - 2; h >= 0;
         --h) {
      Value isHead = arith::CmpIOp::create(
          b, P::eq, head, arith::ConstantIndexOp::create(b, h));
      Value c = emitNode(b, node.children[h], head, q, i, k);
      acc = arith::SelectOp::create(b, isHead, c, acc);
    }
    return acc;
  }
  }
  llvm_unreachable("unknown pattern kind");
}

Value MaskEmitter::emitAllowed(ImplicitLocOpBuilder &b, Value head, Value q,
                               Value k) const {
  Ops ops{b, q.getType()};
  Value i = ops.add(q, mask.getKeyLen() - mask.getQueryLen());
  return emitNode(b, mask.getRoot(), head, q, i, k);
}
