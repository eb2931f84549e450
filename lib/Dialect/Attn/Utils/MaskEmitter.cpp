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
  case Node::Kind::Custom:
    assert(custom.allowed && "a custom predicate needs its lookup");
    return custom.allowed(b, node, q, k);
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
                               Value k, Value offset) const {
  Ops ops{b, q.getType()};
  Value i;
  if (offset) {
    i = arith::AddIOp::create(b, q, offset);
  } else {
    assert(mask.hasStaticLengths() && "dynamic lengths need an offset");
    i = ops.add(q, mask.getKeyLen() - mask.getQueryLen());
  }
  return emitNode(b, mask.getRoot(), head, q, i, k);
}

Value MaskEmitter::emitAllowedAt(ImplicitLocOpBuilder &b, Value head, Value q,
                                 Value i, Value k) const {
  return emitNode(b, mask.getRoot(), head, q, i, k);
}

//===----------------------------------------------------------------------===//
// Run-time tile classification
//===----------------------------------------------------------------------===//

namespace {
/// Index arithmetic for classification: scalars only.
struct IndexOps : Ops {
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, x, y); }
  Value le(Value x, Value y) { return cmp(arith::CmpIPredicate::sle, x, y); }
  Value eq(Value x, Value y) { return cmp(arith::CmpIPredicate::eq, x, y); }
  Value truth(bool v) { return arith::ConstantOp::create(b, b.getBoolAttr(v)); }
  Value floorDivBy(Value x, int64_t d) { return floorDiv(x, d); }
  /// Some multiple of `d` lies in [lo, hi].
  Value multipleIn(Value lo, Value hi, int64_t d) {
    if (d == 1)
      return le(lo, hi);
    // The smallest multiple of d at or above lo: -floor(-lo / d) * d.
    Value first = arith::MulIOp::create(
        b,
        arith::SubIOp::create(
            b, cst(0), floorDiv(arith::SubIOp::create(b, cst(0), lo), d)),
        cst(d));
    return both(le(lo, hi), le(first, hi));
  }
  /// The number of `tokens` in [lo, hi].
  Value countIn(const std::vector<int64_t> &tokens, Value lo, Value hi) {
    Value n = cst(0);
    for (int64_t t : tokens) {
      Value in = both(le(lo, cst(t)), le(cst(t), hi));
      n = arith::AddIOp::create(b, n,
                                arith::SelectOp::create(b, in, cst(1), cst(0)));
    }
    return n;
  }
};
} // namespace

MaskEmitter::TileKind MaskEmitter::emitNodeKind(ImplicitLocOpBuilder &b,
                                                const Node &node, Value head,
                                                Value i0, Value i1, Value k0,
                                                Value k1) const {
  IndexOps o{{b, b.getIndexType()}};
  switch (node.kind) {
  case Node::Kind::All:
    return {o.truth(true), o.truth(true)};
  case Node::Kind::Causal:
    return {o.le(k0, i1), o.le(k1, i0)};
  case Node::Kind::Window:
    return {o.both(o.le(o.add(i0, -node.before), k1),
                   o.le(k0, o.add(i1, node.after))),
            o.both(o.le(o.add(i1, -node.before), k0),
                   o.le(k1, o.add(i0, node.after)))};
  case Node::Kind::Dilated: {
    // delta = k - i over the tile: [k0 - i1, k1 - i0], within the window.
    Value lo = o.max(o.sub(k0, i1), o.cst(-node.before));
    Value hi = o.min(o.sub(k1, i0), o.cst(node.after));
    Value all = node.dilation == 1
                    ? o.both(o.le(o.cst(-node.before), o.sub(k0, i1)),
                             o.le(o.sub(k1, i0), o.cst(node.after)))
                    : o.truth(false);
    return {o.multipleIn(lo, hi, node.dilation), all};
  }
  case Node::Kind::Strided:
    // i - k over the tile: [i0 - k1, i1 - k0].
    return {o.multipleIn(o.sub(i0, k1), o.sub(i1, k0), node.stride),
            o.truth(node.stride == 1)};
  case Node::Kind::Global: {
    Value rowsIn = o.countIn(node.tokens, i0, i1);
    Value colsIn = o.countIn(node.tokens, k0, k1);
    Value rows = o.add(o.sub(i1, i0), 1), cols = o.add(o.sub(k1, k0), 1);
    Value none = o.both(o.eq(rowsIn, o.cst(0)), o.eq(colsIn, o.cst(0)));
    return {arith::XOrIOp::create(b, none, o.truth(true)),
            o.either(o.eq(rowsIn, rows), o.eq(colsIn, cols))};
  }
  case Node::Kind::Fixed: {
    int64_t s = node.stride;
    Value kb0 = o.floorDivBy(k0, s), kb1 = o.floorDivBy(k1, s);
    // Every key a summary cell, or queries and keys in one block.
    Value summaries =
        o.both(o.eq(kb0, kb1), o.le(o.cst(s - node.summary),
                                    arith::RemSIOp::create(b, k0, o.cst(s))));
    Value oneBlock =
        o.both(o.both(o.eq(o.floorDivBy(i0, s), o.floorDivBy(i1, s)),
                      o.eq(o.floorDivBy(i0, s), kb0)),
               o.eq(kb0, kb1));
    return {o.truth(true), o.either(summaries, oneBlock)};
  }
  case Node::Kind::Table:
  case Node::Kind::Segments:
    // Data the classification does not read: masked per element (segment
    // ranges are compared by the kernels themselves).
    return {o.truth(true), o.truth(false)};
  case Node::Kind::Custom:
    if (!custom.tileKind)
      return {o.truth(true), o.truth(false)};
    return custom.tileKind(b, node, tileQ0, tileQ1, k0, k1);
  case Node::Kind::Union:
  case Node::Kind::Intersect: {
    bool isUnion = node.kind == Node::Kind::Union;
    TileKind acc;
    for (const Node &child : node.children) {
      TileKind c = emitNodeKind(b, child, head, i0, i1, k0, k1);
      if (!acc.any) {
        acc = c;
        continue;
      }
      // A union is full when a part is (exact when one part is decisive,
      // conservative otherwise); an intersection is empty when a part is.
      acc.any = isUnion ? o.either(acc.any, c.any) : o.both(acc.any, c.any);
      acc.all = isUnion ? o.either(acc.all, c.all) : o.both(acc.all, c.all);
    }
    return acc;
  }
  case Node::Kind::PerHead: {
    TileKind acc = emitNodeKind(b, node.children.back(), head, i0, i1, k0, k1);
    for (int64_t h = static_cast<int64_t>(node.children.size()) - 2; h >= 0;
         --h) {
      Value isHead = o.eq(head, o.cst(h));
      TileKind c = emitNodeKind(b, node.children[h], head, i0, i1, k0, k1);
      acc.any = arith::SelectOp::create(b, isHead, c.any, acc.any);
      acc.all = arith::SelectOp::create(b, isHead, c.all, acc.all);
    }
    return acc;
  }
  }
  llvm_unreachable("unknown pattern kind");
}

MaskEmitter::TileKind MaskEmitter::emitTileKind(ImplicitLocOpBuilder &b,
                                                Value head, Value q0, Value q1,
                                                Value k0, Value k1,
                                                Value offset) const {
  Value i0 = arith::AddIOp::create(b, q0, offset);
  Value i1 = arith::AddIOp::create(b, q1, offset);
  tileQ0 = q0;
  tileQ1 = q1;
  return emitNodeKind(b, mask.getRoot(), head, i0, i1, k0, k1);
}

std::optional<std::pair<Value, Value>>
MaskEmitter::emitNodeRange(ImplicitLocOpBuilder &b, const Node &node,
                           Value head, Value i0, Value i1) const {
  IndexOps o{{b, b.getIndexType()}};
  switch (node.kind) {
  case Node::Kind::Causal:
    return std::make_pair(o.cst(0), i1);
  case Node::Kind::Window:
  case Node::Kind::Dilated:
    return std::make_pair(o.add(i0, -node.before), o.add(i1, node.after));
  case Node::Kind::Union: {
    std::optional<std::pair<Value, Value>> acc;
    for (const Node &child : node.children) {
      auto r = emitNodeRange(b, child, head, i0, i1);
      if (!r)
        return std::nullopt;
      acc = acc ? std::make_pair(o.min(acc->first, r->first),
                                 o.max(acc->second, r->second))
                : *r;
    }
    return acc;
  }
  case Node::Kind::Intersect: {
    std::optional<std::pair<Value, Value>> acc;
    for (const Node &child : node.children) {
      auto r = emitNodeRange(b, child, head, i0, i1);
      if (!r)
        continue;
      acc = acc ? std::make_pair(o.max(acc->first, r->first),
                                 o.min(acc->second, r->second))
                : *r;
    }
    return acc;
  }
  case Node::Kind::PerHead: {
    SmallVector<std::pair<Value, Value>> ranges;
    for (const Node &child : node.children) {
      auto r = emitNodeRange(b, child, head, i0, i1);
      if (!r)
        return std::nullopt;
      ranges.push_back(*r);
    }
    std::pair<Value, Value> acc = ranges.back();
    for (int64_t h = static_cast<int64_t>(ranges.size()) - 2; h >= 0; --h) {
      Value isHead = o.eq(head, o.cst(h));
      acc = {arith::SelectOp::create(b, isHead, ranges[h].first, acc.first),
             arith::SelectOp::create(b, isHead, ranges[h].second, acc.second)};
    }
    return acc;
  }
  default:
    // Global tokens, strides, fixed blocks, tables and segments reach every
    // key.
    return std::nullopt;
  }
}

std::optional<std::pair<Value, Value>>
MaskEmitter::emitKeyRange(ImplicitLocOpBuilder &b, Value head, Value q0,
                          Value q1, Value offset) const {
  Value i0 = arith::AddIOp::create(b, q0, offset);
  Value i1 = arith::AddIOp::create(b, q1, offset);
  return emitNodeRange(b, mask.getRoot(), head, i0, i1);
}

std::optional<std::pair<Value, Value>>
MaskEmitter::emitKeyRangeAt(ImplicitLocOpBuilder &b, Value head, Value i0,
                            Value i1) const {
  return emitNodeRange(b, mask.getRoot(), head, i0, i1);
}

/// Whether emitNodeRange gives a range for `node` (its cases, at compile
/// time).
static bool boundsKeys(const Node &node) {
  switch (node.kind) {
  case Node::Kind::Causal:
  case Node::Kind::Window:
  case Node::Kind::Dilated:
    return true;
  case Node::Kind::Union:
  case Node::Kind::PerHead:
    return llvm::all_of(node.children, boundsKeys);
  case Node::Kind::Intersect:
    return llvm::any_of(node.children, boundsKeys);
  default:
    return false;
  }
}

bool MaskEmitter::boundsKeys() const { return ::boundsKeys(mask.getRoot()); }
