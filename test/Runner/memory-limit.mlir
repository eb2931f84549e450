// attn-run computes the bytes a run needs (inputs, outputs, twice the
// outputs with --check, and the B x H x Lq x Lk scores of the reference
// lowering) before allocating anything, and refuses a run that needs more
// than the memory available (MemAvailable, or what the memory cgroup
// leaves) or --max-memory, naming the bytes (issue 17). A module needing
// 20 TiB (more than 10x any machine here) used to abort in operator new
// with "LLVM ERROR: out of memory" and a stack dump, or be OOM-killed.
//
// RUN: not attn-run %s --entry huge --random-inputs --output %t.npy 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: attn-run: error: run 0 needs 21990232555520 bytes (20.0 TiB) for its inputs and outputs, more than the {{[0-9]+}} bytes ({{.*}}) of the memory {{.*}}; nothing was allocated (smaller sizes, or --max-memory)
// HUGE-NOT: Stack dump
// HUGE-NOT: LLVM ERROR
// RUN: not test -e %t.npy
//
// Sizes given at run time are checked the same way.
// RUN: not attn-run %s --entry dynamic --random-inputs --shape query=64x64x65536x128 --shape key=64x64x65536x128 --shape value=64x64x65536x128 2>&1 | FileCheck %s --check-prefix=DYN
// DYN: attn-run: error: run 0 needs 549755813888 bytes (512.0 GiB) for its inputs and outputs
//
// --max-memory: 3 inputs and an output of 256 bytes each fit in 1K, but
// not with the reference's output and 2 x 8 x 8 scores of --check.
// RUN: not attn-run %s --entry small --random-inputs --max-memory 700 2>&1 | FileCheck %s --check-prefix=IN
// IN: attn-run: error: run 0 needs 1024 bytes (1.0 KiB) for its inputs and outputs, more than the 700 bytes of --max-memory
// RUN: attn-run %s --entry small --random-inputs --max-memory 1K | FileCheck %s --check-prefix=OK
// OK: result result0: 1x2x8x4xf32
// RUN: not attn-run %s --entry small --random-inputs --check --max-memory 1K 2>&1 | FileCheck %s --check-prefix=CHECK-REF
// CHECK-REF: attn-run: error: run 0 needs 1792 bytes (1.8 KiB) for its inputs, outputs and the reference lowering's scores, more than the 1024 bytes (1.0 KiB) of --max-memory
// RUN: not attn-run %s --entry small --random-inputs --max-memory 1x 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-run: error: --max-memory needs a byte count (a number with an optional K, M, G or T), not '1x'
//
// The reference lowering's 1 PiB of scores for 16M tokens is refused
// before 12 GiB of inputs are drawn (that took minutes).
// RUN: not attn-run %s --entry window_16m --random-inputs --reference 2>&1 | FileCheck %s --check-prefix=REF
// REF: attn-run: error: run 0 needs 1125917086711808 bytes (1.0 PiB) for its inputs, outputs and the reference lowering's scores
//
// A gradient no fused or linear-time kernel computes (kernelized attention
// under a window: the reference gradient's four Lq x Lk tensors) is
// refused before its inputs are drawn, naming the bytes (issue 53); the
// fused backward of softmax, linear in L, fits.
// RUN: not attn-run %s --entry window_kernel --grad --random-inputs --shape q=1x2x3000x16 --shape k=1x2x3000x16 --shape v=1x2x3000x16 --shape d_output=1x2x3000x16 --max-memory 64M 2>&1 | FileCheck %s --check-prefix=GRAD
// GRAD: attn-run: error: run 0 needs 290688000 bytes (277.2 MiB) for its inputs and outputs (with the reference gradient's Lq x Lk tensors), more than the 67108864 bytes (64.0 MiB) of --max-memory; nothing was allocated
// RUN: attn-run %s --entry window_softmax --grad --random-inputs --shape q=1x2x3000x16 --shape k=1x2x3000x16 --shape v=1x2x3000x16 --shape d_output=1x2x3000x16 --max-memory 64M | FileCheck %s --check-prefix=FUSED
// FUSED: result result0: 1x2x3000x16xf32
//
// --seed and --bench are checked by attn-run, with its own messages.
// RUN: not attn-run %s --entry small --random-inputs --seed -1 2>&1 | FileCheck %s --check-prefix=SEED
// SEED: attn-run: error: --seed needs an integer from 0 to 2^64 - 1, not '-1'
// RUN: not attn-run %s --entry small --random-inputs --bench -1 2>&1 | FileCheck %s --check-prefix=BENCH
// BENCH: attn-run: error: --bench needs a count of calls (0 to 2^32 - 1), not '-1'
// RUN: attn-run %s --entry small --random-inputs --seed 18446744073709551615 --bench 2 | FileCheck %s --check-prefix=BENCHOK
// BENCHOK: bench: median_ms=

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

func.func @window_16m(%query: tensor<1x1x16777216x64xf32>, %key: tensor<1x1x16777216x64xf32>, %value: tensor<1x1x16777216x64xf32>) -> tensor<1x1x16777216x64xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 256, after = 0>}
      : tensor<1x1x16777216x64xf32>, tensor<1x1x16777216x64xf32>, tensor<1x1x16777216x64xf32> -> tensor<1x1x16777216x64xf32>
  return %0 : tensor<1x1x16777216x64xf32>
}

func.func @window_kernel(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.window<before = 4, after = 4>} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %0 : tensor<1x2x?x16xf32>
}

func.func @window_softmax(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.window<before = 4, after = 4>} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %0 : tensor<1x2x?x16xf32>
}
