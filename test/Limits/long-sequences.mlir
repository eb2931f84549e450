// Sequences of 2^30 positions (the longest the dialect accepts) compile in
// well under a second: a compile-time block layout would have 2^48 blocks
// (attn-block-sparse and the LLVM and NVVM pipelines hung building one;
// issue 18), so the kernels classify blocks at run time, and nested
// patterns and FLOP counts stay within their budgets (MaskPattern.h).
//
// RUN: attn-opt %s --attn-block-sparse -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPARSE
// RUN: attn-opt %s --attn-flash --attn-lower-pointwise -o /dev/null 2>&1 | FileCheck %s --check-prefix=KERNELS
// RUN: attn-opt %s --attn-flash --attn-lower-pointwise -o /dev/null 2>&1 | FileCheck %s --check-prefix=CAUSAL
// RUN: attn-opt %s --convert-attn-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline -o /dev/null
// RUN: attn-opt %s --attn-lower-to-nvvm-pipeline=chip=sm_90a -o /dev/null

// SPARSE: remark: attn-block-sparse: too many blocks for a compile-time layout; left for the kernels, which classify blocks at run time
// KERNELS: remark: attn-flash: tiles of {{[0-9]+}} queries x {{[0-9]+}} keys, {{[0-9]+}} lanes; key blocks classified at run time (too many blocks for a compile-time layout)
// GPU: remark: convert-attn-to-gpu: {{.*}}key blocks classified at run time (too many blocks for a compile-time layout)
func.func @window(%q: tensor<1x1x1073741824x16xf32>) -> tensor<1x1x1073741824x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.window<before = 5, after = 5>}
      : tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32> -> tensor<1x1x1073741824x16xf32>
  return %0 : tensor<1x1x1073741824x16xf32>
}

// KERNELS: remark: attn-flash: {{.*}}key blocks classified at run time (too many blocks for a compile-time layout)
func.func @dense(%q: tensor<1x1x1073741824x16xf32>) -> tensor<1x1x1073741824x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32> -> tensor<1x1x1073741824x16xf32>
  return %0 : tensor<1x1x1073741824x16xf32>
}

// Decode over 2^30 keys: 2^26 key blocks, also classified at run time.
// KERNELS: remark: attn-flash: decode: {{.*}}key blocks classified at run time (too many blocks for a compile-time layout)
func.func @decode(%q: tensor<1x1x1x16xf32>, %k: tensor<1x1x1073741824x16xf32>) -> tensor<1x1x1x16xf32> {
  %0 = attn.attention %q, %k, %k {normalizer = #attn.softmax, pattern = #attn.window<before = 4096, after = 0>}
      : tensor<1x1x1x16xf32>, tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32> -> tensor<1x1x1x16xf32>
  return %0 : tensor<1x1x1x16xf32>
}

// SPARSE: remark: attn-block-sparse: too many blocks
// KERNELS: remark: attn-lower-pointwise: {{.*}}key blocks classified at run time (too many blocks for a compile-time layout)
func.func @nested(%q: tensor<1x1x1073741824x16xf32>) -> tensor<1x1x1073741824x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>,
      pattern = #attn.intersect<[#attn.strided<stride = 7>, #attn.dilated<before = 300, after = 0, dilation = 2>,
                                 #attn.union<[#attn.global<[0, 5]>, #attn.fixed<stride = 4096, c = 64>]>]>}
      : tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32> -> tensor<1x1x1073741824x16xf32>
  return %0 : tensor<1x1x1073741824x16xf32>
}

// Causal softmax and ReLU attention, and the causal linear form (a
// sequential scan over 2^26 chunks at run time, one loop in the code).
// SPARSE: remark: attn-block-sparse: too many blocks
// CAUSAL: long-sequences.mlir:[[@LINE+2]]:8: remark: attn-flash: {{.*}}key blocks classified at run time (too many blocks for a compile-time layout)
func.func @causal(%q: tensor<1x1x1073741824x16xf32>) -> tensor<1x1x1073741824x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32> -> tensor<1x1x1073741824x16xf32>
  return %0 : tensor<1x1x1073741824x16xf32>
}

// SPARSE: remark: attn-block-sparse: too many blocks
// CAUSAL: long-sequences.mlir:[[@LINE+2]]:8: remark: attn-lower-pointwise: {{.*}}key blocks classified at run time (too many blocks for a compile-time layout)
func.func @causal_relu(%q: tensor<1x1x1073741824x16xf32>) -> tensor<1x1x1073741824x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>, pattern = #attn.causal}
      : tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32> -> tensor<1x1x1073741824x16xf32>
  return %0 : tensor<1x1x1073741824x16xf32>
}

func.func @causal_linear(%q: tensor<1x1x1073741824x16xf32>) -> tensor<1x1x1073741824x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
      : tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32>, tensor<1x1x1073741824x16xf32> -> tensor<1x1x1073741824x16xf32>
  return %0 : tensor<1x1x1073741824x16xf32>
}
