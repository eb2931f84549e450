// The catalogue of score and mask regions (issue 38) against the float64
// reference: every mod on the CPU kernels, the reference lowering and the
// GPU kernels (emulator), and the gradients of each (attn-run --grad);
// the region forms of built-in patterns and modifiers (causal, window,
// segments, softcap, ALiBi) against the reference of the built-in op. The driver writes the module (Inputs/mods.mlir
// in its work directory) and runs each case.
// RUN: rm -rf %t && %python %S/Inputs/mods_catalogue.py attn-run attn-ref %S/../Runner/Inputs/make_npy.py %t | FileCheck %s
// CHECK: prefix_lm cpu: ok
// CHECK: document gpu: ok
// CHECK: document_bf16 reference: ok
// CHECK: decode_doc cpu: ok
// CHECK: kernel_prefix cpu: ok
// CHECK: rel_bias grad: ok
// CHECK: alibi grad: ok
// CHECK: kernel_prefix grad: ok
// CHECK: segments twin: ok
// CHECK: alibi twin: ok
// CHECK: cases: 65 passed, 0 failed
