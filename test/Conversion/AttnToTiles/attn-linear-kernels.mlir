// RUN: attn-opt %s --attn-reassociate --attn-linear-kernels="vector-width=8" 2>/dev/null | FileCheck %s
// RUN: attn-opt %s --attn-reassociate --attn-linear-kernels="vector-width=8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: not attn-opt %s --attn-linear-kernels="vector-width=12" 2>&1 | FileCheck %s --check-prefix=WIDTH

// The linear form's feature maps, key/value state and application become
// fused loops: no phi(K) or phi(Q) tensor is left.
// (@elu and @favor: the key sides, then the query sides.)
// REMARK: remark: attn-linear-kernels: phi(K)^T V and the key sum fused with the feature map, register tiles of 4 features x 16 values
// REMARK: remark: attn-linear-kernels: phi(K)^T V and the key sum fused with the feature map
// REMARK: remark: attn-linear-kernels: phi(Q) S / (phi(Q) z) fused with the feature map, tiles of 16 queries
// REMARK: remark: attn-linear-kernels: phi(Q) S / (phi(Q) z) fused with the feature map, tiles of 100 queries
// REMARK-NOT: remark: attn-linear-kernels
// WIDTH: error: attn-linear-kernels: vector-width (12) must be 4, 8, 16 or 32

// CHECK-LABEL: func.func @elu
// CHECK-NOT: attn.feature_map
// CHECK-NOT: attn.kv_state
// kv_state: per (b, head, key chunk), phi of a block of keys, then
// 4 features x 2 value vectors of FMAs per key.
// CHECK: scf.parallel
// CHECK: math.exp
// CHECK-COUNT-8: vector.fma
// state_apply: per (b, head, tile of 16 queries).
// CHECK: scf.parallel
// CHECK: vector.reduction <add>, %{{.*}} fastmath<reassoc>
// CHECK-COUNT-8: vector.fma
// CHECK-NOT: attn.state_apply
// CHECK: return
func.func @elu(%q: tensor<1x2x100x32xf32>, %k: tensor<1x2x100x32xf32>, %v: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>} : tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
  return %0 : tensor<1x2x100x16xf32>
}

// FAVOR+ features: W^T scaled once per op, in blocks of the register
// tile's 16 features (4 rows x 2 vectors of 8), then block by block the
// projection of all the rows, from -(|x|^2 + ln 64) / 2: the tile's
// results are the exponents.
// CHECK-LABEL: func.func @favor
// CHECK-NOT: attn.kv_state
// CHECK: memref.alloc() : memref<4x32x16xf32>
// CHECK: scf.parallel
// CHECK: arith.constant -5.000000e-01 : f32
// CHECK: arith.constant 2.07944155 : f32
// CHECK: %[[P:.*]]:8 = scf.for
// CHECK-COUNT-8: vector.fma
// CHECK: %[[E:.*]] = math.exp %[[P]]#0 : vector<8xf32>
// The key sums as the features are computed: each times 1 (a key of the
// chunk) or 0 (a row past its end), into z.
// CHECK: %[[W:.*]] = arith.select %{{.*}} : vector<8xf32>
// CHECK: %[[Z:.*]] = vector.load %[[SUM:.*]][%{{.*}}] : memref<1x2x64xf32>
// CHECK: vector.fma %[[E]], %[[W]], %[[Z]] : vector<8xf32>
// state_apply: tiles of up to 128 queries, here all 100 (phi 100 x 64),
// phi(q) z by lanes as the features are computed (100 x 8), O by blocks
// of features into a partial tile (100 x 32).
// CHECK: memref.alloc() : memref<4x32x16xf32>
// CHECK: scf.parallel
// CHECK: memref.alloc() : memref<100x64xf32>
// CHECK: %[[DOTS:.*]] = memref.alloc() : memref<100x8xf32>
// CHECK: %[[QE:.*]] = math.exp %{{.*}}#0 : vector<8xf32>
// CHECK: %[[D:.*]] = vector.load %[[DOTS]]
// CHECK: vector.fma %[[QE]], %{{.*}}, %[[D]] : vector<8xf32>
// CHECK: vector.reduction <add>
// CHECK: memref.alloc() : memref<100x32xf32>
// CHECK-NOT: attn.state_apply
// CHECK: return
func.func @favor(%q: tensor<1x2x100x32xf32>) -> tensor<1x2x100x32xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<favor, features = 64, seed = 1>} : tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<1x2x100x32xf32>
  return %0 : tensor<1x2x100x32xf32>
}

// A head dim that is not a multiple of the vector width keeps the linear
// form's ops for the reference lowering.
// CHECK-LABEL: func.func @narrow
// CHECK: attn.kv_state
// CHECK: attn.state_apply
func.func @narrow(%q: tensor<1x2x100x12xf32>) -> tensor<1x2x100x12xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<relu>} : tensor<1x2x100x12xf32>, tensor<1x2x100x12xf32>, tensor<1x2x100x12xf32> -> tensor<1x2x100x12xf32>
  return %0 : tensor<1x2x100x12xf32>
}
