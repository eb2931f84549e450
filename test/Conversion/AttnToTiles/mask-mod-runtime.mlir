// RUN: attn-opt %s --attn-flash="vector-width=16" --verify-diagnostics | FileCheck %s

/// Dynamic lengths: the mask region's blocks are classified at run time by
/// the same interval analysis, emitted as IR in the walk over key blocks
/// (the block's first and last key compared with the region's bound: the
/// prefix's `k < 20` over [k0, k1] is `k1 < 20` for every key, `k0 < 20`
/// for some), and the score region is inlined into the kernel.
// CHECK-LABEL: func.func @dynamic_prefix
// CHECK-NOT: attn.attention
// CHECK: scf.for
// CHECK: arith.cmpi slt, %{{.*}}, %c20
// CHECK: math.tanh
func.func @dynamic_prefix(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32> {
  // expected-remark @+1 {{attn-flash: tiles of 64 queries x 64 keys, 16 lanes; key blocks classified at run time (lengths known at run time); mask_mod (reads query, key) classified by interval analysis per block at run time; score_mod inlined into the kernel}}
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax}
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c20 = arith.constant 20 : index
        %p = arith.cmpi ult, %j, %c20 : index
        %c = arith.cmpi ule, %j, %i : index
        %ok = arith.ori %p, %c : i1
        attn.yield %ok : i1
      }
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %t = math.tanh %s : f32
        attn.yield %t : f32
      }
  return %o : tensor<?x2x?x16xf32>
}
