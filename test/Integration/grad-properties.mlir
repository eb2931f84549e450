// Properties of the gradients beyond their values (Integration/grad.mlir
// checks those against the float64 reference):
// - a NaN key reaches only the gradients it touches: keys from 30 on are
//   NaN (make_npy.py --nan-rows) under a window of 3 keys before each
//   query, so dQ rows from 30 on and dK, dV rows from 27 on (the keys
//   those queries see) are NaN, every other row finite; through the fused
//   kernel (attn-flash-backward) and the reference gradient; a NaN value
//   likewise (values from 30 on NaN): dQ rows from 30 on (their O, hence
//   D = rowsum(dO * O), is NaN) and dK rows from 27 on are NaN, dV (which
//   no value enters) is finite everywhere (issue 40);
// - the fused kernels' gradients are the same bits on 1 and 2 threads (no
//   atomics, one summation order), in one pass (batch x kv heads >= 4)
//   and in two.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/q.npy --dtype '<f4' --shape 1,2,40,16 --random 1
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/k.npy --dtype '<f4' --shape 1,2,40,16 --random 2 --nan-rows 30
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/v.npy --dtype '<f4' --shape 1,2,40,16 --random 3
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/do.npy --dtype '<f4' --shape 1,2,40,16 --random 4
// DEFINE: %{mode} =
// DEFINE: %{nan} = attn-run %s --entry window --grad %{mode} --input q=%t/q.npy --input k=%t/k.npy --input v=%t/v.npy --input d_output=%t/do.npy --output %t/dq.npy --output %t/dk.npy --output %t/dv.npy --remarks 2> %t/remarks > /dev/null && %python %S/Inputs/nan_rows.py %t/dq.npy --first-nan 30 && %python %S/Inputs/nan_rows.py %t/dk.npy --first-nan 27 && %python %S/Inputs/nan_rows.py %t/dv.npy --first-nan 27
// RUN: %{nan} && FileCheck %s --check-prefix=FUSED < %t/remarks
// FUSED: remark: attn-flash-backward: fused backward
// REDEFINE: %{mode} = --reference
// RUN: %{nan}
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/k_ok.npy --dtype '<f4' --shape 1,2,40,16 --random 2
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/v_nan.npy --dtype '<f4' --shape 1,2,40,16 --random 3 --nan-rows 30
// DEFINE: %{vnan} = attn-run %s --entry window --grad %{mode} --input q=%t/q.npy --input k=%t/k_ok.npy --input v=%t/v_nan.npy --input d_output=%t/do.npy --output %t/dq.npy --output %t/dk.npy --output %t/dv.npy > /dev/null && %python %S/Inputs/nan_rows.py %t/dq.npy --first-nan 30 && %python %S/Inputs/nan_rows.py %t/dk.npy --first-nan 27 && %python %S/Inputs/nan_rows.py %t/dv.npy --first-nan 40
// RUN: %{vnan}
// REDEFINE: %{mode} =
// RUN: %{vnan}
// DEFINE: %{fn} =
// DEFINE: %{threads} = attn-run %s --entry %{fn} --grad --random-inputs --seed 11 --output %t/%{fn}.1.dq.npy --output %t/%{fn}.1.dk.npy --output %t/%{fn}.1.dv.npy --threads 1 --remarks 2> %t/%{fn}.remarks > /dev/null && attn-run %s --entry %{fn} --grad --random-inputs --seed 11 --output %t/%{fn}.2.dq.npy --output %t/%{fn}.2.dk.npy --output %t/%{fn}.2.dv.npy --threads 2 > /dev/null && cmp %t/%{fn}.1.dq.npy %t/%{fn}.2.dq.npy && cmp %t/%{fn}.1.dk.npy %t/%{fn}.2.dk.npy && cmp %t/%{fn}.1.dv.npy %t/%{fn}.2.dv.npy && FileCheck %s --check-prefix=%{fn} < %t/%{fn}.remarks
// REDEFINE: %{fn} = one_pass
// RUN: %{threads}
// one_pass: remark: attn-flash-backward: fused backward, one pass
// REDEFINE: %{fn} = two_passes
// RUN: %{threads}
// two_passes: remark: attn-flash-backward: fused backward, two passes
// REDEFINE: %{fn} = query_heads
// RUN: %{threads}
// query_heads: remark: attn-flash-backward: fused backward, one pass over query heads
// The modifiers' gradients too (bias summed over the batch, gate, sinks),
// with segment ids, soft-capping, a score region and the LSE's cotangent;
// and lengths known at run time (blocks classified at run time, two
// passes), with a window and ALiBi (the slopes' gradient); the gradient of
// a captured T5 bias table (summed per task, lane by lane), in one pass
// and in two:
// DEFINE: %{grads} = --output %t/%{fn}.%{n}.dq.npy --output %t/%{fn}.%{n}.dk.npy --output %t/%{fn}.%{n}.dv.npy --output %t/%{fn}.%{n}.d4.npy
// DEFINE: %{n} = 1
// DEFINE: %{mods} = attn-run %s --entry %{fn} --grad --random-inputs --seed 12 %{shapes} %{grads} %{extra} --threads %{n} --remarks 2> %t/%{fn}.%{n}.remarks > /dev/null
// DEFINE: %{shapes} =
// DEFINE: %{extra} =
// DEFINE: %{same} = cmp %t/%{fn}.1.dq.npy %t/%{fn}.2.dq.npy && cmp %t/%{fn}.1.dk.npy %t/%{fn}.2.dk.npy && cmp %t/%{fn}.1.dv.npy %t/%{fn}.2.dv.npy && cmp %t/%{fn}.1.d4.npy %t/%{fn}.2.d4.npy
// REDEFINE: %{fn} = mods_one_pass
// REDEFINE: %{extra} = --output %t/%{fn}.%{n}.d5.npy --output %t/%{fn}.%{n}.d6.npy
// RUN: %{mods}
// REDEFINE: %{n} = 2
// RUN: %{mods}
// RUN: %{same} && cmp %t/%{fn}.1.d5.npy %t/%{fn}.2.d5.npy && cmp %t/%{fn}.1.d6.npy %t/%{fn}.2.d6.npy
// RUN: FileCheck %s --check-prefix=mods_one_pass < %t/%{fn}.1.remarks
// mods_one_pass: remark: attn-flash-backward: fused backward, one pass
// REDEFINE: %{fn} = mods_dynamic
// REDEFINE: %{extra} = --output %t/%{fn}.%{n}.d5.npy
// REDEFINE: %{shapes} = --shape q=1x3x150x32 --shape k=1x1x150x32 --shape v=1x1x150x32 --shape d_output=1x3x150x32 --shape bias=1x3x150x150
// REDEFINE: %{n} = 1
// RUN: %{mods}
// REDEFINE: %{n} = 2
// RUN: %{mods}
// RUN: %{same} && cmp %t/%{fn}.1.d5.npy %t/%{fn}.2.d5.npy
// RUN: FileCheck %s --check-prefix=mods_dynamic < %t/%{fn}.1.remarks
// mods_dynamic: remark: attn-flash-backward: fused backward, two passes, {{.*}} classified at run time
// REDEFINE: %{extra} =
// REDEFINE: %{shapes} =
// REDEFINE: %{fn} = table_one_pass
// REDEFINE: %{n} = 1
// RUN: %{mods}
// REDEFINE: %{n} = 2
// RUN: %{mods}
// RUN: %{same}
// RUN: FileCheck %s --check-prefix=table_one_pass < %t/%{fn}.1.remarks
// table_one_pass: remark: attn-flash-backward: fused backward, one pass
// REDEFINE: %{fn} = table_two_passes
// REDEFINE: %{n} = 1
// RUN: %{mods}
// REDEFINE: %{n} = 2
// RUN: %{mods}
// RUN: %{same}
// RUN: FileCheck %s --check-prefix=table_two_passes < %t/%{fn}.1.remarks
// table_two_passes: remark: attn-flash-backward: fused backward, two passes

func.func @window(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.window<before = 3, after = 0>} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @one_pass(%q: tensor<2x4x200x32xf32>, %k: tensor<2x2x200x32xf32>, %v: tensor<2x2x200x32xf32>) -> tensor<2x4x200x32xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x4x200x32xf32>, tensor<2x2x200x32xf32>, tensor<2x2x200x32xf32> -> tensor<2x4x200x32xf32>
  return %0 : tensor<2x4x200x32xf32>
}

func.func @query_heads(%q: tensor<1x4x200x32xf32>, %k: tensor<1x1x200x32xf32>, %v: tensor<1x1x200x32xf32>) -> tensor<1x4x200x32xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.window<before = 70, after = 0>} : tensor<1x4x200x32xf32>, tensor<1x1x200x32xf32>, tensor<1x1x200x32xf32> -> tensor<1x4x200x32xf32>
  return %0 : tensor<1x4x200x32xf32>
}

func.func @two_passes(%q: tensor<1x3x200x32xf32>, %k: tensor<1x1x200x32xf32>, %v: tensor<1x1x200x32xf32>) -> tensor<1x3x200x32xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu>, pattern = #attn.window<before = 50, after = 10>} : tensor<1x3x200x32xf32>, tensor<1x1x200x32xf32>, tensor<1x1x200x32xf32> -> tensor<1x3x200x32xf32>
  return %0 : tensor<1x3x200x32xf32>
}

func.func @mods_one_pass(%q: tensor<2x4x150x32xf32>, %k: tensor<2x2x150x32xf32>, %v: tensor<2x2x150x32xf32>, %bias: tensor<1x4x150x150xf32>, %gate: tensor<2x4x150x32xf32>, %ids: tensor<2x150xi32>, %sinks: tensor<4xf32>) -> (tensor<2x4x150x32xf32>, tensor<2x4x150xf32>) {
  %0, %1 = attn.attention %q, %k, %v bias(%bias : tensor<1x4x150x150xf32>) gate(%gate : tensor<2x4x150x32xf32>) segments(%ids : tensor<2x150xi32>) sinks(%sinks : tensor<4xf32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>, softcap = 3.0 : f32} : tensor<2x4x150x32xf32>, tensor<2x2x150x32xf32>, tensor<2x2x150x32xf32> -> tensor<2x4x150x32xf32>, tensor<2x4x150xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %t = math.tanh %s : f32
        attn.yield %t : f32
      }
  return %0, %1 : tensor<2x4x150x32xf32>, tensor<2x4x150xf32>
}

func.func @mods_dynamic(%q: tensor<1x3x?x32xf32>, %k: tensor<1x1x?x32xf32>, %v: tensor<1x1x?x32xf32>, %bias: tensor<1x3x?x?xf32>, %slopes: tensor<3xf32>) -> tensor<1x3x?x32xf32> {
  %0 = attn.attention %q, %k, %v bias(%bias : tensor<1x3x?x?xf32>) alibi_slopes(%slopes : tensor<3xf32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 40, after = 5>} : tensor<1x3x?x32xf32>, tensor<1x1x?x32xf32>, tensor<1x1x?x32xf32> -> tensor<1x3x?x32xf32>
  return %0 : tensor<1x3x?x32xf32>
}

// (T5: a learned bias per head and clamped relative distance.)
func.func @table_one_pass(%q: tensor<2x4x150x32xf32>, %k: tensor<2x2x150x32xf32>, %v: tensor<2x2x150x32xf32>, %table: tensor<4x33xf32>) -> tensor<2x4x150x32xf32> {
  %0 = attn.attention %q, %k, %v captures(%table : tensor<4x33xf32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x4x150x32xf32>, tensor<2x2x150x32xf32>, tensor<2x2x150x32xf32> -> tensor<2x4x150x32xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<4x33xf32>):
        %d = arith.subi %i, %j : index
        %c16 = arith.constant 16 : index
        %r = arith.addi %d, %c16 : index
        %x = tensor.extract %t[%h, %r] : tensor<4x33xf32>
        %y = arith.addf %s, %x : f32
        attn.yield %y : f32
      }
  return %0 : tensor<2x4x150x32xf32>
}

func.func @table_two_passes(%q: tensor<1x3x150x32xf32>, %k: tensor<1x1x150x32xf32>, %v: tensor<1x1x150x32xf32>, %table: tensor<3x33xf32>) -> tensor<1x3x150x32xf32> {
  %0 = attn.attention %q, %k, %v captures(%table : tensor<3x33xf32>) {normalizer = #attn.pointwise<relu>, pattern = #attn.window<before = 60, after = 5>} : tensor<1x3x150x32xf32>, tensor<1x1x150x32xf32>, tensor<1x1x150x32xf32> -> tensor<1x3x150x32xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<3x33xf32>):
        %d = arith.subi %i, %j : index
        %c16 = arith.constant 16 : index
        %r = arith.addi %d, %c16 : index
        %x = tensor.extract %t[%h, %r] : tensor<3x33xf32>
        %y = arith.mulf %s, %x : f32
        attn.yield %y : f32
      }
  return %0 : tensor<1x3x150x32xf32>
}
