// RUN: attn-opt %s --attn-lower-pointwise="vector-width=16 query-tile=20" --verify-diagnostics
// RUN: not attn-opt %s --attn-lower-pointwise="vector-width=16 key-block=10" 2>&1 | FileCheck %s
// CHECK: attn-lower-pointwise: key-block (10) must be a multiple of 4 (the keys of one register block)

/// Tile sizes that do not fit the vector width are diagnosed.
func.func @bad_tile(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  // expected-error @+1 {{attn-lower-pointwise: query-tile (20) must be a multiple of the vector width (16)}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}
