// RUN: attn-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of the internal ops.

/// Layer_norm with a zero epsilon.
func.func @f0(%q: tensor<1x4x32x16xf32>) {
  // expected-error @+1 {{epsilon must be finite and positive, got 0}}
  %0 = attn.layer_norm %q {epsilon = 0.0 : f32} : tensor<1x4x32x16xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Layer_norm changing the shape.
func.func @f1(%q: tensor<1x4x32x16xf32>) {
  // expected-error @+1 {{expects result of shape 1x4x32x16 (the input shape), got 'tensor<1x4x32x8xf32>'}}
  %0 = attn.layer_norm %q {epsilon = 1.0e-5 : f32} : tensor<1x4x32x16xf32> -> tensor<1x4x32x8xf32>
  return
}

// -----

/// Feature_map with the wrong feature count.
func.func @f2(%q: tensor<1x4x32x16xf32>) {
  // expected-error @+1 {{expects result of shape 1x4x32x8 (input rows x features), got 'tensor<1x4x32x16xf32>'}}
  %0 = attn.feature_map %q {kernel = #attn.kernel<favor, features = 8>} : tensor<1x4x32x16xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Feature_map projection without FAVOR+.
func.func @f3(%q: tensor<1x4x32x16xf32>, %w: tensor<16x16xf32>) {
  // expected-error @+1 {{projection applies only to #attn.kernel<favor, ...>}}
  %0 = attn.feature_map %q projection(%w : tensor<16x16xf32>) {kernel = #attn.kernel<relu>} : tensor<1x4x32x16xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Feature_map projection of the wrong shape.
func.func @f4(%q: tensor<1x4x32x16xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{expects projection of shape 8x16 (features x input dim), got 'tensor<8x8xf32>'}}
  %0 = attn.feature_map %q projection(%w : tensor<8x8xf32>) {kernel = #attn.kernel<favor, features = 8>} : tensor<1x4x32x16xf32> -> tensor<1x4x32x8xf32>
  return
}

// -----

/// Scores with mismatched head dims.
func.func @f5(%q: tensor<1x4x32x16xf32>, %k: tensor<1x2x32x8xf32>) {
  // expected-error @+1 {{expects query and key to agree on the head dimension, got 16 and 8}}
  %0 = attn.scores %q, %k : tensor<1x4x32x16xf32>, tensor<1x2x32x8xf32> -> tensor<1x4x32x32xf32>
  return
}

// -----

/// Scores with indivisible heads.
func.func @f6(%q: tensor<1x4x32x16xf32>, %k: tensor<1x3x32x16xf32>) {
  // expected-error @+1 {{expects the query heads (4) to be a multiple of the key/value heads (3)}}
  %0 = attn.scores %q, %k : tensor<1x4x32x16xf32>, tensor<1x3x32x16xf32> -> tensor<1x4x32x32xf32>
  return
}

// -----

/// Scores of the wrong shape.
func.func @f7(%q: tensor<1x4x32x16xf32>, %k: tensor<1x2x32x16xf32>) {
  // expected-error @+1 {{expects result of shape 1x4x32x32 (batch x query heads x Lq x Lk), got 'tensor<1x4x32x16xf32>'}}
  %0 = attn.scores %q, %k : tensor<1x4x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Scores with a bad bias.
func.func @f8(%q: tensor<1x4x32x16xf32>, %k: tensor<1x2x32x16xf32>, %b: tensor<1x2x32x32xf32>) {
  // expected-error @+1 {{expects bias of shape {1 or 1}x{1 or 4}x32x32, got 'tensor<1x2x32x32xf32>'}}
  %0 = attn.scores %q, %k bias(%b : tensor<1x2x32x32xf32>) : tensor<1x4x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x32x32xf32>
  return
}

// -----

/// Normalize changing the shape.
func.func @f9(%s: tensor<1x4x32x32xf32>) {
  // expected-error @+1 {{expects result of shape 1x4x32x32 (the scores' shape), got 'tensor<1x4x32x16xf32>'}}
  %0 = attn.normalize %s {normalizer = #attn.softmax} : tensor<1x4x32x32xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Normalize with an unused segment operand.
func.func @f10(%s: tensor<1x4x32x32xf32>, %i: tensor<1x32xi32>) {
  // expected-error @+1 {{has segment ids but its pattern does not use them (add #attn.segments)}}
  %0 = attn.normalize %s segments(%i : tensor<1x32xi32>) {normalizer = #attn.softmax} : tensor<1x4x32x32xf32> -> tensor<1x4x32x32xf32>
  return
}

// -----

/// Normalize with a pattern for the wrong shape.
func.func @f11(%s: tensor<1x4x32x32xf32>) {
  // expected-error @+1 {{global token 40 lies outside the key sequence of length 32}}
  %0 = attn.normalize %s {normalizer = #attn.softmax, pattern = #attn.global<[40]>} : tensor<1x4x32x32xf32> -> tensor<1x4x32x32xf32>
  return
}

// -----

/// Normalize with key segments alone.
func.func @f12(%s: tensor<1x4x32x32xf32>, %i: tensor<1x32xi32>) {
  // expected-error @+1 {{key_segments requires segments}}
  %0 = attn.normalize %s key_segments(%i : tensor<1x32xi32>) {normalizer = #attn.softmax, pattern = #attn.segments} : tensor<1x4x32x32xf32> -> tensor<1x4x32x32xf32>
  return
}

// -----

/// Apply over the wrong key length.
func.func @f13(%p: tensor<1x4x32x32xf32>, %v: tensor<1x2x16x16xf32>) {
  // expected-error @+1 {{expects weights and value to agree on the key length, got 32 and 16}}
  %0 = attn.apply %p, %v : tensor<1x4x32x32xf32>, tensor<1x2x16x16xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Apply with a gate of the wrong shape.
func.func @f14(%p: tensor<1x4x32x32xf32>, %v: tensor<1x2x32x16xf32>, %g: tensor<1x4x32x8xf32>) {
  // expected-error @+1 {{expects gate of shape 1x4x32x16 (the shape of the result), got 'tensor<1x4x32x8xf32>'}}
  %0 = attn.apply %p, %v gate(%g : tensor<1x4x32x8xf32>) : tensor<1x4x32x32xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Kv_state of the wrong state shape.
func.func @f15(%k: tensor<1x2x32x16xf32>) {
  // expected-error @+1 {{expects state of shape 1x2x16x16 (batch x heads x features x value dim), got 'tensor<1x2x16x8xf32>'}}
  %0, %1 = attn.kv_state %k, %k : tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x2x16x8xf32>, tensor<1x2x16xf32>
  return
}

// -----

/// Kv_state of the wrong key-sum shape.
func.func @f16(%k: tensor<1x2x32x16xf32>) {
  // expected-error @+1 {{expects key_sum of shape 1x2x16 (batch x heads x features), got 'tensor<1x2x8xf32>'}}
  %0, %1 = attn.kv_state %k, %k : tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x2x16x16xf32>, tensor<1x2x8xf32>
  return
}

// -----

/// Kv_state over different lengths.
func.func @f17(%k: tensor<1x2x32x16xf32>, %v: tensor<1x2x16x16xf32>) {
  // expected-error @+1 {{expects key_features and value to agree on the key length, got 32 and 16}}
  %0, %1 = attn.kv_state %k, %v : tensor<1x2x32x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x2x16x16xf32>, tensor<1x2x16xf32>
  return
}

// -----

/// State_apply with a feature mismatch.
func.func @f18(%q: tensor<1x4x32x16xf32>, %s: tensor<1x2x8x16xf32>, %z: tensor<1x2x8xf32>) {
  // expected-error @+1 {{expects query_features and state to agree on the number of features, got 16 and 8}}
  %0 = attn.state_apply %q, %s, %z : tensor<1x4x32x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// State_apply with a bad key sum.
func.func @f19(%q: tensor<1x4x32x16xf32>, %s: tensor<1x2x16x16xf32>, %z: tensor<1x2x8xf32>) {
  // expected-error @+1 {{expects key_sum of shape 1x2x16 (batch x heads x features), got 'tensor<1x2x8xf32>'}}
  %0 = attn.state_apply %q, %s, %z : tensor<1x4x32x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x8xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Chunked_linear without a mask.
func.func @f20(%q: tensor<1x4x32x16xf32>, %k: tensor<1x2x32x16xf32>) {
  // expected-error @+1 {{needs causal or segments (without a mask, use attn.kv_state and attn.state_apply)}}
  %0 = attn.chunked_linear %q, %k, %k {chunk_size = 8} : tensor<1x4x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Chunked_linear reversed without causal.
func.func @f20r(%q: tensor<1x4x32x16xf32>, %k: tensor<1x2x32x16xf32>, %ids: tensor<1x32xi32>) {
  // expected-error @+1 {{with reverse needs causal (without it the sums are the same either way)}}
  %0 = attn.chunked_linear %q, %k, %k segments(%ids : tensor<1x32xi32>) {chunk_size = 8, reverse} : tensor<1x4x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Chunked_linear with Lq != Lk.
func.func @f21(%q: tensor<1x4x16x16xf32>, %k: tensor<1x2x32x16xf32>) {
  // expected-error @+1 {{expects as many queries as keys, got 16 and 32}}
  %0 = attn.chunked_linear %q, %k, %k {chunk_size = 8, causal} : tensor<1x4x16x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x16x16xf32>
  return
}

// -----

/// Chunked_linear with a zero chunk.
func.func @f22(%q: tensor<1x4x32x16xf32>, %k: tensor<1x2x32x16xf32>) {
  // expected-error @+1 {{attribute 'chunk_size' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %0 = attn.chunked_linear %q, %k, %k {chunk_size = 0, causal} : tensor<1x4x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Chunked_linear with segment ids of the wrong shape.
func.func @f23(%q: tensor<1x4x32x16xf32>, %k: tensor<1x2x32x16xf32>, %i: tensor<1x16xi32>) {
  // expected-error @+1 {{expects segments of shape 1x32 (batch x length), got 'tensor<1x16xi32>'}}
  %0 = attn.chunked_linear %q, %k, %k segments(%i : tensor<1x16xi32>) {chunk_size = 8} : tensor<1x4x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x32x16xf32>
  return
}
