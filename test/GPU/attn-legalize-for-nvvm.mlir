// RUN: attn-opt %s --attn-legalize-for-nvvm -split-input-file | FileCheck %s

// bf16 m16n8k16 becomes nvvm.mma.sync on i32-packed pairs; f16 is left to
// convert-nvgpu-to-nvvm.

// CHECK-LABEL: func.func @bf16
// CHECK-COUNT-6: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK:         %[[R:.*]] = nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-4: llvm.extractvalue %[[R]]
// CHECK-NOT:     nvgpu.mma.sync
func.func @bf16(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %r = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
  return %r : vector<2x2xf32>
}

// CHECK-LABEL: func.func @f16
// CHECK:         nvgpu.mma.sync
func.func @f16(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %r = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
  return %r : vector<2x2xf32>
}

// -----

// Shared buffers of kernels get 16-byte alignment (the kernels' vector
// accesses claim it); an explicit alignment stays.

// CHECK-LABEL: gpu.module @kernels
// CHECK:         gpu.func @k() workgroup(%{{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 128 : i64}) kernel
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() workgroup(%a : memref<64x72xf16, #gpu.address_space<workgroup>>, %b : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 128 : i64}) kernel {
      gpu.return
    }
  }
}
