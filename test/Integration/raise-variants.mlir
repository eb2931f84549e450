// Pointwise and linear attention graphs written in linalg and TOSA (the ones of
// Dialect/Attn/Transforms/raise-pointwise.mlir, raise-linear.mlir and
// raise-variants-tosa.mlir),
// run end to end: attn-lower-to-llvm-pipeline raises each (remark) and --check
// compares it with the reference lowering of the unraised graph; the same graph
// compiled with raise=false runs too; both results are compared with an
// independent NumPy evaluation of the graph's formula (Inputs/raise_numpy.py).
// REQUIRES: python-numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --entry relu2_fused --random-inputs --seed 20 --save-inputs %t/relu2_fused --output %t/relu2_fused.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=RELU2_FUSED
// RUN: attn-run %s --entry relu2_fused --random-inputs --seed 20 --output %t/relu2_fused.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py relu2_fused %t/relu2_fused %t/relu2_fused.raised.npy %t/relu2_fused.plain.npy | FileCheck %s --check-prefix=NUMPY
// RELU2_FUSED: remark: raised attention: relu2 times Lk^-alpha, scale 0.25
// RELU2_FUSED: check result0: {{.*}} ok
// RUN: attn-run %s --entry gelu_tanh --random-inputs --seed 21 --save-inputs %t/gelu_tanh --output %t/gelu_tanh.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=GELU_TANH
// RUN: attn-run %s --entry gelu_tanh --random-inputs --seed 21 --output %t/gelu_tanh.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py gelu_tanh %t/gelu_tanh %t/gelu_tanh.raised.npy %t/gelu_tanh.plain.npy | FileCheck %s --check-prefix=NUMPY
// GELU_TANH: remark: raised attention: gelu_tanh, scale 1
// GELU_TANH: check result0: {{.*}} ok
// RUN: attn-run %s --entry softplus --random-inputs --seed 22 --save-inputs %t/softplus --output %t/softplus.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=SOFTPLUS
// RUN: attn-run %s --entry softplus --random-inputs --seed 22 --output %t/softplus.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py softplus %t/softplus %t/softplus.raised.npy %t/softplus.plain.npy | FileCheck %s --check-prefix=NUMPY
// SOFTPLUS: remark: raised attention: softplus times Lk^-alpha, scale 1
// SOFTPLUS: check result0: {{.*}} ok
// RUN: attn-run %s --entry sigmoid_causal --random-inputs --seed 23 --save-inputs %t/sigmoid_causal --output %t/sigmoid_causal.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=SIGMOID_CAUSAL
// RUN: attn-run %s --entry sigmoid_causal --random-inputs --seed 23 --output %t/sigmoid_causal.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py sigmoid_causal %t/sigmoid_causal %t/sigmoid_causal.raised.npy %t/sigmoid_causal.plain.npy | FileCheck %s --check-prefix=NUMPY
// SIGMOID_CAUSAL: remark: raised attention: sigmoid, masked after h, causal mask from the indices, scale 0.25
// SIGMOID_CAUSAL: check result0: {{.*}} ok
// RUN: attn-run %s --entry relu_mask_tensor --random-inputs --seed 24 --save-inputs %t/relu_mask_tensor --output %t/relu_mask_tensor.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=RELU_MASK_TENSOR
// RUN: attn-run %s --entry relu_mask_tensor --random-inputs --seed 24 --output %t/relu_mask_tensor.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py relu_mask_tensor %t/relu_mask_tensor %t/relu_mask_tensor.raised.npy %t/relu_mask_tensor.plain.npy | FileCheck %s --check-prefix=NUMPY
// RELU_MASK_TENSOR: remark: raised attention: relu, masked after h, boolean mask tensor, scale 1
// RELU_MASK_TENSOR: check result0: {{.*}} ok
// RUN: attn-run %s --entry relu_causal_before --random-inputs --seed 25 --save-inputs %t/relu_causal_before --output %t/relu_causal_before.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=RELU_CAUSAL_BEFORE
// RUN: attn-run %s --entry relu_causal_before --random-inputs --seed 25 --output %t/relu_causal_before.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py relu_causal_before %t/relu_causal_before %t/relu_causal_before.raised.npy %t/relu_causal_before.plain.npy | FileCheck %s --check-prefix=NUMPY
// RELU_CAUSAL_BEFORE: remark: raised attention: relu, causal mask from the indices, scale 0.25
// RELU_CAUSAL_BEFORE: check result0: {{.*}} ok
// RUN: attn-run %s --entry gated --random-inputs --seed 26 --save-inputs %t/gated --output %t/gated.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=GATED
// RUN: attn-run %s --entry gated --random-inputs --seed 26 --output %t/gated.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py gated %t/gated %t/gated.raised.npy %t/gated.plain.npy | FileCheck %s --check-prefix=NUMPY
// GATED: remark: raised attention: relu, scale 1, gated
// GATED: check result0: {{.*}} ok
// RUN: attn-run %s --entry qk_layernorm --random-inputs --seed 27 --save-inputs %t/qk_layernorm --output %t/qk_layernorm.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=QK_LAYERNORM
// RUN: attn-run %s --entry qk_layernorm --random-inputs --seed 27 --output %t/qk_layernorm.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py qk_layernorm %t/qk_layernorm %t/qk_layernorm.raised.npy %t/qk_layernorm.plain.npy | FileCheck %s --check-prefix=NUMPY
// QK_LAYERNORM: remark: raised attention: relu, scale 1, qk-layernorm (eps 1e-05)
// QK_LAYERNORM: check result0: {{.*}} ok
// RUN: attn-run %s --entry gqa_relu --random-inputs --seed 28 --save-inputs %t/gqa_relu --output %t/gqa_relu.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=GQA_RELU
// RUN: attn-run %s --entry gqa_relu --random-inputs --seed 28 --output %t/gqa_relu.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py gqa_relu %t/gqa_relu %t/gqa_relu.raised.npy %t/gqa_relu.plain.npy | FileCheck %s --check-prefix=NUMPY
// GQA_RELU: remark: raised attention: relu times Lk^-alpha, scale 0.25, grouped heads (2 query heads per key/value head)
// GQA_RELU: check result0: {{.*}} ok
// RUN: attn-run %s --entry gqa_linear --random-inputs --seed 29 --save-inputs %t/gqa_linear --output %t/gqa_linear.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=GQA_LINEAR
// RUN: attn-run %s --entry gqa_linear --random-inputs --seed 29 --output %t/gqa_linear.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py gqa_linear %t/gqa_linear %t/gqa_linear.raised.npy %t/gqa_linear.plain.npy | FileCheck %s --check-prefix=NUMPY
// GQA_LINEAR: remark: raised attention: linear attention (elu + 1 features) in quadratic form, normalized after the V product, eps 1e-06, grouped heads (2 query heads per key/value head)
// GQA_LINEAR: check result0: {{.*}} ok
// RUN: attn-run %s --entry quadratic_after_v --random-inputs --seed 30 --save-inputs %t/quadratic_after_v --output %t/quadratic_after_v.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=QUADRATIC_AFTER_V
// RUN: attn-run %s --entry quadratic_after_v --random-inputs --seed 30 --output %t/quadratic_after_v.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py quadratic_after_v %t/quadratic_after_v %t/quadratic_after_v.raised.npy %t/quadratic_after_v.plain.npy | FileCheck %s --check-prefix=NUMPY
// QUADRATIC_AFTER_V: remark: raised attention: linear attention (elu + 1 features) in quadratic form, normalized after the V product, eps 1e-06
// QUADRATIC_AFTER_V: check result0: {{.*}} ok
// RUN: attn-run %s --entry quadratic_padding --random-inputs --seed 31 --save-inputs %t/quadratic_padding --output %t/quadratic_padding.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=QUADRATIC_PADDING
// RUN: attn-run %s --entry quadratic_padding --random-inputs --seed 31 --output %t/quadratic_padding.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py quadratic_padding %t/quadratic_padding %t/quadratic_padding.raised.npy %t/quadratic_padding.plain.npy | FileCheck %s --check-prefix=NUMPY
// QUADRATIC_PADDING: remark: raised attention: linear attention (elu + 1 features) in quadratic form, normalized after the V product, boolean mask tensor
// QUADRATIC_PADDING: check result0: {{.*}} ok
// RUN: attn-run %s --entry linear_order --random-inputs --seed 32 --save-inputs %t/linear_order --output %t/linear_order.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=LINEAR_ORDER
// RUN: attn-run %s --entry linear_order --random-inputs --seed 32 --output %t/linear_order.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py linear_order %t/linear_order %t/linear_order.raised.npy %t/linear_order.plain.npy | FileCheck %s --check-prefix=NUMPY
// LINEAR_ORDER: remark: raised attention: linear attention (elu + 1 features) in linear order, eps 0.001
// LINEAR_ORDER: check result0: {{.*}} ok
// RUN: attn-run %s --entry linear_order_named --random-inputs --seed 33 --save-inputs %t/linear_order_named --output %t/linear_order_named.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=LINEAR_ORDER_NAMED
// RUN: attn-run %s --entry linear_order_named --random-inputs --seed 33 --output %t/linear_order_named.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py linear_order_named %t/linear_order_named %t/linear_order_named.raised.npy %t/linear_order_named.plain.npy | FileCheck %s --check-prefix=NUMPY
// LINEAR_ORDER_NAMED: remark: raised attention: linear attention (relu features) in linear order, [B*H, L, D] operands
// LINEAR_ORDER_NAMED: check result0: {{.*}} ok
// RUN: attn-run %s --entry favor --random-inputs --seed 34 --save-inputs %t/favor --output %t/favor.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=FAVOR
// RUN: attn-run %s --entry favor --random-inputs --seed 34 --output %t/favor.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py favor %t/favor %t/favor.raised.npy %t/favor.plain.npy | FileCheck %s --check-prefix=NUMPY
// FAVOR: remark: raised attention: linear attention (FAVOR+ features
// FAVOR: check result0: {{.*}} ok
// RUN: attn-run %s --entry tosa_gelu --random-inputs --seed 35 --save-inputs %t/tosa_gelu --output %t/tosa_gelu.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=TOSA_GELU
// RUN: attn-run %s --entry tosa_gelu --random-inputs --seed 35 --output %t/tosa_gelu.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py tosa_gelu %t/tosa_gelu %t/tosa_gelu.raised.npy %t/tosa_gelu.plain.npy | FileCheck %s --check-prefix=NUMPY
// TOSA_GELU: remark: raised attention: gelu times Lk^-alpha
// TOSA_GELU: check result0: {{.*}} ok
// RUN: attn-run %s --entry tosa_linear_quadratic --random-inputs --seed 36 --save-inputs %t/tosa_linear_quadratic --output %t/tosa_linear_quadratic.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=TOSA_LINEAR_QUADRATIC
// RUN: attn-run %s --entry tosa_linear_quadratic --random-inputs --seed 36 --output %t/tosa_linear_quadratic.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py tosa_linear_quadratic %t/tosa_linear_quadratic %t/tosa_linear_quadratic.raised.npy %t/tosa_linear_quadratic.plain.npy | FileCheck %s --check-prefix=NUMPY
// TOSA_LINEAR_QUADRATIC: remark: raised attention: linear attention (elu + 1 features) in quadratic form, normalized after the V product, eps 1e-06
// TOSA_LINEAR_QUADRATIC: check result0: {{.*}} ok
// RUN: attn-run %s --entry tosa_linear_order --random-inputs --seed 37 --save-inputs %t/tosa_linear_order --output %t/tosa_linear_order.raised.npy --check --remarks 2>&1 | FileCheck %s --check-prefix=TOSA_LINEAR_ORDER
// RUN: attn-run %s --entry tosa_linear_order --random-inputs --seed 37 --output %t/tosa_linear_order.plain.npy --remarks --pipeline="attn-lower-to-llvm-pipeline{raise=false}" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: %attn_py3 %S/Inputs/raise_numpy.py tosa_linear_order %t/tosa_linear_order %t/tosa_linear_order.raised.npy %t/tosa_linear_order.plain.npy | FileCheck %s --check-prefix=NUMPY
// TOSA_LINEAR_ORDER: remark: raised attention: linear attention (relu features) in linear order, [B*H, L, D] operands
// TOSA_LINEAR_ORDER: check result0: {{.*}} ok
// PLAIN-NOT: raised attention
// NUMPY: raised.npy: max_abs_err={{.*}} ok
// NUMPY-NEXT: plain.npy: max_abs_err={{.*}} ok

#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>

func.func @relu2_fused(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %c2 = arith.constant 2 : index
  %lk = tensor.dim %k, %c2 : tensor<1x2x33x16xf32>
  %lki = arith.index_cast %lk : index to i64
  %lkf = arith.sitofp %lki : i64 to f32
  %mhalf = arith.constant -0.5 : f32
  %f = math.powf %lkf, %mhalf : f32
  %quarter = arith.constant 0.25 : f32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %xs = arith.mulf %x, %quarter : f32
    %r = arith.maximumf %xs, %zero : f32
    %r2 = arith.mulf %r, %r : f32
    %y = arith.mulf %r2, %f : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @gelu_tanh(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cst = arith.constant 0.797884583 : f32
  %a3 = arith.constant 4.471500e-02 : f32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %x2 = arith.mulf %x, %x : f32
    %x3 = arith.mulf %x2, %x : f32
    %t0 = arith.mulf %x3, %a3 : f32
    %t1 = arith.addf %x, %t0 : f32
    %u = arith.mulf %t1, %cst : f32
    %t = math.tanh %u : f32
    %t2 = arith.addf %one, %t : f32
    %h = arith.mulf %half, %x : f32
    %y = arith.mulf %h, %t2 : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @softplus(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %one = arith.constant 1.0 : f32
  %c2 = arith.constant 2 : index
  %lk = tensor.dim %k, %c2 : tensor<1x2x33x16xf32>
  %lki = arith.index_cast %lk : index to i32
  %lkf = arith.uitofp %lki : i32 to f32
  %f = math.rsqrt %lkf : f32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %e = math.exp %x : f32
    %e1 = arith.addf %one, %e : f32
    %l = math.log %e1 : f32
    %y = arith.mulf %f, %l : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @sigmoid_causal(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %one = arith.constant 1.0 : f32
  %cst = arith.constant 0.25 : f32
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %xs = arith.mulf %x, %cst : f32
    %n = arith.negf %xs : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %y = arith.divf %one, %d : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%g : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ok = arith.cmpi ule, %j, %i : index
    %y = arith.select %ok, %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @relu_mask_tensor(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>, %m: tensor<33x33xi1>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #m2, #id], iterator_types = #par} ins(%g, %m : tensor<1x2x33x33xf32>, tensor<33x33xi1>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %keep: i1, %out: f32):
    %y = arith.select %keep, %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @relu_causal_before(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %cst = arith.constant 0.25 : f32
  %sm = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ok = arith.cmpi ule, %j, %i : index
    %xs = arith.mulf %x, %cst : f32
    %y = arith.select %ok, %xs, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%sm : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @gated(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>, %g: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %o0 = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %o = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = #par} ins(%o0, %g : tensor<1x2x33x8xf32>, tensor<1x2x33x8xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %gx: f32, %out: f32):
    %y = arith.mulf %gx, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @qk_layernorm(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %dim = arith.constant 16.0 : f32
  %lneps = arith.constant 1.0e-05 : f32
  %qn_er = tensor.empty() : tensor<1x2x33xf32>
  %qn_rz = linalg.fill ins(%zero : f32) outs(%qn_er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %qn_sum = linalg.reduce ins(%q : tensor<1x2x33x16xf32>) outs(%qn_rz : tensor<1x2x33xf32>) dimensions = [3]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %qn_e = tensor.empty() : tensor<1x2x33x16xf32>
  %qn_xc = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i)>, affine_map<(b, h, i, d) -> (b, h, i, d)>], iterator_types = #par} ins(%q, %qn_sum : tensor<1x2x33x16xf32>, tensor<1x2x33xf32>) outs(%qn_e : tensor<1x2x33x16xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %m = arith.divf %s, %dim : f32
    %c = arith.subf %a, %m : f32
    linalg.yield %c : f32
  } -> tensor<1x2x33x16xf32>
  %qn_sq = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i, d)>], iterator_types = #par} ins(%qn_xc : tensor<1x2x33x16xf32>) outs(%qn_e : tensor<1x2x33x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %a2 = arith.mulf %a, %a : f32
    linalg.yield %a2 : f32
  } -> tensor<1x2x33x16xf32>
  %qn_vs = linalg.reduce ins(%qn_sq : tensor<1x2x33x16xf32>) outs(%qn_rz : tensor<1x2x33xf32>) dimensions = [3]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %qn_rs = linalg.generic {indexing_maps = [affine_map<(b, h, i) -> (b, h, i)>, affine_map<(b, h, i) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%qn_vs : tensor<1x2x33xf32>) outs(%qn_er : tensor<1x2x33xf32>) {
  ^bb0(%a: f32, %out: f32):
    %var = arith.divf %a, %dim : f32
    %ve = arith.addf %var, %lneps : f32
    %rs = math.rsqrt %ve : f32
    linalg.yield %rs : f32
  } -> tensor<1x2x33xf32>
  %qn = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i)>, affine_map<(b, h, i, d) -> (b, h, i, d)>], iterator_types = #par} ins(%qn_xc, %qn_rs : tensor<1x2x33x16xf32>, tensor<1x2x33xf32>) outs(%qn_e : tensor<1x2x33x16xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %c = arith.mulf %a, %s : f32
    linalg.yield %c : f32
  } -> tensor<1x2x33x16xf32>
  %kn_er = tensor.empty() : tensor<1x2x33xf32>
  %kn_rz = linalg.fill ins(%zero : f32) outs(%kn_er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %kn_sum = linalg.reduce ins(%k : tensor<1x2x33x16xf32>) outs(%kn_rz : tensor<1x2x33xf32>) dimensions = [3]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %kn_e = tensor.empty() : tensor<1x2x33x16xf32>
  %kn_xc = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i)>, affine_map<(b, h, i, d) -> (b, h, i, d)>], iterator_types = #par} ins(%k, %kn_sum : tensor<1x2x33x16xf32>, tensor<1x2x33xf32>) outs(%kn_e : tensor<1x2x33x16xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %m = arith.divf %s, %dim : f32
    %c = arith.subf %a, %m : f32
    linalg.yield %c : f32
  } -> tensor<1x2x33x16xf32>
  %kn_vs = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%kn_xc : tensor<1x2x33x16xf32>) outs(%kn_rz : tensor<1x2x33xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %a2 = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %a2 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33xf32>
  %kn_rs = linalg.generic {indexing_maps = [affine_map<(b, h, i) -> (b, h, i)>, affine_map<(b, h, i) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%kn_vs : tensor<1x2x33xf32>) outs(%kn_er : tensor<1x2x33xf32>) {
  ^bb0(%a: f32, %out: f32):
    %var = arith.divf %a, %dim : f32
    %ve = arith.addf %var, %lneps : f32
    %rs = math.rsqrt %ve : f32
    linalg.yield %rs : f32
  } -> tensor<1x2x33xf32>
  %kn = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i)>, affine_map<(b, h, i, d) -> (b, h, i, d)>], iterator_types = #par} ins(%kn_xc, %kn_rs : tensor<1x2x33x16xf32>, tensor<1x2x33xf32>) outs(%kn_e : tensor<1x2x33x16xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %c = arith.mulf %a, %s : f32
    linalg.yield %c : f32
  } -> tensor<1x2x33x16xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qn, %kn : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @gqa_relu(%q: tensor<1x2x33x16xf32>, %k: tensor<1x1x33x16xf32>, %v: tensor<1x1x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<1x1x2x33x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x1x33x16xf32>) outs(%e5 : tensor<1x1x2x33x16xf32>) dimensions = [2]
  %kk = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x1x2x33x16xf32> into tensor<1x2x33x16xf32>
  %e5v = tensor.empty() : tensor<1x1x2x33x8xf32>
  %vb = linalg.broadcast ins(%v : tensor<1x1x33x8xf32>) outs(%e5v : tensor<1x1x2x33x8xf32>) dimensions = [2]
  %vv = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x1x2x33x8xf32> into tensor<1x2x33x8xf32>
  %cst = arith.constant 0.25 : f32
  %f = arith.constant 0.0303030312 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %kk : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %xs = arith.mulf %x, %cst : f32
    %r = arith.maximumf %xs, %zero : f32
    %y = arith.mulf %r, %f : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %vv : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @gqa_linear(%q: tensor<1x2x33x16xf32>, %k: tensor<1x1x33x16xf32>, %v: tensor<1x1x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %e5 = tensor.empty() : tensor<1x1x2x33x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x1x33x16xf32>) outs(%e5 : tensor<1x1x2x33x16xf32>) dimensions = [2]
  %kk = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x1x2x33x16xf32> into tensor<1x2x33x16xf32>
  %e5v = tensor.empty() : tensor<1x1x2x33x8xf32>
  %vb = linalg.broadcast ins(%v : tensor<1x1x33x8xf32>) outs(%e5v : tensor<1x1x2x33x8xf32>) dimensions = [2]
  %vv = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x1x2x33x8xf32> into tensor<1x2x33x8xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%kk : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %a = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %vv : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.reduce ins(%a : tensor<1x2x33x33xf32>) outs(%rz : tensor<1x2x33xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %eps = arith.constant 1.0e-06 : f32
    %de = arith.addf %d, %eps : f32
    %y = arith.divf %n, %de : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @quadratic_after_v(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%k : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %a = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.reduce ins(%a : tensor<1x2x33x33xf32>) outs(%rz : tensor<1x2x33xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %eps = arith.constant 1.0e-06 : f32
    %de = arith.addf %d, %eps : f32
    %y = arith.divf %n, %de : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @quadratic_padding(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>, %m: tensor<1x1x1x33xi1>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%k : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %a = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %am = linalg.generic {indexing_maps = [#id, affine_map<(b, h, i, j) -> (b, 0, 0, j)>, #id], iterator_types = #par} ins(%a, %m : tensor<1x2x33x33xf32>, tensor<1x1x1x33xi1>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %keep: i1, %out: f32):
    %y = arith.select %keep, %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%am, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.reduce ins(%am : tensor<1x2x33x33xf32>) outs(%rz : tensor<1x2x33xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %y = arith.divf %n, %d : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @linear_order(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%k : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %ekv = tensor.empty() : tensor<1x2x16x8xf32>
  %kvz = linalg.fill ins(%zero : f32) outs(%ekv : tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  %kv = linalg.generic {indexing_maps = [affine_map<(b, h, d, e, j) -> (b, h, j, d)>, affine_map<(b, h, d, e, j) -> (b, h, j, e)>, affine_map<(b, h, d, e, j) -> (b, h, d, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fk, %v : tensor<1x2x33x16xf32>, tensor<1x2x33x8xf32>) outs(%kvz : tensor<1x2x16x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x16x8xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, d) -> (b, h, i, d)>, affine_map<(b, h, i, e, d) -> (b, h, d, e)>, affine_map<(b, h, i, e, d) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %kv : tensor<1x2x33x16xf32>, tensor<1x2x16x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %ez = tensor.empty() : tensor<1x2x16xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ez : tensor<1x2x16xf32>) -> tensor<1x2x16xf32>
  %z = linalg.reduce ins(%fk : tensor<1x2x33x16xf32>) outs(%zz : tensor<1x2x16xf32>) dimensions = [2]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, d)>, affine_map<(b, h, i, d) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%fq, %z : tensor<1x2x33x16xf32>, tensor<1x2x16xf32>) outs(%rz : tensor<1x2x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33xf32>
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %eps = arith.constant 1.0e-03 : f32
    %de = arith.addf %d, %eps : f32
    %r = arith.divf %one, %de : f32
    %y = arith.mulf %r, %n : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @linear_order_named(%q: tensor<4x33x16xf32>, %k: tensor<4x33x16xf32>, %v: tensor<4x33x8xf32>) -> tensor<4x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ef = tensor.empty() : tensor<4x33x16xf32>
  %fq = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<4x33x16xf32>) outs(%ef : tensor<4x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<4x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%k : tensor<4x33x16xf32>) outs(%ef : tensor<4x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<4x33x16xf32>
  %et = tensor.empty() : tensor<4x16x33xf32>
  %fkt = linalg.transpose ins(%fk : tensor<4x33x16xf32>) outs(%et : tensor<4x16x33xf32>) permutation = [0, 2, 1]
  %ekv = tensor.empty() : tensor<4x16x8xf32>
  %kvz = linalg.fill ins(%zero : f32) outs(%ekv : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %kv = linalg.batch_matmul ins(%fkt, %v : tensor<4x16x33xf32>, tensor<4x33x8xf32>) outs(%kvz : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %eo = tensor.empty() : tensor<4x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x33x8xf32>) -> tensor<4x33x8xf32>
  %num = linalg.batch_matmul ins(%fq, %kv : tensor<4x33x16xf32>, tensor<4x16x8xf32>) outs(%oz : tensor<4x33x8xf32>) -> tensor<4x33x8xf32>
  %ez = tensor.empty() : tensor<4x16xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ez : tensor<4x16xf32>) -> tensor<4x16xf32>
  %z = linalg.reduce ins(%fk : tensor<4x33x16xf32>) outs(%zz : tensor<4x16xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %er = tensor.empty() : tensor<4x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<4x33xf32>) -> tensor<4x33xf32>
  %den = linalg.batch_matvec ins(%fq, %z : tensor<4x33x16xf32>, tensor<4x16xf32>) outs(%rz : tensor<4x33xf32>) -> tensor<4x33xf32>
  %o = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%num, %den : tensor<4x33x8xf32>, tensor<4x33xf32>) outs(%eo : tensor<4x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %y = arith.divf %n, %d : f32
    linalg.yield %y : f32
  } -> tensor<4x33x8xf32>
  return %o : tensor<4x33x8xf32>
}

func.func @favor(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>, %w: tensor<24x16xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %quarter4 = arith.constant 0.5 : f32
  %half = arith.constant 0.5 : f32
  %rsqrtm = arith.constant 0.204124153 : f32
  %fq_x = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.mulf %x, %quarter4 : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fq_fe = tensor.empty() : tensor<1x2x33x24xf32>
  %fq_fz = linalg.fill ins(%zero : f32) outs(%fq_fe : tensor<1x2x33x24xf32>) -> tensor<1x2x33x24xf32>
  %fq_xw = linalg.generic {indexing_maps = [affine_map<(b, h, l, r, d) -> (b, h, l, d)>, affine_map<(b, h, l, r, d) -> (r, d)>, affine_map<(b, h, l, r, d) -> (b, h, l, r)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq_x, %w : tensor<1x2x33x16xf32>, tensor<24x16xf32>) outs(%fq_fz : tensor<1x2x33x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %mm : f32
    linalg.yield %s : f32
  } -> tensor<1x2x33x24xf32>
  %fq_re = tensor.empty() : tensor<1x2x33xf32>
  %fq_rz = linalg.fill ins(%zero : f32) outs(%fq_re : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %fq_sq = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%fq_x : tensor<1x2x33x16xf32>) outs(%fq_rz : tensor<1x2x33xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %a2 = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %a2 : f32
    linalg.yield %s : f32
  } -> tensor<1x2x33xf32>
  %fq = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%fq_xw, %fq_sq : tensor<1x2x33x24xf32>, tensor<1x2x33xf32>) outs(%fq_fe : tensor<1x2x33x24xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %h = arith.mulf %s, %half : f32
    %d = arith.subf %a, %h : f32
    %e = math.exp %d : f32
    %y = arith.mulf %e, %rsqrtm : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x24xf32>
  %fk_x = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%k : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.mulf %x, %quarter4 : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk_fe = tensor.empty() : tensor<1x2x33x24xf32>
  %fk_fz = linalg.fill ins(%zero : f32) outs(%fk_fe : tensor<1x2x33x24xf32>) -> tensor<1x2x33x24xf32>
  %fk_xw = linalg.generic {indexing_maps = [affine_map<(b, h, l, r, d) -> (b, h, l, d)>, affine_map<(b, h, l, r, d) -> (r, d)>, affine_map<(b, h, l, r, d) -> (b, h, l, r)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fk_x, %w : tensor<1x2x33x16xf32>, tensor<24x16xf32>) outs(%fk_fz : tensor<1x2x33x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %mm : f32
    linalg.yield %s : f32
  } -> tensor<1x2x33x24xf32>
  %fk_re = tensor.empty() : tensor<1x2x33xf32>
  %fk_rz = linalg.fill ins(%zero : f32) outs(%fk_re : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %fk_sq = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%fk_x : tensor<1x2x33x16xf32>) outs(%fk_rz : tensor<1x2x33xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %a2 = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %a2 : f32
    linalg.yield %s : f32
  } -> tensor<1x2x33xf32>
  %fk = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%fk_xw, %fk_sq : tensor<1x2x33x24xf32>, tensor<1x2x33xf32>) outs(%fk_fe : tensor<1x2x33x24xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %h = arith.mulf %s, %half : f32
    %d = arith.subf %a, %h : f32
    %e = math.exp %d : f32
    %y = arith.mulf %e, %rsqrtm : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x24xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, j, r)>, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<1x2x33x24xf32>, tensor<1x2x33x24xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.reduce ins(%a : tensor<1x2x33x33xf32>) outs(%rz : tensor<1x2x33xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %eps = arith.constant 1.0e-06 : f32
    %de = arith.addf %d, %eps : f32
    %y = arith.divf %n, %de : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

func.func @tosa_gelu(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %h = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %r2 = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %x1 = tosa.mul %s, %r2, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %e = tosa.erf %x1 : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  %e1 = tosa.add %e, %one : (tensor<6x75x75xf32>, tensor<1x1x1xf32>) -> tensor<6x75x75xf32>
  %hx = tosa.mul %s, %h, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %g = tosa.mul %hx, %e1, %shift : (tensor<6x75x75xf32>, tensor<6x75x75xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %f = "tosa.const"() <{values = dense<0.115470052> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %p = tosa.mul %g, %f, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

func.func @tosa_linear_quadratic(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %zc = "tosa.const"() <{values = dense<0.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %onec = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %fq_pos = tosa.greater %q, %zc : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xi1>
  %fq_a = tosa.add %q, %onec : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xf32>
  %fq_e = tosa.exp %q : (tensor<6x75x32xf32>) -> tensor<6x75x32xf32>
  %fq = tosa.select %fq_pos, %fq_a, %fq_e : (tensor<6x75x32xi1>, tensor<6x75x32xf32>, tensor<6x75x32xf32>) -> tensor<6x75x32xf32>
  %fk_pos = tosa.greater %k, %zc : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xi1>
  %fk_a = tosa.add %k, %onec : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xf32>
  %fk_e = tosa.exp %k : (tensor<6x75x32xf32>) -> tensor<6x75x32xf32>
  %fk = tosa.select %fk_pos, %fk_a, %fk_e : (tensor<6x75x32xi1>, tensor<6x75x32xf32>, tensor<6x75x32xf32>) -> tensor<6x75x32xf32>
  %kt = tosa.transpose %fk {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %a = tosa.matmul %fq, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %num = tosa.matmul %a, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  %den = tosa.reduce_sum %a {axis = 2 : i32} : (tensor<6x75x75xf32>) -> tensor<6x75x1xf32>
  %eps = "tosa.const"() <{values = dense<1.0e-06> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %de = tosa.add %den, %eps : (tensor<6x75x1xf32>, tensor<1x1x1xf32>) -> tensor<6x75x1xf32>
  %r = tosa.reciprocal %de : (tensor<6x75x1xf32>) -> tensor<6x75x1xf32>
  %o = tosa.mul %num, %r, %shift : (tensor<6x75x16xf32>, tensor<6x75x1xf32>, tensor<1xi8>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

func.func @tosa_linear_order(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %zc = "tosa.const"() <{values = dense<0.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %fq = tosa.maximum %q, %zc : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xf32>
  %fk = tosa.maximum %k, %zc : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %fkt = tosa.transpose %fk {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %kv = tosa.matmul %fkt, %v, %zp, %zp : (tensor<6x32x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x32x16xf32>
  %num = tosa.matmul %fq, %kv, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  %z = tosa.reduce_sum %fkt {axis = 2 : i32} : (tensor<6x32x75xf32>) -> tensor<6x32x1xf32>
  %den = tosa.matmul %fq, %z, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x1xf32>
  %r = tosa.reciprocal %den : (tensor<6x75x1xf32>) -> tensor<6x75x1xf32>
  %o = tosa.mul %num, %r, %shift : (tensor<6x75x16xf32>, tensor<6x75x1xf32>, tensor<1xi8>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}
