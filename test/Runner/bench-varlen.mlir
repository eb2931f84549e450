// --bench counts the work of a varlen batch per sequence, at its own
// lengths: causal softmax, B=2, H=1, D=Dv=4, buffers of 8, query lengths 3
// and 8, key lengths 8: the 3 queries of sequence 0 sit at key positions
// 5..7 (6 + 7 + 8 = 21 pairs), sequence 1 has 8 * 9 / 2 = 36, and
// 2 * 57 * (4 + 4) = 912 flop (the full buffers would count 1152).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_npy.py %t/lq.npy --dtype '<i4' --shape 2 --values 3,8
// RUN: %python %S/Inputs/make_npy.py %t/lk.npy --dtype '<i4' --shape 2 --values 8,8
// RUN: attn-run %s --random-inputs --input lq=%t/lq.npy --input lk=%t/lk.npy --bench 1 --threads 1 | FileCheck %s
// CHECK: work: 912 flop
func.func @padded(%query: tensor<2x1x8x4xf32>, %key: tensor<2x1x8x4xf32>, %value: tensor<2x1x8x4xf32>, %lq: tensor<2xi32>, %lk: tensor<2xi32>) -> tensor<2x1x8x4xf32> {
  %0 = attn.attention %query, %key, %value query_lengths(%lq : tensor<2xi32>) key_lengths(%lk : tensor<2xi32>) {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32> -> tensor<2x1x8x4xf32>
  return %0 : tensor<2x1x8x4xf32>
}
