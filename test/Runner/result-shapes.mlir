// attn-run sizes every result from the inputs (issue 40), the log-sum-exp
// included, when its type is dynamic: through the attention op, and through
// the ops front ends put after it (casts, elementwise linalg and TOSA ops,
// linalg ops on a tensor.empty sized by tensor.dim). Each runs at two
// shapes from one compilation and is checked against the reference.
// DEFINE: %{shapes} = --shape query=2x4x33x32,1x4x7x32 --shape key=2x2x40x32,1x2x9x32 --shape value=2x2x40x32,1x2x9x32
// RUN: attn-run %s --entry lse --random-inputs %{shapes} --check | FileCheck %s --check-prefix=LSE
// LSE: check result0: {{.*}} ok
// LSE: check result1: {{.*}} ok
// LSE: check result0: {{.*}} ok
// LSE: check result1: {{.*}} ok
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --entry lse --random-inputs %{shapes} --output %t/o.npy --output %t/lse.npy > /dev/null
// RUN: %python -c "import numpy as np, sys; print(np.load(sys.argv[1]).shape, np.load(sys.argv[2]).shape)" %t/lse.0.npy %t/lse.1.npy | FileCheck %s --check-prefix=SHAPES
// SHAPES: (2, 4, 33) (1, 4, 7)
// RUN: attn-run %s --entry cast --random-inputs %{shapes} --check | FileCheck %s --check-prefix=ONE
// RUN: attn-run %s --entry linalg --random-inputs %{shapes} --check | FileCheck %s --check-prefix=ONE
// RUN: attn-run %s --entry tosa --random-inputs %{shapes} --check | FileCheck %s --check-prefix=ONE
// ONE: check result0: {{.*}} ok
// ONE: check result0: {{.*}} ok
//
// An op whose sizes attn-run does not follow is named.
// RUN: not attn-run %s --entry collapse --random-inputs %{shapes} 2>&1 | FileCheck %s --check-prefix=COLLAPSE
// COLLAPSE: attn-run: error: result0 of @collapse has the dynamic type ?xf32 that attn-run cannot size from the inputs: its sizes come from tensor.collapse_shape, which attn-run does not follow

func.func @lse(%query: tensor<?x4x?x32xf32>, %key: tensor<?x2x?x32xf32>, %value: tensor<?x2x?x32xf32>) -> (tensor<?x4x?x32xf32>, tensor<?x4x?xf32>) {
  %0, %1 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x4x?x32xf32>, tensor<?x4x?xf32>
  return %0, %1 : tensor<?x4x?x32xf32>, tensor<?x4x?xf32>
}

func.func @cast(%query: tensor<?x4x?x32xf32>, %key: tensor<?x2x?x32xf32>, %value: tensor<?x2x?x32xf32>) -> tensor<?x4x?xf32> {
  %0, %1 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x4x?x32xf32>, tensor<?x4x?xf32>
  %2 = tensor.cast %1 : tensor<?x4x?xf32> to tensor<?x?x?xf32>
  %3 = tensor.cast %2 : tensor<?x?x?xf32> to tensor<?x4x?xf32>
  return %3 : tensor<?x4x?xf32>
}

// exp(lse): the sum of the exponentials of each row's scores.
func.func @linalg(%query: tensor<?x4x?x32xf32>, %key: tensor<?x2x?x32xf32>, %value: tensor<?x2x?x32xf32>) -> tensor<?x4x?xf32> {
  %0, %1 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x4x?x32xf32>, tensor<?x4x?xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %query, %c0 : tensor<?x4x?x32xf32>
  %l = tensor.dim %query, %c2 : tensor<?x4x?x32xf32>
  %init = tensor.empty(%b, %l) : tensor<?x4x?xf32>
  %2 = linalg.exp ins(%1 : tensor<?x4x?xf32>) outs(%init : tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
  return %2 : tensor<?x4x?xf32>
}

func.func @tosa(%query: tensor<?x4x?x32xf32>, %key: tensor<?x2x?x32xf32>, %value: tensor<?x2x?x32xf32>) -> tensor<?x4x?xf32> {
  %0, %1 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x4x?x32xf32>, tensor<?x4x?xf32>
  %2 = tosa.exp %1 : (tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
  %3 = tosa.add %2, %2 : (tensor<?x4x?xf32>, tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
  return %3 : tensor<?x4x?xf32>
}

func.func @collapse(%query: tensor<?x4x?x32xf32>, %key: tensor<?x2x?x32xf32>, %value: tensor<?x2x?x32xf32>) -> tensor<?xf32> {
  %0, %1 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x4x?x32xf32>, tensor<?x4x?xf32>
  %2 = tensor.collapse_shape %1 [[0, 1, 2]] : tensor<?x4x?xf32> into tensor<?xf32>
  return %2 : tensor<?xf32>
}
