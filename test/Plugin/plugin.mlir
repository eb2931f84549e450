// UNSUPPORTED: asan
// (stock mlir-opt is not instrumented and cannot load the ASan-built plugin)
// RUN: %mlir_opt %s --load-dialect-plugin=%attn_lib_dir/libAttnPlugin%shlibext \
// RUN:   --load-pass-plugin=%attn_lib_dir/libAttnPlugin%shlibext | FileCheck %s
// RUN: %mlir_opt %s --load-dialect-plugin=%attn_lib_dir/libAttnPlugin%shlibext \
// RUN:   --mlir-print-op-generic | %mlir_opt --load-dialect-plugin=%attn_lib_dir/libAttnPlugin%shlibext \
// RUN:   | FileCheck %s

/// Stock mlir-opt (22) loads the attn dialect from libAttnPlugin.so and
/// round-trips attn IR: ops, normalizers and nested mask patterns.

// CHECK-LABEL: func @sliding_window
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.union<[#attn.window<before = 16, after = 16>, #attn.global<[0, 1]>]>}
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.pointwise<relu, alpha = 5.0e-01>, pattern = #attn.causal}
func.func @sliding_window(%q: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax,
      pattern = #attn.union<[#attn.window<before = 16, after = 16>, #attn.global<[0, 1]>]>}
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  %1 = attn.attention %q, %q, %0 {normalizer = #attn.pointwise<relu, alpha = 0.5>, pattern = #attn.causal}
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %1 : tensor<1x2x64x16xf32>
}
