// RUN: attn-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of attn.attention_grad.

func.func @not_attention(%o: tensor<1x1x4x4xf32>, %do: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{expects its first operand to be the output (result 0) of an attn.attention}}
  %dq, %dk, %dv = attn.attention_grad %o, %do
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
  return
}

// -----

func.func @lse_result(%q: tensor<1x1x4x4xf32>, %do: tensor<1x1x4xf32>) {
  %o, %lse = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>, tensor<1x1x4xf32>
  // expected-error @+1 {{expects its first operand to be the output (result 0) of an attn.attention}}
  %dq, %dk, %dv = attn.attention_grad %lse, %do
      : tensor<1x1x4xf32>, tensor<1x1x4xf32>
      -> tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
  return
}

// -----

func.func @paged(%q: tensor<1x1x4x4xf32>, %pool: tensor<2x1x4x4xf32>,
                 %pt: tensor<1x1xi32>, %len: tensor<1xi32>,
                 %do: tensor<1x1x4x4xf32>) {
  %o = attn.attention %q, %pool, %pool key_lengths(%len : tensor<1xi32>)
      page_table(%pt : tensor<1x1xi32>) {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>
      -> tensor<1x1x4x4xf32>
  // expected-error @+1 {{differentiates no attention over a paged KV cache}}
  %dq, %dk, %dv = attn.attention_grad %o, %do
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>
  return
}

// -----

func.func @grad_output_type(%q: tensor<1x1x4x4xf32>, %do: tensor<1x1x4x3xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>
  // expected-error @+1 {{expects grad_output of type 'tensor<1x1x4x4xf32>' (the forward output's), got 'tensor<1x1x4x3xf32>'}}
  %dq, %dk, %dv = attn.attention_grad %o, %do
      : tensor<1x1x4x4xf32>, tensor<1x1x4x3xf32>
      -> tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
  return
}

// -----

func.func @grad_lse_without_lse(%q: tensor<1x1x4x4xf32>, %do: tensor<1x1x4x4xf32>,
                                %dl: tensor<1x1x4xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>
  // expected-error @+1 {{takes grad_lse only when the forward attn.attention has a log-sum-exp result}}
  %dq, %dk, %dv = attn.attention_grad %o, %do grad_lse(%dl : tensor<1x1x4xf32>)
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
  return
}

// -----

func.func @saved_lse_pointwise(%q: tensor<1x1x4x4xf32>, %do: tensor<1x1x4x4xf32>,
                               %l: tensor<1x1x4xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>
  // expected-error @+1 {{takes saved_lse only for softmax attention}}
  %dq, %dk, %dv = attn.attention_grad %o, %do saved_lse(%l : tensor<1x1x4xf32>)
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
  return
}

// -----

func.func @saved_lse_shape(%q: tensor<1x1x4x4xf32>, %do: tensor<1x1x4x4xf32>,
                           %l: tensor<1x4xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>
  // expected-error @+1 {{expects saved_lse of type 'tensor<1x1x4xf32>' (batch x query heads x query length), got 'tensor<1x4xf32>'}}
  %dq, %dk, %dv = attn.attention_grad %o, %do saved_lse(%l : tensor<1x4xf32>)
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
  return
}

// -----

func.func @grad_key_type(%q: tensor<1x2x4x4xf32>, %k: tensor<1x1x4x4xf32>,
                         %do: tensor<1x2x4x4xf32>) {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax}
      : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x2x4x4xf32>
  // expected-error @+1 {{expects grad_key of type 'tensor<1x1x4x4xf32>' (the key's), got 'tensor<1x2x4x4xf32>'}}
  %dq, %dk, %dv = attn.attention_grad %o, %do
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>
  return
}

// -----

func.func @no_bias(%q: tensor<1x1x4x4xf32>, %do: tensor<1x1x4x4xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>
  // expected-error @+1 {{has a grad_bias result but the forward attn.attention has no bias}}
  %dq, %dk, %dv, %db = attn.attention_grad %o, %do
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
         bias(tensor<1x1x4x4xf32>)
  return
}

// -----

func.func @sinks_type(%q: tensor<1x2x4x4xf32>, %s: tensor<2xf32>,
                      %do: tensor<1x2x4x4xf32>) {
  %o = attn.attention %q, %q, %q sinks(%s : tensor<2xf32>)
      {normalizer = #attn.softmax}
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>
  // expected-error @+1 {{expects grad_sinks of type 'tensor<2xf32>' (the sinks's), got 'tensor<3xf32>'}}
  %dq, %dk, %dv, %ds = attn.attention_grad %o, %do
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
         sinks(tensor<3xf32>)
  return
}

// -----

/// A score region whose score reaches an op without a derivative rule.
func.func @score_mod_sin(%q: tensor<1x2x4x4xf32>, %do: tensor<1x2x4x4xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %y = math.sin %s : f32
        attn.yield %y : f32
      }
  // expected-error @+1 {{cannot differentiate the forward's score_mod region: the score reaches 'math.sin', which has no derivative rule}}
  %dq, %dk, %dv = attn.attention_grad %o, %do
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  return
}

// -----

func.func @slopes_without_alibi(%q: tensor<1x2x4x4xf32>, %do: tensor<1x2x4x4xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>
  // expected-error @+1 {{has a grad_alibi_slopes result but the forward attn.attention has no alibi_slopes}}
  %dq, %dk, %dv, %ds = attn.attention_grad %o, %do
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
         alibi_slopes(tensor<2xf32>)
  return
}

// -----

/// grad_captures: one per floating-point captured tensor (the ids are not).
func.func @capture_count(%q: tensor<1x2x4x4xf32>, %t: tensor<2x7xf32>,
                         %ids: tensor<4xi32>, %do: tensor<1x2x4x4xf32>) {
  %o = attn.attention %q, %q, %q captures(%t, %ids : tensor<2x7xf32>, tensor<4xi32>)
      {normalizer = #attn.softmax}
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: tensor<2x7xf32>, %d: tensor<4xi32>):
        %x = tensor.extract %c[%h, %i] : tensor<2x7xf32>
        %y = arith.addf %s, %x : f32
        attn.yield %y : f32
      }
  // expected-error @+1 {{expects one grad_captures result per floating-point captured tensor of the forward attn.attention (1), got 2}}
  %dq, %dk, %dv, %dt, %di = attn.attention_grad %o, %do
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
         captures(tensor<2x7xf32>, tensor<4xi32>)
  return
}

// -----

func.func @capture_type(%q: tensor<1x2x4x4xf32>, %t: tensor<2x7xf32>, %do: tensor<1x2x4x4xf32>) {
  %o = attn.attention %q, %q, %q captures(%t : tensor<2x7xf32>)
      {normalizer = #attn.softmax}
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: tensor<2x7xf32>):
        %x = tensor.extract %c[%h, %i] : tensor<2x7xf32>
        %y = arith.addf %s, %x : f32
        attn.yield %y : f32
      }
  // expected-error @+1 {{expects grad_captures #0 of type 'tensor<2x7xf32>' (the captured tensor's), got 'tensor<7x2xf32>'}}
  %dq, %dk, %dv, %dt = attn.attention_grad %o, %do
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
         captures(tensor<7x2xf32>)
  return
}

// -----

/// With grad_captures, the captured reads must be differentiable too: the
/// score's own derivative does not need math.floor's, the table's does.
func.func @capture_floor(%q: tensor<1x2x4x4xf32>, %t: tensor<2x7xf32>, %do: tensor<1x2x4x4xf32>) {
  %o = attn.attention %q, %q, %q captures(%t : tensor<2x7xf32>)
      {normalizer = #attn.softmax}
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: tensor<2x7xf32>):
        %x = tensor.extract %c[%h, %i] : tensor<2x7xf32>
        %f = math.floor %x : f32
        %y = arith.addf %s, %f : f32
        attn.yield %y : f32
      }
  %dq0, %dk0, %dv0 = attn.attention_grad %o, %do
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  // expected-error @+1 {{cannot differentiate the forward's score_mod region: the score or a captured value reaches 'math.floor', which has no derivative rule}}
  %dq, %dk, %dv, %dt = attn.attention_grad %o, %do
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
         captures(tensor<2x7xf32>)
  return
}

// -----

func.func @key_state_softmax(%q: tensor<1x1x4x4xf32>, %do: tensor<1x1x4x4xf32>,
                             %s: tensor<1x1x4x5xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>
  // expected-error @+1 {{takes key_state and query_state only for kernelized attention}}
  %dq, %dk, %dv = attn.attention_grad %o, %do key_state(%s : tensor<1x1x4x5xf32>)
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
  return
}

// -----

func.func @query_state_window(%q: tensor<1x1x4x4xf32>, %do: tensor<1x1x4x4xf32>,
                              %s: tensor<1x1x4x5xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.kernel<elu_plus_one>,
                                  pattern = #attn.window<before = 2, after = 0>}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>
  // expected-error @+1 {{takes key_state and query_state only with no mask or #attn.causal and no gate}}
  %dq, %dk, %dv = attn.attention_grad %o, %do query_state(%s : tensor<1x1x4x5xf32>)
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
  return
}

// -----

func.func @query_state_shape(%q: tensor<1x2x4x4xf32>, %k: tensor<1x1x4x4xf32>,
                             %do: tensor<1x2x4x4xf32>, %s: tensor<1x1x4x5xf32>) {
  %o = attn.attention %q, %k, %k {normalizer = #attn.kernel<elu_plus_one>}
      : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x2x4x4xf32>
  // expected-error @+1 {{expects query_state of type 'tensor<1x2x4x5xf32>' (batch x query heads x features x (Dv + 1)), got 'tensor<1x1x4x5xf32>'}}
  %dq, %dk, %dv = attn.attention_grad %o, %do query_state(%s : tensor<1x1x4x5xf32>)
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
      -> tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
  return
}
