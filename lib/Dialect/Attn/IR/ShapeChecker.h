//===- ShapeChecker.h - Verification helpers of the attn ops ----*- C++ -*-===//
//
// Internal to the attn dialect library: the checks every attention-like op's
// verifier shares, with the wording of their diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_IR_SHAPECHECKER_H
#define ATTN_LIB_DIALECT_ATTN_IR_SHAPECHECKER_H

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

#include <cmath>

namespace mlir::attn::detail {

/// A named operand (or result) and its ranked tensor type.
struct Named {
  StringRef name;
  RankedTensorType type;
};

/// Checks the static shape, rank and element type shared by the float
/// tensors of an attention-like op.
class ShapeChecker {
public:
  explicit ShapeChecker(Operation *op) : op(op) {}

  /// Dimensions `dims` of every listed tensor are static (the head counts
  /// and head dims of attention; batch and lengths may be dynamic).
  LogicalResult requireStaticDims(ArrayRef<Named> values,
                                  ArrayRef<int64_t> dims) {
    for (const Named &v : values)
      for (int64_t d : dims)
        if (v.type && d < v.type.getRank() && v.type.isDynamicDim(d))
          return op->emitOpError()
                 << "requires static head counts and head dims (dimension " << d
                 << "), but " << v.name << " has type " << v.type;
    return success();
  }

  /// Every listed tensor has a static shape.
  LogicalResult requireStatic(ArrayRef<Named> values) {
    for (const Named &v : values)
      if (v.type && !v.type.hasStaticShape())
        return op->emitOpError() << "requires static shapes, but " << v.name
                                 << " has type " << v.type;
    return success();
  }

  /// Every listed tensor has rank `rank`; `what` describes the layout.
  LogicalResult requireRank(ArrayRef<Named> values, int64_t rank,
                            StringRef what) {
    for (const Named &v : values)
      if (v.type && v.type.getRank() != rank)
        return op->emitOpError() << "expects " << v.name << " of rank " << rank
                                 << " (" << what << "), got " << v.type;
    return success();
  }

  /// Every listed tensor has the element type of the first.
  LogicalResult requireSameElementType(ArrayRef<Named> values) {
    Type expected = values.front().type.getElementType();
    for (const Named &v : values)
      if (v.type && v.type.getElementType() != expected)
        return op->emitOpError()
               << "expects " << v.name << " to have element type " << expected
               << " like " << values.front().name << ", got "
               << v.type.getElementType();
    return success();
  }

  /// `a[ai] == b[bi]` where both are static (a dynamic size is checked at
  /// run time), describing the dimension as `dim`.
  LogicalResult requireSameDim(const Named &a, int64_t ai, const Named &b,
                               int64_t bi, StringRef dim) {
    if (!compatible(a.type.getDimSize(ai), b.type.getDimSize(bi)))
      return op->emitOpError()
             << "expects " << a.name << " and " << b.name << " to agree on "
             << dim << ", got " << a.type.getDimSize(ai) << " and "
             << b.type.getDimSize(bi);
    return success();
  }

  /// The tensor has `shape` where both are static (an operand's dynamic
  /// size, or a dynamic size in `shape`, is checked at run time).
  LogicalResult requireShape(const Named &v, ArrayRef<int64_t> shape,
                             StringRef what) {
    bool ok = v.type.getRank() == static_cast<int64_t>(shape.size());
    for (size_t i = 0; ok && i < shape.size(); ++i)
      ok = compatible(v.type.getDimSize(i), shape[i]);
    if (!ok) {
      InFlightDiagnostic diag = op->emitOpError()
                                << "expects " << v.name << " of shape ";
      printShape(diag, shape);
      return diag << " (" << what << "), got " << v.type;
    }
    return success();
  }

  /// The result has exactly `shape`: dynamic where the size it comes from
  /// is dynamic, static and equal elsewhere.
  LogicalResult requireExactShape(const Named &v, ArrayRef<int64_t> shape,
                                  StringRef what) {
    if (v.type.getShape() != shape) {
      InFlightDiagnostic diag = op->emitOpError()
                                << "expects " << v.name << " of shape ";
      printShape(diag, shape);
      return diag << " (" << what << "), got " << v.type;
    }
    return success();
  }

  /// Sizes that may be equal at run time: equal, or one of them dynamic.
  static bool compatible(int64_t a, int64_t b) {
    return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
  }

  /// A bias of shape `{1 or batch} x {1 or heads} x queryLen x keyLen`.
  LogicalResult requireBias(const Named &bias, int64_t batch, int64_t heads,
                            int64_t queryLen, int64_t keyLen,
                            bool allowRank2 = false) {
    if (!bias.type)
      return success();
    if (!allowRank2 &&
        failed(requireRank({bias}, 4, "batch x heads x Lq x Lk")))
      return failure();
    ArrayRef<int64_t> s = bias.type.getShape();
    bool ok;
    if (allowRank2 && s.size() == 2) {
      ok = compatible(s[0], queryLen) && compatible(s[1], keyLen);
    } else if (s.size() == 4) {
      ok = (s[0] == 1 || compatible(s[0], batch)) &&
           (s[1] == 1 || s[1] == heads) && compatible(s[2], queryLen) &&
           compatible(s[3], keyLen);
    } else {
      ok = false;
    }
    if (!ok) {
      InFlightDiagnostic diag = op->emitOpError()
                                << "expects " << bias.name << " of shape ";
      if (allowRank2) {
        printShape(diag, {queryLen, keyLen});
        diag << " or ";
      }
      diag << "{1 or ";
      printShape(diag, {batch});
      diag << "}x{1 or " << heads << "}x";
      printShape(diag, {queryLen, keyLen});
      return diag << ", got " << bias.type;
    }
    return success();
  }

  /// A scale or epsilon attribute value.
  LogicalResult requireFinite(std::optional<APFloat> attr, StringRef name,
                              bool positive) {
    if (!attr)
      return success();
    double value = attr->convertToDouble();
    if (!std::isfinite(value) || (positive && value <= 0))
      return op->emitOpError()
             << name << " must be finite" << (positive ? " and positive" : "")
             << ", got " << value;
    return success();
  }

  /// Prints `shape` as `2x?x64`.
  static void printShape(InFlightDiagnostic &diag, ArrayRef<int64_t> shape) {
    llvm::interleave(
        shape, diag,
        [&](int64_t d) {
          if (ShapedType::isDynamic(d))
            diag << "?";
          else
            diag << d;
        },
        "x");
  }

private:
  Operation *op;
};

inline RankedTensorType typeOf(Value v) {
  return v ? cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

inline double defaultScale(int64_t headDim) {
  return 1.0 / std::sqrt(static_cast<double>(headDim));
}

/// Checks the query/key/value/result dimensions shared by attention-like
/// ops and returns them. With `pagedKeyLen`, key and value are pools of
/// pages (attn.attention's page_table): their dim 0 counts pages, not the
/// batch, and the key length is `*pagedKeyLen`.
FailureOr<AttentionDims>
verifyQKV(ShapeChecker &check, Operation *op, Named q, Named k, Named v,
          Named result, std::optional<int64_t> pagedKeyLen = std::nullopt);

/// The dimensions of query/key/value tensors (already verified).
AttentionDims dimsOf(Value query, Value key, Value value);

/// Allowed (query, key) pairs summed over the query heads of one batch.
double countAllowedPairs(const mask::Mask &m);

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_IR_SHAPECHECKER_H
