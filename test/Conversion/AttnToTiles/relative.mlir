// RUN: attn-opt %s --attn-flash="vector-width=8" --cse --verify-diagnostics | FileCheck %s

/// Transformer-XL on the flash frame: the memory is prepended to K and V
/// (copies of (M + L) x D per head), the distance embeddings are transposed
/// and padded once per call (relPad = 16 + 128 zero columns before the 60
/// distances, 16 after), and each tile keeps two query tiles: scale (q + u)^T
/// for the keys and scale (q + v)^T for the distances. The position term of
/// 8 queries and one key is one contiguous vector of a row of the padded
/// embeddings (the relative shift as index arithmetic): no Lq x Lk tensor.
// CHECK-LABEL: func @relative
// CHECK-NOT: 40x60
// CHECK: %[[K:.+]] = tensor.concat dim(2) %{{.*}}, %{{.*}} : (tensor<1x2x20x16xf32>, tensor<1x2x40x16xf32>) -> tensor<1x2x60x16xf32>
// CHECK: tensor.concat dim(2) %{{.*}}, %{{.*}} : (tensor<1x2x20x8xf32>, tensor<1x2x40x8xf32>) -> tensor<1x2x60x8xf32>
// CHECK: %[[U:.+]] = bufferization.to_buffer %{{.*}} read_only : tensor<2x16xf32> to memref<2x16xf32>
// CHECK: %[[VB:.+]] = bufferization.to_buffer %{{.*}} read_only : tensor<2x16xf32> to memref<2x16xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x16x220xf32>)
// CHECK:   %[[HH:.+]] = linalg.index 0
// CHECK:   %[[DD:.+]] = linalg.index 1
// CHECK:   %[[C:.+]] = linalg.index 2
// CHECK:   %[[R:.+]] = arith.subi %[[C]], %c144
// CHECK:   tensor.extract %{{.*}}[%[[HH]], %{{.*}}, %[[DD]]] : tensor<2x60x16xf32>
// CHECK:   arith.select
// CHECK: %[[REL:.+]] = bufferization.to_buffer %{{.*}} read_only : tensor<2x16x220xf32> to memref<2x16x220xf32>
// CHECK: scf.parallel
// CHECK:   %[[QT:.+]] = memref.alloc() : memref<16x16xf32>
// CHECK:   %[[QRT:.+]] = memref.alloc() : memref<16x16xf32>
// CHECK:   memref.load %[[VB]]
// CHECK:   memref.store %{{.*}}, %[[QRT]]
// CHECK:   memref.load %[[U]]
// CHECK:   memref.store %{{.*}}, %[[QT]]
// CHECK:   vector.load %[[QT]]
// CHECK:   vector.load %[[QRT]]
// CHECK:   vector.load %[[REL]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x16x220xf32>, vector<8xf32>
// CHECK:   vector.fma
func.func @relative(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x8xf32>, %r: tensor<2x60x16xf32>, %u: tensor<2x16xf32>, %vb: tensor<2x16xf32>, %mk: tensor<1x2x20x16xf32>, %mv: tensor<1x2x20x8xf32>) -> tensor<1x2x40x8xf32> {
  // expected-remark @+1 {{attn-flash: Transformer-XL, the position term per tile (the relative shift by index arithmetic), memory of 20 keys; tiles of 16 queries x 128 keys, 8 lanes; visiting 6 of 6 key blocks (0 full)}}
  %0 = attn.relative_attention %q, %k, %v, %r, %u, %vb memory(%mk, %mv : tensor<1x2x20x16xf32>, tensor<1x2x20x8xf32>)
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x8xf32>, tensor<2x60x16xf32>, tensor<2x16xf32>, tensor<2x16xf32> -> tensor<1x2x40x8xf32>
  return %0 : tensor<1x2x40x8xf32>
}
