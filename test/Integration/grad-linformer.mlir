// Linformer's gradient (issue 53): attn-differentiate writes @F_grad of an
// attn.lowrank_attention as the attention over the projected keys and
// values, its attn.attention_grad (the fused backward, memory linear in L)
// and the projections' chain rule; the gradients of query, key, value and
// both projections against PyTorch's float64 autograd. GQA (4 query heads
// over 2), L = 75 (odd), P = 12.
// REQUIRES: python-torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --entry linformer --grad --random-inputs --seed 3 --remarks --save-inputs %t --output %t/d_q.npy --output %t/d_k.npy --output %t/d_v.npy --output %t/d_e.npy --output %t/d_f.npy 2> %t/remarks > /dev/null
// RUN: %attn_py3 %S/Inputs/linformer_grad.py %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=FUSED < %t/remarks
// CHECK: d_q: relative error {{.*}} ok
// CHECK: d_k: relative error {{.*}} ok
// CHECK: d_v: relative error {{.*}} ok
// CHECK: d_e: relative error {{.*}} ok
// CHECK: d_f: relative error {{.*}} ok
// FUSED: remark: attn-flash-backward: fused backward

func.func @linformer(%q: tensor<2x4x75x16xf32>, %k: tensor<2x2x75x16xf32>, %v: tensor<2x2x75x8xf32>, %e: tensor<12x75xf32>, %f: tensor<12x75xf32>) -> tensor<2x4x75x8xf32> {
  %0 = attn.lowrank_attention %q, %k, %v, %e, %f : tensor<2x4x75x16xf32>, tensor<2x2x75x16xf32>, tensor<2x2x75x8xf32>, tensor<12x75xf32>, tensor<12x75xf32> -> tensor<2x4x75x8xf32>
  return %0 : tensor<2x4x75x8xf32>
}
