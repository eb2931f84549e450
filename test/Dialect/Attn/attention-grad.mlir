// RUN: attn-opt %s -split-input-file | attn-opt -split-input-file | FileCheck %s

/// attn.attention_grad: syntax (round trip) of the backward pass of an
/// attn.attention. Its diagnostics are in attention-grad-invalid.mlir.

// CHECK-LABEL: func.func @softmax_gqa
// CHECK: %[[O:.*]], %[[L:.*]] = attn.attention
// CHECK: attn.attention_grad %[[O]], %{{.*}} grad_lse(%{{.*}} : tensor<1x4x7xf32>) : tensor<1x4x7x8xf32>, tensor<1x4x7x8xf32> -> tensor<1x4x7x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>
func.func @softmax_gqa(%q: tensor<1x4x7x8xf32>, %k: tensor<1x2x9x8xf32>,
                       %v: tensor<1x2x9x8xf32>, %do: tensor<1x4x7x8xf32>,
                       %dl: tensor<1x4x7xf32>)
    -> (tensor<1x4x7x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>) {
  %o, %lse = attn.attention %q, %k, %v {normalizer = #attn.softmax,
      pattern = #attn.causal}
      : tensor<1x4x7x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>
      -> tensor<1x4x7x8xf32>, tensor<1x4x7xf32>
  %dq, %dk, %dv = attn.attention_grad %o, %do grad_lse(%dl : tensor<1x4x7xf32>)
      : tensor<1x4x7x8xf32>, tensor<1x4x7x8xf32>
      -> tensor<1x4x7x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>
  return %dq, %dk, %dv
      : tensor<1x4x7x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>
}

// -----

/// Saved forward results and the gradients of bias, gate and sinks.
// CHECK-LABEL: func.func @modifiers
// CHECK: attn.attention_grad %{{.*}}, %{{.*}} saved_output(%{{.*}} : tensor<2x2x5x4xf32>) saved_lse(%{{.*}} : tensor<2x2x5xf32>) : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32> -> tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32> bias(tensor<1x2x5x5xf32>) gate(tensor<2x2x5x4xf32>) sinks(tensor<2xf32>)
func.func @modifiers(%q: tensor<2x2x5x4xf32>, %k: tensor<2x2x5x4xf32>,
                     %v: tensor<2x2x5x4xf32>, %b: tensor<1x2x5x5xf32>,
                     %g: tensor<2x2x5x4xf32>, %s: tensor<2xf32>,
                     %o: tensor<2x2x5x4xf32>, %l: tensor<2x2x5xf32>,
                     %do: tensor<2x2x5x4xf32>) -> tensor<2xf32> {
  %fwd = attn.attention %q, %k, %v bias(%b : tensor<1x2x5x5xf32>)
      gate(%g : tensor<2x2x5x4xf32>) sinks(%s : tensor<2xf32>)
      {normalizer = #attn.softmax, softcap = 20.0 : f32}
      : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
      -> tensor<2x2x5x4xf32>
  %dq, %dk, %dv, %db, %dg, %ds = attn.attention_grad %fwd, %do
      saved_output(%o : tensor<2x2x5x4xf32>) saved_lse(%l : tensor<2x2x5xf32>)
      : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
      -> tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
         bias(tensor<1x2x5x5xf32>) gate(tensor<2x2x5x4xf32>) sinks(tensor<2xf32>)
  return %ds : tensor<2xf32>
}

// -----

/// Only some gradients: the gate's, not the bias's.
// CHECK-LABEL: func.func @pointwise_gate
// CHECK: -> tensor<1x1x6x4xbf16>, tensor<1x1x6x4xbf16>, tensor<1x1x6x4xbf16> gate(tensor<1x1x6x4xbf16>)
func.func @pointwise_gate(%q: tensor<1x1x6x4xbf16>, %k: tensor<1x1x6x4xbf16>,
                          %v: tensor<1x1x6x4xbf16>, %b: tensor<1x1x6x6xbf16>,
                          %g: tensor<1x1x6x4xbf16>, %do: tensor<1x1x6x4xbf16>)
    -> tensor<1x1x6x4xbf16> {
  %fwd = attn.attention %q, %k, %v bias(%b : tensor<1x1x6x6xbf16>)
      gate(%g : tensor<1x1x6x4xbf16>)
      {normalizer = #attn.pointwise<relu, alpha = 1.0>, qk_norm_eps = 1.0e-5 : f32}
      : tensor<1x1x6x4xbf16>, tensor<1x1x6x4xbf16>, tensor<1x1x6x4xbf16>
      -> tensor<1x1x6x4xbf16>
  %dq, %dk, %dv, %dg = attn.attention_grad %fwd, %do
      : tensor<1x1x6x4xbf16>, tensor<1x1x6x4xbf16>
      -> tensor<1x1x6x4xbf16>, tensor<1x1x6x4xbf16>, tensor<1x1x6x4xbf16>
         gate(tensor<1x1x6x4xbf16>)
  return %dg : tensor<1x1x6x4xbf16>
}
