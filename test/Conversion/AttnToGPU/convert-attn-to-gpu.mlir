// RUN: attn-opt %s --convert-attn-to-gpu -split-input-file -verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="tensor-cores=false" -split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=NOTC

// f16 causal GQA softmax: the mma.sync kernel. Grid (query tiles, query
// heads, batch), 128 threads, K and V blocks in shared memory with rows
// padded by 8 elements; per visited key block: S = Q K^T in 8 n8 tiles of one
// k16 step, O += P V in 4 k16 steps of one n8 tile; row statistics reduced
// over the quad (xor 1, 2); stores guarded for rows past the queries.

// CHECK-LABEL: func.func @mma
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<1x4x70x8xf16>
// CHECK:         gpu.launch blocks(%{{.*}}, %[[H:.*]], %[[B:.*]]) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%[[KS:.*]] : memref<64x24xf16, #gpu.address_space<workgroup>>, %[[VS:.*]] : memref<64x16xf16, #gpu.address_space<workgroup>>)
// Full blocks: cooperative 16-byte loads, barrier, 8 + 4 mma, barrier.
// CHECK:           scf.for
// CHECK:             vector.load {{.*}} {alignment = 16 : i64} : memref<1x2x70x16xf16>, vector<8xf16>
// CHECK:             vector.store {{.*}}, %[[KS]]{{.*}} {alignment = 16 : i64}
// CHECK:           gpu.barrier
// CHECK-COUNT-8:   nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK:           gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK:           gpu.shuffle xor %{{.*}}, %c2_i32
// CHECK-COUNT-4:   nvgpu.mma.sync
// CHECK:           gpu.barrier
// Partial blocks: the same, masked.
// CHECK:           gpu.barrier
// CHECK-COUNT-12:  nvgpu.mma.sync
// CHECK:           gpu.barrier
// CHECK-NOT:       nvgpu.mma.sync
// CHECK:           scf.if
// CHECK:             vector.store {{.*}}, %[[OUT]]{{.*}} : memref<1x4x70x8xf16>, vector<2xf16>
// CHECK:           gpu.terminator
// CHECK:         bufferization.to_tensor %[[OUT]]

// NOTC: remark: convert-attn-to-gpu: SIMT kernel (tensor cores disabled)
func.func @mma(%q: tensor<1x4x70x16xf16>, %k: tensor<1x2x70x16xf16>, %v: tensor<1x2x70x8xf16>) -> tensor<1x4x70x8xf16> {
  // expected-remark @below {{convert-attn-to-gpu: mma.sync kernel; tiles of 64 queries x 64 keys, 128 threads; visiting 12 of 16 key blocks (4 full)}}
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x4x70x16xf16>, tensor<1x2x70x16xf16>, tensor<1x2x70x8xf16> -> tensor<1x4x70x8xf16>
  return %o : tensor<1x4x70x8xf16>
}

// -----

// f32: the SIMT kernel, one thread per query row (D, Dv <= 64): a score is
// a register dot product, no shuffles.

// CHECK-LABEL: func.func @simt_f32
// CHECK:         gpu.launch {{.*}} in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c128{{.*}}, {{.*}}) workgroup(%{{.*}} : memref<64x32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x16xf32, #gpu.address_space<workgroup>>)
// CHECK:           vector.load {{.*}} : memref<1x2x100x32xf32>, vector<32xf32>
// CHECK:           gpu.barrier
// CHECK:           vector.reduction <add>, %{{.*}} : vector<32xf32> into f32
// CHECK:           math.exp
// CHECK:           vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT:       gpu.shuffle
// CHECK:           gpu.terminator
func.func @simt_f32(%q: tensor<1x2x100x32xf32>, %k: tensor<1x2x100x32xf32>, %v: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  // expected-remark @below {{SIMT kernel (Q, K and V are not all f16 or all bf16), 1 thread(s) per query row; tiles of 128 queries x 64 keys, 128 threads; visiting 4 of 4 key blocks (4 full)}}
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
  return %o : tensor<1x2x100x16xf32>
}

// -----

// D = Dv = 128: two threads per row, each with 64 elements of q and of the
// accumulator; the dot product ends with one xor-1 shuffle. Smaller key
// blocks keep K and V within 40 KiB of shared memory.

// CHECK-LABEL: func.func @simt_wide
// CHECK:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<32x128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x128xf32, #gpu.address_space<workgroup>>)
// CHECK:           vector.reduction <add>, %{{.*}} : vector<64xf32> into f32
// CHECK:           gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK-NOT:       %c2_i32
// CHECK:           gpu.terminator
func.func @simt_wide(%q: tensor<1x1x64x128xf32>, %k: tensor<1x1x64x128xf32>, %v: tensor<1x1x64x128xf32>) -> tensor<1x1x64x128xf32> {
  // expected-remark @below {{SIMT kernel (Q, K and V are not all f16 or all bf16), 2 thread(s) per query row; tiles of 64 queries x 32 keys}}
  %o = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu>} : tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32> -> tensor<1x1x64x128xf32>
  return %o : tensor<1x1x64x128xf32>
}

// -----

// qk-layernorm keeps bf16 on the SIMT kernel; K is normalized up front.

// CHECK-LABEL: func.func @qk_norm
// CHECK:         linalg.generic
// CHECK:         gpu.launch
// CHECK:           math.rsqrt
// CHECK-NOT:       nvgpu.mma.sync
func.func @qk_norm(%q: tensor<1x1x64x16xbf16>, %k: tensor<1x1x64x16xbf16>, %v: tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16> {
  // expected-remark @below {{SIMT kernel (qk-layernorm)}}
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, qk_norm_eps = 1.0e-05 : f32} : tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16> -> tensor<1x1x64x16xbf16>
  return %o : tensor<1x1x64x16xbf16>
}

// -----

// A sliding window visits only the blocks near the diagonal; kernelized
// attention is left for the other lowerings.

// CHECK-LABEL: func.func @window_and_linear
// CHECK:         gpu.launch
// CHECK:         attn.attention {{.*}}#attn.kernel
func.func @window_and_linear(%q: tensor<1x1x1024x64xf16>, %k: tensor<1x1x1024x64xf16>, %v: tensor<1x1x1024x64xf16>) -> (tensor<1x1x1024x64xf16>, tensor<1x1x1024x64xf16>) {
  // expected-remark @below {{mma.sync kernel; tiles of 64 queries x 64 keys, 128 threads; visiting 45 of 256 key blocks (0 full)}}
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.window<before = 100, after = 0>} : tensor<1x1x1024x64xf16>, tensor<1x1x1024x64xf16>, tensor<1x1x1024x64xf16> -> tensor<1x1x1024x64xf16>
  %l = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>} : tensor<1x1x1024x64xf16>, tensor<1x1x1024x64xf16>, tensor<1x1x1024x64xf16> -> tensor<1x1x1024x64xf16>
  return %o, %l : tensor<1x1x1024x64xf16>, tensor<1x1x1024x64xf16>
}
