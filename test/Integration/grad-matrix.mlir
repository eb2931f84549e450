// The acceptance matrix of the gradients (issues 37 and 53): softmax,
// pointwise relu and kernelized elu+1 attention x {no mask, causal, window,
// block-sparse, segments} x {MHA, GQA}, L = 77 (odd, a partial last block),
// f32, and bf16 for GQA; then every modifier (bias broadcast over the batch,
// gate, ALiBi, softcap, sinks with the LSE's cotangent, a score region over
// a captured T5 table, a mask region over captured document ids) x
// {softmax, relu} x {causal, segments} x GQA x {f32, bf16, f32 with lengths
// known at run time (61)}: attn-run --grad against attn-ref --grad (the
// float64 reverse-mode reference). The driver writes one module per case.
// Not in the sanitizer stage (CI time): it is a numeric matrix over the
// same compiler paths that grad.mlir, grad-linear.mlir and
// grad-properties.mlir run under ASan and UBSan.
// UNSUPPORTED: asan
// RUN: rm -rf %t && %python %S/Inputs/grad_matrix.py attn-run attn-ref %t | FileCheck %s
// CHECK: softmax_none_mha_f32: ok
// CHECK: elu_segments_gqa_bf16: ok
// CHECK: bias_softmax_causal_f32_dyn: ok
// CHECK: mask_mod_relu_segments_bf16: ok
// CHECK: cases: 123 passed, 0 failed
