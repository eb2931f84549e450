// RUN: attn-opt %s --attn-flash-backward="vector-width=16" --split-input-file 2>&1 >/dev/null | FileCheck %s

/// The schedules (docs/Gradients.md): MQA over one batch row has one key/value
/// head task, too few for one pass over them; with 8 query heads each a task
/// summing its own part of dK and dV (8 x 600 x 128 floats), one pass over
/// the query heads.
// CHECK: remark: attn-flash-backward: fused backward, one pass over query heads
func.func @small(%q: tensor<1x8x600x64xf32>, %k: tensor<1x1x600x64xf32>, %v: tensor<1x1x600x64xf32>, %do: tensor<1x8x600x64xf32>) -> tensor<1x8x600x64xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x8x600x64xf32>, tensor<1x1x600x64xf32>, tensor<1x1x600x64xf32> -> tensor<1x8x600x64xf32>
  %dq, %dk, %dv = attn.attention_grad %o, %do : tensor<1x8x600x64xf32>, tensor<1x8x600x64xf32> -> tensor<1x8x600x64xf32>, tensor<1x1x600x64xf32>, tensor<1x1x600x64xf32>
  return %dq : tensor<1x8x600x64xf32>
}

// -----

/// The same with 16 query heads over 32768 keys of 128 + 128 dims: the
/// heads' parts would take 512 MiB (over kMaxGroupPartBytes, 256 MiB), so
/// two passes instead.
// CHECK: remark: attn-flash-backward: fused backward, two passes
func.func @large(%q: tensor<1x16x32768x128xf32>, %k: tensor<1x1x32768x128xf32>, %v: tensor<1x1x32768x128xf32>, %do: tensor<1x16x32768x128xf32>) -> tensor<1x16x32768x128xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x16x32768x128xf32>, tensor<1x1x32768x128xf32>, tensor<1x1x32768x128xf32> -> tensor<1x16x32768x128xf32>
  %dq, %dk, %dv = attn.attention_grad %o, %do : tensor<1x16x32768x128xf32>, tensor<1x16x32768x128xf32> -> tensor<1x16x32768x128xf32>, tensor<1x1x32768x128xf32>, tensor<1x1x32768x128xf32>
  return %dq : tensor<1x16x32768x128xf32>
}
