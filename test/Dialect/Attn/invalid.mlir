// RUN: attn-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of the attn dialect's ops and attributes.

/// Alpha outside [0, 1].
func.func @f0(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{pointwise alpha must lie in [0, 1], got 1.5}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu, alpha = 1.5>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// FAVOR+ without features.
func.func @f1(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{favor feature map needs 0 < features <= 65536, got 0}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<favor>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Features on an elementwise feature map.
func.func @f2(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{features, orthogonal and seed apply only to the favor feature map}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<relu, features = 4>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Negative kernel eps.
func.func @f3(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{kernel eps must be finite and non-negative}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<elu_plus_one, eps = -1.0>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Negative window.
func.func @f4(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{window before and after must be non-negative, got -1 and 4}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.window<before = -1, after = 4>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Negative dilated window.
func.func @f5(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{dilated before and after must be non-negative}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.dilated<before = 4, after = -4, dilation = 2>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Zero dilation.
func.func @f6(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{dilation must be at least 1, got 0}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.dilated<before = 4, after = 4, dilation = 0>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// No global tokens.
func.func @f7(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{global pattern needs at least one token}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.global<[]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Negative global token.
func.func @f8(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{global token -3 is negative}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.global<[1, -3]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Duplicate global tokens.
func.func @f9(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{global tokens must be unique}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.global<[1, 2, 1]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Zero stride.
func.func @f10(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{stride must be at least 1, got 0}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.strided<stride = 0>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Zero fixed stride.
func.func @f11(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{stride must be at least 1, got 0}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.fixed<stride = 0, c = 1>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// C larger than the stride.
func.func @f12(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{fixed pattern needs 1 <= c <= stride, got c = 9 with stride 8}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.fixed<stride = 8, c = 9>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// No random blocks.
func.func @f13(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{random pattern needs blocks >= 1, got 0}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.random<blocks = 0, block_size = 16>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Zero random block size.
func.func @f14(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{block_size must be at least 1, got 0}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.random<blocks = 1, block_size = 0>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Zero block size.
func.func @f15(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{block size must be at least 1, got 0}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.block<size = 0, layout = ["1"]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Ragged block layout.
func.func @f16(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{block layout row 1 has 1 entries, expected 2}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.block<size = 32, layout = ["10", "1"]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Block layout with other characters.
func.func @f17(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{block layout row 0 may only contain '0' and '1'}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.block<size = 32, layout = ["1x", "11"]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Union of one pattern.
func.func @f18(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{union needs at least 2 patterns, got 1}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.union<[#attn.causal]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Intersection of one pattern.
func.func @f19(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{intersect needs at least 2 patterns, got 1}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// A pattern where a normalizer belongs.
func.func @f20(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{attribute 'normalizer' failed to satisfy constraint: NormalizerAttrInterface instance}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.causal} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Global token past the keys.
func.func @f21(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{global token 64 lies outside the key sequence of length 64}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.global<[0, 64]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// More random blocks than key blocks.
func.func @f22(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{random pattern asks for 5 key blocks per row but there are only 4 blocks of 16 keys}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.random<blocks = 5, block_size = 16>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Block layout of the wrong shape.
func.func @f23(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{block layout is 2x2 but blocks of 16 over 64 queries and 64 keys need 4x4}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.block<size = 16, layout = ["10", "11"]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Segments pattern without ids.
func.func @f24(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{#attn.segments needs segment id operands (segments(...))}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.segments} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Per_head list of the wrong length.
func.func @f25(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{per_head has 2 patterns but there are 4 query heads}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.per_head<[#attn.causal, #attn.causal]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// A nested pattern is checked too.
func.func @f26(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{global token 70 lies outside the key sequence of length 64}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.per_head<[#attn.causal, #attn.causal, #attn.causal, #attn.union<[#attn.causal, #attn.global<[70]>]>]>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Dynamic head counts (batch and lengths may be dynamic).
func.func @f27(%q: tensor<1x4x64x16xf32>, %k: tensor<1x?x64x16xf32>) {
  // expected-error @+1 {{requires static head counts and head dims (dimension 1), but key has type 'tensor<1x?x64x16xf32>'}}
  %0 = attn.attention %q, %k, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x?x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Rank 3 operands.
func.func @f28(%q: tensor<1x4x64x16xf32>, %k: tensor<4x64x16xf32>) {
  // expected-error @+1 {{expects key of rank 4 (batch x heads x length x dim), got 'tensor<4x64x16xf32>'}}
  %0 = attn.attention %q, %k, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Mixed element types.
func.func @f29(%q: tensor<1x4x64x16xf32>, %k: tensor<1x4x64x16xf16>) {
  // expected-error @+1 {{expects key to have element type 'f32' like query, got 'f16'}}
  %0 = attn.attention %q, %k, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf16>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Integer operands.
func.func @f30(%q: tensor<1x4x64x16xf32>, %k: tensor<1x4x64x16xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = attn.attention %k, %q, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xi32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Batch sizes differ.
func.func @f31(%q: tensor<1x4x64x16xf32>, %k: tensor<2x4x64x16xf32>) {
  // expected-error @+1 {{expects query and key to agree on the batch size, got 1 and 2}}
  %0 = attn.attention %q, %k, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Key and value heads differ.
func.func @f32(%q: tensor<1x4x64x16xf32>, %k: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{expects key and value to agree on the number of heads, got 2 and 4}}
  %0 = attn.attention %q, %k, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Key and value lengths differ.
func.func @f33(%q: tensor<1x4x64x16xf32>, %k: tensor<1x4x32x16xf32>) {
  // expected-error @+1 {{expects key and value to agree on the key length, got 32 and 64}}
  %0 = attn.attention %q, %k, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Head dimensions differ.
func.func @f34(%q: tensor<1x4x64x16xf32>, %k: tensor<1x4x64x8xf32>) {
  // expected-error @+1 {{expects query and key to agree on the head dimension, got 16 and 8}}
  %0 = attn.attention %q, %k, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x8xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Query heads not a multiple of key/value heads.
func.func @f35(%q: tensor<1x4x64x16xf32>, %k: tensor<1x3x64x16xf32>) {
  // expected-error @+1 {{expects the query heads (4) to be a multiple of the key/value heads (3)}}
  %0 = attn.attention %q, %k, %k {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x3x64x16xf32>, tensor<1x3x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Wrong result shape.
func.func @f36(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{expects result of shape 1x4x64x16 (batch x query heads x query length x value dim), got 'tensor<1x4x64x8xf32>'}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x8xf32>
  return
}

// -----

/// Bias of the wrong shape.
func.func @f37(%q: tensor<1x4x64x16xf32>, %b: tensor<1x2x64x64xf32>) {
  // expected-error @+1 {{expects bias of shape {1 or 1}x{1 or 4}x64x64, got 'tensor<1x2x64x64xf32>'}}
  %0 = attn.attention %q, %q, %q bias(%b : tensor<1x2x64x64xf32>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Bias of rank 2.
func.func @f38(%q: tensor<1x4x64x16xf32>, %b: tensor<64x64xf32>) {
  // expected-error @+1 {{expects bias of rank 4 (batch x heads x Lq x Lk), got 'tensor<64x64xf32>'}}
  %0 = attn.attention %q, %q, %q bias(%b : tensor<64x64xf32>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Gate of the wrong shape.
func.func @f39(%q: tensor<1x4x64x16xf32>, %g: tensor<1x4x64x8xf32>) {
  // expected-error @+1 {{expects gate of shape 1x4x64x16 (the shape of the result), got 'tensor<1x4x64x8xf32>'}}
  %0 = attn.attention %q, %q, %q gate(%g : tensor<1x4x64x8xf32>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Key segment ids alone.
func.func @f40(%q: tensor<1x4x64x16xf32>, %s: tensor<1x64xi32>) {
  // expected-error @+1 {{key_segments requires segments}}
  %0 = attn.attention %q, %q, %q key_segments(%s : tensor<1x64xi32>) {normalizer = #attn.softmax, pattern = #attn.segments} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Segment ids of the wrong shape.
func.func @f41(%q: tensor<1x4x64x16xf32>, %s: tensor<1x32xi32>) {
  // expected-error @+1 {{expects segments of shape 1x64 (batch x query length), got 'tensor<1x32xi32>'}}
  %0 = attn.attention %q, %q, %q segments(%s : tensor<1x32xi32>) {normalizer = #attn.softmax, pattern = #attn.segments} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Key segment ids of the wrong shape.
func.func @f42(%q: tensor<1x4x64x16xf32>, %s: tensor<1x64xi32>, %t: tensor<1x32xi32>) {
  // expected-error @+1 {{expects key_segments of shape 1x64 (batch x key length), got 'tensor<1x32xi32>'}}
  %0 = attn.attention %q, %q, %q segments(%s : tensor<1x64xi32>) key_segments(%t : tensor<1x32xi32>) {normalizer = #attn.softmax, pattern = #attn.segments} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// One segment operand when Lq != Lk.
func.func @f43(%q: tensor<1x4x64x16xf32>, %q2: tensor<1x4x32x16xf32>, %s: tensor<1x32xi32>) {
  // expected-error @+1 {{needs key_segments when the query length (32) differs from the key length (64)}}
  %0 = attn.attention %q2, %q, %q segments(%s : tensor<1x32xi32>) {normalizer = #attn.softmax, pattern = #attn.segments} : tensor<1x4x32x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x32x16xf32>
  return
}

// -----

/// Segment ids the pattern ignores.
func.func @f44(%q: tensor<1x4x64x16xf32>, %s: tensor<1x64xi32>) {
  // expected-error @+1 {{has segment ids but its pattern does not use them (add #attn.segments)}}
  %0 = attn.attention %q, %q, %q segments(%s : tensor<1x64xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Projection without FAVOR+.
func.func @f45(%q: tensor<1x4x64x16xf32>, %w: tensor<8x16xf32>) {
  // expected-error @+1 {{projection applies only to #attn.kernel<favor, ...>}}
  %0 = attn.attention %q, %q, %q projection(%w : tensor<8x16xf32>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Projection of the wrong shape.
func.func @f46(%q: tensor<1x4x64x16xf32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{expects projection of shape 8x16 (features x head dim), got 'tensor<8x8xf32>'}}
  %0 = attn.attention %q, %q, %q projection(%w : tensor<8x8xf32>) {normalizer = #attn.kernel<favor, features = 8>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Infinite scale.
func.func @f47(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{scale must be finite}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, scale = 0x7F800000 : f32} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Zero layer-norm epsilon.
func.func @f48(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{qk_norm_eps must be finite and positive, got 0}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, qk_norm_eps = 0.0 : f32} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Linformer projection of rank 1.
func.func @f49(%q: tensor<1x4x64x16xf32>, %e: tensor<64xf32>) {
  // expected-error @+1 {{expects key_proj of rank 2 (projected length x key length), got 'tensor<64xf32>'}}
  %0 = attn.lowrank_attention %q, %q, %q, %e, %e : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Linformer projection over the wrong length.
func.func @f50(%q: tensor<1x4x64x16xf32>, %e: tensor<8x32xf32>) {
  // expected-error @+1 {{expects key_proj of shape 8x64 (projected length x key length), got 'tensor<8x32xf32>'}}
  %0 = attn.lowrank_attention %q, %q, %q, %e, %e : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<8x32xf32>, tensor<8x32xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Empty Linformer projection.
func.func @f51(%q: tensor<1x4x64x16xf32>, %e: tensor<0x64xf32>) {
  // expected-error @+1 {{expects a projected length of at least 1}}
  %0 = attn.lowrank_attention %q, %q, %q, %e, %e : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<0x64xf32>, tensor<0x64xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Odd bucket count.
func.func @f52(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{expects an even number of buckets, got 7}}
  %0 = attn.lsh_attention %q, %q {num_hashes = 1, num_buckets = 7, chunk_size = 16} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Chunk size not dividing L.
func.func @f53(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{expects chunk_size (24) to divide the sequence length (64)}}
  %0 = attn.lsh_attention %q, %q {num_hashes = 1, num_buckets = 8, chunk_size = 24} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// No hash rounds.
func.func @f54(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{attribute 'num_hashes' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %0 = attn.lsh_attention %q, %q {num_hashes = 0, num_buckets = 8, chunk_size = 16} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// More random rotation entries (hash rounds x head dim x buckets / 2) than
/// the compile-time constant takes.
func.func @lsh_rotations(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{num_hashes (1048577) x head dim (16) x num_buckets / 2 (16) random rotation entries exceed the limit of 16777216 (they are a compile-time constant)}}
  %0 = attn.lsh_attention %q, %q {num_hashes = 1048577, num_buckets = 32, chunk_size = 16} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// A hash count whose product with the rotation size overflows 64 bits.
func.func @lsh_rotations_overflow(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{num_hashes (4611686018427387904) x head dim (16) x num_buckets / 2 (4) random rotation entries exceed the limit}}
  %0 = attn.lsh_attention %q, %q {num_hashes = 4611686018427387904, num_buckets = 8, chunk_size = 16} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Relative attention with grouped heads.
func.func @f55(%q: tensor<1x4x64x16xf32>, %k: tensor<1x2x64x16xf32>, %r: tensor<4x64x16xf32>, %u: tensor<4x16xf32>) {
  // expected-error @+1 {{expects as many key/value heads as query heads}}
  %0 = attn.relative_attention %q, %k, %k, %r, %u, %u : tensor<1x4x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<4x64x16xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Relative attention with Lq != Lk.
func.func @f56(%q: tensor<1x4x64x16xf32>, %k: tensor<1x4x32x16xf32>, %r: tensor<4x32x16xf32>, %u: tensor<4x16xf32>) {
  // expected-error @+1 {{expects the query and key of the current segment to have the same length, got 64 and 32}}
  %0 = attn.relative_attention %q, %k, %k, %r, %u, %u : tensor<1x4x64x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<4x32x16xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Position embeddings not covering memory.
func.func @f57(%q: tensor<1x4x64x16xf32>, %r: tensor<4x64x16xf32>, %u: tensor<4x16xf32>, %m: tensor<1x4x32x16xf32>) {
  // expected-error @+1 {{expects pos_emb of shape 4x96x16 (heads x (M + L) x head dim), got 'tensor<4x64x16xf32>'}}
  %0 = attn.relative_attention %q, %q, %q, %r, %u, %u memory(%m, %m : tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>) : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<4x64x16xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Memory of the wrong head dim.
func.func @f58(%q: tensor<1x4x64x16xf32>, %r: tensor<4x96x16xf32>, %u: tensor<4x16xf32>, %m: tensor<1x4x32x8xf32>) {
  // expected-error @+1 {{expects memory_key of shape 1x4x32x16 (batch x heads x M x head dim), got 'tensor<1x4x32x8xf32>'}}
  %0 = attn.relative_attention %q, %q, %q, %r, %u, %u memory(%m, %m : tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>) : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<4x96x16xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Content bias of the wrong shape.
func.func @f59(%q: tensor<1x4x64x16xf32>, %r: tensor<4x64x16xf32>, %u: tensor<4x8xf32>) {
  // expected-error @+1 {{expects content_bias of shape 4x16 (heads x head dim), got 'tensor<4x8xf32>'}}
  %0 = attn.relative_attention %q, %q, %q, %r, %u, %u : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<4x64x16xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Memory key without memory value (generic form).
func.func @f60(%q: tensor<1x4x64x16xf32>, %r: tensor<4x96x16xf32>, %u: tensor<4x16xf32>, %m: tensor<1x4x32x16xf32>) {
  // expected-error @+1 {{expects both memory_key and memory_value, or neither}}
  %0 = "attn.relative_attention"(%q, %q, %q, %r, %u, %u, %m) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0>}> : (tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<4x96x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<1x4x32x16xf32>) -> tensor<1x4x64x16xf32>
  return
}

// -----

/// A bias with kernel attention.
func.func @kernel_bias(%q: tensor<1x4x64x16xf32>, %b: tensor<1x4x64x64xf32>) {
  // expected-error @+1 {{a bias does not apply to kernel attention}}
  %0 = attn.attention %q, %q, %q bias(%b : tensor<1x4x64x64xf32>) {normalizer = #attn.kernel<relu>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// A negative scale with kernel attention.
func.func @kernel_negative_scale(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{kernel attention scales q and k by sqrt(scale), so scale must be positive}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<relu>, scale = -1.0 : f32} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// A dynamic head dim.
func.func @dyn_head_dim(%q: tensor<1x4x64x?xf32>) {
  // expected-error @+1 {{requires static head counts and head dims (dimension 3), but query has type 'tensor<1x4x64x?xf32>'}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax} : tensor<1x4x64x?xf32>, tensor<1x4x64x?xf32>, tensor<1x4x64x?xf32> -> tensor<1x4x64x?xf32>
  return
}

// -----

/// The result is dynamic exactly where the query is.
func.func @dyn_result(%q: tensor<1x4x?x16xf32>) {
  // expected-error @+1 {{expects result of shape 1x4x?x16 (batch x query heads x query length x value dim), got 'tensor<1x4x64x16xf32>'}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax} : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Static sizes that must agree still must.
func.func @dyn_mismatch(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x32x16xf32>, %v: tensor<?x4x48x16xf32>) {
  // expected-error @+1 {{expects key and value to agree on the key length, got 32 and 48}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<?x4x?x16xf32>, tensor<?x4x32x16xf32>, tensor<?x4x48x16xf32> -> tensor<?x4x?x16xf32>
  return
}

// -----

/// Patterns with compile-time blocks need static lengths.
func.func @dyn_random(%q: tensor<1x4x?x16xf32>) {
  // expected-error @+1 {{#attn.random needs static query and key lengths (its blocks are chosen at compile time); the lengths here are dynamic}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.random<blocks = 1, block_size = 16, seed = 1>} : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return
}

// -----

func.func @dyn_block(%q: tensor<1x4x?x16xf32>) {
  // expected-error @+1 {{#attn.block needs static query and key lengths}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.union<[#attn.causal, #attn.block<size = 16, layout = ["1"]>]>} : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return
}

// -----

/// Varlen operands.
func.func @offsets_alone(%q: tensor<1x4x?x16xf32>, %cq: tensor<?xi32>) {
  // expected-error @+1 {{takes query_offsets and key_offsets together (a packed batch needs the rows of both)}}
  %0 = attn.attention %q, %q, %q query_offsets(%cq : tensor<?xi32>) {normalizer = #attn.softmax} : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return
}

// -----

func.func @lengths_and_offsets(%q: tensor<1x4x?x16xf32>, %c: tensor<?xi32>) {
  // expected-error @+1 {{takes lengths (a padded batch) or offsets (a packed batch), not both}}
  %0 = attn.attention %q, %q, %q query_lengths(%c : tensor<?xi32>) query_offsets(%c : tensor<?xi32>) key_offsets(%c : tensor<?xi32>) {normalizer = #attn.softmax} : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return
}

// -----

func.func @packed_batch(%q: tensor<2x4x?x16xf32>, %c: tensor<?xi32>) {
  // expected-error @+1 {{holds a packed batch in query and key of batch size 1, got 'tensor<2x4x?x16xf32>' and 'tensor<2x4x?x16xf32>'}}
  %0 = attn.attention %q, %q, %q query_offsets(%c : tensor<?xi32>) key_offsets(%c : tensor<?xi32>) {normalizer = #attn.softmax} : tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32> -> tensor<2x4x?x16xf32>
  return
}

// -----

func.func @lengths_batch(%q: tensor<2x4x?x16xf32>, %l: tensor<3xi32>) {
  // expected-error @+1 {{expects query_lengths of shape 2 (batch), got 'tensor<3xi32>'}}
  %0 = attn.attention %q, %q, %q query_lengths(%l : tensor<3xi32>) {normalizer = #attn.softmax} : tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32> -> tensor<2x4x?x16xf32>
  return
}

// -----

func.func @varlen_bias(%q: tensor<2x4x8x16xf32>, %b: tensor<1x1x8x8xf32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{does not take a bias with varlen operands}}
  %0 = attn.attention %q, %q, %q bias(%b : tensor<1x1x8x8xf32>) key_lengths(%l : tensor<2xi32>) {normalizer = #attn.softmax} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @varlen_random(%q: tensor<2x4x32x16xf32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{has a pattern with compile-time blocks (#attn.random, #attn.block), which varlen batches do not take (each sequence has its own lengths)}}
  %0 = attn.attention %q, %q, %q key_lengths(%l : tensor<2xi32>) {normalizer = #attn.softmax, pattern = #attn.random<blocks = 1, block_size = 16>} : tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32> -> tensor<2x4x32x16xf32>
  return
}

// -----

func.func @packed_segments(%q: tensor<1x4x?x16xf32>, %c: tensor<?xi32>, %s: tensor<1x?xi32>) {
  // expected-error @+1 {{does not take segment ids with a packed batch (its sequences are the segments)}}
  %0 = attn.attention %q, %q, %q segments(%s : tensor<1x?xi32>) query_offsets(%c : tensor<?xi32>) key_offsets(%c : tensor<?xi32>) {normalizer = #attn.softmax, pattern = #attn.segments} : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return
}

// -----

func.func @packed_empty(%q: tensor<1x4x?x16xf32>, %c: tensor<0xi32>) {
  // expected-error @+1 {{has empty query_offsets: a packed batch of N sequences has N + 1 offsets}}
  %0 = attn.attention %q, %q, %q query_offsets(%c : tensor<0xi32>) key_offsets(%c : tensor<0xi32>) {normalizer = #attn.softmax} : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return
}

// -----

func.func @packed_counts(%q: tensor<1x4x?x16xf32>, %cq: tensor<4xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expects query_offsets and key_offsets to agree on the number of sequences, got 4 and 3}}
  %0 = attn.attention %q, %q, %q query_offsets(%cq : tensor<4xi32>) key_offsets(%ck : tensor<3xi32>) {normalizer = #attn.softmax} : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return
}

// -----

/// A mask tensor of the wrong shape.
func.func @mask_shape(%q: tensor<1x4x64x16xf32>, %m: tensor<64x63xi1>) {
  // expected-error @+1 {{expects mask of shape 64x64 or {1 or 1}x{1 or 4}x64x64, got 'tensor<64x63xi1>'}}
  %0 = attn.attention %q, %q, %q mask(%m : tensor<64x63xi1>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// A mask broadcast over the wrong number of heads.
func.func @mask_heads(%q: tensor<1x4x64x16xf32>, %m: tensor<1x2x64x64xi1>) {
  // expected-error @+1 {{expects mask of shape 64x64 or {1 or 1}x{1 or 4}x64x64, got 'tensor<1x2x64x64xi1>'}}
  %0 = attn.attention %q, %q, %q mask(%m : tensor<1x2x64x64xi1>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// An additive mask of another float type.
func.func @mask_type(%q: tensor<1x4x64x16xf32>, %m: tensor<64x64xf16>) {
  // expected-error @+1 {{expects a boolean (i1) mask or an additive mask of the query's element type 'f32', got 'tensor<64x64xf16>'}}
  %0 = attn.attention %q, %q, %q mask(%m : tensor<64x64xf16>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// An additive mask with kernel attention.
func.func @mask_kernel(%q: tensor<1x4x64x16xf32>, %m: tensor<64x64xf32>) {
  // expected-error @+1 {{takes only a boolean mask with kernel attention}}
  %0 = attn.attention %q, %q, %q mask(%m : tensor<64x64xf32>) {normalizer = #attn.kernel<elu_plus_one>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// A mask with a varlen batch.
func.func @mask_varlen(%q: tensor<2x4x64x16xf32>, %m: tensor<64x64xi1>, %l: tensor<2xi32>) {
  // expected-error @+1 {{does not take a mask with varlen operands}}
  %0 = attn.attention %q, %q, %q key_lengths(%l : tensor<2xi32>) mask(%m : tensor<64x64xi1>) {normalizer = #attn.softmax} : tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32> -> tensor<2x4x64x16xf32>
  return
}

// -----

/// A mask with a dynamic head dimension.
func.func @mask_dynamic_heads(%q: tensor<1x4x64x16xf32>, %m: tensor<1x?x64x64xi1>) {
  // expected-error @+1 {{expects a static head dimension of mask, got 'tensor<1x?x64x64xi1>'}}
  %0 = attn.attention %q, %q, %q mask(%m : tensor<1x?x64x64xi1>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Sinks join a softmax's denominator: not with pointwise attention.
func.func @sinks_pointwise(%q: tensor<1x4x64x16xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{sinks join a softmax's denominator: they need #attn.softmax}}
  %0 = attn.attention %q, %q, %q sinks(%t : tensor<4xf32>) {normalizer = #attn.pointwise<relu>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// One slope per query head.
func.func @alibi_shape(%q: tensor<1x4x64x16xf32>, %k: tensor<1x2x64x16xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{expects alibi_slopes of shape 4 (query heads), got 'tensor<2xf32>'}}
  %0 = attn.attention %q, %k, %k alibi_slopes(%s : tensor<2xf32>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// One sink per query head.
func.func @sinks_shape(%q: tensor<1x4x64x16xf32>, %t: tensor<5xf32>) {
  // expected-error @+1 {{expects sinks of shape 4 (query heads), got 'tensor<5xf32>'}}
  %0 = attn.attention %q, %q, %q sinks(%t : tensor<5xf32>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Slopes are f32.
func.func @alibi_type(%q: tensor<1x4x64x16xf32>, %s: tensor<4xf16>) {
  // expected-error @+1 {{must be 1D tensor of 32-bit float values, but got 'tensor<4xf16>'}}
  %0 = attn.attention %q, %q, %q alibi_slopes(%s : tensor<4xf16>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Kernel attention has no scores to cap.
func.func @softcap_kernel(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{softcap does not apply to kernel attention (it has no scores)}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<elu_plus_one>, softcap = 30.0 : f32} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Nor to add ALiBi to.
func.func @alibi_kernel(%q: tensor<1x4x64x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{alibi_slopes does not apply to kernel attention (it has no scores)}}
  %0 = attn.attention %q, %q, %q alibi_slopes(%s : tensor<4xf32>) {normalizer = #attn.kernel<elu_plus_one>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// A soft cap is positive and finite.
func.func @softcap_zero(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{softcap must be finite and positive, got 0}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, softcap = 0.0 : f32} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

func.func @softcap_nan(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{softcap must be finite and positive}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, softcap = 0x7FC00000 : f32} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// Head counts are static, and so are the per-head vectors.
func.func @sinks_dynamic(%q: tensor<1x4x64x16xf32>, %t: tensor<?xf32>) {
  // expected-error @+1 {{requires static shapes, but sinks has type 'tensor<?xf32>'}}
  %0 = attn.attention %q, %q, %q sinks(%t : tensor<?xf32>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

/// The log-sum-exp is softmax's.
func.func @lse_pointwise(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{has a log-sum-exp result, which only softmax attention defines}}
  %0, %1 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>, tensor<1x4x64xf32>
  return
}

// -----

/// One value per query row.
func.func @lse_shape(%q: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{expects lse of shape 1x4x64 (batch x query heads x query length), got 'tensor<1x4x63xf32>'}}
  %0, %1 = attn.attention %q, %q, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>, tensor<1x4x63xf32>
  return
}

// -----

/// Dynamic where the result is.
func.func @lse_dynamic(%q: tensor<?x4x64x16xf32>) {
  // expected-error @+1 {{expects lse to be dynamic where the result is, got 'tensor<1x4x64xf32>' and 'tensor<?x4x64x16xf32>'}}
  %0, %1 = attn.attention %q, %q, %q {normalizer = #attn.softmax} : tensor<?x4x64x16xf32>, tensor<?x4x64x16xf32>, tensor<?x4x64x16xf32> -> tensor<?x4x64x16xf32>, tensor<1x4x64xf32>
  return
}

// -----

/// f32 whatever the inputs.
func.func @lse_type(%q: tensor<1x4x64x16xf16>) {
  // expected-error @+1 {{result #1 must be ranked tensor of 32-bit float values}}
  %0, %1 = attn.attention %q, %q, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xf16>, tensor<1x4x64x16xf16>, tensor<1x4x64x16xf16> -> tensor<1x4x64x16xf16>, tensor<1x4x64xf16>
  return
}

// -----

/// A paged cache needs the cache lengths.
func.func @paged_no_lengths(%q: tensor<2x4x1x16xf32>, %k: tensor<9x2x16x16xf32>, %pt: tensor<2x4xi32>) {
  // expected-error @+1 {{takes key_lengths with a page_table (the cache length of each sequence)}}
  %0 = attn.attention %q, %k, %k page_table(%pt : tensor<2x4xi32>) {normalizer = #attn.softmax} : tensor<2x4x1x16xf32>, tensor<9x2x16x16xf32>, tensor<9x2x16x16xf32> -> tensor<2x4x1x16xf32>
  return
}

// -----

/// One page table row per sequence.
func.func @paged_batch(%q: tensor<2x4x1x16xf32>, %k: tensor<9x2x16x16xf32>, %pt: tensor<3x4xi32>, %lk: tensor<2xi32>) {
  // expected-error @+1 {{expects page_table of shape 2x? (batch x max pages), got 'tensor<3x4xi32>'}}
  %0 = attn.attention %q, %k, %k key_lengths(%lk : tensor<2xi32>) page_table(%pt : tensor<3x4xi32>) {normalizer = #attn.softmax} : tensor<2x4x1x16xf32>, tensor<9x2x16x16xf32>, tensor<9x2x16x16xf32> -> tensor<2x4x1x16xf32>
  return
}

// -----

/// The page size is static.
func.func @paged_dynamic_page(%q: tensor<2x4x1x16xf32>, %k: tensor<9x2x?x16xf32>, %pt: tensor<2x4xi32>, %lk: tensor<2xi32>) {
  // expected-error @+1 {{expects a static, positive page size (dimension 2 of key), got 'tensor<9x2x?x16xf32>'}}
  %0 = attn.attention %q, %k, %k key_lengths(%lk : tensor<2xi32>) page_table(%pt : tensor<2x4xi32>) {normalizer = #attn.softmax} : tensor<2x4x1x16xf32>, tensor<9x2x?x16xf32>, tensor<9x2x?x16xf32> -> tensor<2x4x1x16xf32>
  return
}

// -----

/// Keys and values share the pages.
func.func @paged_pools(%q: tensor<2x4x1x16xf32>, %k: tensor<9x2x16x16xf32>, %v: tensor<8x2x16x16xf32>, %pt: tensor<2x4xi32>, %lk: tensor<2xi32>) {
  // expected-error @+1 {{expects key and value to agree on the number of pages, got 9 and 8}}
  %0 = attn.attention %q, %k, %v key_lengths(%lk : tensor<2xi32>) page_table(%pt : tensor<2x4xi32>) {normalizer = #attn.softmax} : tensor<2x4x1x16xf32>, tensor<9x2x16x16xf32>, tensor<8x2x16x16xf32> -> tensor<2x4x1x16xf32>
  return
}

// -----

/// Not with a packed batch.
func.func @paged_packed(%q: tensor<1x4x10x16xf32>, %k: tensor<9x2x16x16xf32>, %pt: tensor<1x4xi32>, %c: tensor<3xi32>) {
  // expected-error @+1 {{takes key_lengths with a page_table}}
  %0 = attn.attention %q, %k, %k query_offsets(%c : tensor<3xi32>) key_offsets(%c : tensor<3xi32>) page_table(%pt : tensor<1x4xi32>) {normalizer = #attn.softmax} : tensor<1x4x10x16xf32>, tensor<9x2x16x16xf32>, tensor<9x2x16x16xf32> -> tensor<1x4x10x16xf32>
  return
}
