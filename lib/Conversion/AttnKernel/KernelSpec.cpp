//===- KernelSpec.cpp - What a fused attention kernel computes ------------===//

#include "attn-opt/Conversion/AttnKernel/KernelSpec.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <algorithm>
#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::attn;

bool KernelSpec::applies(AttentionOp op, bool maskTensors) {
  return isa<SoftmaxAttr, PointwiseAttr>(op.getNormalizer()) &&
         (maskTensors || !op.getMask());
}

KernelSpec KernelSpec::get(AttentionOp op) {
  AttentionDims d = op.getDims();
  KernelSpec spec;
  spec.query = op.getQuery();
  spec.key = op.getKey();
  spec.value = op.getValue();
  spec.bias = op.getBias();
  spec.gate = op.getGate();
  spec.maskTensor = op.getMask();
  spec.querySegments = op.getQuerySegments();
  spec.keySegments = op.getEffectiveKeySegments();
  spec.queryLengths = op.getQueryLengths();
  spec.keyLengths = op.getKeyLengths();
  spec.queryOffsets = op.getQueryOffsets();
  spec.keyOffsets = op.getKeyOffsets();
  spec.dims = d;
  spec.scale = op.getEffectiveScale();
  if (std::optional<APFloat> eps = op.getQkNormEps())
    spec.qkNormEps = eps->convertToDouble();
  spec.softmax = isa<SoftmaxAttr>(op.getNormalizer());
  if (auto p = dyn_cast<PointwiseAttr>(op.getNormalizer())) {
    spec.fn = p.getFn();
    spec.alpha = p.getAlpha().convertToDouble();
    if (!ShapedType::isDynamic(d.keyLen))
      spec.lengthFactor = std::pow(static_cast<double>(d.keyLen), -spec.alpha);
  }
  spec.mask = op.getPatternMask();
  spec.segmentBound = op.isSegmentBound();
  spec.resultType = op.getType();
  return spec;
}

LayoutTables mlir::attn::flattenLayout(const BlockLayout &layout,
                                       int64_t keyLen) {
  LayoutTables t;
  int64_t numTiles = layout.getNumQueryBlocks();
  bool ragged = keyLen % layout.getBlockK() != 0;
  int32_t lastBlock = layout.getNumKeyBlocks() - 1;
  for (const BlockLayout::Compressed &c : layout.getLayouts()) {
    for (int64_t r = 0; r < numTiles; ++r) {
      t.fullOffsets.push_back(t.fullBlocks.size());
      t.partialOffsets.push_back(t.partialBlocks.size());
      auto fullBegin = c.fullBlocks.begin() + c.fullOffsets[r];
      auto fullEnd = c.fullBlocks.begin() + c.fullOffsets[r + 1];
      for (auto it = fullBegin; it != fullEnd; ++it)
        if (!ragged || *it != lastBlock)
          t.fullBlocks.push_back(*it);
      for (int32_t i = c.partialOffsets[r]; i < c.partialOffsets[r + 1]; ++i)
        t.partialBlocks.push_back(c.partialBlocks[i]);
      if (ragged && std::binary_search(fullBegin, fullEnd, lastBlock))
        t.partialBlocks.push_back(lastBlock);
    }
    t.fullOffsets.push_back(t.fullBlocks.size());
    t.partialOffsets.push_back(t.partialBlocks.size());
  }
  for (int64_t h = 0; h < layout.getNumHeads(); ++h)
    t.headLayout.push_back(layout.getLayoutOfHead(h));
  return t;
}

Value mlir::attn::readOnlyBuffer(ImplicitLocOpBuilder &b, Value tensor) {
  if (!tensor)
    return Value();
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

Value mlir::attn::readOnlyView(ImplicitLocOpBuilder &b, Value tensor) {
  if (!tensor)
    return Value();
  SmallVector<Operation *> chain;
  Value source = tensor;
  bool transposed = false;
  while (Operation *def = source.getDefiningOp()) {
    if (auto t = dyn_cast<linalg::TransposeOp>(def);
        t && t.hasPureTensorSemantics()) {
      source = t.getInput();
      transposed = true;
    } else if (auto e = dyn_cast<tensor::ExpandShapeOp>(def)) {
      source = e.getSrc();
    } else if (auto c = dyn_cast<tensor::CollapseShapeOp>(def)) {
      source = c.getSrc();
    } else {
      break;
    }
    chain.push_back(def);
  }
  if (!transposed)
    return readOnlyBuffer(b, tensor);
  Value view = readOnlyBuffer(b, source);
  for (Operation *op : llvm::reverse(chain)) {
    auto type = cast<MemRefType>(view.getType());
    if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
      AffineMap perm =
          AffineMap::getPermutationMap(t.getPermutation(), b.getContext());
      view = memref::TransposeOp::create(b, view, AffineMapAttr::get(perm));
    } else if (auto e = dyn_cast<tensor::ExpandShapeOp>(op)) {
      FailureOr<MemRefType> expanded =
          memref::ExpandShapeOp::computeExpandedType(
              type, e.getResultType().getShape(), e.getReassociationIndices());
      if (failed(expanded))
        return readOnlyBuffer(b, tensor);
      view = memref::ExpandShapeOp::create(b, *expanded, view,
                                           e.getReassociationIndices(),
                                           e.getMixedOutputShape());
    } else {
      auto c = cast<tensor::CollapseShapeOp>(op);
      if (!memref::CollapseShapeOp::isGuaranteedCollapsible(
              type, c.getReassociationIndices()))
        return readOnlyBuffer(b, tensor);
      view =
          memref::CollapseShapeOp::create(b, view, c.getReassociationIndices());
    }
  }
  return view;
}

std::optional<Rearranged>
mlir::attn::writeThroughRearrangement(ImplicitLocOpBuilder &b, Value result,
                                      Value &view) {
  auto resultType = cast<RankedTensorType>(result.getType());
  if (!resultType.getElementType().isF32())
    return std::nullopt;
  SmallVector<Operation *> chain;
  Value last = result;
  bool transposed = false;
  while (last.hasOneUse()) {
    Operation *user = *last.getUsers().begin();
    if (auto t = dyn_cast<linalg::TransposeOp>(user);
        t && t.hasPureTensorSemantics() && t.getInput() == last) {
      transposed = true;
    } else if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user)) {
      break;
    }
    chain.push_back(user);
    last = user->getResult(0);
  }
  auto lastType = cast<RankedTensorType>(last.getType());
  if (!transposed || !lastType.hasStaticShape())
    return std::nullopt;
  // The views back from the chain's result (erased again if one cannot be
  // made).
  auto bufferType =
      MemRefType::get(lastType.getShape(), lastType.getElementType());
  SmallVector<Operation *> built;
  auto abandon = [&]() -> std::optional<Rearranged> {
    for (Operation *op : llvm::reverse(built))
      op->erase();
    return std::nullopt;
  };
  Value buffer =
      memref::AllocOp::create(b, bufferType, b.getI64IntegerAttr(64));
  built.push_back(buffer.getDefiningOp());
  Value v = buffer;
  for (Operation *op : llvm::reverse(chain)) {
    auto type = cast<MemRefType>(v.getType());
    if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
      ArrayRef<int64_t> perm = t.getPermutation();
      SmallVector<unsigned> inverse(perm.size());
      for (auto [i, p] : llvm::enumerate(perm))
        inverse[p] = i;
      v = memref::TransposeOp::create(
          b, v,
          AffineMapAttr::get(
              AffineMap::getPermutationMap(inverse, b.getContext())));
    } else if (auto c = dyn_cast<tensor::CollapseShapeOp>(op)) {
      FailureOr<MemRefType> expanded =
          memref::ExpandShapeOp::computeExpandedType(
              type, c.getSrcType().getShape(), c.getReassociationIndices());
      if (failed(expanded))
        return abandon();
      v = memref::ExpandShapeOp::create(
          b, *expanded, v, c.getReassociationIndices(),
          getAsIndexOpFoldResult(b.getContext(), c.getSrcType().getShape()));
    } else {
      auto e = cast<tensor::ExpandShapeOp>(op);
      if (!memref::CollapseShapeOp::isGuaranteedCollapsible(
              type, e.getReassociationIndices()))
        return abandon();
      v = memref::CollapseShapeOp::create(b, v, e.getReassociationIndices());
    }
    built.push_back(v.getDefiningOp());
  }
  // The kernels store rows of Dv contiguous values.
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(
          cast<MemRefType>(v.getType()).getStridesAndOffset(strides, offset)) ||
      strides.back() != 1)
    return abandon();
  view = v;
  return Rearranged{last, buffer};
}

/// `values` as a constant int32 buffer (one 0 when empty).
static Value int32Table(ImplicitLocOpBuilder &b, ArrayRef<int32_t> values) {
  SmallVector<int32_t> v(values.begin(), values.end());
  if (v.empty())
    v.push_back(0);
  auto type =
      RankedTensorType::get({static_cast<int64_t>(v.size())}, b.getI32Type());
  return readOnlyBuffer(
      b, arith::ConstantOp::create(
             b, DenseElementsAttr::get(type, ArrayRef<int32_t>(v))));
}

KernelTables KernelTables::build(ImplicitLocOpBuilder &b,
                                 const mask::Mask &mask) {
  KernelTables t;
  std::function<void(const mask::Node &)> collect = [&](const mask::Node &n) {
    if (n.kind == mask::Node::Kind::Table)
      t.mask[&n] =
          int32Table(b, SmallVector<int32_t>(n.table.begin(), n.table.end()));
    for (const mask::Node &c : n.children)
      collect(c);
  };
  collect(mask.getRoot());
  return t;
}

KernelTables KernelTables::build(ImplicitLocOpBuilder &b,
                                 const BlockLayout &layout, int64_t keyLen,
                                 const mask::Mask &mask) {
  LayoutTables flat = flattenLayout(layout, keyLen);
  KernelTables t;
  t.fullOffsets = int32Table(b, flat.fullOffsets);
  t.fullBlocks = int32Table(b, flat.fullBlocks);
  t.partialOffsets = int32Table(b, flat.partialOffsets);
  t.partialBlocks = int32Table(b, flat.partialBlocks);
  t.headLayout = int32Table(b, flat.headLayout);
  t.mask = build(b, mask).mask;
  return t;
}
