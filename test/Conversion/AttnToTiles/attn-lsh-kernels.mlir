// RUN: attn-opt %s --attn-lsh-kernels="vector-width=8" 2>/dev/null | FileCheck %s
// RUN: attn-opt %s --attn-lsh-kernels="vector-width=8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: not attn-opt %s --attn-lsh-kernels="vector-width=12" 2>&1 | FileCheck %s --check-prefix=WIDTH

// REMARK: remark: attn-lsh-kernels: 2 round(s): a counting sort by bucket, then chunk kernels of 16 queries x 32 keys (gathered, unsorted by the stores)
// REMARK-NOT: remark: attn-lsh-kernels
// WIDTH: error: attn-lsh-kernels: vector-width (12) must be 4, 8, 16 or 32

/// Two rounds of 8 buckets over 64 keys in chunks of 16: the key norms
/// once, then per round the fused hash, the counting sort and the chunk
/// kernels; the second round folds into the first through the log-sum-exp
/// (one output buffer for both). No L x L tensor, no sort by comparison.
// CHECK-LABEL: func.func @lsh
// CHECK-NOT: attn.lsh_attention
// The key norms per (b, h), then the output and the rounds' log-sum-exp.
// CHECK: %[[NORMS:.+]] = memref.alloc() : memref<1x2x64xf32>
// CHECK: scf.parallel
// CHECK: math.rsqrt
// CHECK: memref.store %{{.*}}, %[[NORMS]]
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<1x2x64x16xf32>
// CHECK: %[[LSE:.+]] = memref.alloc() : memref<1x2x64xf32>
//
// Round 1, hash: (b, h, row block of 8 rows in the lanes) with a running
// argmax over the rotation's columns (ties: the lowest index; NaN checked).
// CHECK: %[[BUCKETS:.+]] = memref.alloc() : memref<1x2x64xindex>
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = {{.*}} to (%c1{{.*}}, %c2{{.*}}, %c8{{.*}})
// CHECK: vector.fma
// CHECK: arith.cmpf ogt, {{.*}} : vector<8xf32>
// CHECK: arith.select {{.*}} : vector<8xi1>, vector<8xindex>
// CHECK: arith.cmpf uno
//
// Round 1, sort: a stable counting sort per (b, h): histogram of the 8
// buckets (and one for NaN), exclusive prefix sum, scatter of positions.
// CHECK: %[[POS:.+]] = memref.alloc() : memref<1x2x64xindex>
// CHECK: scf.parallel (%[[B:.+]], %[[H:.+]]) =
// CHECK: %[[HIST:.+]] = memref.alloc() : memref<9xindex>
// CHECK: scf.for
// CHECK: %[[BUCKET:.+]] = memref.load %[[BUCKETS]][%[[B]], %[[H]], %{{.*}}]
// CHECK: memref.load %[[HIST]][%[[BUCKET]]]
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.store %{{.*}}, %[[POS]][%[[B]], %[[H]], %{{.*}}] : memref<1x2x64xindex>
//
// Round 1, attend: (b, h, chunk) over the 4 chunks: 16 queries x 32 keys
// (its own and the previous chunk's), the softmax down the columns with
// its log-sum-exp.
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = {{.*}} to (%c1{{.*}}, %c2{{.*}}, %c4{{.*}})
// CHECK: memref.alloc() : memref<16x16xf32>
// CHECK: memref.alloc() : memref<32xindex>
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: math.exp {{.*}} {attn.flush_below = -6.400000e+01 : f32} : vector<8xf32>
// CHECK: math.log {{.*}} : vector<8xf32>
//
// Round 2: hash, sort and chunks again, then the fold into round 1:
// L' = logaddexp(L, lse), out' = out e^(L - L') + o e^(lse - L').
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = {{.*}} to (%c1{{.*}}, %c2{{.*}}, %c8{{.*}})
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) =
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = {{.*}} to (%c1{{.*}}, %c2{{.*}}, %c4{{.*}})
// CHECK: math.log {{.*}} : vector<8xf32>
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK-COUNT-2: math.exp {{.*}} : vector<8xf32>
// CHECK: math.log {{.*}} : vector<8xf32>
// CHECK-COUNT-2: math.exp {{.*}} : vector<8xf32>
// CHECK: %[[RES:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[RES]]
func.func @lsh(%qk: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  %0 = attn.lsh_attention %qk, %v {num_hashes = 2, num_buckets = 8, chunk_size = 16, seed = 3}
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

/// A chunk of 6 is no multiple of the 8 lanes: the op stays for the
/// reference lowering, without a remark.
// CHECK-LABEL: func.func @odd_chunk
// CHECK: attn.lsh_attention
func.func @odd_chunk(%qk: tensor<1x1x30x8xf32>, %v: tensor<1x1x30x8xf32>) -> tensor<1x1x30x8xf32> {
  %0 = attn.lsh_attention %qk, %v {num_hashes = 1, num_buckets = 4, chunk_size = 6, seed = 1}
      : tensor<1x1x30x8xf32>, tensor<1x1x30x8xf32> -> tensor<1x1x30x8xf32>
  return %0 : tensor<1x1x30x8xf32>
}
