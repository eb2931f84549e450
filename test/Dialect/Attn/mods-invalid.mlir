// RUN: attn-opt %s -split-input-file -verify-diagnostics

/// What a score or mask region may not be or do.

func.func @mask_arguments(%q: tensor<1x2x40x16xf32>) {
  // expected-error @+1 {{'attn.attention' mask_mod region must take ('index', 'index', 'index', 'index') (batch, head, query, key), got ('index', 'index', 'index')}}
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
      mask_mod {
      ^bb0(%h: index, %i: index, %j: index):
        %c = arith.cmpi ule, %j, %i : index
        attn.yield %c : i1
      }
  return
}

// -----

func.func @score_arguments(%q: tensor<1x2x40x16xf32>, %t: tensor<40xf32>) {
  // expected-error @+1 {{'attn.attention' score_mod region must take ('f32', 'index', 'index', 'index', 'index', 'tensor<40xf32>') (score, batch, head, query, key, then the captures), got ('f32', 'index', 'index', 'index', 'index')}}
  %o = attn.attention %q, %q, %q captures(%t : tensor<40xf32>) {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        attn.yield %s : f32
      }
  return
}

// -----

func.func @mask_yields_float(%q: tensor<1x2x40x16xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 1.0 : f32
        // expected-error @+1 {{'attn.attention' mask_mod region must yield 'i1', got 'f32'}}
        attn.yield %c : f32
      }
  return
}

// -----

func.func @not_arith(%q: tensor<1x2x40x16xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        // expected-error @+1 {{'attn.attention' mask_mod region may hold only arith and math operations and tensor.extract or tensor.dim of a capture, got 'tensor.empty'}}
        %e = tensor.empty() : tensor<4xi32>
        %c = arith.cmpi ule, %j, %i : index
        attn.yield %c : i1
      }
  return
}

// -----

func.func @outside_value(%q: tensor<1x2x40x16xf32>, %n: index) {
  // expected-note @+1 {{required by region isolation constraints}}
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        // expected-error @+1 {{using value defined outside the region}}
        %c = arith.cmpi ule, %j, %n : index
        attn.yield %c : i1
      }
  return
}

// -----

func.func @vector_values(%q: tensor<1x2x40x16xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        // expected-error @+1 {{'attn.attention' score_mod region computes on scalars only, got a result of type 'vector<4xf32>'}}
        %v = arith.constant dense<1.0> : vector<4xf32>
        attn.yield %s : f32
      }
  return
}

// -----

func.func @kernel_scores(%q: tensor<1x2x40x16xf32>) {
  // expected-error @+1 {{has a score_mod region, which needs scores: softmax or pointwise attention (kernel attention has none)}}
  %o = attn.attention %q, %q, %q {normalizer = #attn.kernel<elu_plus_one>}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        attn.yield %s : f32
      }
  return
}

// -----

func.func @unread_captures(%q: tensor<1x2x40x16xf32>, %t: tensor<40xi32>) {
  // expected-error @+1 {{has captures but no score or mask region to read them}}
  %o = attn.attention %q, %q, %q captures(%t : tensor<40xi32>) {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return
}

// -----

func.func @bool_capture(%q: tensor<1x2x40x16xf32>, %t: tensor<40xi1>) {
  // expected-error @+1 {{captures a tensor of 'i1'; captured tensors hold i8, i16, i32, i64, index, f32, f16 or bf16 elements}}
  %o = attn.attention %q, %q, %q captures(%t : tensor<40xi1>) {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %m: tensor<40xi1>):
        %x = tensor.extract %m[%j] : tensor<40xi1>
        attn.yield %x : i1
      }
  return
}

// -----

func.func @scalar_capture(%q: tensor<1x2x40x16xf32>, %t: tensor<i32>) {
  // expected-error @+1 {{captures a tensor of rank 0; captured tensors have at least one dimension}}
  %o = attn.attention %q, %q, %q captures(%t : tensor<i32>) {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %m: tensor<i32>):
        %x = tensor.extract %m[] : tensor<i32>
        %y = arith.index_cast %x : i32 to index
        %c = arith.cmpi ult, %j, %y : index
        attn.yield %c : i1
      }
  return
}

// -----

func.func @packed(%q: tensor<1x2x40x16xf32>, %cq: tensor<3xi32>) {
  // expected-error @+1 {{has a score or mask region and a packed batch (offsets); regions take padded batches (query_lengths, key_lengths)}}
  %o = attn.attention %q, %q, %q query_offsets(%cq : tensor<3xi32>) key_offsets(%cq : tensor<3xi32>) {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.cmpi ule, %j, %i : index
        attn.yield %c : i1
      }
  return
}
