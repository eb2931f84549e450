// The linear-time gradient of kernelized attention with lengths known only
// at run time (issue 53): the chunked prefix form when Lq == Lk (as the
// forward, attn-reassociate), the quadratic gradient otherwise, chosen at
// run time; both against the float64 reference (attn-ref --grad). (One
// function: attn-run compiles the whole module, both branches.)
// RUN: rm -rf %t && mkdir -p %t/same %t/differ
// RUN: attn-run %s --entry causal_dyn --grad --random-inputs --seed 3 --remarks --shape q=2x4x61x16 --shape k=2x2x61x16 --shape v=2x2x61x8 --shape d_output=2x4x61x8 --save-inputs %t/same --output %t/same/d_q.npy --output %t/same/d_k.npy --output %t/same/d_v.npy 2> %t/remarks > /dev/null
// RUN: attn-ref %s --entry causal_dyn --inputs %t/same --grad %t/same --rtol 1e-4 --atol 1e-5 --max-rel-err 2e-6
// RUN: FileCheck %s < %t/remarks
// RUN: attn-run %s --entry causal_dyn --grad --random-inputs --seed 4 --shape q=2x4x50x16 --shape k=2x2x61x16 --shape v=2x2x61x8 --shape d_output=2x4x50x8 --save-inputs %t/differ --output %t/differ/d_q.npy --output %t/differ/d_k.npy --output %t/differ/d_v.npy > /dev/null
// RUN: attn-ref %s --entry causal_dyn --inputs %t/differ --grad %t/differ --rtol 1e-4 --atol 1e-5 --max-rel-err 2e-6
// CHECK: remark: convert-attn-grad-to-linalg: lengths are dynamic: the linear-time gradient when Lq == Lk, else the quadratic gradient, chosen at run time

func.func @causal_dyn(%q: tensor<2x4x?x16xf32>, %k: tensor<2x2x?x16xf32>, %v: tensor<2x2x?x8xf32>) -> tensor<2x4x?x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<2x4x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x8xf32> -> tensor<2x4x?x8xf32>
  return %0 : tensor<2x4x?x8xf32>
}
