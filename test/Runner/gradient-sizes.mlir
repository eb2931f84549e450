// attn.attention_grad's run-time checks of the cotangent (issue 53): its
// rows against the output's in every gradient lowering: the fused backward
// (causal softmax), the linear-time gradient (kernelized, no mask) and the
// reference gradient (kernelized under a window). Fewer rows would be read
// past their end, more ignored; both are refused with a message.
// DEFINE: %{fn} = dyn
// DEFINE: %{cot} = not attn-run %s --entry %{fn} --grad --random-inputs --shape query=2x4x8x16 --shape key=2x2x8x16 --shape value=2x2x8x8 --shape d_output=2x4x7x8 2>&1 | FileCheck %s --check-prefix=COT
// COT: attn-run: error: the generated code reported a run-time error: attn.attention_grad: dimension 2 of grad_output is 7, the attention's output has 8
// RUN: %{cot}
// REDEFINE: %{fn} = dyn_linear
// RUN: %{cot}
// REDEFINE: %{fn} = dyn_window_kernel
// RUN: %{cot}
// More rows, and another batch:
// RUN: not attn-run %s --entry dyn_window_kernel --grad --random-inputs --shape query=2x4x8x16 --shape key=2x2x8x16 --shape value=2x2x8x8 --shape d_output=2x4x9x8 2>&1 | FileCheck %s --check-prefix=MORE
// MORE: attn.attention_grad: dimension 2 of grad_output is 9, the attention's output has 8
// RUN: not attn-run %s --entry dyn_linear --grad --random-inputs --shape query=2x4x8x16 --shape key=2x2x8x16 --shape value=2x2x8x8 --shape d_output=1x4x8x8 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: attn.attention_grad: dimension 0 of grad_output is 1, the attention's output has 2

func.func @dyn(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @dyn_linear(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @dyn_window_kernel(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.window<before = 2, after = 2>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
