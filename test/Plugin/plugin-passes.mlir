// UNSUPPORTED: asan
// (stock mlir-opt is not instrumented and cannot load the ASan-built plugin)
/// Stock mlir-opt (22) runs the plugin's passes and pipelines through
/// --pass-pipeline (a pass plugin's passes are not command-line flags of
/// mlir-opt: its flags are parsed before the plugin is loaded).
// RUN: %mlir_opt %s --load-dialect-plugin=%attn_lib_dir/libAttnPlugin%shlibext \
// RUN:   --load-pass-plugin=%attn_lib_dir/libAttnPlugin%shlibext \
// RUN:   --pass-pipeline='builtin.module(attn-reassociate)' 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: %mlir_opt %s --load-dialect-plugin=%attn_lib_dir/libAttnPlugin%shlibext \
// RUN:   --load-pass-plugin=%attn_lib_dir/libAttnPlugin%shlibext \
// RUN:   --pass-pipeline='builtin.module(attn-lower-to-llvm-pipeline)' | FileCheck %s --check-prefix=LLVM

// PASS: remark: attn-reassociate: linear form
// PASS: attn.feature_map
// PASS: attn.kv_state
// PASS: attn.state_apply
// LLVM: llvm.func @linear
// LLVM-NOT: attn.
func.func @linear(%q: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<elu_plus_one>}
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}
