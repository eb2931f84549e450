// attn-run: a module with several public functions needs --entry, and a
// function with a non-tensor argument is rejected.

// RUN: not attn-run %s --random-inputs 2>&1 | FileCheck %s --check-prefix=SEVERAL
// SEVERAL: attn-run: error: {{.*}}errors-module.mlir has several public functions (@a, @b); choose one with --entry

// RUN: not attn-run %s --random-inputs --entry b 2>&1 | FileCheck %s --check-prefix=SCALAR
// SCALAR: attn-run: error: argument x of @b must be a ranked tensor

// RUN: not attn-run %s --random-inputs --entry c 2>&1 | FileCheck %s --check-prefix=ELEMENT
// ELEMENT: attn-run: error: argument x of @c has unsupported type tensor<4xf64> (supported elements: f32, f16, bf16, i32, i64, i1)

func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @b(%x: f32) -> f32 {
  return %x : f32
}
func.func @c(%x: tensor<4xf64>) -> tensor<4xf64> {
  return %x : tensor<4xf64>
}
