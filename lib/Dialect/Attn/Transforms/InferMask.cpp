//===- InferMask.cpp - Constant mask tensors into patterns ----------------===//
//
// attn-infer-mask: a constant mask operand of attn.attention becomes the
// pattern it equals (or the #attn.block of its uniform blocks), so that the
// kernels know its blocks at compile time. See the pass description.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnAttrs.h"
#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"

#include "attn-opt/Mask/BlockLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <numeric>
#include <optional>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNINFERMASK
#include "attn-opt/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The allowed set of one (batch, head) slice of a mask: `rows x cols`,
/// row-major.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> bits;
  bool at(int64_t i, int64_t j) const { return bits[i * cols + j]; }
  bool operator==(const Matrix &o) const { return bits == o.bits; }
};

/// True if `pattern` allows exactly `m` (one head, queries aligned to the
/// end of the keys), comparing row by row and stopping at the first
/// difference.
bool equals(MaskPatternAttrInterface pattern, const Matrix &m) {
  mask::Mask mask = buildMask(pattern, {1, m.rows, m.cols, false});
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j)
      if (mask.isAllowed(0, i, j) != m.at(i, j))
        return false;
  return true;
}

/// The `#attn.block` of the largest `s x s` blocks (s = 64, 32, ..., 1) on
/// which `m` is uniform, or null when its layout would exceed `maxBlocks`.
MaskPatternAttrInterface blockPattern(MLIRContext *ctx, const Matrix &m,
                                      int64_t maxBlocks) {
  for (int64_t s = 64; s >= 1; s /= 2) {
    int64_t rows = (m.rows + s - 1) / s, cols = (m.cols + s - 1) / s;
    if (rows * cols > maxBlocks)
      return {};
    std::vector<std::string> layout(rows, std::string(cols, '0'));
    bool uniform = true;
    for (int64_t r = 0; r < rows && uniform; ++r)
      for (int64_t c = 0; c < cols && uniform; ++c) {
        bool first = m.at(r * s, c * s);
        for (int64_t i = r * s; i < std::min(m.rows, (r + 1) * s) && uniform;
             ++i)
          for (int64_t j = c * s; j < std::min(m.cols, (c + 1) * s); ++j)
            if (m.at(i, j) != first) {
              uniform = false;
              break;
            }
        layout[r][c] = first ? '1' : '0';
      }
    if (!uniform)
      continue;
    SmallVector<StringAttr> rowsAttr;
    for (const std::string &row : layout)
      rowsAttr.push_back(StringAttr::get(ctx, row));
    return BlockAttr::get(ctx, s, rowsAttr);
  }
  return {};
}

/// The pattern `m` equals (null: every key allowed), or std::nullopt.
std::optional<MaskPatternAttrInterface>
inferPattern(MLIRContext *ctx, const Matrix &m, int64_t maxBlocks) {
  if (llvm::all_of(m.bits, [](uint8_t b) { return b != 0; }))
    return MaskPatternAttrInterface();
  int64_t offset = m.cols - m.rows; // key position of query 0
  // Global tokens: keys every query sees whose own query sees every key.
  SmallVector<int64_t> tokens;
  for (int64_t j = 0; j < m.cols; ++j) {
    bool column = true;
    for (int64_t i = 0; i < m.rows && column; ++i)
      column = m.at(i, j);
    int64_t q = j - offset;
    bool row = true;
    if (q >= 0 && q < m.rows)
      for (int64_t k = 0; k < m.cols && row; ++k)
        row = m.at(q, k);
    if (column && row)
      tokens.push_back(j);
  }
  auto isToken = [&](int64_t pos) { return llvm::binary_search(tokens, pos); };
  // The offsets j - i of what the tokens do not explain.
  std::optional<int64_t> lo, hi;
  int64_t g = 0;
  for (int64_t i = 0; i < m.rows; ++i) {
    if (isToken(i + offset))
      continue;
    for (int64_t j = 0; j < m.cols; ++j)
      if (m.at(i, j) && !isToken(j)) {
        int64_t d = j - (i + offset);
        lo = lo ? std::min(*lo, d) : d;
        hi = hi ? std::max(*hi, d) : d;
        g = std::gcd(g, std::abs(d));
      }
  }
  SmallVector<MaskPatternAttrInterface> bases;
  auto causal = CausalAttr::get(ctx);
  bases.push_back(causal);
  // Unbounded (strided) before bounded (a window, dilated): on a finite
  // matrix a dilated window can equal a strided pattern too.
  if (g >= 1) {
    bases.push_back(StridedAttr::get(ctx, g));
    bases.push_back(IntersectAttr::get(
        ctx,
        {causal, cast<MaskPatternAttrInterface>(StridedAttr::get(ctx, g))}));
  }
  if (lo && hi && *lo <= 0 && *hi >= 0) {
    bases.push_back(WindowAttr::get(ctx, -*lo, *hi));
    if (g > 1)
      bases.push_back(DilatedAttr::get(ctx, -*lo, *hi, g));
  }
  // Fixed: the query at key position p sees its own block of `stride`;
  // `c` is what it sees of another whole block. Strides up to 512.
  if (m.rows > 0) {
    int64_t p = offset + m.rows - 1; // the last query sees the most
    for (int64_t stride = 2; stride <= std::min<int64_t>(512, m.cols);
         ++stride) {
      int64_t own = p / stride;
      int64_t other = own > 0 ? 0 : 1;
      if ((other + 1) * stride > m.cols)
        continue;
      int64_t c = 0;
      for (int64_t j = other * stride; j < (other + 1) * stride; ++j)
        c += m.at(m.rows - 1, j);
      if (c < 1 || c > stride)
        continue;
      auto fixed =
          cast<MaskPatternAttrInterface>(FixedAttr::get(ctx, stride, c));
      bases.push_back(fixed);
      bases.push_back(IntersectAttr::get(ctx, {causal, fixed}));
    }
  }
  SmallVector<MaskPatternAttrInterface> candidates;
  MaskPatternAttrInterface global;
  if (!tokens.empty())
    global = GlobalAttr::get(ctx, tokens);
  if (global)
    candidates.push_back(global);
  for (MaskPatternAttrInterface base : bases) {
    candidates.push_back(base);
    if (global)
      candidates.push_back(UnionAttr::get(ctx, {base, global}));
  }
  for (MaskPatternAttrInterface c : candidates)
    if (equals(c, m))
      return c;
  if (MaskPatternAttrInterface block = blockPattern(ctx, m, maxBlocks))
    return block;
  return std::nullopt;
}

struct InferMaskPass : public attn::impl::AttnInferMaskBase<InferMaskPass> {
  using Base::Base;
  /// Layouts of `#attn.block` are limited to this many blocks.
  static constexpr int64_t kMaxBlocks = int64_t(1) << 22;

  void runOnOperation() override {
    if (blockQ < 1 || blockK < 1) {
      getOperation()->emitError()
          << "attn-infer-mask: block-q and block-k must be positive";
      return signalPassFailure();
    }
    getOperation()->walk([&](AttentionOp op) { process(op); });
  }

  void process(AttentionOp op) {
    Value maskValue = op.getMask();
    DenseElementsAttr dense;
    if (!maskValue || !matchPattern(maskValue, m_Constant(&dense)))
      return;
    MLIRContext *ctx = op.getContext();
    AttentionDims d = op.getDims();
    auto type = cast<RankedTensorType>(maskValue.getType());
    if (ShapedType::isDynamic(d.queryLen) || ShapedType::isDynamic(d.keyLen)) {
      op.emitRemark() << "attn-infer-mask: kept the constant mask: the "
                         "lengths are dynamic";
      return;
    }
    int64_t rank = type.getRank();
    int64_t batches = rank == 4 ? type.getDimSize(0) : 1;
    int64_t heads = rank == 4 ? type.getDimSize(1) : 1;
    int64_t lq = d.queryLen, lk = d.keyLen;
    bool isBool = type.getElementType().isInteger(1);

    // The allowed sets per (batch, head), and the finite non-zero entries of
    // an additive mask.
    std::vector<Matrix> slices(batches * heads, Matrix{lq, lk, {}});
    // An additive entry allows its key above -inf (a NaN does not).
    auto allows = [](const APFloat &v) {
      return !v.isNaN() && !(v.isInfinity() && v.isNegative());
    };
    bool hasValues = false;
    SmallVector<APFloat> values;
    if (isBool) {
      auto bits = dense.getValues<bool>();
      for (int64_t s = 0; s < batches * heads; ++s)
        for (int64_t e = 0; e < lq * lk; ++e)
          slices[s].bits.push_back(bits[dense.isSplat() ? 0 : s * lq * lk + e]);
    } else {
      values = llvm::to_vector(dense.getValues<APFloat>());
      for (int64_t s = 0; s < batches * heads; ++s)
        for (int64_t e = 0; e < lq * lk; ++e) {
          const APFloat &v = values[dense.isSplat() ? 0 : s * lq * lk + e];
          bool allowed = allows(v);
          slices[s].bits.push_back(allowed);
          if (allowed && !v.isZero())
            hasValues = true;
        }
    }
    if (hasValues && op.getBias()) {
      op.emitRemark() << "attn-infer-mask: kept the constant mask: its "
                         "finite non-zero entries would become a bias, and "
                         "the op has one";
      return;
    }
    // Patterns do not depend on the batch.
    for (int64_t b = 1; b < batches; ++b)
      for (int64_t h = 0; h < heads; ++h)
        if (!(slices[b * heads + h] == slices[h])) {
          op.emitRemark() << "attn-infer-mask: kept the constant mask: it "
                             "differs across the batch (patterns do not)";
          return;
        }
    SmallVector<MaskPatternAttrInterface> perHead;
    for (int64_t h = 0; h < heads; ++h) {
      std::optional<MaskPatternAttrInterface> p =
          inferPattern(ctx, slices[h], kMaxBlocks);
      if (!p) {
        op.emitRemark() << "attn-infer-mask: kept the constant mask: no "
                           "pattern equals it and its block layout would "
                           "exceed "
                        << kMaxBlocks << " blocks";
        return;
      }
      perHead.push_back(*p);
    }
    MaskPatternAttrInterface inferred = perHead.front();
    if (llvm::any_of(perHead, [&](MaskPatternAttrInterface p) {
          return p != perHead.front();
        })) {
      // A head that sees every key (null) gets a window over every key.
      SmallVector<MaskPatternAttrInterface> parts;
      for (MaskPatternAttrInterface p : perHead)
        parts.push_back(p ? p : WindowAttr::get(ctx, lq + lk, lq + lk));
      inferred = PerHeadAttr::get(ctx, parts);
    }
    MaskPatternAttrInterface pattern = op.getPatternAttr();
    if (inferred)
      pattern =
          pattern ? IntersectAttr::get(ctx, {pattern, inferred}) : inferred;

    // The finite entries of an additive mask: a bias.
    if (hasValues) {
      SmallVector<int64_t> shape = {batches, heads, lq, lk};
      SmallVector<APFloat> bias;
      for (int64_t e = 0; e < batches * heads * lq * lk; ++e) {
        const APFloat &v = values[dense.isSplat() ? 0 : e];
        bias.push_back(allows(v) ? v : APFloat::getZero(v.getSemantics()));
      }
      OpBuilder b(op);
      auto biasType = RankedTensorType::get(shape, type.getElementType());
      Value biasValue = arith::ConstantOp::create(
          b, op.getLoc(), DenseElementsAttr::get(biasType, bias));
      op.getBiasMutable().assign(biasValue);
    }
    op.getMaskMutable().clear();
    op.setPatternAttr(pattern);
    InFlightDiagnostic remark = op.emitRemark();
    remark << "attn-infer-mask: the constant mask is ";
    if (inferred)
      remark << inferred;
    else
      remark << "every key";
    if (hasValues)
      remark << ", its finite entries a bias";
    if (pattern && BlockLayout::fitsAtCompileTime(op.getPatternMask())) {
      BlockLayout layout = op.getBlockLayout(blockQ, blockK);
      remark << "; " << static_cast<int64_t>(blockQ) << " x "
             << static_cast<int64_t>(blockK) << " blocks: visiting "
             << layout.countVisited() << " of " << layout.countBlocks() << " ("
             << layout.countFull() << " full)";
    }
    if (maskValue.use_empty())
      if (Operation *def = maskValue.getDefiningOp())
        def->erase();
  }
};
} // namespace
