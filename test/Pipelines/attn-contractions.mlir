// RUN: attn-opt %s --attn-tile-contractions="chunks=2 row-tile=8" | FileCheck %s --check-prefix=TILE
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(attn-read-only-arguments,attn-tile-contractions{chunks=2}),one-shot-bufferize{bufferize-function-boundaries},func.func(attn-vectorize-contractions{vector-width=8}),canonicalize)" 2>&1 | FileCheck %s --check-prefix=VEC
// RUN: attn-opt %s --attn-read-only-arguments | FileCheck %s --check-prefix=RO
// RO: func.func @matmul(%{{.*}}: tensor<77x64xf32> {bufferization.writable = false}, %{{.*}}: tensor<64x48xf32> {bufferization.writable = false}, %{{.*}}: tensor<77x48xf32> {bufferization.writable = false})

// Threads: row chunks of a multiple of the register tile (77 rows in 2
// chunks of 40; the last is ragged).
// TILE-LABEL: func.func @matmul
// TILE: scf.forall (%{{.*}}) = (0) to (77) step (40)
// TILE: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<64x48xf32>)
// Registers: 8 x 16 tiles (two AVX2 vectors), K steps of 16; the
// accumulator carried in registers across the K loop; ragged edge tiles
// stay linalg ops. Arguments are read-only: the accumulation into %c works
// on a copy.
// VEC: remark: attn-vectorize-contractions: register tiles of 8 x 16 outputs, K steps of 16
// VEC-LABEL: func.func @matmul(
// VEC: memref.copy
// VEC: scf.forall
// VEC: scf.for
// VEC: vector.transfer_read {{.*}} : memref<77x48xf32>, vector<8x16xf32>
// VEC: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8x16xf32>)
// VEC: vector.fma {{.*}} : vector<16xf32>
// VEC: vector.transfer_write {{.*}} : vector<8x16xf32>, memref<77x48xf32>
// VEC: linalg.matmul ins({{.*}} : memref<?x16xf32
func.func @matmul(%a: tensor<77x64xf32>, %b: tensor<64x48xf32>, %c: tensor<77x48xf32>) -> tensor<77x48xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<77x64xf32>, tensor<64x48xf32>) outs(%c : tensor<77x48xf32>) -> tensor<77x48xf32>
  return %y : tensor<77x48xf32>
}
