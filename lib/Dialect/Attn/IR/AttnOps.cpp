//===- AttnOps.cpp - attn dialect operations ------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/IR/ModRegion.h"

#include "ShapeChecker.h"
#include "mlir/IR/IRMapping.h"

#include "attn-opt/Runtime/Host/RuntimeErrors.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

#include "attn-opt/Dialect/Attn/IR/AttnOpInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "attn-opt/Dialect/Attn/IR/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared verification helpers
//===----------------------------------------------------------------------===//

/// Checks the query/key/value/result dimensions shared by attention-like
/// ops and returns them.
FailureOr<AttentionDims>
mlir::attn::detail::verifyQKV(ShapeChecker &check, Operation *op, Named q,
                              Named k, Named v, Named result,
                              std::optional<int64_t> pagedKeyLen) {
  if (failed(check.requireRank({q, k, v, result}, 4,
                               "batch x heads x length x dim")))
    return failure();
  // (Paged keys and values: dim 0 counts pages, dim 2 is the page.)
  if ((!pagedKeyLen &&
       failed(check.requireSameDim(q, 0, k, 0, "the batch size"))) ||
      failed(check.requireSameDim(k, 0, v, 0,
                                  pagedKeyLen ? "the number of pages"
                                              : "the batch size")) ||
      failed(check.requireSameDim(k, 1, v, 1, "the number of heads")) ||
      failed(check.requireSameDim(
          k, 2, v, 2, pagedKeyLen ? "the page size" : "the key length")) ||
      failed(check.requireSameDim(q, 3, k, 3, "the head dimension")))
    return failure();
  AttentionDims d{q.type.getDimSize(0),
                  q.type.getDimSize(1),
                  k.type.getDimSize(1),
                  q.type.getDimSize(2),
                  pagedKeyLen ? *pagedKeyLen : k.type.getDimSize(2),
                  q.type.getDimSize(3),
                  v.type.getDimSize(3)};
  if (d.headDim == 0 || d.valueDim == 0)
    return op->emitOpError()
           << "expects head dimensions of at least 1, got " << d.headDim
           << " (query and key) and " << d.valueDim << " (value)";
  for (auto [len, what] :
       {std::pair(d.queryLen, "query"), std::pair(d.keyLen, "key")})
    if (!ShapedType::isDynamic(len) && len > mask::kMaxSequenceLength)
      return op->emitOpError()
             << "supports sequences of at most 2^30 ("
             << mask::kMaxSequenceLength << ") positions, got a " << what
             << " length of " << len;
  if (d.kvHeads == 0 || d.queryHeads % d.kvHeads != 0)
    return op->emitOpError()
           << "expects the query heads (" << d.queryHeads
           << ") to be a multiple of the key/value heads (" << d.kvHeads << ")";
  if (failed(check.requireExactShape(
          result, {d.batch, d.queryHeads, d.queryLen, d.valueDim},
          "batch x query heads x query length x value dim")))
    return failure();
  return d;
}

std::optional<int64_t> mlir::attn::detail::staticTensorBytes(ShapedType type) {
  unsigned bits = type.getElementType().isIntOrFloat()
                      ? type.getElementType().getIntOrFloatBitWidth()
                      : 64;
  int64_t bytes = std::max<int64_t>(1, (bits + 7) / 8);
  for (int64_t size : type.getShape())
    if (!ShapedType::isDynamic(size) && llvm::MulOverflow(bytes, size, bytes))
      return std::nullopt;
  return bytes;
}

LogicalResult mlir::attn::detail::verifyAllocatableTensors(Operation *op) {
  auto check = [&](Type t, StringRef what, unsigned i) -> LogicalResult {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type)
      return success();
    std::optional<int64_t> bytes = staticTensorBytes(type);
    if (bytes && *bytes <= kMaxTensorBytes)
      return success();
    InFlightDiagnostic diag = op->emitOpError()
                              << "expects tensors of at most 2^47 bytes (the "
                                 "address space), but "
                              << what << " #" << i << " of type " << type
                              << " needs ";
    if (bytes)
      diag << *bytes << " bytes";
    else
      diag << "more than 2^63 bytes";
    return diag;
  };
  for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(t, "operand", i)))
      return failure();
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(t, "result", i)))
      return failure();
  return success();
}

AttentionDims mlir::attn::detail::dimsOf(Value query, Value key, Value value) {
  auto q = typeOf(query), k = typeOf(key), v = typeOf(value);
  return {q.getDimSize(0), q.getDimSize(1), k.getDimSize(1), q.getDimSize(2),
          k.getDimSize(2), q.getDimSize(3), v.getDimSize(3)};
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

void AttentionOp::build(OpBuilder &builder, OperationState &state, Value query,
                        Value key, Value value,
                        NormalizerAttrInterface normalizer,
                        MaskPatternAttrInterface pattern) {
  auto q = typeOf(query), v = typeOf(value);
  auto resultType = RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      q.getElementType());
  build(builder, state, resultType, /*lse=*/Type(), query, key, value,
        /*bias=*/Value(),
        /*gate=*/Value(), /*query_segments=*/Value(),
        /*key_segments=*/Value(), /*projection=*/Value(),
        /*query_lengths=*/Value(), /*key_lengths=*/Value(),
        /*query_offsets=*/Value(), /*key_offsets=*/Value(), /*mask=*/Value(),
        /*alibi_slopes=*/Value(), /*sinks=*/Value(), /*page_table=*/Value(),
        /*captures=*/ValueRange(), normalizer, pattern,
        /*scale=*/FloatAttr(), /*qk_norm_eps=*/FloatAttr(),
        /*softcap=*/FloatAttr(), /*layout=*/BlockLayoutAttr());
}

// AttentionOperands.def lists the ODS operands of attn.attention; the
// count is checked here, the order and accessors by
// unittests/AttentionOperandsTest.cpp.
static_assert(
    std::tuple_size_v<AttentionOp::Properties::operandSegmentSizesTy> ==
        kNumAttentionOperands,
    "AttentionOperands.def must list every operand of "
    "attn.attention in ODS order");

void AttentionOp::build(OpBuilder &builder, OperationState &state,
                        const AttentionProblem &p) {
  auto f32Attr = [&](std::optional<double> v) {
    return v ? builder.getF32FloatAttr(*v) : FloatAttr();
  };
  const AttentionModifiers &mods = p.modifiers;
  const AttentionSequences &seq = p.sequences;
  build(
      builder, state, p.results.output, p.results.lse, p.query, p.key, p.value,
      mods.bias, mods.gate, p.segments.query,
      p.segments.separateKeys ? p.segments.key : Value(), p.projection,
      seq.queryLengths, seq.keyLengths, seq.queryOffsets, seq.keyOffsets,
      p.masking.tensor, mods.alibiSlopes, mods.sinks, p.paging.pageTable,
      p.regions.captures, p.normalizer, p.masking.pattern,
      f32Attr(p.explicitScale ? std::optional<double>(p.scale) : std::nullopt),
      f32Attr(p.qkNormEps), f32Attr(mods.softcap), p.masking.layout);
  // The regions (state.regions: mask_mod, then score_mod) copied.
  IRMapping map;
  if (p.regions.maskMod)
    p.regions.maskMod->cloneInto(state.regions[0].get(), map);
  if (p.regions.scoreMod)
    p.regions.scoreMod->cloneInto(state.regions[1].get(), map);
}

AttentionProblem AttentionOp::getProblem() { return getProblem(getDims()); }

AttentionProblem AttentionOp::getProblem(const AttentionDims &dims) {
  auto toDouble = [](std::optional<APFloat> v) -> std::optional<double> {
    if (!v)
      return std::nullopt;
    return v->convertToDouble();
  };
  AttentionProblem p;
  p.query = getQuery();
  p.key = getKey();
  p.value = getValue();
  p.dims = dims;
  p.elementType = typeOf(getQuery()).getElementType();

  p.normalizer = getNormalizer();
  p.explicitScale = static_cast<bool>(getScale());
  p.scale = getEffectiveScale();
  p.qkNormEps = toDouble(getQkNormEps());
  p.projection = getProjection();

  p.masking = {getPatternAttr(), getMask(), getLayoutAttr()};
  p.sequences = {getQueryLengths(), getKeyLengths(), getQueryOffsets(),
                 getKeyOffsets()};
  p.segments.query = getQuerySegments();
  p.segments.key = getEffectiveKeySegments();
  p.segments.separateKeys = static_cast<bool>(getKeySegments());
  p.segments.bound = isSegmentBound();

  p.modifiers.bias = getBias();
  p.modifiers.alibiSlopes = getAlibiSlopes();
  p.modifiers.sinks = getSinks();
  p.modifiers.softcap = toDouble(getSoftcap());
  p.modifiers.gate = getGate();
  if (Value table = getPageTable())
    p.paging = {table, getPageSize()};
  if (!getMaskMod().empty())
    p.regions.maskMod = &getMaskMod();
  if (!getScoreMod().empty())
    p.regions.scoreMod = &getScoreMod();
  p.regions.captures = llvm::to_vector(getCaptures());
  p.results = {getType(), getLse() ? typeOf(getLse()) : RankedTensorType()};
  return p;
}

static LogicalResult verifyVarlen(AttentionOp op, ShapeChecker &check,
                                  const AttentionProblem &p);

/// A paged KV cache: static page size, key_lengths, no packed batch or
/// segments; returns the key length, max_pages x page (dynamic when
/// max_pages is).
static FailureOr<int64_t> verifyPageTable(AttentionOp op, ShapeChecker &check) {
  auto k = typeOf(op.getKey()), pt = typeOf(op.getPageTable());
  if (k.getRank() != 4)
    return op.emitOpError() << "expects paged key and value of rank 4 "
                               "(pages x heads x page x dim), got "
                            << k;
  int64_t page = k.getDimSize(2);
  if (ShapedType::isDynamic(page) || page < 1)
    return op.emitOpError()
           << "expects a static, positive page size (dimension 2 of key), got "
           << k;
  if (!op.getKeyLengths())
    return op.emitOpError() << "takes key_lengths with a page_table (the "
                               "cache length of each sequence)";
  if (op.getQueryOffsets())
    return op.emitOpError()
           << "does not take a page_table with a packed batch (offsets)";
  if (op.getQuerySegments())
    return op.emitOpError() << "does not take segment ids with a page_table";
  int64_t pages = pt.getDimSize(1);
  if (ShapedType::isDynamic(pages))
    return ShapedType::kDynamic;
  if (pages > std::numeric_limits<int32_t>::max() / page)
    return op.emitOpError() << "has a page table of " << pages << " pages of "
                            << page << " keys: more keys than int32 positions";
  return pages * page;
}

/// Soft-capping, ALiBi and sinks: softmax and pointwise scores only (sinks:
/// softmax only), one slope or sink per query head.
static LogicalResult verifyScoreModifiers(AttentionOp op, ShapeChecker &check,
                                          const AttentionProblem &p) {
  const AttentionModifiers &mods = p.modifiers;
  Named slopes{"alibi_slopes", typeOf(mods.alibiSlopes)},
      sinks{"sinks", typeOf(mods.sinks)};
  if (p.isKernel() && (mods.softcap || slopes.type))
    return op.emitOpError()
           << (mods.softcap ? "softcap" : "alibi_slopes")
           << " does not apply to kernel attention (it has no scores)";
  if (sinks.type && !p.isSoftmax())
    return op.emitOpError() << "sinks join a softmax's denominator: they need "
                               "#attn.softmax";
  if (failed(check.requireStatic({slopes, sinks})))
    return failure();
  for (const Named &n : {slopes, sinks})
    if (n.type &&
        failed(check.requireShape(n, {p.dims.queryHeads}, "query heads")))
      return failure();
  return success();
}

/// Checks the `layout` attribute: a softmax or pointwise normalizer, blocks
/// that cover the scores of every query head, and the very layout the
/// pattern gives.
static LogicalResult verifyLayout(AttentionOp op, const AttentionProblem &p) {
  BlockLayoutAttr layout = p.masking.layout;
  const AttentionDims &d = p.dims;
  if (!layout)
    return success();
  if (ShapedType::isDynamic(d.queryLen) || ShapedType::isDynamic(d.keyLen))
    return op.emitOpError() << "has a block layout, which needs static query "
                               "and key lengths (with dynamic lengths the "
                               "kernels classify blocks at run time)";
  if (p.isKernel())
    return op.emitOpError() << "has a block layout, which applies only to "
                               "softmax and pointwise attention";
  int64_t rows = (d.queryLen + layout.getBlockQ() - 1) / layout.getBlockQ();
  int64_t cols = (d.keyLen + layout.getBlockK() - 1) / layout.getBlockK();
  if (layout.getQueryBlocks() != rows || layout.getKeyBlocks() != cols)
    return op.emitOpError()
           << "expects a layout of " << rows << "x" << cols << " blocks for "
           << d.queryLen << " queries and " << d.keyLen << " keys in blocks of "
           << layout.getBlockQ() << "x" << layout.getBlockK() << ", got "
           << layout.getQueryBlocks() << "x" << layout.getKeyBlocks();
  if (static_cast<int64_t>(layout.getHeads().size()) != d.queryHeads)
    return op.emitOpError()
           << "expects a layout entry for each of the " << d.queryHeads
           << " query heads, got " << layout.getHeads().size();
  if (!BlockLayout::fitsAtCompileTime(op.getPatternMask()))
    return op.emitOpError() << "has a layout, but its lengths take more than "
                            << BlockLayout::kMaxBlocks
                            << " blocks (layouts this large are classified "
                               "at run time)";
  BlockLayout expected = BlockLayout::compute(
      op.getPatternMask(), layout.getBlockQ(), layout.getBlockK());
  std::string diff = layout.getLayout().firstDifference(expected);
  if (!diff.empty())
    return op.emitOpError()
           << "has a layout that does not match its pattern: " << diff;
  return success();
}

/// The mask operand: `Lq x Lk` or broadcast from `B x Hq x Lq x Lk`, i1 or
/// the op's float type (additive: softmax and pointwise only).
static LogicalResult verifyMaskOperand(AttentionOp op, ShapeChecker &check,
                                       const AttentionProblem &p) {
  const AttentionDims &d = p.dims;
  Named m{"mask", typeOf(p.masking.tensor)};
  if (!m.type)
    return success();
  if (m.type.getRank() == 4 && m.type.isDynamicDim(1))
    return op.emitOpError()
           << "expects a static head dimension of mask, got " << m.type;
  if (failed(check.requireBias(m, d.batch, d.queryHeads, d.queryLen, d.keyLen,
                               /*allowRank2=*/true)))
    return failure();
  if (!p.masking.isBoolean()) {
    Type elem = m.type.getElementType();
    if (elem != p.elementType)
      return op.emitOpError()
             << "expects a boolean (i1) mask or an additive mask of the "
                "query's element type "
             << p.elementType << ", got " << m.type;
    if (p.isKernel())
      return op.emitOpError()
             << "takes only a boolean mask with kernel attention (an additive "
                "mask needs scores to add it to)";
  }
  if (p.sequences.isVarlen())
    return op.emitOpError()
           << "does not take a mask with varlen operands (its rows and "
              "columns would not follow the sequences)";
  if (p.masking.layout)
    return op.emitOpError()
           << "has a block layout and a mask tensor; a layout describes the "
              "pattern only (attn-infer-mask turns a constant mask into a "
              "pattern)";
  return success();
}

/// Where score and mask regions apply, and their captures.
static LogicalResult verifyRegionUse(AttentionOp op,
                                     const AttentionProblem &p) {
  const AttentionRegions &r = p.regions;
  if (r.captures.size() > kMaxCaptures)
    return op.emitOpError()
           << "captures " << r.captures.size() << " tensors, more than the "
           << kMaxCaptures << " a region may read";
  if (!r.captures.empty() && r.empty())
    return op.emitOpError()
           << "has captures but no score or mask region to read them";
  for (Value c : r.captures) {
    if (cast<RankedTensorType>(c.getType()).getRank() == 0)
      return op.emitOpError() << "captures a tensor of rank 0; captured "
                                 "tensors have at least one dimension";
    Type elem = cast<RankedTensorType>(c.getType()).getElementType();
    if (!(elem.isInteger(8) || elem.isInteger(16) || elem.isInteger(32) ||
          elem.isInteger(64) || elem.isIndex() || elem.isF32() ||
          elem.isF16() || elem.isBF16()))
      return op.emitOpError()
             << "captures a tensor of " << elem
             << "; captured tensors hold i8, i16, i32, i64, index, f32, f16 "
                "or bf16 elements";
  }
  if (r.scoreMod && !(p.isSoftmax() || isa<PointwiseAttr>(p.normalizer)))
    return op.emitOpError() << "has a score_mod region, which needs scores: "
                               "softmax or pointwise attention (kernel "
                               "attention has none)";
  if (!r.empty() && p.sequences.isPacked())
    return op.emitOpError()
           << "has a score or mask region and a packed batch (offsets); "
              "regions take padded batches (query_lengths, key_lengths)";
  if (!r.empty() && p.paging.pageTable)
    return op.emitOpError() << "has a score or mask region and a paged KV "
                               "cache, which regions do not support yet";
  return success();
}

LogicalResult AttentionOp::verify() {
  ShapeChecker check(*this);
  Named q{"query", typeOf(getQuery())}, k{"key", typeOf(getKey())},
      v{"value", typeOf(getValue())}, res{"result", typeOf(getResult())},
      bias{"bias", typeOf(getBias())}, gate{"gate", typeOf(getGate())},
      segQ{"segments", typeOf(getQuerySegments())},
      segK{"key_segments", typeOf(getKeySegments())},
      proj{"projection", typeOf(getProjection())};
  // Batch and lengths may be dynamic; head counts and dims may not.
  if (failed(check.requireStaticDims({q, k, v, res, gate}, {1, 3})) ||
      failed(check.requireStaticDims({bias}, {1})) ||
      failed(check.requireStatic({proj})))
    return failure();
  std::optional<int64_t> pagedKeyLen;
  if (isPaged()) {
    FailureOr<int64_t> len = verifyPageTable(*this, check);
    if (failed(len))
      return failure();
    pagedKeyLen = *len;
  }
  FailureOr<AttentionDims> dims =
      verifyQKV(check, *this, q, k, v, res, pagedKeyLen);
  if (failed(dims))
    return failure();
  const AttentionDims &d = *dims;
  // The shapes hold from here on: the rest reads the problem.
  AttentionProblem p = getProblem(d);
  if (isPaged() && failed(check.requireShape(
                       {"page_table", typeOf(getPageTable())},
                       {d.batch, ShapedType::kDynamic}, "batch x max pages")))
    return failure();
  if (failed(check.requireSameElementType({q, k, v, res, bias, gate, proj})))
    return failure();

  if (failed(
          check.requireBias(bias, d.batch, d.queryHeads, d.queryLen, d.keyLen)))
    return failure();
  if (gate.type && failed(check.requireShape(gate, res.type.getShape(),
                                             "the shape of the result")))
    return failure();
  if (failed(verifyMaskOperand(*this, check, p)))
    return failure();

  if (segK.type && !segQ.type)
    return emitOpError() << "key_segments requires segments";
  if (segQ.type) {
    if (failed(check.requireShape(segQ, {d.batch, d.queryLen},
                                  "batch x query length")))
      return failure();
    if (segK.type) {
      if (failed(check.requireShape(segK, {d.batch, d.keyLen},
                                    "batch x key length")))
        return failure();
    } else if (!ShapeChecker::compatible(d.queryLen, d.keyLen)) {
      return emitOpError() << "needs key_segments when the query length ("
                           << d.queryLen << ") differs from the key length ("
                           << d.keyLen << ")";
    }
  }

  auto kernel = dyn_cast<KernelAttr>(getNormalizer());
  if (kernel && bias.type)
    return emitOpError() << "a bias does not apply to kernel attention (it "
                            "has no scores to add it to)";
  if (kernel && getScale() && !(getScale()->convertToDouble() > 0))
    return emitOpError() << "kernel attention scales q and k by sqrt(scale), "
                            "so scale must be positive";
  if (kernel && kernel.getFeatureMap() == FeatureMap::favor && !proj.type &&
      kernel.getFeatures() * d.headDim > kMaxFavorProjection)
    return emitOpError() << "has a FAVOR+ projection of "
                         << kernel.getFeatures() << " x " << d.headDim
                         << " (features x head dim), more than the "
                         << kMaxFavorProjection
                         << " entries a compile-time projection may have "
                            "(pass it as the projection operand)";
  if (proj.type) {
    if (!kernel || kernel.getFeatureMap() != FeatureMap::favor)
      return emitOpError()
             << "projection applies only to #attn.kernel<favor, ...>";
    if (failed(check.requireShape(proj, {kernel.getFeatures(), d.headDim},
                                  "features x head dim")))
      return failure();
  }

  if (failed(check.requireFinite(getScale(), "scale", /*positive=*/false)) ||
      failed(check.requireFinite(getQkNormEps(), "qk_norm_eps",
                                 /*positive=*/true)) ||
      failed(check.requireFinite(getSoftcap(), "softcap", /*positive=*/true)))
    return failure();
  if (failed(verifyScoreModifiers(*this, check, p)))
    return failure();
  if (Value lse = getLse()) {
    if (!isa<SoftmaxAttr>(getNormalizer()))
      return emitOpError() << "has a log-sum-exp result, which only softmax "
                              "attention defines";
    if (failed(check.requireShape({"lse", typeOf(lse)},
                                  {d.batch, d.queryHeads, d.queryLen},
                                  "batch x query heads x query length")))
      return failure();
    // Dynamic exactly where the result is (its B and Lq).
    auto lseType = typeOf(lse);
    for (int64_t i = 0; i < 3; ++i)
      if (lseType.isDynamicDim(i) != getType().isDynamicDim(i))
        return emitOpError() << "expects lse to be dynamic where the result "
                                "is, got "
                             << lseType << " and " << getType();
  }

  MaskPatternAttrInterface pattern = getPatternAttr();
  if (pattern && failed(pattern.verifyPattern([&] { return emitOpError(); },
                                              getPatternShape())))
    return failure();
  if (getQuerySegments() && !(pattern && pattern.usesSegments()))
    return emitOpError() << "has segment ids but its pattern does not use "
                            "them (add #attn.segments)";
  if (failed(verifyRegionUse(*this, p)))
    return failure();
  if (failed(verifyVarlen(*this, check, p)))
    return failure();
  return verifyLayout(*this, p);
}

/// The varlen operands: one form at a time, offsets together, shapes.
static LogicalResult verifyVarlen(AttentionOp op, ShapeChecker &check,
                                  const AttentionProblem &p) {
  const AttentionSequences &seq = p.sequences;
  const AttentionDims &d = p.dims;
  Named lq{"query_lengths", typeOf(seq.queryLengths)},
      lk{"key_lengths", typeOf(seq.keyLengths)},
      cq{"query_offsets", typeOf(seq.queryOffsets)},
      ck{"key_offsets", typeOf(seq.keyOffsets)};
  if (static_cast<bool>(cq.type) != static_cast<bool>(ck.type))
    return op.emitOpError()
           << "takes query_offsets and key_offsets together (a packed batch "
              "needs the rows of both)";
  if (cq.type && (lq.type || lk.type))
    return op.emitOpError() << "takes lengths (a padded batch) or offsets (a "
                               "packed batch), not both";
  if (!seq.isVarlen())
    return success();
  if (p.modifiers.bias)
    return op.emitOpError() << "does not take a bias with varlen operands";
  if (p.masking.layout)
    return op.emitOpError()
           << "has a block layout, which does not apply to varlen batches "
              "(each sequence has its own lengths)";
  if (p.masking.pattern && p.masking.pattern.requiresStaticLengths())
    return op.emitOpError()
           << "has a pattern with compile-time blocks (#attn.random, "
              "#attn.block), which varlen batches do not take (each sequence "
              "has its own lengths)";
  if (lq.type && failed(check.requireShape(lq, {d.batch}, "batch")))
    return failure();
  if (lk.type && failed(check.requireShape(lk, {d.batch}, "batch")))
    return failure();
  if (!cq.type)
    return success();
  if (p.segments.query)
    return op.emitOpError() << "does not take segment ids with a packed batch "
                               "(its sequences are the segments)";
  int64_t keyBatch = typeOf(op.getKey()).getDimSize(0);
  if (d.batch != 1 || keyBatch != 1)
    return op.emitOpError()
           << "holds a packed batch in query and key of batch size 1, got "
           << typeOf(op.getQuery()) << " and " << typeOf(op.getKey());
  if (cq.type.getDimSize(0) == 0)
    return op.emitOpError() << "has empty query_offsets: a packed batch of N "
                               "sequences has N + 1 offsets";
  return check.requireSameDim(cq, 0, ck, 0, "the number of sequences");
}

SmallVector<std::pair<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>>>
AttentionOp::getRuntimeSizeChecks() {
  SmallVector<
      std::pair<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>>>
      checks;
  // Operands by their ODS index (the order of RuntimeErrors.h).
  auto present = [&](int64_t operand) {
    return !getODSOperands(operand).empty();
  };
  auto sizeOf = [&](int64_t operand, int64_t dim) {
    return typeOf(getODSOperands(operand).front()).getDimSize(dim);
  };
  // Dimension `dim` of operand `a` equals dimension `bd` of operand `b`
  // (when both operands are present and not both sizes static).
  auto require = [&](int64_t a, int64_t ad, int64_t b, int64_t bd) {
    if (!present(a) || !present(b))
      return;
    if (!ShapedType::isDynamic(sizeOf(a, ad)) &&
        !ShapedType::isDynamic(sizeOf(b, bd)))
      return;
    checks.push_back({{a, ad}, {b, bd}});
  };
  enum : int64_t {
    Q = kQueryOperand,
    K = kKeyOperand,
    V = kValueOperand,
    Bias = kBiasOperand,
    Gate = kGateOperand,
    SegQ = kQuerySegmentsOperand,
    SegK = kKeySegmentsOperand,
    LenQ = kQueryLengthsOperand,
    LenK = kKeyLengthsOperand,
    OffQ = kQueryOffsetsOperand,
    OffK = kKeyOffsetsOperand,
    Mask = kMaskOperand,
  };
  if (isPaged())
    require(kPageTableOperand, 0, Q, 0);
  else
    require(K, 0, Q, 0);
  require(V, 0, K, 0);
  require(V, 2, K, 2);
  if (present(Bias)) {
    if (sizeOf(Bias, 0) != 1)
      require(Bias, 0, Q, 0);
    require(Bias, 2, Q, 2);
    require(Bias, 3, K, 2);
  }
  require(Gate, 0, Q, 0);
  require(Gate, 2, Q, 2);
  require(SegQ, 0, Q, 0);
  require(SegQ, 1, Q, 2);
  if (present(SegK)) {
    require(SegK, 0, Q, 0);
    require(SegK, 1, K, 2);
  } else {
    require(SegQ, 1, K, 2);
  }
  require(LenQ, 0, Q, 0);
  require(LenK, 0, Q, 0);
  require(OffK, 0, OffQ, 0);
  if (present(Mask)) {
    // Lq x Lk, or B' x H' x Lq x Lk.
    int64_t rank = typeOf(getMask()).getRank();
    if (rank == 4 && sizeOf(Mask, 0) != 1)
      require(Mask, 0, Q, 0);
    require(Mask, rank - 2, Q, 2);
    require(Mask, rank - 1, K, 2);
  }
  return checks;
}

/// The result is B x Hq x Lq x Dv: its dynamic sizes (B, Lq) are the
/// query's (attn-compile's library signatures and shape folding use this).
LogicalResult
AttentionOp::reifyResultShapes(OpBuilder &b,
                               ReifiedRankedShapedTypeDims &reifiedShapes) {
  auto type = cast<RankedTensorType>(getResult().getType());
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d)) {
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
      continue;
    }
    Value source = d == 3 ? getValue() : getQuery();
    sizes.push_back(tensor::DimOp::create(b, getLoc(), source, d).getResult());
  }
  if (getLse())
    reifiedShapes.push_back({sizes[0], sizes[1], sizes[2]});
  reifiedShapes.insert(reifiedShapes.begin(), std::move(sizes));
  return success();
}

double AttentionOp::getDefaultScale() {
  if (isa<KernelAttr>(getNormalizer()))
    return 1.0;
  return defaultScale(getDims().headDim);
}

AttentionDims AttentionOp::getDims() {
  AttentionDims d = dimsOf(getQuery(), getKey(), getValue());
  if (isPaged()) {
    int64_t pages = typeOf(getPageTable()).getDimSize(1);
    d.keyLen = ShapedType::isDynamic(pages) ? ShapedType::kDynamic
                                            : pages * getPageSize();
  }
  return d;
}

PatternShape AttentionOp::getPatternShape() {
  AttentionDims d = getDims();
  return {d.queryHeads, d.queryLen, d.keyLen,
          static_cast<bool>(getQuerySegments())};
}

/// The mask of `op` over `shape`: its pattern, and its mask region's
/// predicate (ModRegion.h) when it has one.
static mask::Mask maskOf(AttentionOp op, const PatternShape &shape) {
  mask::Mask m = buildMask(op.getPatternAttr(), shape);
  if (op.getMaskMod().empty())
    return m;
  mask::Node region = mask::Node::fromPredicate(buildMaskPredicate(
      compileMaskProgram(op.getMaskMod()), op.getDims().batch));
  mask::Node root = m.isAll() ? std::move(region)
                              : mask::Node::intersect({m.getRoot(), region});
  return mask::Mask(std::move(root), m.getNumHeads(), m.getQueryLen(),
                    m.getKeyLen());
}

mask::Mask AttentionOp::getPatternMask() {
  return maskOf(*this, getPatternShape());
}

ModProgram AttentionOp::getMaskProgram() {
  return compileMaskProgram(getMaskMod());
}

LogicalResult AttentionOp::verifyRegions() {
  TypeRange captures = getCaptures().getTypes();
  if (!getMaskMod().empty() &&
      failed(verifyModRegion(*this, getMaskMod(), /*isMask=*/true, captures)))
    return failure();
  if (!getScoreMod().empty() &&
      failed(verifyModRegion(*this, getScoreMod(), /*isMask=*/false, captures)))
    return failure();
  return success();
}

BlockLayout AttentionOp::getBlockLayout(int64_t blockQ, int64_t blockK) {
  if (BlockLayoutAttr layout = getLayoutAttr())
    if (layout.getBlockQ() == blockQ && layout.getBlockK() == blockK)
      return layout.getLayout();
  return BlockLayout::compute(getPatternMask(), blockQ, blockK);
}

/// Allowed (query, key) pairs summed over the query heads of one batch.
double mlir::attn::detail::countAllowedPairs(const mask::Mask &m) {
  if (m.isAll())
    return static_cast<double>(m.getQueryLen()) * m.getKeyLen() *
           m.getNumHeads();
  if (!m.isHeadDependent())
    return static_cast<double>(m.countAllowed(0)) * m.getNumHeads();
  double total = 0;
  for (int64_t h = 0; h < m.getNumHeads(); ++h)
    total += static_cast<double>(m.countAllowed(h));
  return total;
}

double AttentionOp::getFlopCount() {
  AttentionDims d = getDims();
  return d.isStatic() ? getFlopCount(d) : 0.0;
}

double AttentionOp::getFlopCount(const AttentionDims &d) {
  mask::Mask m = maskOf(*this, {d.queryHeads, d.queryLen, d.keyLen,
                                static_cast<bool>(getQuerySegments())});
  if (auto kernel = dyn_cast<KernelAttr>(getNormalizer())) {
    double features = kernel.getNumFeatures(d.headDim);
    double projection = kernel.getFeatureMap() == FeatureMap::favor
                            ? 2.0 * (d.queryLen + d.keyLen) * features *
                                  d.headDim * d.queryHeads
                            : 0.0;
    double body;
    if (getLinearForm())
      body =
          2.0 * (d.queryLen + d.keyLen) * features * d.valueDim * d.queryHeads;
    else
      body = 2.0 * countAllowedPairs(m) * (features + d.valueDim);
    return d.batch * (projection + body);
  }
  return d.batch * 2.0 * countAllowedPairs(m) * (d.headDim + d.valueDim);
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

AttentionOp AttentionGradOp::getForwardOp() {
  return cast<AttentionOp>(getForward().getDefiningOp());
}

SmallVector<unsigned> AttentionOp::getFloatCaptures() {
  SmallVector<unsigned> floats;
  for (auto [i, c] : llvm::enumerate(getCaptures()))
    if (isa<FloatType>(cast<ShapedType>(c.getType()).getElementType()))
      floats.push_back(i);
  return floats;
}

SmallVector<Value> AttentionGradOp::getDifferentiatedOperands() {
  AttentionOp forward = getForwardOp();
  SmallVector<Value> operands = {forward.getQuery(), forward.getKey(),
                                 forward.getValue()};
  for (auto [grad, operand] :
       {std::pair{getGradBias(), forward.getBias()},
        std::pair{getGradGate(), forward.getGate()},
        std::pair{getGradSinks(), forward.getSinks()},
        std::pair{getGradAlibiSlopes(), forward.getAlibiSlopes()},
        std::pair{getGradProjection(), forward.getProjection()}})
    if (grad)
      operands.push_back(operand);
  if (!getGradCaptures().empty())
    for (unsigned c : forward.getFloatCaptures())
      operands.push_back(forward.getCaptures()[c]);
  return operands;
}

FeatureSet AttentionGradOp::getFeatures() {
  FeatureSet features = getForwardOp().getFeatures();
  features.erase(Feature::Lse);
  if (getGradLse())
    features.insert(Feature::Lse);
  return features;
}

/// Each gradient has its operand's shape: the dynamic sizes of grad_query
/// are the query's, and so on (attn-compile sizes the results of an
/// exported backward entry from its arguments through this).
LogicalResult
AttentionGradOp::reifyResultShapes(OpBuilder &b,
                                   ReifiedRankedShapedTypeDims &reifiedShapes) {
  for (Value source : getDifferentiatedOperands()) {
    auto type = cast<RankedTensorType>(source.getType());
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(
          type.isDynamicDim(d)
              ? OpFoldResult(
                    tensor::DimOp::create(b, getLoc(), source, d).getResult())
              : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
    reifiedShapes.push_back(std::move(sizes));
  }
  return success();
}

LogicalResult AttentionGradOp::verify() {
  auto result = dyn_cast<OpResult>(getForward());
  auto forward =
      result ? dyn_cast<AttentionOp>(result.getOwner()) : AttentionOp();
  if (!forward || result.getResultNumber() != 0)
    return emitOpError() << "expects its first operand to be the output "
                            "(result 0) of an attn.attention";
  if (forward.isPaged())
    return emitOpError() << "differentiates no attention over a paged KV "
                            "cache (a page_table is for inference)";
  bool captures = !getGradCaptures().empty();
  if (!forward.getScoreMod().empty())
    if (Operation *op =
            scoreModDerivativeIssue(forward.getScoreMod(), captures))
      return emitOpError() << "cannot differentiate the forward's score_mod "
                              "region: the score"
                           << (captures ? " or a captured value" : "")
                           << " reaches '" << op->getName()
                           << "', which has no derivative rule";
  auto requireType = [&](Value v, Type expected, StringRef what,
                         StringRef of) -> LogicalResult {
    if (v.getType() != expected)
      return emitOpError() << "expects " << what << " of type " << expected
                           << " (" << of << "), got " << v.getType();
    return success();
  };
  Type outType = forward.getResult().getType();
  if (failed(requireType(getGradOutput(), outType, "grad_output",
                         "the forward output's")))
    return failure();
  if (getSavedOutput() &&
      failed(requireType(getSavedOutput(), outType, "saved_output",
                         "the forward output's")))
    return failure();

  // The log-sum-exp: its cotangent needs the forward's lse result; a saved
  // one is the softmax's, B x Hq x Lq.
  if (getGradLse()) {
    if (!forward.getLse())
      return emitOpError() << "takes grad_lse only when the forward "
                              "attn.attention has a log-sum-exp result";
    if (failed(requireType(getGradLse(), forward.getLse().getType(), "grad_lse",
                           "the forward log-sum-exp's")))
      return failure();
  }
  if (getKeyState() || getQueryState()) {
    auto kernel = dyn_cast<KernelAttr>(forward.getNormalizer());
    if (!kernel)
      return emitOpError() << "takes key_state and query_state only for "
                              "kernelized attention";
    MaskPatternAttrInterface pattern = forward.getPatternAttr();
    if ((pattern && !isa<CausalAttr>(pattern)) || forward.getGate() ||
        forward.getMask() || !forward.getMaskMod().empty() ||
        forward.getQuerySegments())
      return emitOpError() << "takes key_state and query_state only with no "
                              "mask or #attn.causal and no gate (the "
                              "linear-time gradient's terms)";
    AttentionDims d = forward.getDims();
    auto q = cast<RankedTensorType>(forward.getQuery().getType());
    int64_t features = kernel.getNumFeatures(d.headDim);
    Type f32 = Float32Type::get(getContext());
    if (Value state = getKeyState())
      if (failed(requireType(
              state,
              RankedTensorType::get(
                  {q.getDimSize(0), d.kvHeads, features, d.valueDim + 1}, f32),
              "key_state", "batch x key/value heads x features x (Dv + 1)")))
        return failure();
    if (Value state = getQueryState())
      if (failed(requireType(
              state,
              RankedTensorType::get(
                  {q.getDimSize(0), d.queryHeads, features, d.valueDim + 1},
                  f32),
              "query_state", "batch x query heads x features x (Dv + 1)")))
        return failure();
  }
  if (Value saved = getSavedLse()) {
    if (!isa<SoftmaxAttr>(forward.getNormalizer()))
      return emitOpError() << "takes saved_lse only for softmax attention";
    auto o = cast<RankedTensorType>(outType);
    auto expected = RankedTensorType::get(o.getShape().drop_back(),
                                          Float32Type::get(getContext()));
    if (failed(requireType(saved, expected, "saved_lse",
                           "batch x query heads x query length")))
      return failure();
  }

  // One gradient per differentiable operand, each of its operand's type.
  if (failed(requireType(getGradQuery(), forward.getQuery().getType(),
                         "grad_query", "the query's")) ||
      failed(requireType(getGradKey(), forward.getKey().getType(), "grad_key",
                         "the key's")) ||
      failed(requireType(getGradValue(), forward.getValue().getType(),
                         "grad_value", "the value's")))
    return failure();
  struct Optional {
    Value grad, operand;
    StringRef name;
  };
  for (auto [grad, operand, name] :
       {Optional{getGradBias(), forward.getBias(), "bias"},
        Optional{getGradGate(), forward.getGate(), "gate"},
        Optional{getGradSinks(), forward.getSinks(), "sinks"},
        Optional{getGradAlibiSlopes(), forward.getAlibiSlopes(),
                 "alibi_slopes"},
        Optional{getGradProjection(), forward.getProjection(), "projection"}}) {
    if (!grad)
      continue;
    if (!operand)
      return emitOpError() << "has a grad_" << name
                           << " result but the forward attn.attention has no "
                           << name;
    if (failed(requireType(grad, operand.getType(), ("grad_" + name).str(),
                           ("the " + name + "'s").str())))
      return failure();
  }
  // None, or one per floating-point captured tensor, in order.
  if (captures) {
    SmallVector<Value> floats;
    for (unsigned c : forward.getFloatCaptures())
      floats.push_back(forward.getCaptures()[c]);
    if (floats.size() != getGradCaptures().size())
      return emitOpError() << "expects one grad_captures result per "
                              "floating-point captured tensor of the forward "
                              "attn.attention ("
                           << floats.size() << "), got "
                           << getGradCaptures().size();
    for (auto [i, grad, capture] : llvm::enumerate(getGradCaptures(), floats))
      if (failed(requireType(grad, capture.getType(),
                             ("grad_captures #" + Twine(i)).str(),
                             "the captured tensor's")))
        return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LowRankAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult LowRankAttentionOp::verify() {
  ShapeChecker check(*this);
  Named q{"query", typeOf(getQuery())}, k{"key", typeOf(getKey())},
      v{"value", typeOf(getValue())}, res{"result", typeOf(getResult())},
      e{"key_proj", typeOf(getKeyProj())},
      f{"value_proj", typeOf(getValueProj())};
  if (failed(check.requireStatic({q, k, v, res, e, f})))
    return failure();
  FailureOr<AttentionDims> dims = verifyQKV(check, *this, q, k, v, res);
  if (failed(dims))
    return failure();
  if (failed(check.requireSameElementType({q, k, v, res, e, f})) ||
      failed(check.requireRank({e, f}, 2, "projected length x key length")))
    return failure();
  int64_t p = e.type.getDimSize(0);
  if (p < 1)
    return emitOpError() << "expects a projected length of at least 1";
  if (failed(check.requireShape(e, {p, dims->keyLen},
                                "projected length x key length")) ||
      failed(check.requireShape(f, {p, dims->keyLen},
                                "projected length x key length")))
    return failure();
  return check.requireFinite(getScale(), "scale", /*positive=*/false);
}

AttentionDims LowRankAttentionOp::getDims() {
  return dimsOf(getQuery(), getKey(), getValue());
}

double LowRankAttentionOp::getFlopCount() {
  AttentionDims d = getDims();
  double p = typeOf(getKeyProj()).getDimSize(0);
  double projections =
      2.0 * p * d.keyLen * (d.headDim + d.valueDim) * d.kvHeads;
  double attention =
      2.0 * d.queryLen * p * (d.headDim + d.valueDim) * d.queryHeads;
  return d.batch * (projections + attention);
}

//===----------------------------------------------------------------------===//
// LshAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult LshAttentionOp::verify() {
  ShapeChecker check(*this);
  Named qk{"qk", typeOf(getQk())}, v{"value", typeOf(getValue())},
      res{"result", typeOf(getResult())};
  if (failed(check.requireStatic({qk, v, res})))
    return failure();
  FailureOr<AttentionDims> dims = verifyQKV(check, *this, qk, qk, v, res);
  if (failed(dims))
    return failure();
  if (failed(check.requireSameElementType({qk, v, res})))
    return failure();
  if (failed(check.requireSameDim(qk, 1, v, 1, "the number of heads")))
    return failure();
  if (getNumBuckets() % 2 != 0)
    return emitOpError() << "expects an even number of buckets, got "
                         << getNumBuckets();
  if (dims->keyLen % static_cast<int64_t>(getChunkSize()) != 0)
    return emitOpError() << "expects chunk_size (" << getChunkSize()
                         << ") to divide the sequence length (" << dims->keyLen
                         << ")";
  // The rotations of every round are one compile-time constant
  // (num_hashes x head dim x num_buckets/2 f32, lshRotationsConstant).
  constexpr uint64_t kMaxRotationEntries = uint64_t(1) << 24;
  uint64_t rounds = getNumHashes(), half = getNumBuckets() / 2;
  uint64_t headDim = dims->headDim;
  if (half && headDim &&
      (rounds > kMaxRotationEntries / half / headDim ||
       rounds * half * headDim > kMaxRotationEntries))
    return emitOpError() << "num_hashes (" << rounds << ") x head dim ("
                         << headDim << ") x num_buckets / 2 (" << half
                         << ") random rotation entries exceed the limit of "
                         << kMaxRotationEntries
                         << " (they are a compile-time constant)";
  return check.requireFinite(getScale(), "scale", /*positive=*/false);
}

AttentionDims LshAttentionOp::getDims() {
  return dimsOf(getQk(), getQk(), getValue());
}

double LshAttentionOp::getFlopCount() {
  AttentionDims d = getDims();
  double keysPerQuery = d.keyLen == static_cast<int64_t>(getChunkSize())
                            ? static_cast<double>(getChunkSize())
                            : 2.0 * getChunkSize();
  double perRound = 2.0 * d.keyLen * d.headDim * (getNumBuckets() / 2) +
                    2.0 * d.keyLen * keysPerQuery * (d.headDim + d.valueDim);
  return d.batch * d.queryHeads * getNumHashes() * perRound;
}

//===----------------------------------------------------------------------===//
// RelativeAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult RelativeAttentionOp::verify() {
  ShapeChecker check(*this);
  Named q{"query", typeOf(getQuery())}, k{"key", typeOf(getKey())},
      v{"value", typeOf(getValue())}, res{"result", typeOf(getResult())},
      r{"pos_emb", typeOf(getPosEmb())},
      u{"content_bias", typeOf(getContentBias())},
      vb{"position_bias", typeOf(getPositionBias())},
      mk{"memory_key", typeOf(getMemoryKey())},
      mv{"memory_value", typeOf(getMemoryValue())};
  if (failed(check.requireStatic({q, k, v, res, r, u, vb, mk, mv})))
    return failure();
  FailureOr<AttentionDims> dims = verifyQKV(check, *this, q, k, v, res);
  if (failed(dims))
    return failure();
  const AttentionDims &d = *dims;
  if (failed(check.requireSameElementType({q, k, v, res, r, u, vb, mk, mv})))
    return failure();
  if (d.queryHeads != d.kvHeads)
    return emitOpError() << "expects as many key/value heads as query heads";
  if (d.queryLen != d.keyLen)
    return emitOpError() << "expects the query and key of the current "
                            "segment to have the same length, got "
                         << d.queryLen << " and " << d.keyLen;
  if (static_cast<bool>(mk.type) != static_cast<bool>(mv.type))
    return emitOpError() << "expects both memory_key and memory_value, or "
                            "neither";
  int64_t m = 0;
  if (mk.type) {
    if (failed(check.requireRank({mk, mv}, 4, "batch x heads x M x dim")))
      return failure();
    m = mk.type.getDimSize(2);
    if (failed(check.requireShape(mk, {d.batch, d.kvHeads, m, d.headDim},
                                  "batch x heads x M x head dim")) ||
        failed(check.requireShape(mv, {d.batch, d.kvHeads, m, d.valueDim},
                                  "batch x heads x M x value dim")))
      return failure();
  }
  int64_t keys = ShapedType::isDynamic(m) || ShapedType::isDynamic(d.keyLen)
                     ? ShapedType::kDynamic
                     : m + d.keyLen;
  if (!ShapedType::isDynamic(keys) && keys > mask::kMaxSequenceLength)
    return emitOpError() << "supports sequences of at most 2^30 ("
                         << mask::kMaxSequenceLength
                         << ") positions, got memory and segment of " << keys;
  if (failed(check.requireShape(r, {d.queryHeads, keys, d.headDim},
                                "heads x (M + L) x head dim")) ||
      failed(check.requireShape(u, {d.queryHeads, d.headDim},
                                "heads x head dim")) ||
      failed(check.requireShape(vb, {d.queryHeads, d.headDim},
                                "heads x head dim")))
    return failure();
  return check.requireFinite(getScale(), "scale", /*positive=*/false);
}

AttentionDims RelativeAttentionOp::getDims() {
  return dimsOf(getQuery(), getKey(), getValue());
}

int64_t RelativeAttentionOp::getMemoryLength() {
  return getMemoryKey() ? typeOf(getMemoryKey()).getDimSize(2) : 0;
}

double RelativeAttentionOp::getFlopCount() {
  AttentionDims d = getDims();
  double m = getMemoryLength();
  // Query i sees M + i + 1 keys.
  double pairs = d.queryLen * (m + 1) + d.queryLen * (d.queryLen - 1) / 2.0;
  return d.batch * d.queryHeads * 2.0 * pairs * (2.0 * d.headDim + d.valueDim);
}
