// exp of vector<16xf32> as attn-math-approximation writes it, run on 1024
// values (Inputs/exp_values.py: a grid from -110 to 92, the bounds of its
// ranges, +-inf, NaN, +-0) and checked against Python's math.exp: 3e-7
// relative, inf above FLT_MAX, 0 or the exact subnormal below FLT_MIN, NaN
// kept. The host's pipeline (with AVX-512: vscalefps under a lane mask)
// and vector-width=8 (MLIR's polynomial, on every x86-64 with AVX2); then
// the kernels' softmax weights (attn.flush_below = -64: exactly 0 below).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/exp_values.py write %t/x.npy
// DEFINE: %{fn} =
// DEFINE: %{opts} =
// DEFINE: %{run} = attn-run %s --entry %{fn} %{opts} --input x=%t/x.npy --output %t/out.npy > /dev/null
// REDEFINE: %{fn} = exp
// RUN: %{run} && %python %S/Inputs/exp_values.py check %t/x.npy %t/out.npy
// REDEFINE: %{opts} = --pipeline=attn-lower-to-llvm-pipeline{vector-width=8}
// RUN: %{run} && %python %S/Inputs/exp_values.py check %t/x.npy %t/out.npy
// REDEFINE: %{fn} = flushed
// REDEFINE: %{opts} =
// RUN: %{run} && %python %S/Inputs/exp_values.py check %t/x.npy %t/out.npy --flush-below -64
// REDEFINE: %{opts} = --pipeline=attn-lower-to-llvm-pipeline{vector-width=8}
// RUN: %{run} && %python %S/Inputs/exp_values.py check %t/x.npy %t/out.npy --flush-below -64

func.func @exp(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %n = arith.constant 1024 : index
  %pad = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1024xf32>
  %r = scf.for %i = %c0 to %n step %c16 iter_args(%acc = %init) -> tensor<1024xf32> {
    %v = vector.transfer_read %x[%i], %pad {in_bounds = [true]} : tensor<1024xf32>, vector<16xf32>
    %e = math.exp %v : vector<16xf32>
    %w = vector.transfer_write %e, %acc[%i] {in_bounds = [true]} : vector<16xf32>, tensor<1024xf32>
    scf.yield %w : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}

func.func @flushed(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %n = arith.constant 1024 : index
  %pad = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1024xf32>
  %r = scf.for %i = %c0 to %n step %c16 iter_args(%acc = %init) -> tensor<1024xf32> {
    %v = vector.transfer_read %x[%i], %pad {in_bounds = [true]} : tensor<1024xf32>, vector<16xf32>
    %e = math.exp %v {attn.flush_below = -64.0 : f32} : vector<16xf32>
    %w = vector.transfer_write %e, %acc[%i] {in_bounds = [true]} : vector<16xf32>, tensor<1024xf32>
    scf.yield %w : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}
