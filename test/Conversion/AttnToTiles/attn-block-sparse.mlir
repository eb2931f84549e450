// RUN: attn-opt %s --attn-block-sparse="kernels=false vector-width=16 block-q=16 block-k=16" --split-input-file --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-block-sparse="vector-width=16 block-q=16 block-k=16" --split-input-file | FileCheck %s --check-prefix=KERNEL
// RUN: attn-opt %s --attn-block-sparse="kernels=false vector-width=16 block-q=16 block-k=16" --split-input-file | attn-opt --split-input-file | FileCheck %s

/// A causal window leaves blocks empty: the op gets its layout (CSR lists
/// per query block) as an attribute.
// CHECK-LABEL: func @window
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {layout = #attn.block_layout<block_q = 16, block_k = 16, query_blocks = 4, key_blocks = 4, full_offsets = [0, 0, 0, 0, 0], full_blocks = [], partial_offsets = [0, 1, 3, 5, 7], partial_blocks = [0, 0, 1, 1, 2, 2, 3], heads = [0, 0]>, normalizer = #attn.softmax, pattern = #attn.window<before = 8, after = 0>}
/// Lowered: the full list and the partial list as constant tables, a loop
/// over each; only the partial one evaluates the mask.
// KERNEL-LABEL: func @window
// KERNEL: %[[FULL_OFF:.+]] = arith.constant dense<0> : tensor<5xi32>
// KERNEL: %[[PART_OFF:.+]] = arith.constant dense<[0, 1, 3, 5, 7]> : tensor<5xi32>
// KERNEL-NEXT: %[[PART_OFF_BUF:.+]] = bufferization.to_buffer %[[PART_OFF]]
// KERNEL-NEXT: %[[PART:.+]] = arith.constant dense<[0, 0, 1, 1, 2, 2, 3]> : tensor<7xi32>
// KERNEL-NEXT: %[[PART_BUF:.+]] = bufferization.to_buffer %[[PART]]
// KERNEL: scf.parallel
/// Full blocks (none here, but the loop is there and has no mask); the
/// loops over the lists carry the running max and sum.
// KERNEL: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{[^)]*}}) -> (vector<16xf32>, vector<16xf32>) {
// KERNEL-NOT: arith.cmpi sge, %{{.*}} : vector<16xi32>
/// Partial blocks: the block index from the list, the window mask.
// KERNEL: scf.for %[[I:[^ ]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{[^)]*}}) -> (vector<16xf32>, vector<16xf32>) {
// KERNEL:   memref.load %[[PART_BUF]][%[[I]]]
// KERNEL:   arith.cmpi sge, %{{.*}}, %{{.*}} : vector<16xi32>
func.func @window(%q: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-remark @+1 {{attn-block-sparse: tiles of 16 queries x 16 keys, 16 lanes; visiting 14 of 32 key blocks (0 full)}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.window<before = 8, after = 0>}
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

// -----

/// Pointwise attention too; per-head patterns give one layout per distinct
/// head pattern.
// CHECK-LABEL: func @per_head_relu
// KERNEL-LABEL: func @per_head_relu
// CHECK: attn.attention {{.*}}heads = [0, 1]>, normalizer = #attn.pointwise<relu>
func.func @per_head_relu(%q: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-remark @+1 {{visiting 14 of 32 key blocks (6 full)}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>,
      pattern = #attn.per_head<[#attn.causal, #attn.window<before = 0, after = 0>]>}
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

// -----

/// Segment ids are runtime data: every block is partial in the static
/// layout, and the kernel compares the id ranges of the query tile and the
/// key block to skip the ones that cannot match.
// CHECK-LABEL: func @documents
// CHECK: attn.attention {{.*}} segments(%{{.*}} : tensor<1x64xi32>) {layout = #attn.block_layout<{{.*}}partial_offsets = [0, 1, 3, 6, 10]
// KERNEL-LABEL: func @documents
// KERNEL: scf.for
// KERNEL:   arith.minsi %{{.*}} : i32
// KERNEL:   arith.maxsi %{{.*}} : i32
// KERNEL:   scf.if
func.func @documents(%q: tensor<1x1x64x16xf32>, %ids: tensor<1x64xi32>) -> tensor<1x1x64x16xf32> {
  // expected-remark @+1 {{visiting 10 of 16 key blocks (0 full)}}
  %0 = attn.attention %q, %q, %q segments(%ids : tensor<1x64xi32>)
      {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

// -----

/// A pattern with no empty block is left to the dense kernels.
// CHECK-LABEL: func @dense_enough
// KERNEL-LABEL: func @dense_enough
// CHECK: attn.attention
// CHECK-NOT: layout =
func.func @dense_enough(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  // expected-remark @+1 {{attn-block-sparse: no empty blocks; left for the dense kernels}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.fixed<stride = 64, c = 1>}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

// -----

/// Kernel attention has no block kernels (its sparse forms are the linear
/// and chunked ones): left alone, without a layout.
// CHECK-LABEL: func @kernel_left_alone
// KERNEL-LABEL: func @kernel_left_alone
// CHECK: attn.attention
// CHECK-NOT: layout =
// KERNEL: attn.attention
func.func @kernel_left_alone(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<relu>, pattern = #attn.causal}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

// -----

/// Lengths known only at run time (dynamic sizes, or the lengths of a varlen
/// batch) have no compile-time layout: the ops are left, with a remark, for
/// the fused kernels, which classify blocks at run time.
// CHECK-LABEL: func @runtime_lengths
// CHECK-NOT: layout
// CHECK: attn.attention
// CHECK-NOT: layout
// CHECK: attn.attention
// CHECK-NOT: layout
// KERNEL-LABEL: func @runtime_lengths
// KERNEL-COUNT-2: attn.attention
func.func @runtime_lengths(%q: tensor<?x4x?x16xf32>, %p: tensor<2x4x64x16xf32>, %lk: tensor<2xi32>) -> (tensor<?x4x?x16xf32>, tensor<2x4x64x16xf32>) {
  // expected-remark @+1 {{attn-block-sparse: lengths known at run time; left for the kernels, which classify blocks at run time}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  // expected-remark @+1 {{attn-block-sparse: lengths known at run time; left for the kernels, which classify blocks at run time}}
  %1 = attn.attention %p, %p, %p key_lengths(%lk : tensor<2xi32>) {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32> -> tensor<2x4x64x16xf32>
  return %0, %1 : tensor<?x4x?x16xf32>, tensor<2x4x64x16xf32>
}
