// The gradient of a FAVOR+ projection given as an operand (issue 53: a
// learned projection trains): dW = sum over the query and key rows of
// (dphi * phi) x'^T, in the linear-time gradient (causal: the chunked
// prefix form) and the quadratic one (a window), against the float64
// reference (attn-ref --grad: reverse mode through the feature map);
// GQA, L = 37.
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{fn} =
// DEFINE: %{check} = mkdir -p %t/%{fn} && attn-run %s --entry %{fn} --grad --random-inputs --seed 3 --save-inputs %t/%{fn} --output %t/%{fn}/d_q.npy --output %t/%{fn}/d_k.npy --output %t/%{fn}/d_v.npy --output %t/%{fn}/d_w.npy --remarks 2> %t/%{fn}.remarks > /dev/null && attn-ref %s --entry %{fn} --inputs %t/%{fn} --grad %t/%{fn} --rtol 1e-4 --atol 1e-5 --max-rel-err 1e-5 | FileCheck %s --check-prefix=REF
// REF: d_w: {{.*}} ok
// REDEFINE: %{fn} = causal
// RUN: %{check}
// RUN: FileCheck %s --check-prefix=LINEAR < %t/causal.remarks
// LINEAR-NOT: quadratic gradient
// REDEFINE: %{fn} = window
// RUN: %{check}
// RUN: FileCheck %s --check-prefix=QUADRATIC < %t/window.remarks
// QUADRATIC: remark: convert-attn-grad-to-linalg: pattern #attn.window has no linear-time gradient; the quadratic gradient computes it

func.func @causal(%q: tensor<2x4x37x16xf32>, %k: tensor<2x2x37x16xf32>, %v: tensor<2x2x37x8xf32>, %w: tensor<24x16xf32>) -> tensor<2x4x37x8xf32> {
  %o = attn.attention %q, %k, %v projection(%w : tensor<24x16xf32>) {normalizer = #attn.kernel<favor, features = 24>, pattern = #attn.causal}
      : tensor<2x4x37x16xf32>, tensor<2x2x37x16xf32>, tensor<2x2x37x8xf32> -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}

func.func @window(%q: tensor<2x4x37x16xf32>, %k: tensor<2x2x37x16xf32>, %v: tensor<2x2x37x8xf32>, %w: tensor<24x16xf32>) -> tensor<2x4x37x8xf32> {
  %o = attn.attention %q, %k, %v projection(%w : tensor<24x16xf32>) {normalizer = #attn.kernel<favor, features = 24>, pattern = #attn.window<before = 5, after = 5>}
      : tensor<2x4x37x16xf32>, tensor<2x2x37x16xf32>, tensor<2x2x37x8xf32> -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}
