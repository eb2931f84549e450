// Transformer-XL's gradient (issue 53): attn-differentiate writes @F_grad
// of an attn.relative_attention as a loop over blocks of 64 query rows,
// each the attention of its rows (q + u) over the memory and the segment
// with its position scores as the bias and the causal mask at its offset,
// differentiated by the fused backward (the bias's gradient gives dR, the
// position term of dq and dv): memory linear in L, no L x (M + L) tensor.
// The gradients of query, key, value, pos_emb, content_bias and
// position_bias against PyTorch's float64 autograd; L = 75 (two blocks,
// the second partial), D = 16, with a memory of 21 rows and without.
// REQUIRES: python-torch
// RUN: rm -rf %t && mkdir -p %t/m %t/n
// RUN: attn-run %s --entry txl_memory --grad --random-inputs --seed 5 --remarks --save-inputs %t/m --output %t/m/d_q.npy --output %t/m/d_k.npy --output %t/m/d_v.npy --output %t/m/d_r.npy --output %t/m/d_u.npy --output %t/m/d_vb.npy 2> %t/remarks > /dev/null
// RUN: %attn_py3 %S/Inputs/relative_grad.py %t/m --memory | FileCheck %s
// RUN: attn-run %s --entry txl --grad --random-inputs --seed 6 --threads 2 --save-inputs %t/n --output %t/n/d_q.npy --output %t/n/d_k.npy --output %t/n/d_v.npy --output %t/n/d_r.npy --output %t/n/d_u.npy --output %t/n/d_vb.npy > /dev/null 2>&1
// RUN: %attn_py3 %S/Inputs/relative_grad.py %t/n | FileCheck %s
// RUN: FileCheck %s --check-prefix=FUSED < %t/remarks
// The same bits on 1 and 2 threads:
// RUN: attn-run %s --entry txl_memory --grad --random-inputs --seed 5 --threads 1 --output %t/m/t1_q.npy --output %t/m/t1_k.npy --output %t/m/t1_v.npy --output %t/m/t1_r.npy --output %t/m/t1_u.npy --output %t/m/t1_vb.npy > /dev/null 2>&1
// RUN: attn-run %s --entry txl_memory --grad --random-inputs --seed 5 --threads 2 --output %t/m/t2_q.npy --output %t/m/t2_k.npy --output %t/m/t2_v.npy --output %t/m/t2_r.npy --output %t/m/t2_u.npy --output %t/m/t2_vb.npy > /dev/null 2>&1
// RUN: cmp %t/m/t1_q.npy %t/m/t2_q.npy && cmp %t/m/t1_k.npy %t/m/t2_k.npy && cmp %t/m/t1_v.npy %t/m/t2_v.npy
// RUN: cmp %t/m/t1_r.npy %t/m/t2_r.npy && cmp %t/m/t1_u.npy %t/m/t2_u.npy && cmp %t/m/t1_vb.npy %t/m/t2_vb.npy
// CHECK: d_q: relative error {{.*}} ok
// CHECK: d_k: relative error {{.*}} ok
// CHECK: d_v: relative error {{.*}} ok
// CHECK: d_r: relative error {{.*}} ok
// CHECK: d_u: relative error {{.*}} ok
// CHECK: d_vb: relative error {{.*}} ok
// FUSED: remark: attn-flash-backward: fused backward

func.func @txl_memory(%q: tensor<2x3x75x16xf32>, %k: tensor<2x3x75x16xf32>, %v: tensor<2x3x75x8xf32>, %r: tensor<3x96x16xf32>, %u: tensor<3x16xf32>, %vb: tensor<3x16xf32>, %mk: tensor<2x3x21x16xf32>, %mv: tensor<2x3x21x8xf32>) -> tensor<2x3x75x8xf32> {
  %0 = attn.relative_attention %q, %k, %v, %r, %u, %vb memory(%mk, %mv : tensor<2x3x21x16xf32>, tensor<2x3x21x8xf32>)
      : tensor<2x3x75x16xf32>, tensor<2x3x75x16xf32>, tensor<2x3x75x8xf32>, tensor<3x96x16xf32>, tensor<3x16xf32>, tensor<3x16xf32> -> tensor<2x3x75x8xf32>
  return %0 : tensor<2x3x75x8xf32>
}

func.func @txl(%q: tensor<1x2x75x16xf32>, %k: tensor<1x2x75x16xf32>, %v: tensor<1x2x75x16xf32>, %r: tensor<2x75x16xf32>, %u: tensor<2x16xf32>, %vb: tensor<2x16xf32>) -> tensor<1x2x75x16xf32> {
  %0 = attn.relative_attention %q, %k, %v, %r, %u, %vb
      : tensor<1x2x75x16xf32>, tensor<1x2x75x16xf32>, tensor<1x2x75x16xf32>, tensor<2x75x16xf32>, tensor<2x16xf32>, tensor<2x16xf32> -> tensor<1x2x75x16xf32>
  return %0 : tensor<1x2x75x16xf32>
}
