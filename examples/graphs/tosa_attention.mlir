// Attention as a TOSA legalization emits it (B*H = 6, L = 75, D = 32):
// matmul with K transposed, a scale, softmax as reduce_max / sub / exp /
// reduce_sum / reciprocal / mul, matmul. attn-lower-to-llvm-pipeline
// lowers TOSA to linalg, fuses elementwise ops and raises it:
//
//   build/bin/attn-run examples/graphs/tosa_attention.mlir --random-inputs --check --remarks

func.func @tosa_attention(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x32xf32>) -> tensor<6x75x32xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %c = "tosa.const"() <{values = dense<0.125> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %m = tosa.reduce_max %ss {axis = 2 : i32} : (tensor<6x75x75xf32>) -> tensor<6x75x1xf32>
  %d = tosa.sub %ss, %m : (tensor<6x75x75xf32>, tensor<6x75x1xf32>) -> tensor<6x75x75xf32>
  %e = tosa.exp %d : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<6x75x75xf32>) -> tensor<6x75x1xf32>
  %r = tosa.reciprocal %sum : (tensor<6x75x1xf32>) -> tensor<6x75x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<6x75x75xf32>, tensor<6x75x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x32xf32>
  return %o : tensor<6x75x32xf32>
}
