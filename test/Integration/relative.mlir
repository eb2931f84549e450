// Transformer-XL relative attention against the scalar reference.
// DEFINE: %{tol} = --rtol 1e-4 --atol 1e-5 --max-rel-err 1e-5
// DEFINE: %{fn} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 11 --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = memory
// RUN: %{check}
// REDEFINE: %{fn} = no_memory
// RUN: %{check}
// REDEFINE: %{fn} = odd
// RUN: %{check}
// REDEFINE: %{fn} = empty_segment
// RUN: %{check}
// REDEFINE: %{fn} = empty
// RUN: %{check}
// REDEFINE: %{fn} = odd_f16
// REDEFINE: %{tol} = --rtol 1e-2 --atol 1e-2
// RUN: %{check}
// The default pipeline runs it on the flash frame (the position term per
// tile); the other functions run the same kernel at other sizes.
// RUN: attn-run %s --entry odd --random-inputs --remarks 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS: attn-flash: Transformer-XL, the position term per tile (the relative shift by index arithmetic), memory of 77 keys

/// Transformer-XL with 20 memory positions.
func.func @memory(%query: tensor<2x3x33x16xf32>, %key: tensor<2x3x33x16xf32>, %value: tensor<2x3x33x16xf32>, %pos: tensor<3x53x16xf32>, %u: tensor<3x16xf32>, %v: tensor<3x16xf32>, %mk: tensor<2x3x20x16xf32>, %mv: tensor<2x3x20x16xf32>) -> tensor<2x3x33x16xf32> {
  %0 = attn.relative_attention %query, %key, %value, %pos, %u, %v memory(%mk, %mv : tensor<2x3x20x16xf32>, tensor<2x3x20x16xf32>)
      : tensor<2x3x33x16xf32>, tensor<2x3x33x16xf32>, tensor<2x3x33x16xf32>, tensor<3x53x16xf32>, tensor<3x16xf32>, tensor<3x16xf32> -> tensor<2x3x33x16xf32>
  return %0 : tensor<2x3x33x16xf32>
}

/// Transformer-XL without memory, explicit scale.
func.func @no_memory(%query: tensor<2x3x33x16xf32>, %key: tensor<2x3x33x16xf32>, %value: tensor<2x3x33x16xf32>, %pos: tensor<3x33x16xf32>, %u: tensor<3x16xf32>, %v: tensor<3x16xf32>) -> tensor<2x3x33x16xf32> {
  %0 = attn.relative_attention %query, %key, %value, %pos, %u, %v {scale = 0.2 : f32}
      : tensor<2x3x33x16xf32>, tensor<2x3x33x16xf32>, tensor<2x3x33x16xf32>, tensor<3x33x16xf32>, tensor<3x16xf32>, tensor<3x16xf32> -> tensor<2x3x33x16xf32>
  return %0 : tensor<2x3x33x16xf32>
}

/// Odd lengths: 300 queries after 77 memory positions, head dim 20 and value
/// dim 12 (neither a multiple of the vector width); 377 distances.
func.func @odd(%query: tensor<1x2x300x20xf32>, %key: tensor<1x2x300x20xf32>, %value: tensor<1x2x300x12xf32>, %pos: tensor<2x377x20xf32>, %u: tensor<2x20xf32>, %v: tensor<2x20xf32>, %mk: tensor<1x2x77x20xf32>, %mv: tensor<1x2x77x12xf32>) -> tensor<1x2x300x12xf32> {
  %0 = attn.relative_attention %query, %key, %value, %pos, %u, %v memory(%mk, %mv : tensor<1x2x77x20xf32>, tensor<1x2x77x12xf32>)
      : tensor<1x2x300x20xf32>, tensor<1x2x300x20xf32>, tensor<1x2x300x12xf32>, tensor<2x377x20xf32>, tensor<2x20xf32>, tensor<2x20xf32> -> tensor<1x2x300x12xf32>
  return %0 : tensor<1x2x300x12xf32>
}

/// f16 operands, 77 queries without memory.
func.func @odd_f16(%query: tensor<2x1x77x16xf16>, %key: tensor<2x1x77x16xf16>, %value: tensor<2x1x77x16xf16>, %pos: tensor<1x77x16xf16>, %u: tensor<1x16xf16>, %v: tensor<1x16xf16>) -> tensor<2x1x77x16xf16> {
  %0 = attn.relative_attention %query, %key, %value, %pos, %u, %v
      : tensor<2x1x77x16xf16>, tensor<2x1x77x16xf16>, tensor<2x1x77x16xf16>, tensor<1x77x16xf16>, tensor<1x16xf16>, tensor<1x16xf16> -> tensor<2x1x77x16xf16>
  return %0 : tensor<2x1x77x16xf16>
}

/// No query in the segment (L = 0) after 4 memory positions: an empty result
/// (the padded distance table has no distance to read).
func.func @empty_segment(%query: tensor<1x2x0x8xf32>, %key: tensor<1x2x0x8xf32>, %value: tensor<1x2x0x8xf32>, %pos: tensor<2x4x8xf32>, %u: tensor<2x8xf32>, %v: tensor<2x8xf32>, %mk: tensor<1x2x4x8xf32>, %mv: tensor<1x2x4x8xf32>) -> tensor<1x2x0x8xf32> {
  %0 = attn.relative_attention %query, %key, %value, %pos, %u, %v memory(%mk, %mv : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
      : tensor<1x2x0x8xf32>, tensor<1x2x0x8xf32>, tensor<1x2x0x8xf32>, tensor<2x4x8xf32>, tensor<2x8xf32>, tensor<2x8xf32> -> tensor<1x2x0x8xf32>
  return %0 : tensor<1x2x0x8xf32>
}

/// No query and no memory (M + L = 0): no distance at all.
func.func @empty(%query: tensor<1x2x0x8xf32>, %key: tensor<1x2x0x8xf32>, %value: tensor<1x2x0x8xf32>, %pos: tensor<2x0x8xf32>, %u: tensor<2x8xf32>, %v: tensor<2x8xf32>) -> tensor<1x2x0x8xf32> {
  %0 = attn.relative_attention %query, %key, %value, %pos, %u, %v
      : tensor<1x2x0x8xf32>, tensor<1x2x0x8xf32>, tensor<1x2x0x8xf32>, tensor<2x0x8xf32>, tensor<2x8xf32>, tensor<2x8xf32> -> tensor<1x2x0x8xf32>
  return %0 : tensor<1x2x0x8xf32>
}
