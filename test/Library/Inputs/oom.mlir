// Softmax attention with dynamic lengths, compiled with --reference (the
// reference lowering materializes the [B, H, Lq, Lk] scores) by
// out-of-memory.test: long sequences make that allocation fail.
func.func @dense(%q: tensor<1x1x?x1xf32>, %k: tensor<1x1x?x1xf32>,
                 %v: tensor<1x1x?x1xf32>) -> tensor<1x1x?x1xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax}
      : tensor<1x1x?x1xf32>, tensor<1x1x?x1xf32>, tensor<1x1x?x1xf32>
      -> tensor<1x1x?x1xf32>
  return %o : tensor<1x1x?x1xf32>
}
