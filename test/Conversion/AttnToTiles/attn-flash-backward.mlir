// RUN: attn-opt %s --attn-flash-backward="vector-width=16" --split-input-file --verify-diagnostics | FileCheck %s

/// Causal softmax, GQA, L = 100 (ragged blocks): the forward op gains its
/// log-sum-exp; the prologue pads Q, dO (rows and transposed), K, V, LSE and
/// D to whole blocks of 64; one pass (batch x kv heads = 4) per key/value
/// head; per block register-tiled products (vector.fma) and the gradients
/// stored; no L x L buffer.
// CHECK-LABEL: func.func @causal_gqa
// CHECK-NOT: 100x100
// CHECK: %{{.*}}, %[[LSE:.*]] = attn.attention {{.*}} -> tensor<2x4x100x16xf32>, tensor<2x4x100xf32>
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<2x4x128x16xf32>
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<2x4x16x128xf32>
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<2x2x128x16xf32>
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<2x4x128xf32>
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = {{.*}} to (%c2{{.*}}, %c4{{.*}})
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = {{.*}} to (%c2{{.*}}, %c2{{.*}})
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = {{.*}} to (%c2{{.*}}, %c2{{.*}})
// CHECK:   memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK:   vector.fma
// CHECK:   math.exp
// CHECK:   vector.fma
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @causal_gqa(%q: tensor<2x4x100x16xf32>, %k: tensor<2x2x100x16xf32>, %v: tensor<2x2x100x16xf32>, %do: tensor<2x4x100x16xf32>) -> (tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x16xf32>) {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x16xf32> -> tensor<2x4x100x16xf32>
  // expected-remark @+1 {{attn-flash-backward: fused backward, one pass, blocks of 64 queries x 64 keys, 12 of 16 blocks visited per pass (4 full); 16 lanes}}
  %dq, %dk, %dv = attn.attention_grad %o, %do : tensor<2x4x100x16xf32>, tensor<2x4x100x16xf32> -> tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x16xf32>
  return %dq, %dk, %dv : tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x16xf32>
}

// -----

/// Pointwise attention's gradient reads no forward result: the forward op,
/// only its description, is erased. One key/value head: two passes (key
/// blocks, then query blocks).
// CHECK-LABEL: func.func @relu_two_passes
// CHECK-NOT: attn.attention
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = {{.*}} to (%c1{{.*}}, %c1{{.*}}, %c2{{.*}})
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = {{.*}} to (%c1{{.*}}, %c2{{.*}}, %c2{{.*}})
func.func @relu_two_passes(%q: tensor<1x2x90x16xf32>, %k: tensor<1x1x90x16xf32>, %v: tensor<1x1x90x16xf32>, %do: tensor<1x2x90x16xf32>) -> tensor<1x2x90x16xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu>} : tensor<1x2x90x16xf32>, tensor<1x1x90x16xf32>, tensor<1x1x90x16xf32> -> tensor<1x2x90x16xf32>
  // expected-remark @+1 {{attn-flash-backward: fused backward, two passes, blocks of 64 queries x 64 keys, 8 of 8 blocks visited per pass (8 full); 16 lanes}}
  %dq, %dk, %dv = attn.attention_grad %o, %do : tensor<1x2x90x16xf32>, tensor<1x2x90x16xf32> -> tensor<1x2x90x16xf32>, tensor<1x1x90x16xf32>, tensor<1x1x90x16xf32>
  return %dq : tensor<1x2x90x16xf32>
}

// -----

/// What is not fused stays for the reference gradient, with a remark naming
/// the feature (the capability list, docs/Kernels.md).
// CHECK-LABEL: func.func @not_fused
// CHECK: attn.attention_grad
func.func @not_fused(%q: tensor<1x1x8x16xf32>, %do: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %o3 = attn.attention %q, %q, %q {normalizer = #attn.kernel<elu_plus_one>} : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  // expected-remark @+1 {{attn-flash-backward: not fused (kernelized attention); convert-attn-grad-to-linalg computes it}}
  %dq3, %dk3, %dv3 = attn.attention_grad %o3, %do : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>
  return %dq3 : tensor<1x1x8x16xf32>
}

// -----

/// qk-layernorm: the kernel reads the normalized rows (the key's from the
/// frame) and the gradients of query and key go back through the layer
/// norm after it (linalg on tensors, linear in L).
// CHECK-LABEL: func.func @qk_layernorm
// CHECK-NOT: attn.attention_grad
// CHECK: math.rsqrt
// CHECK: vector.fma
// CHECK: linalg.generic
// CHECK: math.rsqrt
func.func @qk_layernorm(%q: tensor<1x1x8x16xf32>, %do: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %o1 = attn.attention %q, %q, %q {normalizer = #attn.softmax, qk_norm_eps = 1.0e-5 : f32} : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  // expected-remark @+1 {{attn-flash-backward: fused backward}}
  %dq1, %dk1, %dv1 = attn.attention_grad %o1, %do : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>
  return %dq1 : tensor<1x1x8x16xf32>
}

// -----

/// Lengths known at run time: one compiled backward for every length. The
/// buffers take the run-time sizes (rounded up to whole blocks), the key
/// blocks' walk classifies every query block of the sequence at run time
/// (the pattern's bounds), and the kernel runs under the run-time checks:
/// the forward's and the cotangent's rows against the output's
/// (RuntimeError::GradientSize, 17).
// CHECK-LABEL: func.func @dynamic_lengths
// CHECK-NOT: attn.attention_grad
// CHECK: arith.cmpi ne
// CHECK: func.call @attn_opt_runtime_error(%c17_i32
// CHECK: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<1x2x?x16xf32>
// CHECK: scf.if
// CHECK: scf.parallel
// CHECK: scf.parallel
func.func @dynamic_lengths(%q: tensor<1x2x?x16xf32>, %do: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  // expected-remark @+1 {{attn-flash-backward: fused backward, two passes, blocks of 64 queries x 64 keys, classified at run time (lengths known at run time); 16 lanes}}
  %dq, %dk, %dv = attn.attention_grad %o, %do : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
  return %dq : tensor<1x2x?x16xf32>
}

// -----

/// bf16 (and f16) operands are read into the kernel's f32 copies and the
/// gradients, summed in f32, are rounded to the operands' type once.
// CHECK-LABEL: func.func @bf16
// CHECK-NOT: attn.attention_grad
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %{{.*}} : tensor<1x1x8x16xbf16>
func.func @bf16(%qb: tensor<1x1x8x16xbf16>, %dob: tensor<1x1x8x16xbf16>) -> tensor<1x1x8x16xbf16> {
  %o = attn.attention %qb, %qb, %qb {normalizer = #attn.softmax} : tensor<1x1x8x16xbf16>, tensor<1x1x8x16xbf16>, tensor<1x1x8x16xbf16> -> tensor<1x1x8x16xbf16>
  // expected-remark @+1 {{attn-flash-backward: fused backward}}
  %dq, %dk, %dv = attn.attention_grad %o, %dob : tensor<1x1x8x16xbf16>, tensor<1x1x8x16xbf16> -> tensor<1x1x8x16xbf16>, tensor<1x1x8x16xbf16>, tensor<1x1x8x16xbf16>
  return %dq : tensor<1x1x8x16xbf16>
}

// -----

/// The modifiers are the kernel frame's: a bias broadcast over the batch
/// (its gradient summed over the batch rows in order), ALiBi, soft-capping
/// (its derivative 1 - tanh^2 per score), sinks (their gradient from the
/// LSE and D rows), a gate (the ungated output summed beside dQ) and the
/// LSE's cotangent (subtracted from D).
// CHECK-LABEL: func.func @modifiers
// CHECK-NOT: attn.attention_grad
// CHECK: math.tanh
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, memref<2x2x8x8xf32>
// CHECK: return
func.func @modifiers(%q: tensor<2x2x8x16xf32>, %b: tensor<1x2x8x8xf32>, %s: tensor<2xf32>, %g: tensor<2x2x8x16xf32>, %do: tensor<2x2x8x16xf32>, %dl: tensor<2x2x8xf32>) -> (tensor<2x2x8x16xf32>, tensor<1x2x8x8xf32>, tensor<2x2x8x16xf32>, tensor<2xf32>) {
  %o, %l = attn.attention %q, %q, %q bias(%b : tensor<1x2x8x8xf32>) gate(%g : tensor<2x2x8x16xf32>) alibi_slopes(%s : tensor<2xf32>) sinks(%s : tensor<2xf32>) {normalizer = #attn.softmax, pattern = #attn.causal, softcap = 20.0 : f32} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>, tensor<2x2x8xf32>
  // expected-remark @+1 {{attn-flash-backward: fused backward, one pass}}
  %dq, %dk, %dv, %db, %dg, %ds = attn.attention_grad %o, %do grad_lse(%dl : tensor<2x2x8xf32>) : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> bias(tensor<1x2x8x8xf32>) gate(tensor<2x2x8x16xf32>) sinks(tensor<2xf32>)
  return %dq, %db, %dg, %ds : tensor<2x2x8x16xf32>, tensor<1x2x8x8xf32>, tensor<2x2x8x16xf32>, tensor<2xf32>
}

// -----

/// Pointwise attention with lengths known at run time: the run-time checks
/// read the sizes off the query, so the forward op (only the gradient's
/// description) is erased.
// CHECK-LABEL: func.func @pointwise_dynamic
// CHECK-NOT: attn.attention
// CHECK: return
func.func @pointwise_dynamic(%q: tensor<1x2x?x16xf32>, %do: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>, pattern = #attn.causal} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  // expected-remark @+1 {{attn-flash-backward: fused backward, two passes}}
  %dq, %dk, %dv = attn.attention_grad %o, %do : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
  return %dq : tensor<1x2x?x16xf32>
}
