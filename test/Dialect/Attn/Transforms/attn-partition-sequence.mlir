// RUN: attn-opt %s --attn-partition-sequence --split-input-file --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-partition-sequence="replicate=1" --split-input-file 2>/dev/null | FileCheck %s --check-prefix=REPL

// Causal attention sharded along the sequence over a ring of any size:
// the program of one rank. The arguments and the result become the rank's
// chunk (`?` rows); the number of ranks and every rank's rows come from
// two all-reduces; the ring loop passes key/value blocks on with
// attn.exchange (overlapping the kernel of the block in hand) and runs,
// per block, attn.attention whose mask region is the causal mask at global
// positions (the chunk offsets captured); the partial results merge
// through their log-sum-exp. The mask's interval analysis over the chunks
// (k <= q at the boxes' corners) decides what is sent and computed.
// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// CHECK-NOT: shard.
// CHECK-LABEL: func.func @causal(
// CHECK-SAME: %[[Q:.*]]: tensor<1x2x?x16xf32>, %[[K:.*]]: tensor<1x2x?x16xf32>, %[[V:.*]]: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
// CHECK: %[[COMM:.*]] = mpi.comm_world
// CHECK: mpi.comm_rank(%[[COMM]])
// CHECK: attn.allreduce %{{.*}} into %{{.*}} comm %[[COMM]] : tensor<1xi64>, tensor<1xi64>
// CHECK: attn.allreduce %{{.*}} into %{{.*}} comm %[[COMM]] : tensor<?xi64>, tensor<?xi64>
// CHECK: scf.if
// CHECK: func.call @attn_opt_runtime_error
// CHECK: scf.for %{{.*}} iter_args(%[[KC:.*]] = %[[K]], %[[VC:.*]] = %[[V]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// What travels is the slice of the block in hand that the ranks still on
// its way need (keyBounds of the pattern; for causal, rows up to their last
// query):
// CHECK: %[[KOUT:.*]] = tensor.extract_slice %[[KC]][0, 0, %{{.*}}, 0] [1, 2, %{{.*}}, 16] [1, 1, 1, 1]
// CHECK: %[[VOUT:.*]] = tensor.extract_slice %[[VC]][0, 0, %{{.*}}, 0] [1, 2, %{{.*}}, 16] [1, 1, 1, 1]
// CHECK: %[[KIN:.*]], %[[KS:.*]], %[[KR:.*]] = attn.exchange %[[KOUT]] into %{{.*}} to %{{.*}} from %{{.*}} tag %{{.*}} comm %[[COMM]]
// CHECK: %[[VIN:.*]], %[[VS:.*]], %[[VR:.*]] = attn.exchange %[[VOUT]] into
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} captures(%{{.*}} : tensor<2xi64>) {normalizer = #attn.softmax} {{.*}} -> tensor<1x2x?x16xf32>, tensor<1x2x?xf32> mask_mod {
// CHECK: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[QI:.*]]: index, %[[KI:.*]]: index, %[[OFF:.*]]: tensor<2xi64>):
// CHECK: tensor.extract %[[OFF]]
// CHECK: %[[QG:.*]] = arith.addi %[[QI]]
// CHECK: tensor.extract %[[OFF]]
// CHECK: %[[KG:.*]] = arith.addi %[[KI]]
// CHECK: %[[SEE:.*]] = arith.cmpi sle, %[[KG]], %[[QG]] : index
// CHECK: attn.yield %[[SEE]] : i1
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: attn.exchange_wait %[[KIN]] sent %[[KOUT]] requests %[[KS]], %[[KR]]
// CHECK: attn.exchange_wait %[[VIN]] sent %[[VOUT]] requests %[[VS]], %[[VR]]
// CHECK: return %{{.*}} : tensor<1x2x?x16xf32>
// REPL-LABEL: func.func @causal(
// REPL-NOT: shard.
// REPL: attn.attention %arg0, %arg1, %arg2 {normalizer = #attn.softmax, pattern = #attn.causal}
shard.grid @ring(shape = ?)
func.func @causal(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  %ks = shard.shard %k to %s : tensor<1x2x?x16xf32>
  %vs = shard.shard %v to %s : tensor<1x2x?x16xf32>
  // expected-remark @+1 {{attn-partition-sequence: contiguous chunks over any number of ranks of @ring; key/value blocks passed around the ring only to the ranks whose queries the mask lets see them (interval analysis of the mask at run time), partial results merged by log-sum-exp}}
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x?x16xf32>
  return %os : tensor<1x2x?x16xf32>
}

// -----

// Static sizes: the grid of 4 ranks and the 1000 rows give each rank its
// rows (250), checked at run time against every rank's count (a wrong
// count or number of ranks is reported on every rank and nothing is
// computed). The zigzag order; GQA (only the 2 key/value heads travel);
// a sliding window, whose mask region is the window at global positions;
// the log-sum-exp result is the merged one.
// CHECK-LABEL: func.func @zigzag_window(
// CHECK-SAME: tensor<1x8x?x16xf32>, %{{.*}}: tensor<1x2x?x16xf32>, %{{.*}}: tensor<1x2x?x16xf32>) -> (tensor<1x8x?x16xf32>, tensor<1x8x?xf32>)
// CHECK: arith.cmpi ne, %{{.*}}, %c4
// CHECK: attn.exchange %{{.*}} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
// CHECK: mask_mod {
// CHECK: %[[Q:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[K:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[LO:.*]] = arith.addi %[[Q]], %c-33
// CHECK: arith.cmpi sge, %[[K]], %[[LO]]
// CHECK: %[[HI:.*]] = arith.addi %[[Q]], %c7
// CHECK: arith.cmpi sle, %[[K]], %[[HI]]
// CHECK: return %{{.*}}#0, %{{.*}}#1 : tensor<1x8x?x16xf32>, tensor<1x8x?xf32>
shard.grid @ring(shape = 4)
func.func @zigzag_window(%q: tensor<1x8x1000x16xf32>, %k: tensor<1x2x1000x16xf32>, %v: tensor<1x2x1000x16xf32>) -> (tensor<1x8x1000x16xf32>, tensor<1x8x1000xf32>) {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x8x1000x16xf32>
  %ks = shard.shard %k to %s : tensor<1x2x1000x16xf32>
  %vs = shard.shard %v to %s : tensor<1x2x1000x16xf32>
  // expected-remark @+1 {{zigzag chunks over 4 ranks of @ring}}
  %o, %l = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax, pattern = #attn.window<before = 33, after = 7>, attn.sequence_order = "zigzag"}
      : tensor<1x8x1000x16xf32>, tensor<1x2x1000x16xf32>, tensor<1x2x1000x16xf32> -> tensor<1x8x1000x16xf32>, tensor<1x8x1000xf32>
  %os = shard.shard %o to %s : tensor<1x8x1000x16xf32>
  %ls = shard.shard %l to %s : tensor<1x8x1000xf32>
  return %os, %ls : tensor<1x8x1000x16xf32>, tensor<1x8x1000xf32>
}

// -----

// No mask: every block goes to every rank, the kernels have no region.
// CHECK-LABEL: func.func @full(
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax} :
// CHECK-NOT: mask_mod
// CHECK: return
shard.grid @ring(shape = ?)
func.func @full(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  // expected-remark @+1 {{key/value blocks passed around the ring to every rank}}
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.softmax}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x?x16xf32>
  return %os : tensor<1x2x?x16xf32>
}

// -----

// Pointwise attention: the blocks' outputs add up (no merge statistics);
// each block runs with alpha = 0 and the sum is scaled once by Lk^-alpha
// of the whole sequence (the sum of every rank's rows).
// CHECK-LABEL: func.func @pointwise(
// CHECK: attn.attention {{.*}} {normalizer = #attn.pointwise<gelu, alpha = 0.0e+00>} : {{.*}} -> tensor<1x2x?x16xf32> mask_mod
// CHECK: arith.addf
// CHECK: math.powf %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.mulf
shard.grid @ring(shape = ?)
func.func @pointwise(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  // expected-remark @+1 {{attn-partition-sequence}}
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.pointwise<gelu, alpha = 0.5>, pattern = #attn.causal}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x?x16xf32>
  return %os : tensor<1x2x?x16xf32>
}

// -----

// Causal linear attention: what is sent is the key/value state
// phi(K)^T [V, 1, 0...] (16 x 17 padded to 32 columns: column 16 is the key
// sum), one slot per
// rank, all-reduced; the keys never leave their rank. Each rank adds the
// states of the ranks before it to its local chunked prefix form.
// CHECK-LABEL: func.func @linear_causal(
// CHECK-SAME: %[[Q:.*]]: tensor<1x4x?x16xf32>, %[[K:.*]]: tensor<1x2x?x16xf32>, %[[V:.*]]: tensor<1x2x?x16xf32>)
// CHECK: %[[COMM:.*]] = mpi.comm_world
// CHECK-NOT: attn.exchange
// CHECK: %[[FQ:.*]] = attn.feature_map %[[Q]] {kernel = #attn.kernel<elu_plus_one>}
// CHECK: %[[FK:.*]] = attn.feature_map %[[K]]
// CHECK: %[[VX:.*]] = tensor.insert_slice %[[V]] into %{{.*}}[0, 0, 0, 0] [1, 2, %{{.*}}, 16] [1, 1, 1, 1] : tensor<1x2x?x16xf32> into tensor<1x2x?x32xf32>
// CHECK: %[[V1:.*]] = tensor.insert_slice %{{.*}} into %[[VX]][0, 0, 0, 16] [1, 2, %{{.*}}, 1] [1, 1, 1, 1] : tensor<1x2x?x1xf32> into tensor<1x2x?x32xf32>
// CHECK: %[[S:.*]], %{{.*}} = attn.kv_state %[[FK]], %[[V1]] : {{.*}} -> tensor<1x2x16x32xf32>, tensor<1x2x16xf32>
// CHECK: %[[SLOTS:.*]] = tensor.insert_slice %[[S]] into %{{.*}}[%{{.*}}, 0, 0, 0, 0] [1, 1, 2, 16, 32]
// CHECK: %[[ALL:.*]] = attn.allreduce %[[SLOTS]] into %{{.*}} comm %[[COMM]] : tensor<?x1x2x16x32xf32>, tensor<?x1x2x16x32xf32> -> tensor<?x1x2x16x32xf32>
// CHECK: %[[PRE:.*]] = scf.for
// CHECK: tensor.extract_slice %[[ALL]]
// CHECK: linalg.add
// CHECK: attn.chunked_linear %[[FQ]], %[[FK]], %[[V1]] {causal, chunk_size = {{[0-9]+}} : i64, unnormalized} : {{.*}} -> tensor<1x4x?x32xf32>
// CHECK: attn.state_apply %[[FQ]], %[[PRE]], %{{.*}} {eps = 1.000000e+00 : f32} : {{.*}} -> tensor<1x4x?x32xf32>
// CHECK: linalg.add
// CHECK: arith.divf
// CHECK-NOT: attn.exchange
// CHECK: return
shard.grid @ring(shape = ?)
func.func @linear_causal(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x4x?x16xf32>
  %ks = shard.shard %k to %s : tensor<1x2x?x16xf32>
  %vs = shard.shard %v to %s : tensor<1x2x?x16xf32>
  // expected-remark @+1 {{no keys sent: the key/value state phi(K)^T [V, 1] (16 x 17 per batch row and key/value head) summed over the ranks before each (an all-reduce of one slot per rank) and added to the local causal prefix form}}
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
      : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
  %os = shard.shard %o to %s : tensor<1x4x?x16xf32>
  return %os : tensor<1x4x?x16xf32>
}

// -----

// Unmasked linear attention: one all-reduce of the state, then
// phi(Q) S / (phi(Q) z + eps).
// CHECK-LABEL: func.func @linear_full(
// CHECK: %[[S:.*]], %{{.*}} = attn.kv_state
// CHECK: %[[ALL:.*]] = attn.allreduce %[[S]] into %{{.*}} : tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x2x16x32xf32>
// CHECK: %[[NUM:.*]] = tensor.extract_slice %[[ALL]][0, 0, 0, 0] [1, 2, 16, 16] [1, 1, 1, 1]
// CHECK: %[[Z:.*]] = tensor.extract_slice %[[ALL]][0, 0, 0, 16] [1, 2, 16, 1] [1, 1, 1, 1] : tensor<1x2x16x32xf32> to tensor<1x2x16xf32>
// CHECK: attn.state_apply %{{.*}}, %[[NUM]], %[[Z]] {eps = 1.000000e-03 : f32}
shard.grid @ring(shape = ?)
func.func @linear_full(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  // expected-remark @+1 {{all-reduced over the ranks}}
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.kernel<relu, eps = 1.0e-03>}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x?x16xf32>
  return %os : tensor<1x2x?x16xf32>
}

// -----

shard.grid @ring(shape = ?)
func.func @linear_window(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  // expected-error @+1 {{attn-partition-sequence: pattern #attn.window with kernelized attention is not supported with a sharded sequence}}
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.window<before = 4, after = 0>}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x?x16xf32>
  return %os : tensor<1x2x?x16xf32>
}

// -----

shard.grid @ring(shape = ?)
func.func @linear_zigzag(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  // expected-error @+1 {{kernelized attention in the zigzag order (its work is balanced in contiguous chunks: drop attn.sequence_order) is not supported}}
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal, attn.sequence_order = "zigzag"}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x?x16xf32>
  return %os : tensor<1x2x?x16xf32>
}

// -----

shard.grid @ring(shape = ?)
func.func @heads_split(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  // expected-error @+1 {{the query must be split along the sequence (dimension 2) over grid axis 0 alone (split_axes = [[], [], [0]])}}
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.softmax}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

shard.grid @ring(shape = ?)
func.func @half_sharded(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  // expected-error @+1 {{the key is not sharded like the other operands}}
  %o = attn.attention %qs, %k, %k {normalizer = #attn.softmax}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

shard.grid @ring(shape = ?)
func.func @bf16(%q: tensor<1x2x?x16xbf16>) -> tensor<1x2x?x16xbf16> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xbf16>
  // expected-error @+1 {{element type bf16 is not supported with a sharded sequence}}
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.softmax}
      : tensor<1x2x?x16xbf16>, tensor<1x2x?x16xbf16>, tensor<1x2x?x16xbf16> -> tensor<1x2x?x16xbf16>
  %os = shard.shard %o to %s : tensor<1x2x?x16xbf16>
  return %os : tensor<1x2x?x16xbf16>
}

// -----

shard.grid @ring(shape = 2)
func.func @pattern(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x8x16xf32>
  // expected-error @+1 {{pattern #attn.dilated}}
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.softmax, pattern = #attn.dilated<before = 4, after = 4, dilation = 2>}
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x8x16xf32>
  return %os : tensor<1x2x8x16xf32>
}

// -----

shard.grid @ring(shape = 2)
func.func @order(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x8x16xf32>
  // expected-error @+1 {{attn.sequence_order must be "contiguous" or "zigzag"}}
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.softmax, attn.sequence_order = "striped"}
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x8x16xf32>
  return %os : tensor<1x2x8x16xf32>
}

// -----

// Packed documents: the segment ids (replicated) are read at global
// positions by each block's mask region, and by the schedule, whose
// interval analysis reads the ids' range over each rank's rows (what is
// sent: a key/value block reaches a rank only when some document spans
// both).
shard.grid @ring(shape = ?)
// CHECK-LABEL: func.func @documents(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<1x?xi32>)
// CHECK: scf.for
// CHECK: tensor.extract %[[IDS]]
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: attn.exchange
// CHECK: attn.attention {{.*}} captures(%{{.*}}, %[[IDS]], %[[IDS]] : tensor<2xi64>, tensor<1x?xi32>, tensor<1x?xi32>)
// CHECK: mask_mod {
// CHECK: ^bb0(%[[B:.*]]: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: tensor<2xi64>, %[[SQ:.*]]: tensor<1x?xi32>, %[[SK:.*]]: tensor<1x?xi32>):
// CHECK: %[[C:.*]] = arith.cmpi sle
// CHECK: %[[A:.*]] = tensor.extract %[[SQ]][%[[B]], %{{.*}}]
// CHECK: %[[Z:.*]] = tensor.extract %[[SK]][%[[B]], %{{.*}}]
// CHECK: %[[E:.*]] = arith.cmpi eq, %[[A]], %[[Z]] : i32
// CHECK: arith.andi %[[C]], %[[E]] : i1
func.func @documents(%q: tensor<1x2x?x16xf32>, %ids: tensor<1x?xi32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  // expected-remark @+1 {{only to the ranks whose queries the mask lets see them}}
  %o = attn.attention %qs, %qs, %qs segments(%ids : tensor<1x?xi32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x?x16xf32>
  return %os : tensor<1x2x?x16xf32>
}

// -----

shard.grid @ring(shape = ?)
func.func @sharded_ids(%q: tensor<1x2x?x16xf32>, %ids: tensor<1x?xi32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  %is = shard.sharding @ring split_axes = [[], [0]] : !shard.sharding
  %ids_s = shard.shard %ids to %is : tensor<1x?xi32>
  // expected-error @+1 {{attn-partition-sequence: sharded segment ids (the ids are replicated: every rank reads the whole [B, L] tensor) is not supported with a sharded sequence}}
  %o = attn.attention %qs, %qs, %qs segments(%ids_s : tensor<1x?xi32>) {normalizer = #attn.softmax, pattern = #attn.segments}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x?x16xf32>
  return %os : tensor<1x2x?x16xf32>
}
