// RUN: attn-opt %s --convert-attn-to-linalg --canonicalize --split-input-file | FileCheck %s

/// Causal softmax with grouped-query heads: queries split into
/// (kv head, group), scores as a contraction over D against the transposed
/// keys, masked entries set to -inf, row max, exp, row sum, normalization,
/// and the contraction with V.
// CHECK-DAG: #[[Q:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[KT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-DAG: #[[S:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @softmax_causal
// CHECK-SAME: (%[[QUERY:.+]]: tensor<1x4x8x16xf32>, %[[KEY:.+]]: tensor<1x2x8x16xf32>, %[[VALUE:.+]]: tensor<1x2x8x8xf32>)
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[Q5:.+]] = tensor.expand_shape %[[QUERY]] {{\[}}[0], [1, 2], [3], [4]] {{.*}} into tensor<1x2x2x8x16xf32>
// CHECK: %[[KEY_T:.+]] = linalg.transpose ins(%[[KEY]] : tensor<1x2x8x16xf32>) {{.*}} permutation = [0, 1, 3, 2]
// CHECK: %[[SCORES:.+]] = linalg.generic {indexing_maps = [#[[Q]], #[[KT]], #[[S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[Q5]], %[[KEY_T]] : {{.*}}) outs(%{{.*}} : tensor<1x2x2x8x8xf32>)
// CHECK: %[[MASKED:.+]] = linalg.generic {{.*}} ins(%[[SCORES]] : tensor<1x2x2x8x8xf32>)
// CHECK:   %[[I:.+]] = linalg.index 3 : index
// CHECK:   %[[J:.+]] = linalg.index 4 : index
// CHECK:   %[[SCALED:.+]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK:   %[[ALLOWED:.+]] = arith.cmpi sle, %[[J]], %[[I]] : index
// CHECK:   arith.select %[[ALLOWED]], %[[SCALED]], %[[NEG_INF]] : f32
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[MASKED]] : {{.*}}) outs(%{{.*}} : tensor<1x2x2x8xf32>)
// CHECK:   arith.maximumf
// CHECK: %[[EXP:.+]] = linalg.generic {{.*}} ins(%[[MASKED]], %[[MAX]] : {{.*}})
// CHECK:   math.exp
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} ins(%[[EXP]] : {{.*}}) outs(%{{.*}} : tensor<1x2x2x8xf32>)
// CHECK: %[[P:.+]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : {{.*}})
// CHECK:   arith.divf
// CHECK: %[[O:.+]] = linalg.generic {{.*}} ins(%[[P]], %[[VALUE]] : tensor<1x2x2x8x8xf32>, tensor<1x2x8x8xf32>) outs(%{{.*}} : tensor<1x2x2x8x8xf32>)
// CHECK: %[[RESULT:.+]] = tensor.collapse_shape %[[O]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x2x8x8xf32> into tensor<1x4x8x8xf32>
// CHECK: return %[[RESULT]]
func.func @softmax_causal(%query: tensor<1x4x8x16xf32>, %key: tensor<1x2x8x16xf32>,
                          %value: tensor<1x2x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32> -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

/// Pointwise attention needs no row reduction: the weights come from one
/// elementwise generic (h, then L^-alpha), masked to 0.
// CHECK-LABEL: func @relu_window
// CHECK-DAG: %[[FACTOR:.+]] = arith.constant 1.250000e-01 : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]
// CHECK: %[[P:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]
// CHECK:   %[[H:.+]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK:   arith.mulf %[[H]], %[[FACTOR]] : f32
// CHECK-NOT: "reduction"]
// CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<1x1x1x8x8xf32>, tensor<1x1x8x8xf32>)
func.func @relu_window(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>, pattern = #attn.window<before = 2, after = 1>}
      : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x8x8xf32>
}

// -----

/// Kernel attention (the quadratic reference form): feature maps on Q and
/// K, scores without scale, division by the masked row sum plus eps.
// CHECK-LABEL: func @kernel_elu
// CHECK: linalg.generic
// CHECK:   arith.cmpf ogt
// CHECK:   math.exp
// CHECK:   arith.select
// CHECK: linalg.generic
// CHECK:   math.exp
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK:   arith.addf
// CHECK: linalg.generic
// CHECK:   arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:   arith.cmpf one
// CHECK:   arith.divf
func.func @kernel_elu(%q: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<elu_plus_one, eps = 1.0e-3>, pattern = #attn.causal}
      : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x8x8xf32>
}

// -----

/// Segment ids and a block table are read inside the mask evaluation; the
/// f16 inputs are extended to f32 and the result truncated back.
// CHECK-LABEL: func @segments_block_f16
// CHECK-SAME: %[[SEG:[^:]+]]: tensor<1x64xi32>
// CHECK: %[[TABLE:.+]] = arith.constant dense<{{\[}}[1, 0], [1, 1]]> : tensor<2x2xi8>
// CHECK: linalg.generic
// CHECK:   arith.extf %{{.*}} : f16 to f32
// CHECK: linalg.generic
// CHECK:   tensor.extract %[[TABLE]]
// CHECK:   tensor.extract %[[SEG]]
// CHECK:   tensor.extract %[[SEG]]
// CHECK:   arith.cmpi eq
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @segments_block_f16(%q: tensor<1x1x64x8xf16>, %seg: tensor<1x64xi32>) -> tensor<1x1x64x8xf16> {
  %0 = attn.attention %q, %q, %q segments(%seg : tensor<1x64xi32>)
      {normalizer = #attn.softmax,
       pattern = #attn.intersect<[#attn.block<size = 32, layout = ["10", "11"]>, #attn.segments]>}
      : tensor<1x1x64x8xf16>, tensor<1x1x64x8xf16>, tensor<1x1x64x8xf16> -> tensor<1x1x64x8xf16>
  return %0 : tensor<1x1x64x8xf16>
}

// -----

/// Linformer: keys and values projected along the sequence first.
// CHECK-LABEL: func @lowrank
// CHECK: %[[KP:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x4x8xf32>)
// CHECK: %[[VP:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]
// CHECK: linalg.transpose ins(%[[KP]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[VP]] :
func.func @lowrank(%q: tensor<1x2x16x8xf32>, %e: tensor<4x16xf32>) -> tensor<1x2x16x8xf32> {
  %0 = attn.lowrank_attention %q, %q, %q, %e, %e
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

/// Transformer-XL: memory concatenated before the keys and values; the
/// position term gathered at distance M + i - j.
// CHECK-LABEL: func @relative
// CHECK: tensor.concat dim(2) %{{.*}}, %{{.*}} : (tensor<1x2x4x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x12x8xf32>
// CHECK: %[[AC:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x1x8x12xf32>)
// CHECK: %[[BD:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x1x8x12xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[AC]] :
// CHECK:   arith.addi %{{.*}}, %c4
// CHECK:   tensor.extract %[[BD]]
func.func @relative(%q: tensor<1x2x8x8xf32>, %r: tensor<2x12x8xf32>, %u: tensor<2x8xf32>,
                    %m: tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32> {
  %0 = attn.relative_attention %q, %q, %q, %r, %u, %u memory(%m, %m : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
      : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<2x12x8xf32>,
        tensor<2x8xf32>, tensor<2x8xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

/// Reformer: bucket by argmax of the rotated projections (every round's
/// rotation in one constant, every round hashed by one contraction), the
/// stable-sort rank as a count over positions, chunks with look-back by
/// concatenation; round 0, then a loop over the other two merging each
/// by its log-sum-exp (code size independent of num_hashes).
// CHECK-LABEL: func @lsh
// CHECK: %[[ROT:.+]] = arith.constant dense<{{.*}}> : tensor<3x8x2xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[ROT]] : tensor<1x1x16x8xf32>, tensor<3x8x2xf32>) outs(%{{.*}} : tensor<1x1x3x16x2xf32>)
// CHECK: %[[BUCKETS:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x3x16xi64>)
// CHECK:   arith.minsi
// CHECK: tensor.extract_slice %[[BUCKETS]][0, 0, 0, 0] [1, 1, 1, 16]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x16xi64>)
// CHECK:   arith.cmpi slt
// CHECK:   arith.cmpi ult
// CHECK: tensor.concat dim(3)
// CHECK: math.log
// CHECK: scf.for %[[R:.+]] = %c1 to %c3 step %c1 iter_args
// CHECK: tensor.extract_slice %[[BUCKETS]][0, 0, %[[R]], 0] [1, 1, 1, 16]
// CHECK: tensor.concat dim(3)
// CHECK: math.log
// CHECK: math.exp
// CHECK: scf.yield
func.func @lsh(%qk: tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32> {
  %0 = attn.lsh_attention %qk, %qk {num_hashes = 3, num_buckets = 4, chunk_size = 4, seed = 1}
      : tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32> -> tensor<1x1x16x8xf32>
  return %0 : tensor<1x1x16x8xf32>
}

// -----

/// Dynamic batch and lengths: the sizes that must agree (the batch of key
/// and query, of value and key, the key length of value and key) are
/// compared at run time; each failure calls the hook with its code (1,
/// SizeMismatch) and the packed pair of operand dimensions, and the
/// attention is computed under scf.if only when all hold. The causal mask
/// aligns queries to the end of the keys with the run-time offset Lk - Lq.
// CHECK-LABEL: func.func private @attn_opt_runtime_error(i32, i64, i64, i64)
// CHECK-LABEL: func @dynamic_causal
// CHECK-DAG: %[[CODE:.+]] = arith.constant 1 : i32
// CHECK-DAG: %[[KB_QB:.+]] = arith.constant 8 : i64
// CHECK: %[[KB:.+]] = tensor.dim %arg1, %c0
// CHECK: %[[QB:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[BAD:.+]] = arith.cmpi ne, %[[KB]], %[[QB]]
// CHECK: scf.if %[[BAD]] {
// CHECK:   func.call @attn_opt_runtime_error(%[[CODE]], %[[KB_QB]],
// CHECK: %[[OK0:.+]] = arith.cmpi eq, %[[KB]], %[[QB]]
// CHECK: func.call @attn_opt_runtime_error
// CHECK: func.call @attn_opt_runtime_error
// CHECK: %[[OK:.+]] = arith.andi
// CHECK: %[[R:.+]] = scf.if %[[OK]] -> (tensor<?x4x?x8xf32>) {
// CHECK:   %[[SHIFT:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK:   linalg.generic
// CHECK:     arith.addi %{{.*}}, %[[SHIFT]]
// CHECK:     arith.cmpi sle
// CHECK: } else {
// CHECK:   tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x4x?x8xf32>
// CHECK: return %[[R]]
func.func @dynamic_causal(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}

// -----

/// A padded batch: every query length is checked against [0, Lq] (code 2,
/// the entry packed as (operand 8 << 32) | index); rows past a sequence's
/// length get weight 0 and the pointwise factor L^-alpha takes the
/// sequence's key length (here the buffer's).
// CHECK-LABEL: func @padded_relu
// CHECK-DAG: %[[CODE:.+]] = arith.constant 2 : i32
// CHECK-DAG: %[[QLENS:.+]] = arith.constant 34359738368 : i64
// CHECK: %[[LQ:.+]] = tensor.dim %arg0, %c2
// CHECK: %[[MAX:.+]] = arith.index_cast %[[LQ]] : index to i32
// CHECK: scf.for %[[I:.+]] = %c0 to %c2 step %c1 iter_args
// CHECK:   %[[LEN:.+]] = tensor.extract %arg3[%[[I]]]
// CHECK:   arith.cmpi slt, %[[LEN]], %c0_i32
// CHECK:   arith.cmpi sgt, %[[LEN]], %[[MAX]]
// CHECK:   scf.if
// CHECK:     %[[IDX:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK:     %[[ENTRY:.+]] = arith.ori %[[IDX]], %[[QLENS]]
// CHECK:     func.call @attn_opt_runtime_error(%[[CODE]], %[[ENTRY]],
// CHECK: scf.if
// CHECK:   linalg.generic
// CHECK:     %[[B:.+]] = linalg.index 0
// CHECK:     %[[ROW:.+]] = linalg.index 3
// CHECK:     %[[N:.+]] = tensor.extract %arg3[%[[B]]]
// CHECK:     %[[NI:.+]] = arith.index_cast %[[N]] : i32 to index
// CHECK:     arith.cmpi slt, %[[ROW]], %[[NI]]
// CHECK:     math.powf
// CHECK:     arith.select
func.func @padded_relu(%q: tensor<2x4x?x16xf32>, %k: tensor<2x2x?x16xf32>, %v: tensor<2x2x?x8xf32>, %lq: tensor<2xi32>) -> tensor<2x4x?x8xf32> {
  %0 = attn.attention %q, %k, %v query_lengths(%lq : tensor<2xi32>) {normalizer = #attn.pointwise<relu>}
    : tensor<2x4x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x8xf32> -> tensor<2x4x?x8xf32>
  return %0 : tensor<2x4x?x8xf32>
}

// -----

/// A packed batch: the offsets must be as many for queries as for keys, not
/// empty (code 6), start at 0 (4), not decrease (3) and end within the rows
/// (5); their entries are read only when there are some.
// CHECK-LABEL: func @packed_causal
// CHECK: %[[EMPTY:.+]] = arith.cmpi eq, %{{.+}}, %c0 : index
// CHECK: scf.if %[[EMPTY]] {
// CHECK:   func.call @attn_opt_runtime_error(%c6_i32,
// CHECK: scf.if %[[EMPTY]] -> (i1) {
// CHECK: } else {
// CHECK:   tensor.extract %arg3[%c0]
// CHECK:   func.call @attn_opt_runtime_error(%c4_i32,
// CHECK:   scf.for
// CHECK:     func.call @attn_opt_runtime_error(%c3_i32,
// CHECK:   func.call @attn_opt_runtime_error(%c5_i32,
func.func @packed_causal(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x8xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x4x?x8xf32> {
  %0 = attn.attention %q, %k, %v query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>) {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  return %0 : tensor<1x4x?x8xf32>
}
