// UNSUPPORTED: asan
// (stock mlir-opt is not instrumented and cannot load the ASan-built plugin)
// RUN: %mlir_opt %s --load-dialect-plugin=%attn_lib_dir/libAttnPlugin%shlibext \
// RUN:   -split-input-file -verify-diagnostics

/// The plugin's verifiers run inside stock mlir-opt too.

func.func @bad_heads(%q: tensor<1x4x64x16xf32>, %k: tensor<1x3x64x16xf32>) {
  // expected-error @+1 {{expects the query heads (4) to be a multiple of the key/value heads (3)}}
  %0 = attn.attention %q, %k, %k {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x3x64x16xf32>, tensor<1x3x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}
