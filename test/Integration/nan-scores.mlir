// A NaN key makes NaN exactly the rows that see it, in the fused kernels:
// the running max (arith.maximumf) turns NaN, and so do the row's weights,
// sum and output. (The max is what carries it: the polynomial exp maps NaN
// to 0, so a max that left the NaN score out, such as x86's vmaxps, would
// give finite rows, a silent wrong answer this test caught.) Keys from 25
// on are NaN (make_npy.py --nan-rows): causal rows before 25 stay finite,
// later rows are NaN; without a mask every row sees them. Through
// attn-block-sparse (causal), attn-flash (dense), a window, and the
// reference lowering.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/q.npy --dtype '<f4' --shape 1,2,40,16 --random 1
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/k.npy --dtype '<f4' --shape 1,2,40,16 --random 2 --nan-rows 25
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/v.npy --dtype '<f4' --shape 1,2,40,16 --random 3
// DEFINE: %{fn} =
// DEFINE: %{run} = attn-run %s --entry %{fn} --input query=%t/q.npy --input key=%t/k.npy --input value=%t/v.npy --output %t/%{fn}.npy --remarks 2> %t/%{fn}.remarks > /dev/null
// REDEFINE: %{fn} = causal
// RUN: %{run} && %python %S/Inputs/nan_rows.py %t/causal.npy --first-nan 25
// RUN: FileCheck %s --check-prefix=CAUSAL < %t/causal.remarks
// CAUSAL: remark: attn-block-sparse
// REDEFINE: %{fn} = dense
// RUN: %{run} && %python %S/Inputs/nan_rows.py %t/dense.npy --first-nan 0
// RUN: FileCheck %s --check-prefix=DENSE < %t/dense.remarks
// DENSE: remark: attn-flash
// REDEFINE: %{fn} = window
// RUN: %{run} && %python %S/Inputs/nan_rows.py %t/window.npy --first-nan 25
// The reference lowering too (exp of NaN kept NaN by
// attn-math-approximation; a NaN row sum is not taken for an empty row's 0).
// RUN: attn-run %s --entry causal --reference --input query=%t/q.npy --input key=%t/k.npy --input value=%t/v.npy --output %t/ref.npy > /dev/null
// RUN: %python %S/Inputs/nan_rows.py %t/ref.npy --first-nan 25

func.func @causal(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @dense(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @window(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 3, after = 0>} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}
