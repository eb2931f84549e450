//===- KernelSpec.cpp - What a fused attention kernel computes ------------===//

#include "attn-opt/Conversion/AttnKernel/KernelSpec.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

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
