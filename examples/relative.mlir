// Transformer-XL: 512 memory positions prepended to the keys and values,
// relative-position scores. B=1, H=8, L=4096, D=64, f32.
func.func @relative(%query: tensor<1x8x4096x64xf32>, %key: tensor<1x8x4096x64xf32>, %value: tensor<1x8x4096x64xf32>,
                    %pos_emb: tensor<8x4608x64xf32>, %content_bias: tensor<8x64xf32>,
                    %position_bias: tensor<8x64xf32>, %memory_key: tensor<1x8x512x64xf32>,
                    %memory_value: tensor<1x8x512x64xf32>) -> tensor<1x8x4096x64xf32> {
  %0 = attn.relative_attention %query, %key, %value, %pos_emb, %content_bias, %position_bias
      memory(%memory_key, %memory_value : tensor<1x8x512x64xf32>, tensor<1x8x512x64xf32>)
      : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<8x4608x64xf32>, tensor<8x64xf32>, tensor<8x64xf32> -> tensor<1x8x4096x64xf32>
  return %0 : tensor<1x8x4096x64xf32>
}
