// Run-time sizes that break the contract of attn.attention are reported by
// the generated code's checks (through attn_opt_runtime_error) and by
// attn-run, which fails with the message and writes no output; the same
// through the fused kernels, the reference lowering, the reassociated
// linear form and the GPU kernels (emulated).
// RUN: rm -rf %t && mkdir -p %t

/// Sizes that must agree.
// RUN: not attn-run %s --entry dyn --random-inputs --shape query=2x4x8x16 --shape key=3x2x8x16 --shape value=3x2x8x8 --output %t/out.npy 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not test -e %t/out.npy
// RUN: not attn-run %s --entry dyn --reference --random-inputs --shape query=2x4x8x16 --shape key=3x2x8x16 --shape value=3x2x8x8 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not attn-run %s --entry dyn --target=gpu-emulator --random-inputs --shape query=2x4x8x16 --shape key=3x2x8x16 --shape value=3x2x8x8 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not attn-run %s --entry dyn_linear --random-inputs --shape query=2x4x8x16 --shape key=3x2x8x16 --shape value=3x2x8x8 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: attn-run: error: the generated code reported a run-time error: attn.attention: dimension 0 of key (3) differs from dimension 0 of query (2)
// RUN: not attn-run %s --entry dyn --random-inputs --shape query=1x4x8x16 --shape key=1x2x8x16 --shape value=1x2x9x8 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: attn-run: error: the generated code reported a run-time error: attn.attention: dimension 2 of value (9) differs from dimension 2 of key (8)

/// A pattern that needs Lq == Lk: segment ids of the queries serve the keys.
// RUN: not attn-run %s --entry segments --random-inputs --shape query=1x4x8x16 --shape key=1x2x12x16 --shape value=1x2x12x8 --shape segments=1x8 2>&1 | FileCheck %s --check-prefix=SEGMENTS
// SEGMENTS: attn-run: error: the generated code reported a run-time error: attn.attention: dimension 1 of segments (8) differs from dimension 2 of key (12)

/// Lengths outside the buffer, negative lengths.
// RUN: %python %S/Inputs/make_npy.py %t/long.npy --dtype '<i4' --shape 2 --values 3,9
// RUN: %python %S/Inputs/make_npy.py %t/negative.npy --dtype '<i4' --shape 2 --values=-1,3
// RUN: %python %S/Inputs/make_npy.py %t/ok.npy --dtype '<i4' --shape 2 --values 3,8
// RUN: not attn-run %s --entry padded --random-inputs --shape query=2x4x8x16 --shape key=2x2x8x16 --shape value=2x2x8x8 --input lq=%t/long.npy --input lk=%t/ok.npy 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not attn-run %s --entry padded --target=gpu-emulator --random-inputs --shape query=2x4x8x16 --shape key=2x2x8x16 --shape value=2x2x8x8 --input lq=%t/long.npy --input lk=%t/ok.npy 2>&1 | FileCheck %s --check-prefix=LONG
// LONG: attn-run: error: the generated code reported a run-time error: attn.attention: query_lengths[1] = 9 is outside [0, 8], the rows of query
// RUN: not attn-run %s --entry padded --random-inputs --shape query=2x4x8x16 --shape key=2x2x8x16 --shape value=2x2x8x8 --input lq=%t/ok.npy --input lk=%t/negative.npy 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: attn-run: error: the generated code reported a run-time error: attn.attention: key_lengths[0] = -1 is outside [0, 8], the rows of key

/// Offsets: decreasing, not from 0, beyond the rows, empty, of different
/// counts.
// RUN: %python %S/Inputs/make_npy.py %t/down.npy --dtype '<i4' --shape 3 --values 0,5,3
// RUN: %python %S/Inputs/make_npy.py %t/start.npy --dtype '<i4' --shape 3 --values 1,5,6
// RUN: %python %S/Inputs/make_npy.py %t/beyond.npy --dtype '<i4' --shape 3 --values 0,5,20
// RUN: %python %S/Inputs/make_npy.py %t/good.npy --dtype '<i4' --shape 3 --values 0,5,8
// RUN: %python %S/Inputs/make_npy.py %t/four.npy --dtype '<i4' --shape 4 --values 0,2,5,8
// RUN: %python %S/Inputs/make_npy.py %t/empty.npy --dtype '<i4' --shape 0
// DEFINE: %{packed} = attn-run %s --entry packed --random-inputs --shape query=1x4x8x16 --shape key=1x2x12x16 --shape value=1x2x12x8
// RUN: not %{packed} --input cq=%t/down.npy --input ck=%t/good.npy 2>&1 | FileCheck %s --check-prefix=DOWN
// RUN: not %{packed} --target=gpu-emulator --input cq=%t/down.npy --input ck=%t/good.npy 2>&1 | FileCheck %s --check-prefix=DOWN
// DOWN: attn-run: error: the generated code reported a run-time error: attn.attention: query_offsets[2] = 3 is smaller than the entry before it (5): offsets must not decrease
// RUN: not %{packed} --input cq=%t/good.npy --input ck=%t/start.npy 2>&1 | FileCheck %s --check-prefix=START
// START: attn-run: error: the generated code reported a run-time error: attn.attention: key_offsets[0] = 1: the first offset must be 0
// RUN: not %{packed} --input cq=%t/good.npy --input ck=%t/beyond.npy 2>&1 | FileCheck %s --check-prefix=BEYOND
// BEYOND: attn-run: error: the generated code reported a run-time error: attn.attention: key_offsets[2] = 20 lies beyond the 12 rows of key
// RUN: not %{packed} --input cq=%t/empty.npy --input ck=%t/empty.npy 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: attn-run: error: the generated code reported a run-time error: attn.attention: query_offsets is empty: it needs N + 1 entries for N sequences
// RUN: not %{packed} --input cq=%t/good.npy --input ck=%t/four.npy 2>&1 | FileCheck %s --check-prefix=COUNTS
// COUNTS: attn-run: error: the generated code reported a run-time error: attn.attention: dimension 0 of key_offsets (4) differs from dimension 0 of query_offsets (3)

/// The same module runs when the sizes hold.
// RUN: %{packed} --input cq=%t/good.npy --input ck=%t/good.npy --check | FileCheck %s --check-prefix=GOOD
// GOOD: check result0: {{.*}} ok

/// attn-run's own checks of the shapes it is given.
// RUN: not attn-run %s --entry dyn --random-inputs 2>&1 | FileCheck %s --check-prefix=NOSHAPE
// NOSHAPE: attn-run: error: argument query of @dyn has the dynamic type ?x4x?x16xf32; give its shape with --shape query=DIMS, or an --input
// RUN: not attn-run %s --entry dyn --random-inputs --shape query=1x8x8x16 2>&1 | FileCheck %s --check-prefix=STATIC
// STATIC: attn-run: error: --shape query=1x8x8x16: query of @dyn is ?x4x?x16xf32, not 1x8x8x16
// RUN: not attn-run %s --entry dyn --random-inputs --shape query=1x4x8x16,1x4x9x16 --shape key=1x2x8x16,1x2x9x16,1x2x7x16 2>&1 | FileCheck %s --check-prefix=RUNS
// RUNS: attn-run: error: --shape key=1x2x8x16,1x2x9x16,1x2x7x16: 3 shapes, but another --shape gives 2
// RUN: not attn-run %s --entry dyn --random-inputs --shape query=1x4xAx16 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: attn-run: error: --shape query=1x4xAx16: 'A' is not a size
// RUN: not attn-run %s --entry dyn --random-inputs --shape nothing=1 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: attn-run: error: --shape nothing=1: expected NAME=DIMS with NAME an argument of @dyn

/// A page table entry in use outside the pool (entries past the cache
/// length may hold anything); cache lengths beyond the table's keys; an
/// empty pool.
// RUN: %python %S/Inputs/make_npy.py %t/pt.npy --dtype '<i4' --shape 2,3 --values 0,3,-9,1,2,7
// RUN: %python %S/Inputs/make_npy.py %t/pages_ok.npy --dtype '<i4' --shape 2 --values 5,8
// RUN: %python %S/Inputs/make_npy.py %t/pages_far.npy --dtype '<i4' --shape 2 --values 5,9
// RUN: %python %S/Inputs/make_npy.py %t/pages_long.npy --dtype '<i4' --shape 2 --values 5,13
// RUN: attn-run %s --entry paged --random-inputs --shape key=5x2x4x16 --shape value=5x2x4x8 --input pt=%t/pt.npy --input lk=%t/pages_ok.npy > /dev/null
// RUN: not attn-run %s --entry paged --random-inputs --shape key=5x2x4x16 --shape value=5x2x4x8 --input pt=%t/pt.npy --input lk=%t/pages_far.npy --output %t/paged.npy 2>&1 | FileCheck %s --check-prefix=PAGE
// RUN: not test -e %t/paged.npy
// RUN: not attn-run %s --entry paged --reference --random-inputs --shape key=5x2x4x16 --shape value=5x2x4x8 --input pt=%t/pt.npy --input lk=%t/pages_far.npy 2>&1 | FileCheck %s --check-prefix=PAGE
// RUN: not attn-run %s --entry paged --target=gpu-emulator --random-inputs --shape key=5x2x4x16 --shape value=5x2x4x8 --input pt=%t/pt.npy --input lk=%t/pages_far.npy 2>&1 | FileCheck %s --check-prefix=PAGE
// PAGE: attn-run: error: the generated code reported a run-time error: attn.attention: page_table[5] = 7 is outside [0, 5), the pages of key and value
// RUN: not attn-run %s --entry paged --random-inputs --shape key=5x2x4x16 --shape value=5x2x4x8 --input pt=%t/pt.npy --input lk=%t/pages_long.npy 2>&1 | FileCheck %s --check-prefix=PAGELEN
// PAGELEN: attn-run: error: the generated code reported a run-time error: attn.attention: key_lengths[1] = 13 is outside [0, 12], the rows of key
// RUN: not attn-run %s --entry paged --random-inputs --shape key=0x2x4x16 --shape value=0x2x4x8 --input pt=%t/pt.npy --input lk=%t/pages_ok.npy 2>&1 | FileCheck %s --check-prefix=NOPAGES
// NOPAGES: attn-run: error: the generated code reported a run-time error: attn.attention: page_table[0] = 0 is outside [0, 0), the pages of key and value
// Key and value pools of different page counts.
// RUN: not attn-run %s --entry paged --random-inputs --shape key=5x2x4x16 --shape value=4x2x4x8 --input pt=%t/pt.npy --input lk=%t/pages_ok.npy --output %t/pools.npy 2>&1 | FileCheck %s --check-prefix=POOLS
// RUN: not test -e %t/pools.npy
// RUN: not attn-run %s --entry paged --target=gpu-emulator --random-inputs --shape key=5x2x4x16 --shape value=4x2x4x8 --input pt=%t/pt.npy --input lk=%t/pages_ok.npy 2>&1 | FileCheck %s --check-prefix=POOLS
// POOLS: attn-run: error: the generated code reported a run-time error: attn.attention: dimension 0 of value (4) differs from dimension 0 of key (5)

func.func @dyn(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @dyn_linear(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @segments(%query: tensor<1x4x?x16xf32>, %key: tensor<1x2x?x16xf32>, %value: tensor<1x2x?x8xf32>, %segments: tensor<1x?xi32>) -> tensor<1x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value segments(%segments : tensor<1x?xi32>) {normalizer = #attn.softmax, pattern = #attn.segments}
    : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  return %0 : tensor<1x4x?x8xf32>
}
func.func @padded(%query: tensor<2x4x?x16xf32>, %key: tensor<2x2x?x16xf32>, %value: tensor<2x2x?x8xf32>, %lq: tensor<2xi32>, %lk: tensor<2xi32>) -> tensor<2x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_lengths(%lq : tensor<2xi32>) key_lengths(%lk : tensor<2xi32>) {normalizer = #attn.pointwise<relu>, pattern = #attn.causal}
    : tensor<2x4x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x8xf32> -> tensor<2x4x?x8xf32>
  return %0 : tensor<2x4x?x8xf32>
}
func.func @packed(%query: tensor<1x4x?x16xf32>, %key: tensor<1x2x?x16xf32>, %value: tensor<1x2x?x8xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 4, after = 0>}
    : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  return %0 : tensor<1x4x?x8xf32>
}

func.func @paged(%query: tensor<2x4x1x16xf32>, %key: tensor<?x2x4x16xf32>, %value: tensor<?x2x4x8xf32>, %pt: tensor<2x3xi32>, %lk: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<2xi32>) page_table(%pt : tensor<2x3xi32>) {normalizer = #attn.softmax}
    : tensor<2x4x1x16xf32>, tensor<?x2x4x16xf32>, tensor<?x2x4x8xf32> -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}
