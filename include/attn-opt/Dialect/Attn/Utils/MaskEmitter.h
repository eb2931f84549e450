//===- MaskEmitter.h - Emit IR that evaluates a mask pattern ----*- C++ -*-===//
//
// The IR side of the mask library: builds `arith` IR deciding whether query
// `q` of head `h` may see key `k`, for any pattern tree of
// attn-opt/Mask/MaskPattern.h. Every lowering that masks elements (the
// reference lowering, the pointwise, block-sparse and flash kernels) emits
// its mask through this class, so the patterns have one IR definition.
//
// Indices are `index` scalars, or vectors of a signless integer type for a
// row or column of a tile; arithmetic is elementwise, so both work. Lookups
// into block tables and runtime segment ids depend on where the data lives
// (tensors, memrefs), so the caller provides them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_MASKEMITTER_H
#define ATTN_DIALECT_ATTN_UTILS_MASKEMITTER_H

#include "attn-opt/Mask/MaskPattern.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

#include <functional>
#include <optional>

namespace mlir::attn {

class MaskEmitter {
public:
  /// Returns whether entry (`row`, `col`) of the block table of `node` is set
  /// (i1, shaped like the indices).
  using TableLookup = std::function<Value(
      ImplicitLocOpBuilder &, const mask::Node &node, Value row, Value col)>;
  /// Returns whether query `q` and key `k` have the same segment id.
  using SegmentLookup =
      std::function<Value(ImplicitLocOpBuilder &, Value q, Value k)>;

  /// What a rectangle of scores holds at run time: some allowed pair
  /// (`any`) and only allowed pairs (`all`), i1 values.
  struct TileKind {
    Value any, all;
  };

  /// A custom predicate (a mask region, ModRegion.h) in IR: whether query
  /// `q` may see key `k` (unaligned positions, scalars or vectors like
  /// emitAllowed's), and the kind of the rectangle of queries [q0, q1] and
  /// keys [k0, k1] (inclusive index values). Where the data lives decides
  /// how captured tensors are read, so the caller provides both.
  struct CustomLookup {
    std::function<Value(ImplicitLocOpBuilder &, const mask::Node &node, Value q,
                        Value k)>
        allowed;
    std::function<TileKind(ImplicitLocOpBuilder &, const mask::Node &node,
                           Value q0, Value q1, Value k0, Value k1)>
        tileKind;
  };

  MaskEmitter(const mask::Mask &mask, TableLookup table, SegmentLookup segments,
              CustomLookup custom = {})
      : mask(mask), table(std::move(table)), segments(std::move(segments)),
        custom(std::move(custom)) {}

  /// Emits the i1 (or vector of i1) deciding whether query `q` of head
  /// `head` may see key `k`. `head` is an index scalar; `q` and `k` have the
  /// same type (index, or a vector of integers; one may be a scalar of the
  /// vector's element type broadcast by the caller). `offset` is the key
  /// position of query 0 (`Lk - Lq`), shaped like `q`; without it the
  /// mask's static lengths give it.
  Value emitAllowed(ImplicitLocOpBuilder &b, Value head, Value q, Value k,
                    Value offset = Value()) const;

  /// As emitAllowed, with the query's key position `i` given (`q + Lk -
  /// Lq` there). A block of a longer sequence passes its positions in
  /// that sequence (a sequence-parallel rank's chunk: `q + offset`, the
  /// query's own index as its position); block tables and segment ids are
  /// read at `q` and `k`.
  Value emitAllowedAt(ImplicitLocOpBuilder &b, Value head, Value q, Value i,
                      Value k) const;

  /// Emits the classification of the rectangle of queries [q0, q1] and keys
  /// [k0, k1] (inclusive index values, non-empty) of head `head`, with
  /// `offset` the key position of query 0. Conservative where exactness
  /// would cost: `all` only when every pair is allowed, `any` false only
  /// when no pair is; the rest is masked per element. The IR counterpart of
  /// mask::Mask::classify for lengths known only at run time.
  TileKind emitTileKind(ImplicitLocOpBuilder &b, Value head, Value q0, Value q1,
                        Value k0, Value k1, Value offset) const;

  /// Emits the keys [lo, hi] (inclusive index values) outside which queries
  /// [q0, q1] of head `head` see no key, or returns std::nullopt when the
  /// pattern bounds no range (every key may be allowed).
  std::optional<std::pair<Value, Value>> emitKeyRange(ImplicitLocOpBuilder &b,
                                                      Value head, Value q0,
                                                      Value q1,
                                                      Value offset) const;
  /// As emitKeyRange, for the queries at key positions [i0, i1].
  std::optional<std::pair<Value, Value>>
  emitKeyRangeAt(ImplicitLocOpBuilder &b, Value head, Value i0, Value i1) const;
  /// True if emitKeyRange gives a range for this mask (the pattern bounds
  /// the keys of every query: causal, windows, and unions of them or
  /// intersections with one), decided at compile time.
  bool boundsKeys() const;

  /// Emits `v` as a constant of the index-like type `type`.
  static Value constant(ImplicitLocOpBuilder &b, Type type, int64_t v);

private:
  Value emitNode(ImplicitLocOpBuilder &b, const mask::Node &node, Value head,
                 Value q, Value i, Value k) const;
  TileKind emitNodeKind(ImplicitLocOpBuilder &b, const mask::Node &node,
                        Value head, Value i0, Value i1, Value k0,
                        Value k1) const;
  std::optional<std::pair<Value, Value>> emitNodeRange(ImplicitLocOpBuilder &b,
                                                       const mask::Node &node,
                                                       Value head, Value i0,
                                                       Value i1) const;

  const mask::Mask &mask;
  TableLookup table;
  SegmentLookup segments;
  CustomLookup custom;
  /// The unaligned first and last query of the tile emitTileKind
  /// classifies (what a custom predicate reads).
  mutable Value tileQ0, tileQ1;
};

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_MASKEMITTER_H
