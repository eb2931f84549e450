// RUN: attn-opt %s --attn-tile-contractions="chunks=2 row-tile=8" | FileCheck %s --check-prefix=TILE
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(attn-read-only-arguments,attn-tile-contractions{chunks=2 row-tile=6}),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(attn-vectorize-contractions{vector-width=8 vector-registers=16}),canonicalize)" 2>&1 | FileCheck %s --check-prefix=VEC
// RUN: attn-opt %s --attn-read-only-arguments | FileCheck %s --check-prefix=RO
// RO: func.func @matmul(%{{.*}}: tensor<77x64xf32> {bufferization.writable = false}, %{{.*}}: tensor<64x66xf32> {bufferization.writable = false}, %{{.*}}: tensor<77x66xf32> {bufferization.writable = false})

// (The heads-first output map of @projection_heads_first, below.)
// TILE: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2)>

// Threads: row chunks of a multiple of the register tile (77 rows in 2
// chunks of 40; the last is ragged).
// TILE-LABEL: func.func @matmul
// TILE: scf.forall (%{{.*}}) = (0) to (77) step (40)
// TILE: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<64x66xf32>)

// Registers (AVX2: 16 vector registers): 6 x 16 tiles, 12 accumulators.
// B and the output are contiguous along N: the micro-kernel. Per chunk, K
// block (all 64) and N block (all 64 whole columns), B's block is packed
// once, 16 columns (one panel) after the other; per M block A's rows are
// packed 6 rows side by side per K step (4 panels read them): 8 rows (the
// last 2 padding) of 8 K steps loaded as vectors, transposed by 3 stages
// of 8 shuffles, each result one packed step; per panel
// every 6-row tile keeps its accumulators in registers across K (a
// broadcast of packed A times each packed B vector per row and K step);
// the chunk's remaining rows one at a time (from A itself, against the
// same panels); the last 66 % 16 = 2 columns stay a linalg op. Arguments are read-only: the accumulation into
// %c works on a copy.
// VEC: remark: attn-vectorize-contractions: register tiles of 6 x 16 outputs, B packed in K blocks of 64, A packed by transposes, broadcast-FMA micro-kernel (K unrolled by 16)
// VEC: remark: attn-vectorize-contractions: register tiles of 6 x 16 outputs, K steps of 16, vector.contract (B or the output not contiguous along N, or not a plain multiply-add)
// VEC: remark: attn-vectorize-contractions: register tiles of 6 x 16 outputs, B packed in K blocks of 32, A packed by transposes, broadcast-FMA micro-kernel (K unrolled by 16)
// VEC: remark: attn-vectorize-contractions: register tiles of 6 x 16 outputs, B packed in K blocks of 32, A packed by transposes, broadcast-FMA micro-kernel (K unrolled by 16), the output's fill folded into the first K block
// VEC: remark: attn-vectorize-contractions: register tiles of 6 x 16 outputs, B packed in K blocks of 512, A packed by transposes, broadcast-FMA micro-kernel (K unrolled by 16), the output's fill folded into the first K block
// VEC: remark: attn-vectorize-contractions: register tiles of 6 x 16 outputs, B packed in K blocks of 45, A packed by a copy, broadcast-FMA micro-kernel (K unrolled by 1)
// VEC: remark: attn-vectorize-contractions: register tiles of 6 x 16 outputs, B packed in K blocks of 45, A read in place (few panels), broadcast-FMA micro-kernel (K unrolled by 1)
// VEC-LABEL: func.func @matmul(
// VEC: memref.copy
// VEC: scf.forall
// VEC: %[[PACK:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x64x16xf32>
// VEC: %[[APACK:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x64x8xf32>
// VEC: scf.for
// VEC: scf.for
// VEC: vector.load {{.*}} : memref<64x66xf32>, vector<8xf32>
// VEC: vector.store {{.*}}, %[[PACK]]
// VEC-COUNT-8: vector.load {{.*}} : memref<77x64xf32>, vector<8xf32>
// VEC-COUNT-24: vector.shuffle
// VEC-COUNT-8: vector.store {{.*}}, %[[APACK]]
// VEC: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c6
// VEC-COUNT-12: vector.load {{.*}} : memref<77x66xf32>, vector<8xf32>
// VEC: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// VEC: vector.load %[[PACK]]
// VEC: memref.load %[[APACK]]
// VEC: vector.broadcast
// VEC: vector.fma {{.*}} : vector<8xf32>
// VEC-COUNT-12: vector.store {{.*}} : memref<77x66xf32>, vector<8xf32>
// VEC: scf.for
// VEC: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>)
// VEC: vector.load %[[PACK]]
// VEC: memref.load {{.*}} : memref<77x64xf32>
// VEC: linalg.matmul ins({{.*}} : memref<?x64xf32, {{.*}}>, memref<64x2xf32, {{.*}}>) outs({{.*}} : memref<?x2xf32
func.func @matmul(%a: tensor<77x64xf32>, %b: tensor<64x66xf32>, %c: tensor<77x66xf32>) -> tensor<77x66xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<77x64xf32>, tensor<64x66xf32>) outs(%c : tensor<77x66xf32>) -> tensor<77x66xf32>
  return %y : tensor<77x66xf32>
}

// B transposed (not contiguous along N): register tiles vectorized with
// vector.contract, the accumulator carried in registers across the K loop;
// ragged edge tiles stay linalg ops.
// VEC-LABEL: func.func @transposed_b(
// VEC: scf.forall
// VEC: vector.transfer_read {{.*}} : memref<77x48xf32>, vector<6x16xf32>
// VEC: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<6x16xf32>)
// VEC: vector.fma {{.*}} : vector<16xf32>
// VEC: vector.transfer_write {{.*}} : vector<6x16xf32>, memref<77x48xf32>
// VEC: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins({{.*}} : memref<?x16xf32, {{.*}}>, memref<16x16xf32, {{.*}}>)
func.func @transposed_b(%a: tensor<77x64xf32>, %bt: tensor<48x64xf32>, %c: tensor<77x48xf32>) -> tensor<77x48xf32> {
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%a, %bt : tensor<77x64xf32>, tensor<48x64xf32>) outs(%c : tensor<77x48xf32>) -> tensor<77x48xf32>
  return %y : tensor<77x48xf32>
}

// A projection whose output fusion expanded into heads, N = (H, D): the N
// dims are collapsed into one (contiguous in B and the output), then tiled
// like a matmul; the result is expanded back.
// TILE-LABEL: func.func @projection_heads
// TILE: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<32x3x16xf32> into tensor<32x48xf32>
// TILE: scf.forall (%{{.*}}) = (0) to (77) step (40)
// TILE: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// TILE-SAME: ins(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<32x48xf32>)
// TILE: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [77, 3, 16] : tensor<77x48xf32> into tensor<77x3x16xf32>
func.func @projection_heads(%x: tensor<77x32xf32>, %w: tensor<32x3x16xf32>, %c: tensor<77x3x16xf32>) -> tensor<77x3x16xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(m, h, d, k) -> (m, k)>, affine_map<(m, h, d, k) -> (k, h, d)>, affine_map<(m, h, d, k) -> (m, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<77x32xf32>, tensor<32x3x16xf32>) outs(%c : tensor<77x3x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<77x3x16xf32>
  return %y : tensor<77x3x16xf32>
}

// The same projection transposed into heads first, [H, L, D]: the
// transpose folds into the contraction (its output map permuted, its fill
// moved to the transpose's destination, then into each chunk); H is an outer dim (tiles of 1),
// D the vector dim. The 3 heads already make more tasks than chunks = 2, so
// L is not cut (one piece of 80 rows: 77 rounded up to the row tile).
// TILE-LABEL: func.func @projection_heads_first
// TILE-NOT: linalg.transpose
// TILE-NOT: linalg.fill
// TILE: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (77, 3) step (80, 1) shared_outs(
// TILE: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x?x16xf32>)
// TILE: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// TILE-SAME: ins(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<32x1x16xf32>) outs(%{{.*}} : tensor<1x?x16xf32>)
// TILE-NOT: linalg.transpose
// VEC-LABEL: func.func @projection_heads_first
// VEC: scf.forall (%[[H:.*]]) in (3)
// VEC: memref.alloc() {alignment = 64 : i64} : memref<1x32x16xf32>
// VEC-NOT: linalg.fill
// VEC: vector.fma
// VEC: vector.store %{{.*}}, %{{.*}}[%[[H]], %{{.*}}, %c0] : memref<3x77x16xf32>, vector<8xf32>
func.func @projection_heads_first(%x: tensor<77x32xf32>, %w: tensor<32x3x16xf32>) -> tensor<3x77x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<77x3x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<77x3x16xf32>) -> tensor<77x3x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, h, d, k) -> (m, k)>, affine_map<(m, h, d, k) -> (k, h, d)>, affine_map<(m, h, d, k) -> (m, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<77x32xf32>, tensor<32x3x16xf32>) outs(%z : tensor<77x3x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<77x3x16xf32>
  %t0 = tensor.empty() : tensor<3x77x16xf32>
  %t = linalg.transpose ins(%y : tensor<77x3x16xf32>) outs(%t0 : tensor<3x77x16xf32>) permutation = [1, 0, 2]
  return %t : tensor<3x77x16xf32>
}

// A fill of the output (here 0.5, K = 1024 in two blocks, 40 = 2 x 16 + 8
// columns): attn-tile-contractions fuses it into each chunk, and
// attn-vectorize-contractions folds it into the micro-kernel: the first K
// block's accumulators start as the fill value (scf.if on the K block),
// later blocks load the output; only the ragged columns keep a fill.
// TILE-LABEL: func.func @matmul_fill
// TILE-NOT: linalg.fill
// TILE: scf.forall (%{{.*}}) = (0) to (20) step (16)
// TILE: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x40xf32>)
// TILE: linalg.matmul
// VEC-LABEL: func.func @matmul_fill
// VEC-DAG: %[[SPLAT:.*]] = arith.constant dense<5.000000e-01> : vector<8xf32>
// VEC-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// VEC-NOT: linalg.fill
// VEC: scf.forall
// VEC: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0 : index
// VEC: scf.if %[[FIRST]] -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// VEC: scf.yield %[[SPLAT]], %[[SPLAT]], %[[SPLAT]]
// VEC: } else {
// VEC-COUNT-12: vector.load {{.*}} : memref<20x40xf32>, vector<8xf32>
// VEC: vector.fma
// VEC: linalg.fill ins(%[[HALF]] : f32) outs(%{{.*}} : memref<?x8xf32, {{.*}}>)
// VEC: linalg.matmul ins({{.*}}) outs({{.*}} : memref<?x8xf32, {{.*}}>)
func.func @matmul_fill(%a: tensor<20x1024xf32>, %b: tensor<1024x40xf32>) -> tensor<20x40xf32> {
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<20x40xf32>
  %z = linalg.fill ins(%half : f32) outs(%e : tensor<20x40xf32>) -> tensor<20x40xf32>
  %y = linalg.matmul ins(%a, %b : tensor<20x1024xf32>, tensor<1024x40xf32>) outs(%z : tensor<20x40xf32>) -> tensor<20x40xf32>
  return %y : tensor<20x40xf32>
}

// K = 45 (not whole vectors of 8): A cannot be packed by transposes. With
// 4 panels (N = 64) it is packed by a scalar copy; with 2 (N = 32) the
// tiles broadcast from its rows in place: no A scratch, scalar loads of A
// in the register tile's K loop.
// VEC-LABEL: func.func @odd_k_packed
// VEC: memref.alloc() {alignment = 64 : i64} : memref<4x45x16xf32>
// VEC: %[[APACK45:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x45x6xf32>
// VEC: memref.load {{.*}} : memref<20x45xf32>
// VEC: memref.store %{{.*}}, %[[APACK45]]
func.func @odd_k_packed(%a: tensor<20x45xf32>, %b: tensor<45x64xf32>, %c: tensor<20x64xf32>) -> tensor<20x64xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<20x45xf32>, tensor<45x64xf32>) outs(%c : tensor<20x64xf32>) -> tensor<20x64xf32>
  return %y : tensor<20x64xf32>
}

// VEC-LABEL: func.func @odd_k_in_place
// VEC: memref.alloc() {alignment = 64 : i64} : memref<2x45x16xf32>
// VEC-NOT: memref.alloc
// VEC: scf.for {{.*}} iter_args(
// VEC: memref.load {{.*}} : memref<20x45xf32>
// VEC: vector.fma
// VEC: return
func.func @odd_k_in_place(%a: tensor<20x45xf32>, %b: tensor<45x32xf32>, %c: tensor<20x32xf32>) -> tensor<20x32xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<20x45xf32>, tensor<45x32xf32>) outs(%c : tensor<20x32xf32>) -> tensor<20x32xf32>
  return %y : tensor<20x32xf32>
}
