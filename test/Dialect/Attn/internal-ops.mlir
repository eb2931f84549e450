// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

/// The internal ops (the explicit steps of attention) round-trip in custom
/// and generic form.

// CHECK-LABEL: func @steps
// CHECK: %[[QN:.+]] = attn.layer_norm %{{.*}} {epsilon = 9.99999974E-6 : f32} : tensor<1x4x32x16xbf16> -> tensor<1x4x32x16xf32>
// CHECK: %[[FQ:.+]] = attn.feature_map %[[QN]] {input_scale = 5.000000e-01 : f32, kernel = #attn.kernel<favor, features = 8, seed = 3>} : tensor<1x4x32x16xf32> -> tensor<1x4x32x8xf32>
// CHECK: %[[FK:.+]] = attn.feature_map %{{.*}} projection(%{{.*}} : tensor<8x16xf32>) {kernel = #attn.kernel<favor, features = 8>} : tensor<1x2x32x16xf32> -> tensor<1x2x32x8xf32>
// CHECK: %[[S:.+]] = attn.scores %[[FQ]], %[[FK]] : tensor<1x4x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x4x32x32xf32>
// CHECK: %[[S2:.+]] = attn.scores %[[QN]], %{{.*}} bias(%{{.*}} : tensor<1x1x32x32xf32>) {scale = 2.500000e-01 : f32}
// CHECK: %[[P:.+]] = attn.normalize %[[S2]] segments(%{{.*}} : tensor<1x32xi32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>} : tensor<1x4x32x32xf32> -> tensor<1x4x32x32xf32>
// CHECK: attn.apply %[[P]], %{{.*}} gate(%{{.*}} : tensor<1x4x32x16xbf16>) : tensor<1x4x32x32xf32>, tensor<1x2x32x16xbf16> -> tensor<1x4x32x16xbf16>
// CHECK: %[[STATE:.+]], %[[SUM:.+]] = attn.kv_state %[[FK]], %{{.*}} : tensor<1x2x32x8xf32>, tensor<1x2x32x16xbf16> -> tensor<1x2x8x16xf32>, tensor<1x2x8xf32>
// CHECK: attn.state_apply %[[FQ]], %[[STATE]], %[[SUM]] {eps = 1.000000e-03 : f32} : tensor<1x4x32x8xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32> -> tensor<1x4x32x16xf32>
// CHECK: attn.chunked_linear %[[FQ]], %[[FK]], %{{.*}} segments(%{{.*}} : tensor<1x32xi32>) {causal, chunk_size = 8 : i64} : tensor<1x4x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x16xbf16> -> tensor<1x4x32x16xbf16>
func.func @steps(%q: tensor<1x4x32x16xbf16>, %k: tensor<1x2x32x16xbf16>, %w: tensor<8x16xf32>,
                 %bias: tensor<1x1x32x32xf32>, %ids: tensor<1x32xi32>, %kf: tensor<1x2x32x16xf32>) {
  %qn = attn.layer_norm %q {epsilon = 1.0e-5 : f32} : tensor<1x4x32x16xbf16> -> tensor<1x4x32x16xf32>
  %fq = attn.feature_map %qn {kernel = #attn.kernel<favor, features = 8, seed = 3>, input_scale = 0.5 : f32}
      : tensor<1x4x32x16xf32> -> tensor<1x4x32x8xf32>
  %fk = attn.feature_map %kf projection(%w : tensor<8x16xf32>) {kernel = #attn.kernel<favor, features = 8>}
      : tensor<1x2x32x16xf32> -> tensor<1x2x32x8xf32>
  %s = attn.scores %fq, %fk : tensor<1x4x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x4x32x32xf32>
  %s2 = attn.scores %qn, %kf bias(%bias : tensor<1x1x32x32xf32>) {scale = 0.25 : f32}
      : tensor<1x4x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x32x32xf32>
  %p = attn.normalize %s2 segments(%ids : tensor<1x32xi32>)
      {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
      : tensor<1x4x32x32xf32> -> tensor<1x4x32x32xf32>
  %o = attn.apply %p, %k gate(%q : tensor<1x4x32x16xbf16>)
      : tensor<1x4x32x32xf32>, tensor<1x2x32x16xbf16> -> tensor<1x4x32x16xbf16>
  %state, %sum = attn.kv_state %fk, %k : tensor<1x2x32x8xf32>, tensor<1x2x32x16xbf16>
      -> tensor<1x2x8x16xf32>, tensor<1x2x8xf32>
  %l = attn.state_apply %fq, %state, %sum {eps = 1.0e-3 : f32}
      : tensor<1x4x32x8xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32> -> tensor<1x4x32x16xf32>
  %c = attn.chunked_linear %fq, %fk, %k segments(%ids : tensor<1x32xi32>) {chunk_size = 8, causal}
      : tensor<1x4x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x16xbf16> -> tensor<1x4x32x16xbf16>
  return
}
