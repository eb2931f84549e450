//===- KernelFrame.h - The frame of the fused attention kernels -*- C++ -*-===//
//
// Every fused attention kernel (the CPU tile kernel of attn-flash,
// attn-lower-pointwise and attn-block-sparse; the GPU SIMT and mma.sync
// kernels of convert-attn-to-gpu) has the same frame:
//
//   buffers and tables         the operands as read-only buffers, the
//                              output buffer, the block layout and mask
//                              tables (prepare / finish)
//   for each query tile:       (batch, query head, tile), its key/value head
//     for each key block of the tile's row of the layout: full blocks,
//     then partial ones, segment-bound masks skipping blocks whose ids
//     cannot meet the tile's, a mask tensor's blocks classified as they
//     are visited (empty: skipped; not wholly allowed: masked) (visitTile)
//       S = scale Q K^T (+ bias)                 (loadBias; target code)
//       masked in partial blocks                               (allowed)
//       softmax: online max / sum, rescale the accumulator
//                     (maskedScore, softmaxStep, softmaxWeight, softmaxSum)
//       pointwise: P = L^-alpha h(S)                   (pointwiseWeight)
//       O += P V                                           (target code)
//     O = O / l (* gate), stored              (rowFactor, applyGate,
//                                              storeOutput)
//
// This class writes every step of the frame once. What a target decides is
// where a query row lives and how its partial values meet (KernelTarget):
// one vector lane of the CPU's register tile, `rowThreads` adjacent GPU
// threads (SIMT), or the four lanes of an mma.sync quad. The target's
// generator emits the loops around the frame's steps (register blocking on
// the CPU; launch, shared memory and mma fragments on the GPU) and calls
// the frame for everything else, the way Triton's TargetInfoBase serves its
// NVIDIA and AMD backends.
//
// Values a step takes and returns are f32 scalars or vectors of f32 (one
// lane per query row); constants take the shape of the value they meet.
//
// Sizes may be known only at run time (dynamic batch and lengths, varlen
// batches): then the frame reads them from the operands, classifies key
// blocks at run time from the pattern (MaskEmitter::emitTileKind) instead
// of reading the compile-time layout, and keeps every position relative to
// the current sequence.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNKERNEL_KERNELFRAME_H
#define ATTN_CONVERSION_ATTNKERNEL_KERNELFRAME_H

#include "attn-opt/Conversion/AttnKernel/KernelSpec.h"
#include "attn-opt/Dialect/Attn/Utils/ArithBuilder.h"
#include "attn-opt/Dialect/Attn/Utils/ModRegionEmitter.h"

namespace mlir::attn {

class TensorBuilder;

/// How the partial values of one query row combine.
enum class RowCombine { Max, Sum };

/// What the frame asks of a target.
class KernelTarget {
public:
  virtual ~KernelTarget();

  /// True if the kernel reads K, V, bias and gate converted to f32 once,
  /// before the kernel (the CPU); false if it reads the operands' own
  /// element types, extending on load (the GPU). Either way Q is read in
  /// its own element type (each element once per tile, extended as it is
  /// loaded) and the output written in the result type (rounded as it is
  /// stored): no f32 copies of them.
  virtual bool readsF32Operands() const = 0;

  /// Combines a value of which each thread holding part of a query row has
  /// a partial (the row maximum of its keys, its part of the row sum). The
  /// identity where one thread holds the whole row.
  virtual Value combineRow(ImplicitLocOpBuilder &b, Value partial,
                           RowCombine kind) const = 0;
};

/// Query rows a value speaks of: row `start` alone (`lanes` = 0), or the
/// `lanes` rows from `start`, one per lane of a vector; or, when
/// `positions` is set (a vector of `lanes` i32), the rows at those
/// positions of the current sequence (the decode kernel's tiles, whose
/// lanes hold several heads' queries; `start` is then the first of them
/// for the block walk, and only patterns are evaluated: no bias, mask
/// tensor or segment ids).
struct QueryRows {
  Value start;
  int64_t lanes = 0;
  Value positions = {};
  /// With `positions`: the query head of each lane (a vector of i32).
  Value heads = {};
};

/// One online-softmax step for a row: the new running maximum, the value
/// scores are shifted by before `exp` (the maximum, or 0 while no key is
/// allowed) and the factor `alpha` that rescales the previous sum and
/// output accumulator.
struct SoftmaxStep {
  Value max, shift, alpha;
};

class KernelFrame : public KernelArith {
public:
  /// Generates at `b` the kernel of `spec` for `target`, in tiles of
  /// `blockQ` queries by `blockK` keys. `layout` is the compile-time block
  /// layout in those blocks when the spec has one (hasStaticLayout), else
  /// null: the blocks are classified at run time.
  KernelFrame(ImplicitLocOpBuilder &b, const KernelSpec &spec,
              const BlockLayout *layout, int64_t blockQ, int64_t blockK,
              const KernelTarget &target);

  const KernelSpec &spec;
  const BlockLayout *layout;
  const KernelTarget &target;

  /// Static sizes: query heads, query heads per key/value head, head and
  /// value dims, the tile.
  int64_t queryHeads, group, headDim, valueDim, blockQ, blockK;
  Type f32;

  /// Sizes of the operands as index values (constants when static), set by
  /// prepare(): the batch rows, the query and key rows per batch row, and
  /// the query tiles to launch per batch row (over every sequence for a
  /// packed batch).
  Value batchSize, queryLen, keyLen, numTiles;

  /// The log-sum-exp buffer `[B, Hq, Lq]` f32 (spec.results.lse), else null.
  Value lseBuf;
  /// Read-only buffers of the operands (null when absent; the key
  /// layer-normalized with qk-layernorm), the output buffer, the tables.
  Value queryBuf, keyBuf, valueBuf, biasBuf, gateBuf, querySegmentBuf,
      keySegmentBuf, outputBuf;
  /// ALiBi slopes and attention sinks (f32 `Hq`, null when absent).
  Value slopeBuf, sinkBuf;
  /// Set before prepare(): K and V buffers keep the operands' element type
  /// (f16, bf16) even where the target reads f32 operands, for a target
  /// that extends them as it loads them (the CPU's decode tiles: each K/V
  /// element read once, half the bytes of an f32 copy).
  bool kvInElementType = false;
  /// A paged KV cache: the page table (i32 `B x P_max`; keyBuf and
  /// valueBuf are then pools of pages) and the page size; null and 0
  /// otherwise.
  Value pageTableBuf;
  int64_t pageSize = 0;
  /// Relative attention (spec.isRelative(); null otherwise): the content
  /// and position biases (f32 `H x D`) and the distance embeddings
  /// transposed and padded, `relBuf[h, d, relPad + r] = posEmb[h, r, d]`
  /// (f32 `H x D x (relPad + Lk + blockQ)`, zeros outside the distances):
  /// the `blockQ` rows of a tile at distances `M + i - j` from key j are
  /// one contiguous vector per d. The padding covers every distance of the
  /// blocks a causal tile visits (`M + i - j >= -(blockQ + blockK)`) and of
  /// the rows past the queries (masked or dropped, so the zeros never
  /// count).
  Value contentBiasBuf, positionBiasBuf, relBuf;
  int64_t relPad = 0;
  /// The mask tensor as a read-only buffer (null when absent): f32 for an
  /// additive mask, i8 (0 / 1) for a boolean one.
  Value maskBuf;
  /// The kinds of the mask tensor's blocks (query block x key block, i8:
  /// bit 0 allows some key, bit 1 allows every key adding 0), classified
  /// once per call by classifyMaskBlocks; null when not built.
  Value maskKinds;
  KernelTables tables;
  /// The tensors the score and mask regions capture, flattened into 1-D
  /// read-only buffers, and the sizes of their dimensions (index values).
  SmallVector<Value> captureBufs;
  SmallVector<SmallVector<Value>> captureDims;

  /// The current tile: batch row of the buffers, query head, its key/value
  /// head, tile index and its first query (in its sequence).
  Value batch, head, kvHead, tile, firstQuery;
  /// The current sequence: its query and key lengths, and the buffer rows
  /// of its first query and key (0 unless the batch is packed).
  Value seqQueryLen, seqKeyLen, queryBase, keyBase;

  //===--------------------------------------------------------------------===//
  // Host side
  //===--------------------------------------------------------------------===//

  /// Builds the buffers, sizes and tables at the insertion point.
  /// Before the tiles (CPU): when every tile of every head and batch row
  /// reads the same mask blocks (a mask tensor without batch or head dims,
  /// no sequence lengths or packed batch), classifies each of its blocks
  /// once, in parallel, into maskKinds, instead of once per head.
  void classifyMaskBlocks();
  void prepare();
  /// prepare() without the output buffers: the operands' buffers, sizes
  /// and tables, for a kernel that writes other results (the backward).
  void prepareInputs();
  /// Emits `body` (the launch of the kernel) when the run-time checks pass.
  void guarded(function_ref<void()> body);
  /// The result tensor from the output buffer, in the result type.
  Value finish();
  /// The log-sum-exp tensor (spec.results.lse), else null.
  Value finishLse();

  //===--------------------------------------------------------------------===//
  // The walk over the layout
  //===--------------------------------------------------------------------===//

  /// Sets the current tile (`tileIdx` counts the tiles of every sequence of
  /// a packed batch) and emits `body` for it; tiles of a varlen batch with
  /// no query row are skipped (their rows stay zero).
  void forTile(Value batchIdx, Value headIdx, Value tileIdx,
               function_ref<void()> body);

  /// Processes one key block: its first key, whether it needs masking, and
  /// the state threaded through the walk; returns the next state.
  using BlockBody =
      function_ref<SmallVector<Value>(Value firstKey, bool masked, ValueRange)>;

  /// A packed batch's tiles of `block` rows over the sequences of the
  /// offsets buffer `offsets` (N + 1 entries): the first flat tile of each
  /// sequence (a buffer of N + 1 entries, the last their count) and the
  /// count (0 when the run-time checks fail).
  std::pair<Value, Value> packedTiles(Value offsets, int64_t block);
  /// The sequence of flat tile `tileIdx` of the tile starts `starts` (a
  /// bisection).
  Value sequenceOf(Value starts, Value tileIdx);
  /// The first flat query tile of sequence `s` of a packed batch.
  Value firstTileOf(Value s);
  /// The query and key offsets of a packed batch (null otherwise).
  Value queryOffsets() const { return queryOffsetBuf; }
  Value keyOffsets() const { return keyOffsetBuf; }

  /// Visits the current tile's key blocks that hold an allowed key, threading
  /// `state` through `body`: from the compile-time layout (full blocks, then
  /// partial ones), or classified at run time (full, partial or skipped).
  /// With a segment-bound mask, blocks whose key ids cannot meet the tile's
  /// query ids are skipped too.
  SmallVector<Value> visitTile(ValueRange state, BlockBody body);
  /// Visits key block `kb` of the current tile, one the compile-time
  /// layout lists in the tile's row (partial when `masked`), as visitTile
  /// would (skipped when segment ids or the mask tensor rule it out): the
  /// walk of a kernel that goes over the layout by columns (the backward's
  /// key blocks).
  SmallVector<Value> visitKeyBlock(Value kb, bool masked, ValueRange state,
                                   BlockBody body);
  /// The same without a compile-time layout: key block `kb` of the current
  /// tile, classified at run time (full, partial or skipped) as visitTile
  /// classifies each block.
  SmallVector<Value> visitKeyBlockAtRuntime(Value kb, ValueRange state,
                                            BlockBody body);

  //===--------------------------------------------------------------------===//
  // Rows
  //===--------------------------------------------------------------------===//

  /// The buffer row of query `row` of the current sequence, clamped into it
  /// (rows past its end read its last row; their results are dropped).
  Value queryRow(Value row);
  /// The buffer row of key `key` of the current sequence; clamped into the
  /// sequence when `clamp` (keys of partial blocks may lie past its end).
  Value keyRow(Value key, bool clamp);
  /// i1: query `row` lies in the current sequence (its result is stored).
  Value rowInside(Value row);
  /// The same for the lanes of `rows` (a vector of i1).
  Value rowsInside(QueryRows rows);
  /// The query and key lengths of batch row `batchIdx` (a padded varlen
  /// batch's lengths, else the operands'; not for a packed batch).
  std::pair<Value, Value> sequenceLengths(Value batchIdx);
  /// The indices of buffer row `keyRow` (from keyRow, within the keys) in
  /// the K and V buffers, but for the dim: the batch row, the key/value
  /// head and the row; in a paged cache the page (from the page table),
  /// the head and the row in the page.
  SmallVector<Value, 3> kvAt(Value keyRow);

  //===--------------------------------------------------------------------===//
  // Scores
  //===--------------------------------------------------------------------===//

  /// i1 (a vector with `rows.lanes`): may `rows` of the current head see
  /// key `key` (positions in the current sequence)? Keys past the end of the
  /// sequence are not allowed; rows past it read clamped data (their
  /// results are dropped).
  Value allowed(QueryRows rows, Value key);

  /// bias[b', h', rows, key] as f32, broadcast over batch and heads as the
  /// bias's shape says (rows and key within bounds, or read as 0 past the
  /// queries for vectors).
  Value loadBias(QueryRows rows, Value key);

  /// The mask tensor at `rows` and `key` (a buffer row, within bounds):
  /// what it adds to the score (null for a boolean mask) and whether it
  /// allows the key (i1, or a vector of i1 over the rows; rows past the
  /// queries read as masked).
  std::pair<Value, Value> loadMaskTensor(QueryRows rows, Value key);

  /// The score where `ok` (may be null: everywhere), -inf elsewhere: what
  /// the row maximum of softmax is taken over.
  Value maskedScore(Value score, Value ok);

  /// ALiBi's slope of `rows` (f32, a vector over the lanes when
  /// `rows.lanes` > 0; per lane from `rows.heads` when set), null without
  /// ALiBi. Loop-invariant over a tile: targets compute it once per tile.
  Value alibiSlope(QueryRows rows);
  /// The scaled score (plus bias) of `rows` and `key` (positions in the
  /// current sequence) after the modifiers serving models use, in the op's
  /// order: ALiBi's `-slope * |i' - key|` added (`slope` from alibiSlope,
  /// null without ALiBi; `i'` the row's key position), then soft-capped,
  /// `cap * tanh(s / cap)`. The score itself when the op has neither.
  Value modifyScore(Value score, QueryRows rows, Value key, Value slope);
  /// The derivatives of a modified score with respect to the modifiers'
  /// learned parameters (the backward's gradients of ALiBi slopes and of
  /// captured tensors).
  struct ModifierTangents {
    /// d (score after ALiBi) / d slope, `-|i' - key|`; null without ALiBi.
    Value slope;
    /// The score region's partial derivatives with respect to its reads of
    /// floating-point captured tensors (d result / d read).
    SmallVector<CaptureTangent> captures;
  };
  /// modifyScore and its derivative with respect to the score (1 without
  /// modifiers; the region's derivative: emitScoreModWithDerivative); with
  /// `tangents`, the derivatives with respect to the learned parameters.
  std::pair<Value, Value>
  modifyScoreWithDerivative(Value score, QueryRows rows, Value key, Value slope,
                            ModifierTangents *tangents = nullptr);
  /// The row-major offset of `at` (index scalars, or vectors of them) in
  /// captured tensor `c` (its flattened buffer, captureBufs).
  Value captureOffset(unsigned c, ValueRange at);

  //===--------------------------------------------------------------------===//
  // Normalizers
  //===--------------------------------------------------------------------===//

  /// Folds a block's maximum (this thread's part of the row) into the
  /// running maximum.
  SoftmaxStep softmaxStep(Value runningMax, Value blockMax);
  /// `exp(score - shift)` where `ok` (may be null), 0 elsewhere.
  Value softmaxWeight(Value score, Value shift, Value ok);
  /// The running sum after a block: `sum * alpha + blockSum`.
  Value softmaxSum(Value runningSum, Value alpha, Value blockSum);
  /// `L^-alpha h(score)` where `ok` (may be null), 0 elsewhere; L is the key
  /// length of the current sequence.
  Value pointwiseWeight(Value score, Value ok);
  /// Pointwise attention's `L^-alpha` of the current sequence in the shape
  /// of `like`.
  Value lengthFactorLike(Value like);

  //===--------------------------------------------------------------------===//
  // Query rows and the epilogue
  //===--------------------------------------------------------------------===//

  /// The mean of a query row from the sum of its elements (qk-layernorm).
  Value rowMean(Value sum);
  /// What the (centered) query row is multiplied by: the scale, divided by
  /// the row's standard deviation under qk-layernorm (`centeredSquares` is
  /// the sum of the squared centered elements; null without qk-layernorm).
  Value queryFactor(Value centeredSquares);

  // The epilogue works on the query rows of the tile's head, or of
  // `rowHead` when given (a decode tile's rows span the heads of a group).

  /// The factor of the output row: `1 / l` of the combined softmax sum
  /// (0 when no key was allowed), or 1 for pointwise attention (`sum`
  /// null). With attention sinks, `l` gains the current head's
  /// `exp(sink - max)`, `max` the row's (combined) running maximum.
  Value rowFactor(Value sum, Value max = {}, Value rowHead = {});
  /// The softmax denominator of a row from its partial sum and (combined)
  /// running maximum: the combined sum, plus the sink's term.
  Value denominator(Value sum, Value max, Value rowHead = {});
  /// The log-sum-exp of a row (scalars; spec.results.lse): `max +
  /// log(denominator)`, -inf where the denominator is 0; with a sink,
  /// shifted by max(max, sink) so that a row with no allowed key gives the
  /// sink's logit. Like rowFactor it combines the row's partial sums (the
  /// mma.sync quad: lane shuffles, so every lane of the row calls it).
  Value logSumExp(Value sum, Value max, Value rowHead = {});
  /// `lse`, or NaN where one of `sources` (the row's maximum, sum) is NaN:
  /// the row saw a NaN score.
  Value keepNaN(ArrayRef<Value> sources, Value lse);
  /// Stores a row's log-sum-exp for query `row`.
  void storeLse(Value lse, Value row, Value rowHead = {});
  /// `out` (a scalar, or a vector along the value dim from `col`) times the
  /// gate of query `row` when there is one.
  Value applyGate(Value out, Value row, Value col, Value rowHead = {});
  /// Stores `out` (as above) into the output buffer at query `row` (of the
  /// current sequence) and `col`, rounded to the buffer's type.
  void storeOutput(Value out, Value row, Value col, Value rowHead = {});

  //===--------------------------------------------------------------------===//
  // Small builders
  //===--------------------------------------------------------------------===//

  // Constants, index arithmetic and f32 conversions: KernelArith's.

  /// An int32 table entry as an index.
  Value loadIndex(Value mem, Value at);
  /// A vector load or store of `type` at `at`, with the alignment that
  /// vectors of its size at multiples of its size in rows of `rowLen`
  /// elements have (see alignmentOf).
  Value vectorLoad(VectorType type, Value mem, ValueRange at, int64_t rowLen);
  void vectorStore(Value v, Value mem, ValueRange at, int64_t rowLen);
  /// The alignment of `count` elements of `elem` at element offsets that
  /// are multiples of `count` in rows of `rowLen` elements (at most 16).
  static int64_t alignmentOf(Type elem, int64_t count, int64_t rowLen);

  /// An scf.for whose body returns the next iteration values.
  SmallVector<Value>
  forLoop(Value lb, Value ub, int64_t step, ValueRange init,
          function_ref<SmallVector<Value>(Value, ValueRange)> body);
  void forEach(int64_t lb, int64_t ub, int64_t step,
               function_ref<void(Value)> body);
  void ifThen(Value cond, function_ref<void()> body);
  /// The values `body` returns when `cond`, else `state` unchanged (a
  /// state threaded through an scf.if).
  SmallVector<Value> ifThenElseKeep(Value cond, ValueRange state,
                                    function_ref<SmallVector<Value>()> body);

private:
  /// relBuf's tensor (sets relPad).
  Value paddedDistances(TensorBuilder &tb);
  /// prepare()'s first phase: the read-only buffers of the operands (Q, K,
  /// V, the modifiers, the page table, the mask tensor, the relative
  /// biases and distances, the segment ids and the varlen tables).
  void prepareOperandBuffers(TensorBuilder &tb);
  /// batchSize, queryLen and keyLen from the operand buffers.
  void prepareSizes();
  /// modifyScore, and its derivative into `derivative` when given (and
  /// the learned parameters' into `tangents`).
  Value modify(Value score, QueryRows rows, Value key, Value slope,
               Value *derivative, ModifierTangents *tangents = nullptr);
  /// maskBuf from the mask tensor `m`: f32 for an additive mask, i8 for a
  /// boolean one (reinterpreted in place when the target reads converted
  /// operands, `convert`; else extended to bytes).
  void prepareMaskBuffer(TensorBuilder &tb, Value m, bool convert);
  /// prepare()'s second phase: the output buffer and
  /// the log-sum-exp buffer; returns the output's element type.
  Type prepareOutputBuffers();
  /// prepare()'s last phase: the block tables, numTiles and boundKeys (for
  /// a varlen batch, the padding rows of the outputs filled when there are
  /// outputs; `outElem` the output's element type).
  void prepareTables(Type outElem);
  /// numTiles of a packed batch, from tileStartBuf (built here): the first
  /// tile of each sequence, counted once the run-time checks hold.
  void preparePackedTiles();
  /// Buffers of the varlen operands and, for packed batches, the first flat
  /// tile of each sequence (N + 1 entries).
  Value queryLengthBuf, keyLengthBuf, queryOffsetBuf, keyOffsetBuf,
      tileStartBuf;
  /// The key position of the current sequence's first query (`Lk - Lq`),
  /// and pointwise attention's `L^-alpha`, when known only at run time.
  Value maskOffset, lengthFactor;
  /// Whether allowed() bounds keys by the sequence's length.
  bool boundKeys = false;
  /// Set while visitBlock visits a block the mask region's run-time
  /// classification let through.
  bool refiningRegion = false;

  /// The query positions of `rows`, `key` and the key position of the
  /// sequence's first query (null when the mask has it as a constant,
  /// unless `needOffset`): index values, or i32 vectors over the lanes.
  struct Positions {
    Value query, key, offset;
  };
  Positions positionsOf(QueryRows rows, Value key, bool needOffset);
  /// `index` as i32 in each of `lanes` lanes.
  Value splatI32(Value index, int64_t lanes);
  /// The query positions of the lanes of `rows` (a vector of i32).
  Value lanePositions(QueryRows rows);
  /// The smallest and largest segment id of the current tile's queries
  /// (with segment-bound masks; std::nullopt otherwise).
  std::optional<std::pair<Value, Value>> tileQueryIds();
  /// The current tile's first and last query inside its sequence.
  std::pair<Value, Value> tileQueries();

  /// The smallest and largest segment id of `count` positions from `start`
  /// (positions past `length` read the last one).
  std::pair<Value, Value> idRange(Value ids, Value start, int64_t count,
                                  Value length);
  /// Runs `body` on a block unless the mask tensor or segment ids rule it
  /// out; a block the mask tensor does not wholly allow is masked.
  SmallVector<Value> visitBlock(Value k0, bool masked, ValueRange state,
                                std::optional<std::pair<Value, Value>> qIds,
                                BlockBody body);
  /// How the regions read their captured tensors (captureBufs).
  CaptureAccess captureAccess();
  /// The region arguments of `rows` and `key` (batch, head, query, key):
  /// index scalars, or index vectors over the lanes.
  SmallVector<Value, 4> regionIndices(QueryRows rows, Value q, Value k);
  /// The mask region's run-time classification of the current tile's
  /// queries and the keys of the block from `k0` (spec.maskProgram).
  MaskEmitter::TileKind regionTileKind(Value k0);
  /// The mask tensor over the current tile's queries and the keys of the
  /// block from `k0`: (does it allow any key, does it allow every key and
  /// add 0 to each score), i1 values; read from maskKinds when built.
  std::pair<Value, Value> maskTensorTileKind(Value k0);
  /// The same for the mask block of batch row `batchIdx`, head `headIdx`,
  /// the queries from `q0` (below `qLen`) and the keys from `k0` (below
  /// `kLen`), computed from the mask tensor's entries.
  std::pair<Value, Value> classifyMaskBlock(Value batchIdx, Value headIdx,
                                            Value q0, Value qLen, Value k0,
                                            Value kLen);
  /// Runs `body` on a block unless segment ids rule it out.
  SmallVector<Value>
  visitSegmentBound(Value k0, bool masked, ValueRange state,
                    std::optional<std::pair<Value, Value>> qIds,
                    BlockBody body);
  SmallVector<Value> visitBlocks(Value offsets, Value list, Value at,
                                 bool masked, ValueRange state,
                                 std::optional<std::pair<Value, Value>> qIds,
                                 BlockBody body);
  /// The mask emitter of blocks classified at run time (the mask region's
  /// interval analysis for its lookups).
  MaskEmitter runtimeEmitter();
  /// Classifies key block `kb` for the current tile and runs `body` on it
  /// (visitBlock) when it holds an allowed key.
  SmallVector<Value>
  visitClassified(MaskEmitter &emitter, Value kb, ValueRange state,
                  std::optional<std::pair<Value, Value>> qIds, BlockBody body);
  SmallVector<Value>
  visitRuntimeBlocks(ValueRange state,
                     std::optional<std::pair<Value, Value>> qIds,
                     BlockBody body);
  /// The sequence of flat tile `tileIdx` of a packed batch (a bisection of
  /// the tile starts).
  Value sequenceOfTile(Value tileIdx);
};

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNKERNEL_KERNELFRAME_H
