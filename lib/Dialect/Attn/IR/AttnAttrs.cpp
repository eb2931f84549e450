//===- AttnAttrs.cpp - attn dialect attributes ----------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnAttrs.h"
#include "attn-opt/Dialect/Attn/IR/AttnDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h" // the generated attribute printer
#include "llvm/Support/Format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::attn;

#include "attn-opt/Dialect/Attn/IR/AttnAttrInterfaces.cpp.inc"
#include "attn-opt/Dialect/Attn/IR/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn-opt/Dialect/Attn/IR/AttnAttrs.cpp.inc"

void AttnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn-opt/Dialect/Attn/IR/AttnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Parameter parsing and printing
//===----------------------------------------------------------------------===//

FailureOr<APFloat> mlir::attn::parseF64Parameter(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return APFloat(value);
}

void mlir::attn::printF64Parameter(AsmPrinter &printer,
                                   const APFloat &apValue) {
  double value = apValue.convertToDouble();
  // The shortest of %.6e .. %.17e that reads back exactly, in MLIR's float
  // spelling (always with a mantissa dot and an exponent).
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*e", precision, value);
    if (std::strtod(buf, nullptr) == value)
      break;
  }
  // Trim trailing zeros of the mantissa ("1.500000e-01" -> "1.5e-01").
  std::string s(buf);
  size_t e = s.find('e');
  size_t last = s.find_last_not_of('0', e - 1);
  if (s[last] == '.')
    ++last;
  s = s.substr(0, last + 1) + s.substr(e);
  printer << s;
}

FailureOr<SmallVector<MaskPatternAttrInterface>>
mlir::attn::parseComposedPattern(AsmParser &parser) {
  // Nested composed patterns parse recursively (this function, the
  // attribute parser, the dialect's): a depth limit, not the stack, ends a
  // deep input.
  static thread_local int64_t depth = 0;
  if (parser.parseLess() || parser.parseLSquare())
    return failure();
  if (depth >= mask::kMaxPatternDepth)
    return parser.emitError(parser.getCurrentLocation())
           << "mask patterns may nest at most " << mask::kMaxPatternDepth
           << " deep";
  ++depth;
  llvm::scope_exit leave([] { --depth; });
  SmallVector<MaskPatternAttrInterface> patterns;
  if (parser.parseCommaSeparatedList([&]() -> ParseResult {
        SMLoc loc = parser.getCurrentLocation();
        Attribute attr;
        if (parser.parseAttribute(attr))
          return failure();
        auto pattern = dyn_cast<MaskPatternAttrInterface>(attr);
        if (!pattern)
          return parser.emitError(loc, "expected a mask pattern, got ") << attr;
        patterns.push_back(pattern);
        return success();
      }) ||
      parser.parseRSquare() || parser.parseGreater())
    return failure();
  return patterns;
}

void mlir::attn::printComposedPattern(
    AsmPrinter &printer, ArrayRef<MaskPatternAttrInterface> patterns) {
  printer << "<[";
  llvm::interleaveComma(patterns, printer);
  printer << "]>";
}

int64_t mlir::attn::patternDepth(MaskPatternAttrInterface pattern) {
  int64_t deepest = 0;
  for (MaskPatternAttrInterface p : pattern.getSubPatterns())
    deepest = std::max(deepest, patternDepth(p));
  return deepest + 1;
}

/// `AttrT<[p0, p1, ...]>` (union, intersect, per_head), checked.
template <typename AttrT>
static Attribute parseComposed(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  FailureOr<SmallVector<MaskPatternAttrInterface>> patterns =
      parseComposedPattern(parser);
  if (failed(patterns))
    return {};
  return parser.getChecked<AttrT>(loc, parser.getContext(), *patterns);
}

Attribute UnionAttr::parse(AsmParser &parser, Type) {
  return parseComposed<UnionAttr>(parser);
}
Attribute IntersectAttr::parse(AsmParser &parser, Type) {
  return parseComposed<IntersectAttr>(parser);
}
Attribute PerHeadAttr::parse(AsmParser &parser, Type) {
  return parseComposed<PerHeadAttr>(parser);
}
void UnionAttr::print(AsmPrinter &printer) const {
  printComposedPattern(printer, getPatterns());
}
void IntersectAttr::print(AsmPrinter &printer) const {
  printComposedPattern(printer, getPatterns());
}
void PerHeadAttr::print(AsmPrinter &printer) const {
  printComposedPattern(printer, getPatterns());
}

FailureOr<SmallVector<int64_t>>
mlir::attn::parseIntListParameter(AsmParser &parser) {
  SmallVector<int64_t> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(values.emplace_back());
      }))
    return failure();
  return values;
}

FailureOr<bool> mlir::attn::parseBoolParameter(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(),
                          "expected 'true' or 'false'");
}

//===----------------------------------------------------------------------===//
// Normalizers
//===----------------------------------------------------------------------===//

bool SoftmaxAttr::needsRowReduction() const { return true; }
bool PointwiseAttr::needsRowReduction() const { return false; }
bool KernelAttr::needsRowReduction() const { return true; }

LogicalResult
PointwiseAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      PointwiseFn fn, APFloat apAlpha) {
  double alpha = apAlpha.convertToDouble();
  if (!(alpha >= 0.0 && alpha <= 1.0))
    return emitError() << "pointwise alpha must lie in [0, 1], got " << alpha;
  return success();
}

LogicalResult KernelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 FeatureMap featureMap, int64_t features,
                                 bool orthogonal, uint64_t seed,
                                 APFloat apEps) {
  double eps = apEps.convertToDouble();
  if (featureMap == FeatureMap::favor) {
    if (features <= 0 || features > kMaxFavorFeatures)
      return emitError() << "favor feature map needs 0 < features <= "
                         << kMaxFavorFeatures << ", got " << features;
  } else if (features != 0 || orthogonal || seed != 0) {
    return emitError() << "features, orthogonal and seed apply only to the "
                          "favor feature map";
  }
  if (!(eps >= 0.0) || std::isinf(eps))
    return emitError() << "kernel eps must be finite and non-negative, got "
                       << eps;
  return success();
}

//===----------------------------------------------------------------------===//
// Mask patterns: local invariants
//===----------------------------------------------------------------------===//

LogicalResult WindowAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t before, int64_t after) {
  if (before < 0 || after < 0)
    return emitError() << "window before and after must be non-negative, got "
                       << before << " and " << after;
  return success();
}

LogicalResult DilatedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t before, int64_t after,
                                  int64_t dilation) {
  if (before < 0 || after < 0)
    return emitError() << "dilated before and after must be non-negative, got "
                       << before << " and " << after;
  if (dilation < 1)
    return emitError() << "dilation must be at least 1, got " << dilation;
  return success();
}

LogicalResult GlobalAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> tokens) {
  if (tokens.empty())
    return emitError() << "global pattern needs at least one token";
  llvm::SmallVector<int64_t> sorted(tokens);
  llvm::sort(sorted);
  if (sorted.front() < 0)
    return emitError() << "global token " << sorted.front() << " is negative";
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return emitError() << "global tokens must be unique";
  return success();
}

LogicalResult StridedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t stride) {
  if (stride < 1)
    return emitError() << "stride must be at least 1, got " << stride;
  return success();
}

LogicalResult FixedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t stride, int64_t c) {
  if (stride < 1)
    return emitError() << "stride must be at least 1, got " << stride;
  if (c < 1 || c > stride)
    return emitError() << "fixed pattern needs 1 <= c <= stride, got c = " << c
                       << " with stride " << stride;
  return success();
}

LogicalResult RandomAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t blocks, int64_t blockSize,
                                 uint64_t seed) {
  if (blocks < 1)
    return emitError() << "random pattern needs blocks >= 1, got " << blocks;
  if (blockSize < 1)
    return emitError() << "block_size must be at least 1, got " << blockSize;
  return success();
}

LogicalResult BlockAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t size, ArrayRef<StringAttr> layout) {
  if (size < 1)
    return emitError() << "block size must be at least 1, got " << size;
  if (layout.empty())
    return emitError() << "block layout needs at least one row";
  size_t cols = layout.front().size();
  for (auto [r, row] : llvm::enumerate(layout)) {
    if (row.size() != cols || cols == 0)
      return emitError() << "block layout row " << r << " has " << row.size()
                         << " entries, expected " << cols;
    if (row.getValue().find_first_not_of("01") != StringRef::npos)
      return emitError() << "block layout row " << r
                         << " may only contain '0' and '1'";
  }
  return success();
}

static LogicalResult
verifyPatternList(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                  ArrayRef<MaskPatternAttrInterface> list, size_t minSize) {
  if (list.size() < minSize)
    return emitError() << name << " needs at least " << minSize
                       << " patterns, got " << list.size();
  // Each pattern of the list was verified (so nests at most
  // kMaxPatternDepth deep): the recursion is bounded.
  for (MaskPatternAttrInterface p : list)
    if (patternDepth(p) >= mask::kMaxPatternDepth)
      return emitError() << "mask patterns may nest at most "
                         << mask::kMaxPatternDepth << " deep";
  return success();
}

LogicalResult UnionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                ArrayRef<MaskPatternAttrInterface> patterns) {
  return verifyPatternList(emitError, "union", patterns, 2);
}

LogicalResult
IntersectAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<MaskPatternAttrInterface> patterns) {
  return verifyPatternList(emitError, "intersect", patterns, 2);
}

LogicalResult PerHeadAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<MaskPatternAttrInterface> patterns) {
  return verifyPatternList(emitError, "per_head", patterns, 1);
}

//===----------------------------------------------------------------------===//
// Mask patterns: invariants against the attention's shape
//===----------------------------------------------------------------------===//

/// ceil(a / b) for a >= 0, b > 0, without overflow.
static int64_t ceilDiv(int64_t a, int64_t b) {
  return a == 0 ? 0 : (a - 1) / b + 1;
}

/// Patterns whose definition needs concrete lengths (block tables).
static LogicalResult
requireStaticLengths(function_ref<InFlightDiagnostic()> emitError,
                     StringRef pattern, const PatternShape &shape) {
  if (ShapedType::isDynamic(shape.queryLen) ||
      ShapedType::isDynamic(shape.keyLen))
    return emitError() << pattern
                       << " needs static query and key lengths (its blocks "
                          "are chosen at compile time); the lengths here "
                          "are dynamic";
  return success();
}

LogicalResult
GlobalAttr::verifyPattern(function_ref<InFlightDiagnostic()> emitError,
                          const PatternShape &shape) const {
  // With a dynamic key length, tokens past a sequence's end are ignored at
  // run time (docs/Semantics.md).
  if (ShapedType::isDynamic(shape.keyLen))
    return success();
  for (int64_t t : getTokens())
    if (t >= shape.keyLen)
      return emitError() << "global token " << t
                         << " lies outside the key sequence of length "
                         << shape.keyLen;
  return success();
}

LogicalResult
RandomAttr::verifyPattern(function_ref<InFlightDiagnostic()> emitError,
                          const PatternShape &shape) const {
  if (failed(requireStaticLengths(emitError, "#attn.random", shape)))
    return failure();
  int64_t queryBlocks = ceilDiv(shape.queryLen, getBlockSize());
  int64_t keyBlocks = ceilDiv(shape.keyLen, getBlockSize());
  if (static_cast<double>(queryBlocks) * keyBlocks > mask::kMaxTableBlocks)
    return emitError() << "random pattern over " << queryBlocks << " x "
                       << keyBlocks << " blocks of " << getBlockSize()
                       << ": its table is built at compile time and may have "
                          "at most "
                       << mask::kMaxTableBlocks << " blocks";
  if (getBlocks() > keyBlocks)
    return emitError() << "random pattern asks for " << getBlocks()
                       << " key blocks per row but there are only " << keyBlocks
                       << " blocks of " << getBlockSize() << " keys";
  return success();
}

LogicalResult
BlockAttr::verifyPattern(function_ref<InFlightDiagnostic()> emitError,
                         const PatternShape &shape) const {
  if (failed(requireStaticLengths(emitError, "#attn.block", shape)))
    return failure();
  int64_t rows = ceilDiv(shape.queryLen, getSize());
  int64_t cols = ceilDiv(shape.keyLen, getSize());
  int64_t gotRows = getLayout().size();
  int64_t gotCols = getLayout().front().size();
  if (gotRows != rows || gotCols != cols)
    return emitError() << "block layout is " << gotRows << "x" << gotCols
                       << " but blocks of " << getSize() << " over "
                       << shape.queryLen << " queries and " << shape.keyLen
                       << " keys need " << rows << "x" << cols;
  return success();
}

LogicalResult
SegmentsAttr::verifyPattern(function_ref<InFlightDiagnostic()> emitError,
                            const PatternShape &shape) const {
  if (!shape.hasSegments)
    return emitError() << "#attn.segments needs segment id operands "
                          "(segments(...))";
  return success();
}

LogicalResult
PerHeadAttr::verifyPattern(function_ref<InFlightDiagnostic()> emitError,
                           const PatternShape &shape) const {
  if (static_cast<int64_t>(getPatterns().size()) != shape.numHeads)
    return emitError() << "per_head has " << getPatterns().size()
                       << " patterns but there are " << shape.numHeads
                       << " query heads";
  for (MaskPatternAttrInterface p : getPatterns())
    if (failed(p.verifyPattern(emitError, shape)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Mask patterns: what passes ask of them
//===----------------------------------------------------------------------===//

bool SegmentsAttr::usesSegments() const { return true; }
bool RandomAttr::requiresStaticLengths() const { return true; }
bool BlockAttr::requiresStaticLengths() const { return true; }
bool SegmentsAttr::isSegmentBound() const { return true; }

bool IntersectAttr::isSegmentBound() const {
  // Every key of the intersection is allowed by each part.
  return llvm::any_of(getPatterns(), [](MaskPatternAttrInterface p) {
    return p.isSegmentBound();
  });
}

std::optional<LinearMaskForm> CausalAttr::getLinearForm() const {
  return LinearMaskForm{/*causal=*/true, /*segments=*/false};
}
std::optional<LinearMaskForm> SegmentsAttr::getLinearForm() const {
  return LinearMaskForm{/*causal=*/false, /*segments=*/true};
}
std::optional<LinearMaskForm> IntersectAttr::getLinearForm() const {
  LinearMaskForm form;
  for (MaskPatternAttrInterface p : getPatterns()) {
    std::optional<LinearMaskForm> part = p.getLinearForm();
    if (!part)
      return std::nullopt;
    form.causal |= part->causal;
    form.segments |= part->segments;
  }
  return form;
}

ArrayRef<MaskPatternAttrInterface> UnionAttr::getSubPatterns() const {
  return getPatterns();
}
ArrayRef<MaskPatternAttrInterface> IntersectAttr::getSubPatterns() const {
  return getPatterns();
}
ArrayRef<MaskPatternAttrInterface> PerHeadAttr::getSubPatterns() const {
  return getPatterns();
}

//===----------------------------------------------------------------------===//
// Mask patterns: nodes of the mask library
//===----------------------------------------------------------------------===//

static std::vector<mask::Node>
buildChildren(ArrayRef<MaskPatternAttrInterface> patterns,
              const PatternShape &shape) {
  std::vector<mask::Node> children;
  for (MaskPatternAttrInterface p : patterns)
    children.push_back(p.buildMaskNode(shape));
  return children;
}

mask::Node CausalAttr::buildMaskNode(const PatternShape &) const {
  return mask::Node::causal();
}
mask::Node WindowAttr::buildMaskNode(const PatternShape &) const {
  return mask::Node::window(getBefore(), getAfter());
}
mask::Node DilatedAttr::buildMaskNode(const PatternShape &) const {
  return mask::Node::dilated(getBefore(), getAfter(), getDilation());
}
mask::Node GlobalAttr::buildMaskNode(const PatternShape &) const {
  return mask::Node::global(
      std::vector<int64_t>(getTokens().begin(), getTokens().end()));
}
mask::Node StridedAttr::buildMaskNode(const PatternShape &) const {
  return mask::Node::strided(getStride());
}
mask::Node FixedAttr::buildMaskNode(const PatternShape &) const {
  return mask::Node::fixed(getStride(), getC());
}
mask::Node RandomAttr::buildMaskNode(const PatternShape &shape) const {
  return mask::Node::random(getBlocks(), getBlockSize(), getSeed(),
                            ceilDiv(shape.queryLen, getBlockSize()),
                            ceilDiv(shape.keyLen, getBlockSize()));
}
mask::Node BlockAttr::buildMaskNode(const PatternShape &) const {
  int64_t rows = getLayout().size();
  int64_t cols = getLayout().front().size();
  std::vector<uint8_t> table;
  table.reserve(rows * cols);
  for (StringAttr row : getLayout())
    for (char ch : row.getValue())
      table.push_back(ch == '1');
  return mask::Node::blockTable(getSize(), rows, cols, std::move(table));
}
mask::Node SegmentsAttr::buildMaskNode(const PatternShape &) const {
  return mask::Node::segments();
}
mask::Node UnionAttr::buildMaskNode(const PatternShape &shape) const {
  return mask::Node::unite(buildChildren(getPatterns(), shape));
}
mask::Node IntersectAttr::buildMaskNode(const PatternShape &shape) const {
  return mask::Node::intersect(buildChildren(getPatterns(), shape));
}
mask::Node PerHeadAttr::buildMaskNode(const PatternShape &shape) const {
  return mask::Node::perHead(buildChildren(getPatterns(), shape));
}

mask::Mask mlir::attn::buildMask(MaskPatternAttrInterface pattern,
                                 const PatternShape &shape) {
  mask::Node root = pattern ? pattern.buildMaskNode(shape) : mask::Node::all();
  return mask::Mask(std::move(root), shape.numHeads, shape.queryLen,
                    shape.keyLen);
}

//===----------------------------------------------------------------------===//
// BlockLayoutAttr
//===----------------------------------------------------------------------===//

/// Splits the flat arrays of the attribute into per-layout CSR lists.
static std::vector<BlockLayout::Compressed>
splitLayouts(int64_t queryBlocks, ArrayRef<int64_t> fullOffsets,
             ArrayRef<int64_t> fullBlocks, ArrayRef<int64_t> partialOffsets,
             ArrayRef<int64_t> partialBlocks, std::string &error) {
  std::vector<BlockLayout::Compressed> layouts;
  int64_t stride = queryBlocks + 1;
  if (fullOffsets.size() % stride != 0 ||
      partialOffsets.size() != fullOffsets.size() || fullOffsets.empty()) {
    error = "expects full and partial offsets of (query_blocks + 1) entries "
            "per layout";
    return layouts;
  }
  int64_t count = fullOffsets.size() / stride;
  auto slice = [&](ArrayRef<int64_t> offsets, ArrayRef<int64_t> blocks,
                   int64_t l, std::vector<int32_t> &outOffsets,
                   std::vector<int32_t> &outBlocks) {
    int64_t begin = offsets[l * stride], end = offsets[l * stride + stride - 1];
    if (begin < 0 || end < begin || end > static_cast<int64_t>(blocks.size())) {
      error = "expects offsets within the block lists";
      return;
    }
    for (int64_t r = 0; r < stride; ++r)
      outOffsets.push_back(offsets[l * stride + r] - begin);
    for (int64_t i = begin; i < end; ++i)
      outBlocks.push_back(blocks[i]);
  };
  for (int64_t l = 0; l < count && error.empty(); ++l) {
    BlockLayout::Compressed c;
    slice(fullOffsets, fullBlocks, l, c.fullOffsets, c.fullBlocks);
    slice(partialOffsets, partialBlocks, l, c.partialOffsets, c.partialBlocks);
    layouts.push_back(std::move(c));
  }
  return layouts;
}

LogicalResult BlockLayoutAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t blockQ,
    int64_t blockK, int64_t queryBlocks, int64_t keyBlocks,
    ArrayRef<int64_t> fullOffsets, ArrayRef<int64_t> fullBlocks,
    ArrayRef<int64_t> partialOffsets, ArrayRef<int64_t> partialBlocks,
    ArrayRef<int64_t> heads) {
  if (blockQ < 1 || blockK < 1 || queryBlocks < 1 || keyBlocks < 1)
    return emitError() << "block layout sizes must be positive";
  // No more blocks than positions (the offsets and block lists are indexed
  // with these counts, the kernels with int32).
  for (int64_t v : {blockQ, blockK, queryBlocks, keyBlocks})
    if (v > mask::kMaxSequenceLength)
      return emitError() << "block layout sizes must be at most 2^30 ("
                         << mask::kMaxSequenceLength << "), got " << v;
  std::string error;
  std::vector<BlockLayout::Compressed> layouts =
      splitLayouts(queryBlocks, fullOffsets, fullBlocks, partialOffsets,
                   partialBlocks, error);
  if (error.empty())
    error =
        BlockLayout::verify(queryBlocks, keyBlocks, layouts,
                            std::vector<int64_t>(heads.begin(), heads.end()));
  if (!error.empty())
    return emitError() << "invalid block layout: " << error;
  return success();
}

BlockLayoutAttr BlockLayoutAttr::get(MLIRContext *context,
                                     const BlockLayout &layout) {
  SmallVector<int64_t> fo, fb, po, pb, heads;
  for (const BlockLayout::Compressed &c : layout.getLayouts()) {
    int64_t fBase = fb.size(), pBase = pb.size();
    for (int32_t o : c.fullOffsets)
      fo.push_back(fBase + o);
    for (int32_t o : c.partialOffsets)
      po.push_back(pBase + o);
    fb.append(c.fullBlocks.begin(), c.fullBlocks.end());
    pb.append(c.partialBlocks.begin(), c.partialBlocks.end());
  }
  for (int64_t h = 0; h < layout.getNumHeads(); ++h)
    heads.push_back(layout.getLayoutOfHead(h));
  return get(context, layout.getBlockQ(), layout.getBlockK(),
             layout.getNumQueryBlocks(), layout.getNumKeyBlocks(), fo, fb, po,
             pb, heads);
}

BlockLayout BlockLayoutAttr::getLayout() const {
  std::string error;
  std::vector<BlockLayout::Compressed> layouts =
      splitLayouts(getQueryBlocks(), getFullOffsets(), getFullBlocks(),
                   getPartialOffsets(), getPartialBlocks(), error);
  assert(error.empty() && "verified attribute");
  return BlockLayout::fromParts(
      getBlockQ(), getBlockK(), getQueryBlocks(), getKeyBlocks(),
      std::move(layouts),
      std::vector<int64_t>(getHeads().begin(), getHeads().end()));
}
