//===- KernelSpec.cpp - What a fused attention kernel computes ------------===//

#include "attn-opt/Conversion/AttnKernel/KernelSpec.h"

#include "attn-opt/Conversion/Capabilities.h"

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

const Capability &mlir::attn::getCpuKernelCapability() {
  static const Capability capability{
      "cpu-kernel",
      "attn-flash, attn-lower-pointwise, attn-block-sparse",
      "the fused CPU kernel: online softmax or pointwise tiles over block "
      "layouts",
      {getApplicableFeatures(Feature::Softmax),
       getApplicableFeatures(Feature::Pointwise)},
      {}};
  return capability;
}

KernelSpec KernelSpec::get(AttentionOp op) {
  KernelSpec spec;
  static_cast<AttentionProblem &>(spec) = op.getProblem();
  if (auto p = dyn_cast<PointwiseAttr>(spec.normalizer)) {
    spec.fn = p.getFn();
    spec.alpha = p.getAlpha().convertToDouble();
    if (!ShapedType::isDynamic(spec.dims.keyLen))
      spec.lengthFactor =
          std::pow(static_cast<double>(spec.dims.keyLen), -spec.alpha);
  }
  spec.mask = op.getPatternMask();
  if (spec.regions.maskMod)
    spec.maskProgram = std::make_shared<ModProgram>(op.getMaskProgram());
  return spec;
}

KernelSpec KernelSpec::get(RelativeAttentionOp op, Value key, Value value) {
  KernelSpec spec;
  spec.query = op.getQuery();
  spec.key = key;
  spec.value = value;
  ArrayRef<int64_t> qs = cast<ShapedType>(spec.query.getType()).getShape();
  ArrayRef<int64_t> ks = cast<ShapedType>(key.getType()).getShape();
  ArrayRef<int64_t> vs = cast<ShapedType>(value.getType()).getShape();
  spec.dims = {qs[0], qs[1], ks[1], qs[2], ks[2], qs[3], vs[3]};
  spec.scale = op.getEffectiveScale();
  spec.posEmb = op.getPosEmb();
  spec.contentBias = op.getContentBias();
  spec.positionBias = op.getPositionBias();
  spec.memoryLen = op.getMemoryLength();
  spec.normalizer = SoftmaxAttr::get(op.getContext());
  spec.mask = mask::Mask(mask::Node::causal(), qs[1], qs[2], ks[2]);
  spec.results.output = cast<RankedTensorType>(op.getType());
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

FailureOr<TargetModel> mlir::attn::targetOfOptions(Operation *root,
                                                   StringRef pass,
                                                   int64_t lanes,
                                                   int64_t registers) {
  std::optional<TargetModel> target = TargetModel::get(lanes, registers);
  if (!target)
    return root->emitError()
           << pass << ": vector-width (" << lanes
           << ") must be 4, 8, 16 or 32 and vector-registers (" << registers
           << ") 0 or at least 8";
  return *target;
}

Value mlir::attn::readOnlyBuffer(ImplicitLocOpBuilder &b, Value tensor) {
  if (!tensor)
    return Value();
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

/// True if `op` only rearranges its first operand's elements: a
/// linalg.transpose on tensors, tensor.expand_shape or collapse_shape.
static bool isRearrangement(Operation *op) {
  if (auto t = dyn_cast<linalg::TransposeOp>(op))
    return t.hasPureTensorSemantics();
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op);
}

/// `mem` viewed through rearrangement `op` (isRearrangement) from its
/// operand to its result, or (`inverse`) from its result back to its
/// operand; null when memref cannot express the view (a collapse of
/// non-contiguous dims).
static Value viewThrough(ImplicitLocOpBuilder &b, Value mem, Operation *op,
                         bool inverse) {
  auto type = cast<MemRefType>(mem.getType());
  if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
    ArrayRef<int64_t> perm = t.getPermutation();
    SmallVector<unsigned> order(perm.begin(), perm.end());
    if (inverse)
      for (auto [i, p] : llvm::enumerate(perm))
        order[p] = i;
    return memref::TransposeOp::create(
        b, mem,
        AffineMapAttr::get(
            AffineMap::getPermutationMap(order, b.getContext())));
  }
  auto expand = dyn_cast<tensor::ExpandShapeOp>(op);
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(op);
  SmallVector<ReassociationIndices> groups =
      expand ? expand.getReassociationIndices()
             : collapse.getReassociationIndices();
  if (static_cast<bool>(expand) != inverse) {
    // Expanding: to the expand's result, or back to the collapse's source.
    auto shaped = expand ? expand.getResultType() : collapse.getSrcType();
    FailureOr<MemRefType> expanded = memref::ExpandShapeOp::computeExpandedType(
        type, shaped.getShape(), groups);
    if (failed(expanded))
      return Value();
    SmallVector<OpFoldResult> shape =
        expand ? expand.getMixedOutputShape()
               : getAsIndexOpFoldResult(b.getContext(), shaped.getShape());
    return memref::ExpandShapeOp::create(b, *expanded, mem, groups, shape);
  }
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups))
    return Value();
  return memref::CollapseShapeOp::create(b, mem, groups);
}

Value mlir::attn::readOnlyView(ImplicitLocOpBuilder &b, Value tensor) {
  if (!tensor)
    return Value();
  SmallVector<Operation *> chain;
  Value source = tensor;
  while (Operation *def = source.getDefiningOp()) {
    if (!isRearrangement(def))
      break;
    chain.push_back(def);
    source = def->getOperand(0);
  }
  if (!llvm::any_of(chain, llvm::IsaPred<linalg::TransposeOp>))
    return readOnlyBuffer(b, tensor);
  Value view = readOnlyBuffer(b, source);
  for (Operation *op : llvm::reverse(chain)) {
    view = viewThrough(b, view, op, /*inverse=*/false);
    if (!view)
      return readOnlyBuffer(b, tensor);
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
  while (last.hasOneUse()) {
    Operation *user = *last.getUsers().begin();
    if (!isRearrangement(user) || user->getOperand(0) != last)
      break;
    chain.push_back(user);
    last = user->getResult(0);
  }
  auto lastType = cast<RankedTensorType>(last.getType());
  if (!llvm::any_of(chain, llvm::IsaPred<linalg::TransposeOp>) ||
      !lastType.hasStaticShape())
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
    v = viewThrough(b, v, op, /*inverse=*/true);
    if (!v)
      return abandon();
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
