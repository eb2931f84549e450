// --bench prints the op's FLOP count and ends with one line of a fixed form.
// RUN: attn-run %s --random-inputs --bench 3 --threads 1 | FileCheck %s

/// Causal softmax, B=1, H=2, L=8, D=Dv=4: N = 2 * 8 * 9 / 2 = 72 allowed
/// pairs, 2 * N * (D + Dv) = 1152 flop.
// CHECK: compile: pipeline_ms={{[0-9.]+}} llvm_ms={{[0-9.]+}} total_ms={{[0-9.]+}}
// CHECK-NEXT: work: 1152 flop
// CHECK-NEXT: {{^}}bench: median_ms={{[0-9]+\.[0-9]+}} min_ms={{[0-9]+\.[0-9]+}} max_ms={{[0-9]+\.[0-9]+}} gflops={{[0-9]+\.[0-9]+}}{{$}}
// CHECK-NOT: {{.}}
func.func @causal(%query: tensor<1x2x8x4xf32>, %key: tensor<1x2x8x4xf32>,
                  %value: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}
