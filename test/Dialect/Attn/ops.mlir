// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

/// Every op and every attribute of the attn dialect, round-tripped through
/// the custom and the generic form.

// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x128x64xf32>, %[[K:.+]]: tensor<2x8x128x64xf32>, %[[V:.+]]: tensor<2x8x128x32xf32>)
// CHECK: attn.attention %[[Q]], %[[K]], %[[V]] {normalizer = #attn.softmax}
// CHECK-SAME: : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x32xf32> -> tensor<2x8x128x32xf32>
// GENERIC-LABEL: sym_name = "softmax"
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{normalizer = #attn.softmax, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}>
func.func @softmax(%query: tensor<2x8x128x64xf32>, %key: tensor<2x8x128x64xf32>,
                   %value: tensor<2x8x128x32xf32>) -> tensor<2x8x128x32xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax}
      : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x32xf32>
      -> tensor<2x8x128x32xf32>
  return %0 : tensor<2x8x128x32xf32>
}

/// Every pointwise function, the alpha parameter (printed only when not 1),
/// scale and qk-layernorm.
// CHECK-LABEL: func @pointwise
// CHECK: normalizer = #attn.pointwise<relu>, scale = 1.250000e-01 : f32
// CHECK: normalizer = #attn.pointwise<relu2, alpha = 5.0e-01>
// CHECK: normalizer = #attn.pointwise<gelu, alpha = 0.0e+00>
// CHECK: normalizer = #attn.pointwise<softplus>
// CHECK: normalizer = #attn.pointwise<identity>
// CHECK: normalizer = #attn.pointwise<relu6, alpha = 2.5e-01>
// CHECK: normalizer = #attn.pointwise<sigmoid>, qk_norm_eps = 9.99999974E-6 : f32
func.func @pointwise(%q: tensor<1x4x64x16xf32>) -> tensor<1x4x64x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>, scale = 0.125 : f32}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %1 = attn.attention %q, %q, %0 {normalizer = #attn.pointwise<relu2, alpha = 0.5>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %2 = attn.attention %q, %q, %1 {normalizer = #attn.pointwise<gelu, alpha = 0.0>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %3 = attn.attention %q, %q, %2 {normalizer = #attn.pointwise<softplus, alpha = 1.0>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %4 = attn.attention %q, %q, %3 {normalizer = #attn.pointwise<identity>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %5 = attn.attention %q, %q, %4 {normalizer = #attn.pointwise<relu6, alpha = 0.25>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %6 = attn.attention %q, %q, %5 {normalizer = #attn.pointwise<sigmoid>, qk_norm_eps = 1.0e-5 : f32}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return %6 : tensor<1x4x64x16xf32>
}

/// Kernel normalizers with every feature map, and a FAVOR+ projection given
/// as an operand.
// CHECK-LABEL: func @kernel
// CHECK: normalizer = #attn.kernel<elu_plus_one>
// CHECK: normalizer = #attn.kernel<relu, eps = 1.0e-06>
// CHECK: normalizer = #attn.kernel<favor, features = 32, orthogonal = true, seed = 7>
// CHECK: projection(%{{.*}} : tensor<32x16xf32>) {normalizer = #attn.kernel<favor, features = 32>}
func.func @kernel(%q: tensor<1x4x64x16xf32>, %w: tensor<32x16xf32>) -> tensor<1x4x64x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<elu_plus_one>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %1 = attn.attention %q, %q, %0 {normalizer = #attn.kernel<relu, eps = 1.0e-6>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %2 = attn.attention %q, %q, %1 {normalizer = #attn.kernel<favor, features = 32, orthogonal = true, seed = 7>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %3 = attn.attention %q, %q, %2 projection(%w : tensor<32x16xf32>) {normalizer = #attn.kernel<favor, features = 32>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return %3 : tensor<1x4x64x16xf32>
}

/// Every mask pattern and combinator.
// CHECK-LABEL: func @patterns
// CHECK: pattern = #attn.causal
// CHECK: pattern = #attn.window<before = 16, after = 0>
// CHECK: pattern = #attn.dilated<before = 32, after = 32, dilation = 2>
// CHECK: pattern = #attn.global<[0, 1, 63]>
// CHECK: pattern = #attn.intersect<[#attn.causal, #attn.strided<stride = 8>]>
// CHECK: pattern = #attn.fixed<stride = 16, c = 4>
// CHECK: pattern = #attn.random<blocks = 2, block_size = 16, seed = 42>
// CHECK: pattern = #attn.random<blocks = 1, block_size = 32>
// CHECK: pattern = #attn.block<size = 32, layout = ["10", "11"]>
// CHECK: pattern = #attn.union<[#attn.window<before = 8, after = 8>, #attn.global<[0]>, #attn.random<blocks = 1, block_size = 16>]>
// CHECK: pattern = #attn.per_head<[#attn.causal, #attn.window<before = 4, after = 0>, #attn.strided<stride = 4>, #attn.union<[#attn.causal, #attn.global<[5]>]>]>
func.func @patterns(%q: tensor<1x4x64x16xf32>) -> tensor<1x4x64x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %1 = attn.attention %q, %q, %0 {normalizer = #attn.softmax, pattern = #attn.window<after = 0, before = 16>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %2 = attn.attention %q, %q, %1 {normalizer = #attn.softmax, pattern = #attn.dilated<before = 32, after = 32, dilation = 2>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %3 = attn.attention %q, %q, %2 {normalizer = #attn.softmax, pattern = #attn.global<[0, 1, 63]>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %4 = attn.attention %q, %q, %3 {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.strided<stride = 8>]>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %5 = attn.attention %q, %q, %4 {normalizer = #attn.softmax, pattern = #attn.fixed<stride = 16, c = 4>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %6 = attn.attention %q, %q, %5 {normalizer = #attn.softmax, pattern = #attn.random<blocks = 2, block_size = 16, seed = 42>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %7 = attn.attention %q, %q, %6 {normalizer = #attn.softmax, pattern = #attn.random<blocks = 1, block_size = 32, seed = 0>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %8 = attn.attention %q, %q, %7 {normalizer = #attn.softmax, pattern = #attn.block<size = 32, layout = ["10", "11"]>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %9 = attn.attention %q, %q, %8 {normalizer = #attn.softmax,
      pattern = #attn.union<[#attn.window<before = 8, after = 8>, #attn.global<[0]>, #attn.random<blocks = 1, block_size = 16>]>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %10 = attn.attention %q, %q, %9 {normalizer = #attn.softmax,
      pattern = #attn.per_head<[#attn.causal, #attn.window<before = 4, after = 0>, #attn.strided<stride = 4>,
                                #attn.union<[#attn.causal, #attn.global<[5]>]>]>}
      : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return %10 : tensor<1x4x64x16xf32>
}

/// Every optional operand: bias (broadcast over batch), gate, segment ids
/// (one operand for Lq = Lk; two when Lq != Lk), grouped-query heads, f16 and
/// bf16.
// CHECK-LABEL: func @operands
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<1x8x64x64xbf16>) gate(%{{.*}} : tensor<2x8x64x16xbf16>) segments(%{{.*}} : tensor<2x64xi32>)
// CHECK-SAME: {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
// CHECK-SAME: : tensor<2x8x64x16xbf16>, tensor<2x2x64x16xbf16>, tensor<2x2x64x16xbf16> -> tensor<2x8x64x16xbf16>
// CHECK: segments(%{{.*}} : tensor<2x32xi64>) key_segments(%{{.*}} : tensor<2x64xi64>) {normalizer = #attn.softmax, pattern = #attn.segments}
// GENERIC-LABEL: sym_name = "operands"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>
func.func @operands(%q: tensor<2x8x64x16xbf16>, %k: tensor<2x2x64x16xbf16>,
                    %bias: tensor<1x8x64x64xbf16>, %gate: tensor<2x8x64x16xbf16>,
                    %seg: tensor<2x64xi32>, %q2: tensor<2x1x32x16xf16>,
                    %k2: tensor<2x1x64x16xf16>, %sq: tensor<2x32xi64>,
                    %sk: tensor<2x64xi64>) -> (tensor<2x8x64x16xbf16>, tensor<2x1x32x16xf16>) {
  %0 = attn.attention %q, %k, %k bias(%bias : tensor<1x8x64x64xbf16>) gate(%gate : tensor<2x8x64x16xbf16>)
      segments(%seg : tensor<2x64xi32>)
      {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
      : tensor<2x8x64x16xbf16>, tensor<2x2x64x16xbf16>, tensor<2x2x64x16xbf16> -> tensor<2x8x64x16xbf16>
  %1 = attn.attention %q2, %k2, %k2 segments(%sq : tensor<2x32xi64>) key_segments(%sk : tensor<2x64xi64>)
      {normalizer = #attn.softmax, pattern = #attn.segments}
      : tensor<2x1x32x16xf16>, tensor<2x1x64x16xf16>, tensor<2x1x64x16xf16> -> tensor<2x1x32x16xf16>
  return %0, %1 : tensor<2x8x64x16xbf16>, tensor<2x1x32x16xf16>
}

// CHECK-LABEL: func @lowrank
// CHECK: attn.lowrank_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = 2.500000e-01 : f32}
// CHECK-SAME: : tensor<1x4x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<32x128xf32>, tensor<32x128xf32> -> tensor<1x4x128x16xf32>
func.func @lowrank(%q: tensor<1x4x128x16xf32>, %k: tensor<1x2x128x16xf32>,
                   %e: tensor<32x128xf32>) -> tensor<1x4x128x16xf32> {
  %0 = attn.lowrank_attention %q, %k, %k, %e, %e {scale = 0.25 : f32}
      : tensor<1x4x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>,
        tensor<32x128xf32>, tensor<32x128xf32> -> tensor<1x4x128x16xf32>
  return %0 : tensor<1x4x128x16xf32>
}

// CHECK-LABEL: func @lsh
// CHECK: attn.lsh_attention %{{.*}}, %{{.*}} {causal, chunk_size = 32 : i64, num_buckets = 8 : i64, num_hashes = 2 : i64, seed = 5 : i64}
// CHECK: attn.lsh_attention %{{.*}}, %{{.*}} {chunk_size = 128 : i64, num_buckets = 2 : i64, num_hashes = 1 : i64}
func.func @lsh(%qk: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x8xf32>) -> tensor<1x2x128x8xf32> {
  %0 = attn.lsh_attention %qk, %v {num_hashes = 2, num_buckets = 8, chunk_size = 32, seed = 5, causal}
      : tensor<1x2x128x16xf32>, tensor<1x2x128x8xf32> -> tensor<1x2x128x8xf32>
  %1 = attn.lsh_attention %qk, %0 {num_hashes = 1, num_buckets = 2, chunk_size = 128}
      : tensor<1x2x128x16xf32>, tensor<1x2x128x8xf32> -> tensor<1x2x128x8xf32>
  return %1 : tensor<1x2x128x8xf32>
}

// CHECK-LABEL: func @relative
// CHECK: attn.relative_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} memory(%{{.*}}, %{{.*}} : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) :
// CHECK: attn.relative_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = 5.000000e-01 : f32} : tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<2x32x8xf32>
func.func @relative(%q: tensor<1x2x32x8xf32>, %r: tensor<2x48x8xf32>, %u: tensor<2x8xf32>,
                    %mem: tensor<1x2x16x8xf32>, %r0: tensor<2x32x8xf32>) -> tensor<1x2x32x8xf32> {
  %0 = attn.relative_attention %q, %q, %q, %r, %u, %u memory(%mem, %mem : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>)
      : tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<2x48x8xf32>,
        tensor<2x8xf32>, tensor<2x8xf32> -> tensor<1x2x32x8xf32>
  %1 = attn.relative_attention %0, %q, %q, %r0, %u, %u {scale = 0.5 : f32}
      : tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<2x32x8xf32>,
        tensor<2x8xf32>, tensor<2x8xf32> -> tensor<1x2x32x8xf32>
  return %1 : tensor<1x2x32x8xf32>
}

// -----

/// Dynamic batch and lengths (head counts and dims static); the result is
/// dynamic where the query is.
// CHECK-LABEL: func @dynamic
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.union<[#attn.window<before = 16, after = 0>, #attn.global<[0]>]>}
// CHECK-SAME: : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x32xf32> -> tensor<?x8x?x32xf32>
func.func @dynamic(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>,
                   %v: tensor<?x2x?x32xf32>) -> tensor<?x8x?x32xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax,
      pattern = #attn.union<[#attn.window<before = 16, after = 0>, #attn.global<[0]>]>}
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x32xf32> -> tensor<?x8x?x32xf32>
  return %0 : tensor<?x8x?x32xf32>
}

// -----

/// Varlen batches: padded (lengths) and packed (offsets).
// CHECK-LABEL: func @varlen
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} query_lengths(%{{.*}} : tensor<?xi32>) key_lengths(%{{.*}} : tensor<?xi32>) {normalizer = #attn.pointwise<relu>, pattern = #attn.causal}
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} query_offsets(%{{.*}} : tensor<?xi32>) key_offsets(%{{.*}} : tensor<?xi32>) {normalizer = #attn.softmax, pattern = #attn.causal}
// GENERIC-LABEL: sym_name = "varlen"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0>
func.func @varlen(%q: tensor<?x4x?x16xf32>, %lq: tensor<?xi32>, %lk: tensor<?xi32>,
                  %p: tensor<1x4x?x16xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>)
    -> (tensor<?x4x?x16xf32>, tensor<1x4x?x16xf32>) {
  %0 = attn.attention %q, %q, %q query_lengths(%lq : tensor<?xi32>) key_lengths(%lk : tensor<?xi32>)
      {normalizer = #attn.pointwise<relu>, pattern = #attn.causal}
      : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %1 = attn.attention %p, %p, %p query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>)
      {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return %0, %1 : tensor<?x4x?x16xf32>, tensor<1x4x?x16xf32>
}

// CHECK-LABEL: func.func @mask_operands
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<64x64xi1>) {normalizer = #attn.softmax}
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<1x4x64x64xf32>) mask(%{{.*}} : tensor<1x1x64x64xf32>) {normalizer = #attn.pointwise<relu>, pattern = #attn.causal}
// CHECK: attn.normalize %{{.*}} mask(%{{.*}} : tensor<64x64xi1>) {normalizer = #attn.softmax}
// GENERIC-LABEL: sym_name = "mask_operands"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0>
func.func @mask_operands(%q: tensor<1x4x64x16xf32>, %m: tensor<64x64xi1>, %a: tensor<1x1x64x64xf32>, %b: tensor<1x4x64x64xf32>, %s: tensor<1x4x64x64xf32>) -> (tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x64xf32>) {
  %0 = attn.attention %q, %q, %q mask(%m : tensor<64x64xi1>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %1 = attn.attention %q, %q, %q bias(%b : tensor<1x4x64x64xf32>) mask(%a : tensor<1x1x64x64xf32>) {normalizer = #attn.pointwise<relu>, pattern = #attn.causal} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  %2 = attn.normalize %s mask(%m : tensor<64x64xi1>) {normalizer = #attn.softmax} : tensor<1x4x64x64xf32> -> tensor<1x4x64x64xf32>
  return %0, %1, %2 : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x64xf32>
}

/// Score modifiers: ALiBi slopes and sinks (one per query head), softcap.
// CHECK-LABEL: func @score_modifiers
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%{{.*}} : tensor<8xf32>) sinks(%{{.*}} : tensor<8xf32>) {normalizer = #attn.softmax, pattern = #attn.causal, softcap = 5.000000e+01 : f32}
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%{{.*}} : tensor<8xf32>) {normalizer = #attn.pointwise<relu>, softcap = 2.000000e+00 : f32}
// GENERIC-LABEL: sym_name = "score_modifiers"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0>
func.func @score_modifiers(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x300x64xf32>, %s: tensor<8xf32>, %t: tensor<8xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1x64xf32>) {
  %0 = attn.attention %q, %k, %k alibi_slopes(%s : tensor<8xf32>) sinks(%t : tensor<8xf32>) {normalizer = #attn.softmax, pattern = #attn.causal, softcap = 50.0 : f32} : tensor<2x8x1x64xf32>, tensor<2x2x300x64xf32>, tensor<2x2x300x64xf32> -> tensor<2x8x1x64xf32>
  %1 = attn.attention %q, %k, %k alibi_slopes(%s : tensor<8xf32>) {normalizer = #attn.pointwise<relu>, softcap = 2.0 : f32} : tensor<2x8x1x64xf32>, tensor<2x2x300x64xf32>, tensor<2x2x300x64xf32> -> tensor<2x8x1x64xf32>
  return %0, %1 : tensor<2x8x1x64xf32>, tensor<2x8x1x64xf32>
}

/// The log-sum-exp result (a second result type).
// CHECK-LABEL: func @lse
// CHECK: %{{.*}}, %{{.*}} = attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
func.func @lse(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %0, %1 = attn.attention %q, %k, %k {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
  return %0, %1 : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}

/// A paged KV cache: pools of pages and a page table.
// CHECK-LABEL: func @paged
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} key_lengths(%{{.*}} : tensor<4xi32>) page_table(%{{.*}} : tensor<4x128xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<4x32x1x128xf32>, tensor<600x8x16x128xf32>, tensor<600x8x16x128xf32> -> tensor<4x32x1x128xf32>
// GENERIC-LABEL: sym_name = "paged"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0>
func.func @paged(%q: tensor<4x32x1x128xf32>, %k: tensor<600x8x16x128xf32>, %pt: tensor<4x128xi32>, %lk: tensor<4xi32>) -> tensor<4x32x1x128xf32> {
  %0 = attn.attention %q, %k, %k key_lengths(%lk : tensor<4xi32>) page_table(%pt : tensor<4x128xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<4x32x1x128xf32>, tensor<600x8x16x128xf32>, tensor<600x8x16x128xf32> -> tensor<4x32x1x128xf32>
  return %0 : tensor<4x32x1x128xf32>
}
