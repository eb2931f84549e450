// The acceptance matrix of the gradients (issue 37): softmax, pointwise
// relu and kernelized elu+1 attention x {no mask, causal, window,
// block-sparse, segments} x {MHA, GQA}, L = 77 (odd, a partial last block),
// f32, and bf16 for GQA: attn-run --grad against attn-ref --grad (the
// float64 reverse-mode reference). The driver writes the module.
// Not in the sanitizer stage (CI time): it is a numeric matrix over the
// same compiler paths that grad.mlir, grad-linear.mlir and
// grad-properties.mlir run under ASan and UBSan.
// UNSUPPORTED: asan
// RUN: rm -rf %t && %python %S/Inputs/grad_matrix.py attn-run attn-ref %t | FileCheck %s
// CHECK: softmax_none_mha_f32: ok
// CHECK: elu_segments_gqa_bf16: ok
// CHECK: cases: 45 passed, 0 failed
