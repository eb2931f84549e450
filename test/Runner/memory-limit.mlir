// attn-run computes the bytes a run needs (inputs, outputs, twice the
// outputs with --check, and the B x H x Lq x Lk scores of the reference
// lowering) before allocating anything, and refuses a run that needs more
// than the memory available (MemAvailable, or what the memory cgroup
// leaves) or --max-memory, naming the bytes (issue 17). A module needing
// 12 TiB (more than 10x any machine here) used to abort in operator new
// with "LLVM ERROR: out of memory" and a stack dump, or be OOM-killed.
//
// RUN: not attn-run %s --entry huge --random-inputs --output %t.npy 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: attn-run: error: run 0 needs 13194139533312 bytes (12.0 TiB) for its inputs, more than the {{[0-9]+}} bytes ({{.*}}) of the memory {{.*}}; nothing was allocated (smaller sizes, or --max-memory)
// HUGE-NOT: Stack dump
// HUGE-NOT: LLVM ERROR
// RUN: not test -e %t.npy
//
// Sizes given at run time are checked the same way.
// RUN: not attn-run %s --entry dynamic --random-inputs --shape query=64x64x65536x128 --shape key=64x64x65536x128 --shape value=64x64x65536x128 2>&1 | FileCheck %s --check-prefix=DYN
// DYN: attn-run: error: run 0 needs 412316860416 bytes (384.0 GiB) for its inputs
//
// --max-memory: 3 inputs of 256 bytes fit in 1K; then the output (256)
// fits 1K, but not the reference's output and 2 x 8 x 8 scores of --check.
// RUN: not attn-run %s --entry small --random-inputs --max-memory 700 2>&1 | FileCheck %s --check-prefix=IN
// IN: attn-run: error: run 0 needs 768 bytes for its inputs, more than the 700 bytes of --max-memory
// RUN: attn-run %s --entry small --random-inputs --max-memory 1K | FileCheck %s --check-prefix=OK
// OK: result result0: 1x2x8x4xf32
// RUN: not attn-run %s --entry small --random-inputs --check --max-memory 1K 2>&1 | FileCheck %s --check-prefix=CHECK-REF
// CHECK-REF: attn-run: error: run 0 needs 1792 bytes (1.8 KiB) for its inputs, outputs and the reference lowering's scores, more than the 1024 bytes (1.0 KiB) of --max-memory
// RUN: not attn-run %s --entry small --random-inputs --max-memory 1x 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-run: error: --max-memory needs a byte count (a number with an optional K, M, G or T), not '1x'

func.func @huge(%query: tensor<512x32x1048576x128xf32>, %key: tensor<512x8x1048576x128xf32>, %value: tensor<512x8x1048576x128xf32>) -> tensor<512x32x1048576x128xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<512x32x1048576x128xf32>, tensor<512x8x1048576x128xf32>, tensor<512x8x1048576x128xf32> -> tensor<512x32x1048576x128xf32>
  return %0 : tensor<512x32x1048576x128xf32>
}

func.func @dynamic(%query: tensor<?x64x?x128xf32>, %key: tensor<?x64x?x128xf32>, %value: tensor<?x64x?x128xf32>) -> tensor<?x64x?x128xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax}
      : tensor<?x64x?x128xf32>, tensor<?x64x?x128xf32>, tensor<?x64x?x128xf32> -> tensor<?x64x?x128xf32>
  return %0 : tensor<?x64x?x128xf32>
}

func.func @small(%query: tensor<1x2x8x4xf32>, %key: tensor<1x2x8x4xf32>, %value: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax}
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}
