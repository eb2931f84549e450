//===- RaiseMatch.h - attn-raise's matchers, shared ------------*- C++ -*-===//
//
// attn-raise is three files sharing these declarations: Raise.cpp (the pass,
// softmax and pointwise weights, masks on the scores, operands, GQA,
// qk-layernorm, the gate, the build), RaiseMatchers.cpp (structural helpers
// over LinalgOp: contractions, elementwise ops, row reductions, scales,
// masks) and RaiseKernel.cpp (kernelized attention: feature maps, FAVOR+,
// products normalized after V and in linear order). RaiseExpr.h evaluates
// payloads. Private to lib/Dialect/Attn/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISEMATCH_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISEMATCH_H

#include "RaiseExpr.h"

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <functional>
#include <optional>
#include <string>
#include <variant>

namespace mlir::attn::raise {

/// A failed match: why (for the remark). `silent` when the subgraph does
/// not look like attention at all (a matmul after an activation): no
/// remark.
struct Miss {
  std::string why;
  bool silent = false;
};

template <typename T>
using Matched = std::variant<T, Miss>;

/// A contraction with batch dims, one query (m), one key (n) and one
/// reduced (k) dim, accumulating into zeros.
struct Contraction {
  linalg::LinalgOp op;
  SmallVector<unsigned> batch;
  unsigned m, n, k;
  SmallVector<unsigned> lhs, rhs, out;
  /// Whether it accumulates into zeros (a plain product).
  bool zeroInit = false;
};

/// A mask applied to the (maybe scaled) scores before the normalizer, as
/// exporters and elementwise fusion leave it: one elementwise op over the
/// scores `s` (E = s, s * c or s / c) yielding
///   - `select(cond, E, -inf)` or `E + select(cond, 0, -inf)`, `cond` a
///     predicate of the loop indices (e.g. `j <= i`): an index mask;
///   - `E + m` with `m` read from a tensor: an additive mask tensor (or an
///     index mask when that tensor is an op without inputs yielding
///     `select(cond, 0, -inf)`);
///   - `select(m, E, -inf)` or `E + select(m, 0, -inf)` with `m` read from
///     an i1 tensor: a boolean mask tensor.
struct ScoreMask {
  Value scores;
  double scale = 1.0;
  SmallVector<Operation *> ops;
  /// An index mask: the predicate (true = allowed) and the op whose loop
  /// indices it reads.
  Value indexCond;
  unsigned indexRank = 0;
  /// A mask tensor and the map the masking op reads it with.
  Value tensor;
  AffineMap tensorMap;
  bool additive = false;
  /// After the normalizer: the masked value when it is not a multiple of
  /// the input (`select(m, h(x), 0)`, h fused into the masking op), and
  /// the payload argument `x` it is computed from.
  Value valueExpr, valueArg;
};

/// What the weights P are: the normalizer, and the scores S' they are
/// computed from.
struct Weights {
  NormalizerAttrInterface normalizer;
  Value scores;
  SmallVector<Operation *> ops;
  std::string form;
  /// Kernel attention: the feature map Q and K went through (their
  /// elementwise ops are unwrapped when the scores are matched).
  std::optional<FeatureMap> featureMap;
  /// Pointwise attention: the scale found inside the elementwise chain
  /// (`h(a * s)`), and a mask applied after h (a `0` fill).
  double scale = 1.0;
  std::optional<ScoreMask> postMask;
};

/// The features phi(x) of Q or K in kernel attention: an elementwise feature
/// map of x, or FAVOR+ (`c exp(x W^T - |x|^2 / 2)` with a projection W).
struct Features {
  FeatureMap map;
  /// x, before the scale (Q or K).
  Value input;
  /// x = inputScale * input (FAVOR+, e.g. Performer's D^-1/4).
  double inputScale = 1.0;
  /// FAVOR+: W, read as [m, D] (or [D, m] when `projectionTransposed`),
  /// m, and the constant c (1 / sqrt(m) in Performer's definition).
  Value projection;
  bool projectionTransposed = false;
  int64_t features = 0;
  double factor = 1.0;
  /// The ops from `input` to phi(x).
  SmallVector<Operation *> ops;
};

/// A matched attention graph, found without creating IR: what the build
/// step creates the attn.attention op from, and what it replaces.
struct AttentionMatch {
  /// The output product O = P V, whose result the op replaces.
  linalg::LinalgOp pvOp;
  /// The rank of the products: 4 ([B, H, L, D]) or 3 ([B*H, L, D]).
  int64_t rank = 0;
  /// The normalizer, the scores it reads and its ops.
  Weights weights;
  /// The score product S = Q K^T.
  linalg::LinalgOp qkOp;
  /// Q, K and V as the op reads them (before the unit head dim of rank 3
  /// operands); K still [..., D, Lk] when `transposeKey`.
  Value q, k, v;
  /// Whether the scores read K transposed (for the remark).
  bool keyTransposed = false;
  /// Whether the build transposes K (no transpose of it to look through).
  bool transposeKey = false;
  /// The scale (the mask's, the scores' and Q's), and its op on the scores.
  double scale = 1.0;
  Operation *scaleOp = nullptr;
  /// A causal mask from the indices, or another mask; the masking ops.
  MaskPatternAttrInterface pattern;
  std::optional<ScoreMask> mask;
  SmallVector<Operation *> maskOps;
  /// An index mask evaluated at each (i, j) of [Lq, Lk], row-major.
  SmallVector<bool> indexBits;
  int64_t lq = 0, lk = 0;
  /// The feature map ops on Q and K (kernel attention), and those of
  /// qk-layernorm.
  SmallVector<Operation *> featureOps;
  std::optional<double> qkNormEps;
  /// FAVOR+: the projection operand (transposed by the build when the
  /// graph gives it as [D, m]) and the scale of Q and K before the
  /// features (the op's scale multiplies both by its square root).
  Value projection;
  bool transposeProjection = false;
  std::optional<double> kernelScale;
  /// A gate: the op multiplying the output elementwise by `gate`, whose
  /// result the op replaces then.
  linalg::LinalgOp gateOp;
  Value gate;
  /// The remark's notes on the mask and on the operands (grouped heads, Q
  /// scaled).
  std::string maskNote, operandNote;
};

//===--- Structural helpers and masks (RaiseMatchers.cpp) ----------------===//

/// The loop dims an operand's indexing map reads, in order, if the map is
/// a projected permutation.
std::optional<SmallVector<unsigned>> dimsOf(AffineMap map);

/// `a` followed by `b`.
SmallVector<unsigned> concat(ArrayRef<unsigned> a, ArrayRef<unsigned> b);

/// Whether `v` is a tensor filled with the float `value` (linalg.fill of a
/// constant), or with a value below -1e30 when `value` is -inf (or a NaN
/// when `nanIsIdentity`: the identity of maxnumf, which upstream's softmax
/// decomposition uses).
bool isFilledWith(Value v, double value, bool nanIsIdentity = false);

/// The float constant `v` is (a scalar arith.constant), if any.
std::optional<double> constantOf(Value v);

/// The value a single-block linalg op yields.
Value yielded(linalg::LinalgOp op);

/// The block argument of the payload for DPS input `i`.
Value inputArg(linalg::LinalgOp op, unsigned i);

/// `op` as a batched matrix product accumulating into zeros (or the miss,
/// naming the product `what`).
Matched<Contraction> matchContraction(Operation *op, StringRef what);

/// Whether `map` reads a row value in a loop nest of rank `rank`: the
/// first rank - 1 dims, the last dropped ([..., i]) or read at 0 from a
/// size-1 dim ([..., i, 1], what TOSA's keep-dim reductions give).
bool isRowMap(AffineMap map, unsigned rank);

/// Whether `op` is elementwise over its rank: all loops parallel, the init
/// and every full-rank input read with the identity map, other inputs
/// read as row values (isRowMap).
bool isElementwise(linalg::LinalgOp op, unsigned numInputs);

/// Whether input `i` of `op` is read as a row value.
bool readsRow(linalg::LinalgOp op, unsigned i);

/// The value a row reduction reduces: its input, or the source of the
/// `tensor.expand_shape` that put a unit dim before the last (TOSA's
/// keep-dim reductions reduce `[..., L, 1, Lk]`).
Value reducedValue(linalg::LinalgOp op);

/// An elementwise multiplication or division of the scores by a constant.
std::optional<std::pair<double, Operation *>> matchScale(Value s);

/// Whether the scale op looks like one but is not a constant (for the
/// remark).
bool looksLikeScale(Value s);

/// Whether `cond` compares the key index with the query index of a
/// payload as `j <= i` (a causal mask computed with linalg.index), `i` and
/// `j` being loop dims `rank - 2` and `rank - 1`.
bool isCausalCondition(Value cond, unsigned rank);

/// Whether `v` is a constant at most -1e30 (a masked score).
bool isMinusInfinity(Value v);

/// The value of an integer or index expression of a payload that reads
/// only the loop indices `i` (dim `rank - 2`) and `j` (dim `rank - 1`) and
/// constants, at (i, j); std::nullopt for anything else (another dim, a
/// block argument, an op it does not know).
std::optional<int64_t> evalIndexExpr(Value v, unsigned rank, int64_t i,
                                     int64_t j, int depth = 0);

/// The mask (ScoreMask) the op defining `s` applies, or a silent miss.
/// With `afterNormalizer` (a mask on pointwise weights or on the feature
/// products of linear attention), the masked value is 0 instead of -inf
/// and there is no additive form.
Matched<ScoreMask> matchMask(Value s, bool afterNormalizer = false);

/// A function of an element and a row value.
using RowFunction = std::function<std::optional<double>(double, double)>;

/// The elementwise op of two inputs `op` (the first read whole, the second
/// as a row value through the unary chain `row`), as a function of both.
RowFunction rowFunction(linalg::LinalgOp op, const UnaryChain &row);

/// A sum over the last dim of `x` (linalg.reduce or a generic, maybe of a
/// keep-dim expand_shape); with `squares`, of x^2 (the payload `acc + a *
/// a`, or a sum of an elementwise square of x).
bool isRowSum(Operation *o, Value x, bool squares,
              SmallVector<Operation *> &ops);

/// An elementwise op of a tensor and a row value, as a function g(a, r) of
/// the tensor's element and of the row sum of `x` (of x^2 with `squares`)
/// it reads through a unary chain; the ops from that sum on are added to
/// `ops`. std::nullopt when its row value is not such a sum.
std::optional<RowFunction> rowSumFunction(linalg::LinalgOp op, Value x,
                                          bool squares,
                                          SmallVector<Operation *> &ops);

/// Whether g(a, r) is `want(a, r)` (relative error `tol`, against at least
/// `floor`) at every point of the grid `as` x `rs`.
bool agreesOnGrid(const RowFunction &g, ArrayRef<double> as,
                  ArrayRef<double> rs,
                  llvm::function_ref<double(double, double)> want, double tol,
                  double floor = 0.0);

/// A reduction over the last dim of its single input into [..., i], whose
/// payload combines input and accumulator with `Combiner`.
template <typename... Combiner>
bool isRowReduction(linalg::LinalgOp op, double init) {
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics() || op.getNumReductionLoops() != 1)
    return false;
  unsigned rank = op.getNumLoops();
  auto iters = op.getIteratorTypesArray();
  if (iters.back() != utils::IteratorType::reduction)
    return false;
  auto in = dimsOf(op.getIndexingMapsArray()[0]);
  auto out = dimsOf(op.getIndexingMapsArray()[1]);
  SmallVector<unsigned> full = llvm::to_vector(llvm::seq<unsigned>(0, rank));
  if (!in || !out || *in != full ||
      *out != SmallVector<unsigned>(full.begin(), full.end() - 1))
    return false;
  Operation *combine = yielded(op).getDefiningOp();
  if (!combine || !isa<Combiner...>(combine))
    return false;
  Value a = inputArg(op, 0), acc = op.getBlock()->getArgument(1);
  bool operands =
      (combine->getOperand(0) == a && combine->getOperand(1) == acc) ||
      (combine->getOperand(0) == acc && combine->getOperand(1) == a);
  return operands && isFilledWith(op.getDpsInits()[0], init,
                                  isa<arith::MaxNumFOp>(combine));
}

//===--- Kernelized attention (RaiseKernel.cpp) --------------------------===//

/// The feature map an elementwise op of one tensor applies, found by
/// evaluating it: elu(x) + 1 (`select(x > 0, x + 1, exp(x))`, or TOSA's
/// spelling) or relu (`max(x, 0)`, a clamp).
std::optional<FeatureMap> featureMapOf(linalg::LinalgOp op);

/// The tensor a feature map op reads (its variable input).
Value featureInput(linalg::LinalgOp op);

/// The kernel normalizer of features `f` with `eps`.
KernelAttr kernelAttr(MLIRContext *ctx, const Features &f, double eps);

/// The feature map name, for the remark.
std::string featureMapName(const Features &f);

/// The features of Q (`phiQ`) and K (`phiK`, maybe through a transpose),
/// when they are the same map (FAVOR+: the same projection, scale and
/// constant).
std::optional<std::pair<Features, Features>> sharedFeatures(Value phiQ,
                                                            Value phiK);

std::optional<Features> featuresOf(Value phi);

/// Whether `op` may normalize a product after it: an elementwise op of two
/// inputs, the first a contraction's result, the second read as a row
/// value (`(A V) / rowsum(A)`, `phi(Q) (phi(K)^T V) / (phi(Q) . z)`).
bool isNormalizedProduct(linalg::LinalgOp op);

/// Linear attention normalized after the V product, `div` the division:
///   - quadratic order: `(A V) / (rowsum(A) + eps)`, A = phi(Q) phi(K)^T
///     (maybe masked with a 0 fill);
///   - linear order: `phi(Q) KV / (phi(Q) . z + eps)`, KV = phi(K)^T V and
///     z = sum_k phi(K).
/// Silent when it does not look like linear attention.
Matched<AttentionMatch> matchNormalizedProduct(linalg::LinalgOp div);

//===--- Steps of the match (Raise.cpp) ----------------------------------===//

/// The permutation that swaps the last two of `rank` dims.
SmallVector<int64_t> swapLastTwo(int64_t rank);

std::optional<Miss> matchMaskedScores(AttentionMatch &m, Value &s);

/// Matches a constant scale of the scores `s` into `m` and moves `s` to the
/// scores it scales. The decomposed softmax reads the scores twice (max,
/// exp).
std::optional<Miss> matchScoreScale(AttentionMatch &m, Value &s);

/// Matches the scores `s` = Q K^T into `m` (the product, Q, K and whether
/// it reads K transposed), with the batch dims of the output product `pv`.
std::optional<Miss> matchScores(AttentionMatch &m, Value s,
                                const Contraction &pv);

/// Kernel attention: moves `m.q` and `m.k` to Q and K before the feature
/// map (matched with the normalizer), recording its ops.
/// Moves `m.q` and `m.k` to Q and K before their features `fq` and `fk`.
std::optional<Miss> applyFeatures(AttentionMatch &m, const Features &fq,
                                  const Features &fk);

std::optional<Miss> matchFeatureMapInputs(AttentionMatch &m);

/// The mask, checked (and an index mask evaluated into `m.indexBits`)
/// before any IR is built.
std::optional<Miss> checkMask(AttentionMatch &m);

/// The operands as the op reads them, found without creating IR: K through
/// a transpose of its last two dims (else the build transposes it), K and
/// V from fewer heads, Q through a constant scale.
void matchOperands(AttentionMatch &m);

} // namespace mlir::attn::raise

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISEMATCH_H
