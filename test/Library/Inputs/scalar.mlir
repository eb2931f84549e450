// A function the C ABI cannot take (attn-compile-errors.test).

func.func @scale(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
