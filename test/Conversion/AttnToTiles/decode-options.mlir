// The decode kernel (the query heads of a key/value head in one tile) and
// the options that turn it off: an explicit query tile, or a key block that
// is not a multiple of the decode tile's register block (16 keys with one
// query vector of 16 lanes); then the prefill tiles.
// RUN: attn-opt %s --attn-flash 2>&1 >/dev/null | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s --attn-flash="key-block=32" 2>&1 >/dev/null | FileCheck %s --check-prefix=KB32
// RUN: attn-opt %s --attn-flash="key-block=8" 2>&1 >/dev/null | FileCheck %s --check-prefix=KB8
// RUN: attn-opt %s --attn-flash="query-tile=16" 2>&1 >/dev/null | FileCheck %s --check-prefix=QT16
// DEFAULT: remark: attn-flash: decode: the 8 query heads x 1 queries of each key/value head in 1 tile(s), each key/value element read once for them; tiles of 16 queries x 64 keys, 16 lanes; visiting 8 of 8 key blocks (8 full)
// KB32: remark: attn-flash: decode: the 8 query heads x 1 queries of each key/value head in 1 tile(s), each key/value element read once for them; tiles of 16 queries x 32 keys, 16 lanes; visiting 16 of 16 key blocks (16 full)
// KB8: remark: attn-flash: tiles of 64 queries x 8 keys, 16 lanes; visiting 64 of 64 key blocks (64 full)
// QT16: remark: attn-flash: tiles of 16 queries x 64 keys, 16 lanes; visiting 8 of 8 key blocks (8 full)
func.func @decode(%q: tensor<1x8x1x64xf32>, %k: tensor<1x1x64x64xf32>, %v: tensor<1x1x64x64xf32>) -> tensor<1x8x1x64xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<1x8x1x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32> -> tensor<1x8x1x64xf32>
  return %0 : tensor<1x8x1x64xf32>
}
