// attn-lower-to-nvvm-pipeline down to PTX (format=isa needs no CUDA
// toolkit): host code allocates managed buffers and launches one kernel per
// attention; the kernels use tensor cores for f16/bf16, warp shuffles and
// block barriers.
// RUN: attn-opt %s --attn-lower-to-nvvm-pipeline="chip=sm_90a format=isa" > %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=BIN < %t
// RUN: attn-opt %s --attn-lower-to-nvvm-pipeline="chip=sm_80 format=isa tensor-cores=false" | FileCheck %s --check-prefix=NOTC
/// Bad options are errors of the pipeline (exit code 1, no output), never
/// a crash or an error with exit code 0.
// RUN: not attn-opt %s --attn-lower-to-nvvm-pipeline="chip=" 2>&1 | FileCheck %s --check-prefix=NOCHIP
// NOCHIP: error: attn-lower-to-nvvm-pipeline: chip '' is not an NVIDIA GPU architecture (sm_80, sm_90a, ...)
// RUN: not attn-opt %s --attn-lower-to-nvvm-pipeline="chip=sm_1 format=isa" 2>&1 | FileCheck %s --check-prefix=SM1
// SM1: error: attn-lower-to-nvvm-pipeline: chip 'sm_1' is not an NVIDIA GPU architecture
// RUN: not attn-opt %s --attn-lower-to-nvvm-pipeline="chip=sm_90a format=bogus" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: attn-lower-to-nvvm-pipeline: format 'bogus' is not isa, bin or fatbin

// CHECK-LABEL: llvm.func @f16(
// CHECK:         gpu.launch_func @f16_kernel::@f16_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) : i64
// CHECK:         llvm.return
// CHECK-LABEL: llvm.func @bf16(
// CHECK:         gpu.launch_func @bf16_kernel::@bf16_kernel
// CHECK-LABEL: llvm.func @linear(
// CHECK:         %[[BUF:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, i8) -> !llvm.ptr
// The device allocation checked (attn-check-allocations): out of memory is
// reported, no kernel runs on NULL.
// CHECK:         llvm.icmp "eq" %[[BUF]]
// CHECK:         llvm.cond_br
// CHECK:         llvm.call @attn_opt_runtime_error
// CHECK:         gpu.launch_func
// CHECK:         llvm.call @mgpuMemFree
// BIN:         gpu.binary @f16_kernel {{ *}}[#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90a{{.*}}mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32{{.*}}shfl.sync.bfly.b32{{.*}}bar.sync{{.*}}"
// BIN:         gpu.binary @bf16_kernel {{ *}}[{{.*}}mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// NOTC:        gpu.binary @f16_kernel {{ *}}[#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
// NOTC-NOT:    mma.sync
// NOTC:        gpu.binary @bf16_kernel

func.func @f16(%q: tensor<1x4x256x64xf16>, %k: tensor<1x4x256x64xf16>, %v: tensor<1x4x256x64xf16>) -> tensor<1x4x256x64xf16> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16> -> tensor<1x4x256x64xf16>
  return %o : tensor<1x4x256x64xf16>
}

func.func @bf16(%q: tensor<1x4x256x64xbf16>, %k: tensor<1x4x256x64xbf16>, %v: tensor<1x4x256x64xbf16>) -> tensor<1x4x256x64xbf16> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu>} : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16> -> tensor<1x4x256x64xbf16>
  return %o : tensor<1x4x256x64xbf16>
}

func.func @linear(%q: tensor<1x4x256x64xf32>, %k: tensor<1x4x256x64xf32>, %v: tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>} : tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32> -> tensor<1x4x256x64xf32>
  return %o : tensor<1x4x256x64xf32>
}
