// The contractions of graphs, tiled and vectorized by attn-tile-contractions
// and attn-vectorize-contractions, against the reference pipeline (which
// keeps them as loops): the micro-kernel with whole and ragged register
// tiles (M, N not multiples of the tile), A packed (5 or 10 panels of B
// read each of its tiles; by transposes, or by a copy for odd K) or read
// in place (few panels), odd K (one K block, K unrolled by 1), K split
// into packed blocks (K = 768: blocks of 256), batch dims, a projection
// transposed into heads (folded: heads an outer loop), the same value as
// both inputs with ragged columns; not the micro-kernel: a body that
// negates A (fused producers), a transposed output, and a transposed
// operand (vector.contract tiles).
// RUN: attn-run %s --entry matmul_ragged --random-inputs --seed 1 --check --remarks 2>&1 | FileCheck %s --check-prefix=RAGGED
// RAGGED: remark: attn-vectorize-contractions: register tiles of {{6 x 16|14 x 32}} outputs, B packed in K blocks of 45, A read in place (few panels), broadcast-FMA micro-kernel (K unrolled by 1)
// RAGGED: check result0: {{.*}} ok
// RUN: attn-run %s --entry matmul_whole --random-inputs --seed 2 --check
// RUN: attn-run %s --entry matmul_k_blocks --random-inputs --seed 5 --check --remarks 2>&1 | FileCheck %s --check-prefix=KBLOCKS
// KBLOCKS: remark: attn-vectorize-contractions: register tiles of {{6 x 16|14 x 32}} outputs, B packed in K blocks of 256, A packed by transposes, broadcast-FMA micro-kernel (K unrolled by 16)
// KBLOCKS: check result0: {{.*}} ok
// RUN: attn-run %s --entry packed_a --random-inputs --seed 11 --check --remarks 2>&1 | FileCheck %s --check-prefix=PACKED
// PACKED: remark: attn-vectorize-contractions: register tiles of {{6 x 16|14 x 32}} outputs, B packed in K blocks of 64, A packed by transposes, broadcast-FMA micro-kernel (K unrolled by 16)
// PACKED: check result0: {{.*}} ok
// RUN: attn-run %s --entry packed_a_odd_k --random-inputs --seed 12 --check --remarks 2>&1 | FileCheck %s --check-prefix=PACKED45
// PACKED45: remark: attn-vectorize-contractions: register tiles of {{6 x 16|14 x 32}} outputs, B packed in K blocks of 45, A packed by a copy, broadcast-FMA micro-kernel (K unrolled by 1)
// PACKED45: check result0: {{.*}} ok
// RUN: attn-run %s --entry fill_n_blocks --random-inputs --seed 10 --check --remarks 2>&1 | FileCheck %s --check-prefix=NBLOCKS
// NBLOCKS: remark: attn-vectorize-contractions: register tiles of {{6 x 16|14 x 32}} outputs, B packed in K blocks of {{512|256}}, A packed by transposes, broadcast-FMA micro-kernel (K unrolled by 16), the output's fill folded into the first K block
// NBLOCKS: check result0: {{.*}} ok
// RUN: attn-run %s --entry batch_matmul --random-inputs --seed 3 --check --remarks 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: remark: attn-vectorize-contractions: register tiles of {{6 x 16|14 x 32}} outputs, B packed in K blocks of 32, A packed by transposes, broadcast-FMA micro-kernel (K unrolled by 16)
// BATCH: check result0: {{.*}} ok
// RUN: attn-run %s --entry heads_first --random-inputs --seed 6 --check --remarks 2>&1 | FileCheck %s --check-prefix=HEADS
// RUN: attn-opt %s --pass-pipeline="builtin.module(attn-lower-to-llvm-pipeline{vector-width=8})" --mlir-print-ir-after=attn-tile-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=FOLDED
// FOLDED-LABEL: func.func @heads_first
// FOLDED-NOT: linalg.transpose
// FOLDED: return
// HEADS: remark: attn-vectorize-contractions: register tiles of {{6 x 16|14 x 32}} outputs, B packed in K blocks of 40, A {{packed by transposes|read in place \(few panels\)}}, broadcast-FMA micro-kernel (K unrolled by 8)
// HEADS: check result0: {{.*}} ok
// RUN: attn-run %s --entry negated_a --random-inputs --seed 7 --check --remarks 2>&1 | FileCheck %s --check-prefix=NEGATED
// NEGATED: remark: attn-vectorize-contractions: {{.*}} vector.contract (B or the output not contiguous along N, or not a plain multiply-add)
// NEGATED: check result0: {{.*}} ok
// RUN: attn-run %s --entry square --random-inputs --seed 8 --check --remarks 2>&1 | FileCheck %s --check-prefix=SQUARE
// SQUARE: remark: attn-vectorize-contractions: {{.*}} broadcast-FMA micro-kernel
// SQUARE: check result0: {{.*}} ok
// RUN: attn-run %s --entry transposed_out --random-inputs --seed 9 --check --remarks 2>&1 | FileCheck %s --check-prefix=TOUT
// TOUT: remark: attn-vectorize-contractions: {{.*}} vector.contract
// TOUT: check result0: {{.*}} ok
// RUN: attn-run %s --entry transposed_b --random-inputs --seed 4 --check --remarks 2>&1 | FileCheck %s --check-prefix=TRANSPOSED
// TRANSPOSED: remark: attn-vectorize-contractions: register tiles of {{6 x 16|14 x 32}} outputs, K steps of 8, vector.contract (B or the output not contiguous along N, or not a plain multiply-add)
// TRANSPOSED: check result0: {{.*}} ok

func.func @matmul_ragged(%a: tensor<77x45xf32>, %b: tensor<45x50xf32>) -> tensor<77x50xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<77x50xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<77x50xf32>) -> tensor<77x50xf32>
  %y = linalg.matmul ins(%a, %b : tensor<77x45xf32>, tensor<45x50xf32>) outs(%z : tensor<77x50xf32>) -> tensor<77x50xf32>
  return %y : tensor<77x50xf32>
}

func.func @matmul_whole(%a: tensor<128x64xf32>, %b: tensor<64x96xf32>, %c: tensor<128x96xf32>) -> tensor<128x96xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x96xf32>) outs(%c : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %y : tensor<128x96xf32>
}

func.func @matmul_k_blocks(%a: tensor<50x768xf32>, %b: tensor<768x40xf32>) -> tensor<50x40xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<50x40xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<50x40xf32>) -> tensor<50x40xf32>
  %y = linalg.matmul ins(%a, %b : tensor<50x768xf32>, tensor<768x40xf32>) outs(%z : tensor<50x40xf32>) -> tensor<50x40xf32>
  return %y : tensor<50x40xf32>
}

// 160 columns: 5 panels of 32 (10 of 16) read each packed tile of A; 77
// rows: whole tiles and the rest. K = 64: A packed by lanes x lanes
// transposes of vectors along K; K = 45 (not whole vectors): by a copy.
func.func @packed_a(%a: tensor<77x64xf32>, %b: tensor<64x160xf32>) -> tensor<77x160xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<77x160xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<77x160xf32>) -> tensor<77x160xf32>
  %y = linalg.matmul ins(%a, %b : tensor<77x64xf32>, tensor<64x160xf32>) outs(%z : tensor<77x160xf32>) -> tensor<77x160xf32>
  return %y : tensor<77x160xf32>
}

func.func @packed_a_odd_k(%a: tensor<77x45xf32>, %b: tensor<45x160xf32>) -> tensor<77x160xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<77x160xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<77x160xf32>) -> tensor<77x160xf32>
  %y = linalg.matmul ins(%a, %b : tensor<77x45xf32>, tensor<45x160xf32>) outs(%z : tensor<77x160xf32>) -> tensor<77x160xf32>
  return %y : tensor<77x160xf32>
}

func.func @fill_n_blocks(%a: tensor<13x512xf32>, %b: tensor<512x2100xf32>) -> tensor<13x2100xf32> {
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<13x2100xf32>
  %z = linalg.fill ins(%half : f32) outs(%e : tensor<13x2100xf32>) -> tensor<13x2100xf32>
  %y = linalg.matmul ins(%a, %b : tensor<13x512xf32>, tensor<512x2100xf32>) outs(%z : tensor<13x2100xf32>) -> tensor<13x2100xf32>
  return %y : tensor<13x2100xf32>
}

func.func @batch_matmul(%a: tensor<3x40x32xf32>, %b: tensor<3x32x48xf32>) -> tensor<3x40x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x40x48xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x40x48xf32>) -> tensor<3x40x48xf32>
  %y = linalg.batch_matmul ins(%a, %b : tensor<3x40x32xf32>, tensor<3x32x48xf32>) outs(%z : tensor<3x40x48xf32>) -> tensor<3x40x48xf32>
  return %y : tensor<3x40x48xf32>
}

func.func @transposed_b(%a: tensor<64x24xf32>, %bt: tensor<40x24xf32>) -> tensor<64x40xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x40xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x40xf32>) -> tensor<64x40xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %bt : tensor<64x24xf32>, tensor<40x24xf32>) outs(%z : tensor<64x40xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x40xf32>
  return %y : tensor<64x40xf32>
}

func.func @heads_first(%x: tensor<67x40xf32>, %w: tensor<40x96xf32>) -> tensor<3x67x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<67x96xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<67x96xf32>) -> tensor<67x96xf32>
  %y = linalg.matmul ins(%x, %w : tensor<67x40xf32>, tensor<40x96xf32>) outs(%z : tensor<67x96xf32>) -> tensor<67x96xf32>
  %h = tensor.expand_shape %y [[0], [1, 2]] output_shape [67, 3, 32] : tensor<67x96xf32> into tensor<67x3x32xf32>
  %t0 = tensor.empty() : tensor<3x67x32xf32>
  %t = linalg.transpose ins(%h : tensor<67x3x32xf32>) outs(%t0 : tensor<3x67x32xf32>) permutation = [1, 0, 2]
  return %t : tensor<3x67x32xf32>
}

func.func @negated_a(%a: tensor<40x32xf32>, %b: tensor<32x48xf32>) -> tensor<40x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x48xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<40x48xf32>) -> tensor<40x48xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<40x32xf32>, tensor<32x48xf32>) outs(%z : tensor<40x48xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %nx = arith.negf %x : f32
    %p = arith.mulf %nx, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<40x48xf32>
  return %y : tensor<40x48xf32>
}

func.func @square(%x: tensor<50x50xf32>) -> tensor<50x50xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<50x50xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<50x50xf32>) -> tensor<50x50xf32>
  %y = linalg.matmul ins(%x, %x : tensor<50x50xf32>, tensor<50x50xf32>) outs(%z : tensor<50x50xf32>) -> tensor<50x50xf32>
  return %y : tensor<50x50xf32>
}

func.func @transposed_out(%a: tensor<40x32xf32>, %b: tensor<32x48xf32>) -> tensor<48x40xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<48x40xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<48x40xf32>) -> tensor<48x40xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<40x32xf32>, tensor<32x48xf32>) outs(%z : tensor<48x40xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<48x40xf32>
  return %y : tensor<48x40xf32>
}
