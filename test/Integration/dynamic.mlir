// Dynamic sizes (B, Lq, Lk = ?): each function is compiled once by attn-run
// and run at seven shapes (B x Lq x Lk = 1x1x1, 2x17x17, 1x64x64, 2x65x65,
// 1x300x300, 2x40x130 and 1x70x33: one query, ragged and exact tiles, more
// keys than queries and more queries than keys), each checked against the
// independent scalar reference (attn-ref --runs). GQA (Hq = 4, Hkv = 2),
// D = 16, Dv = 8. One function per normalizer (softmax, pointwise, kernel
// with and without the causal chunked form) and per pattern kind; the
// remarks show the path: the fused kernels classify key blocks at run time,
// attn-reassociate picks the linear form at run time.

// DEFINE: %{fn} =
// DEFINE: %{extra} =
// DEFINE: %{path} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --remarks --random-inputs --seed 5 --shape query=1x4x1x16,2x4x17x16,1x4x64x16,2x4x65x16,1x4x300x16,2x4x40x16,1x4x70x16 --shape key=1x2x1x16,2x2x17x16,1x2x64x16,2x2x65x16,1x2x300x16,2x2x130x16,1x2x33x16 --shape value=1x2x1x8,2x2x17x8,1x2x64x8,2x2x65x8,1x2x300x8,2x2x130x8,1x2x33x8 %{extra} --save-inputs %t/%{fn} --output %t/%{fn}.npy > %t/%{fn}.out 2> %t/%{fn}.log && FileCheck %s --check-prefix=%{path} --input-file %t/%{fn}.log && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --runs 7 --rtol 1e-4 --atol 1e-5
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = softmax
// REDEFINE: %{path} = FLASH
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = causal_softmax
// REDEFINE: %{path} = FLASH
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = relu
// REDEFINE: %{path} = POINTWISE
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = causal_gelu
// REDEFINE: %{path} = POINTWISE
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = kernel
// REDEFINE: %{path} = LINEAR
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = causal_kernel
// REDEFINE: %{path} = CHUNKED
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = window_softmax
// REDEFINE: %{path} = FLASH
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = dilated_relu
// REDEFINE: %{path} = POINTWISE
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = global_softmax
// REDEFINE: %{path} = FLASH
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = strided_softmax
// REDEFINE: %{path} = FLASH
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = fixed_relu
// REDEFINE: %{path} = POINTWISE
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = segments_softmax
// REDEFINE: %{path} = FLASH
// REDEFINE: %{extra} = --shape segments=1x1,2x17,1x64,2x65,1x300,2x40,1x70 --shape key_segments=1x1,2x17,1x64,2x65,1x300,2x130,1x33
// RUN: %{check}
// REDEFINE: %{fn} = per_head_softmax
// REDEFINE: %{path} = FLASH
// REDEFINE: %{extra} =
// RUN: %{check}
// REDEFINE: %{fn} = union_relu
// REDEFINE: %{path} = POINTWISE
// REDEFINE: %{extra} =
// RUN: %{check}


// Kernel attention whose value dim is a multiple of the vector width runs
// the fused linear kernels (attn-linear-kernels) at run-time sizes: the
// key chunks of kv_state, the query tiles of state_apply and the chunks of
// the causal form follow the batch and lengths of the call (Lq != Lk takes
// the quadratic form, chosen at run time).
// DEFINE: %{check16} = attn-run %s --entry %{fn} --remarks --random-inputs --seed 9 --shape query=1x4x1x16,2x4x17x16,1x4x64x16,2x4x65x16,1x4x300x16,2x4x40x16,1x4x70x16 --shape key=1x2x1x16,2x2x17x16,1x2x64x16,2x2x65x16,1x2x300x16,2x2x130x16,1x2x33x16 --shape value=1x2x1x16,2x2x17x16,1x2x64x16,2x2x65x16,1x2x300x16,2x2x130x16,1x2x33x16 --save-inputs %t/%{fn} --output %t/%{fn}.npy > %t/%{fn}.out 2> %t/%{fn}.log && FileCheck %s --check-prefix=%{path} --input-file %t/%{fn}.log && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --runs 7 --rtol 1e-4 --atol 1e-5
// REDEFINE: %{fn} = kernel_fused
// REDEFINE: %{path} = FUSED
// RUN: %{check16}
// REDEFINE: %{fn} = causal_kernel_fused
// REDEFINE: %{path} = FUSEDCAUSAL
// RUN: %{check16}
// REDEFINE: %{fn} = favor_fused
// REDEFINE: %{path} = FUSED
// RUN: %{check16}
// FAVOR+ with Dv = 8 (not fused: the feature map's projection a
// contraction over rows [B, H, L], two dynamic sizes that
// attn-tile-contractions must not merge: MLIR 22's expand-strided-metadata
// crashed on the reshape back; issue 40), on the CPU and the GPU emulator.
// REDEFINE: %{fn} = favor
// REDEFINE: %{path} = DYNLINEAR
// RUN: %{check}
// REDEFINE: %{extra} = --target=gpu-emulator
// RUN: %{check}
// REDEFINE: %{extra} =

// FUSED: remark: attn-linear-kernels: phi(K)^T V and the key sum fused with the feature map
// FUSED: remark: attn-linear-kernels: phi(Q) S / (phi(Q) z) fused with the feature map
// FUSEDCAUSAL: remark: attn-linear-kernels: causal chunked form in one kernel per query head
// DYNLINEAR: remark: attn-reassociate: lengths are dynamic: the linear form (phi(Q) (phi(K)^T V)) when the cost model prefers it

// FLASH: remark: attn-flash: {{.*}}key blocks classified at run time
// POINTWISE: remark: attn-lower-pointwise: {{.*}}key blocks classified at run time
// LINEAR: remark: attn-reassociate: lengths are dynamic: the linear form (phi(Q) (phi(K)^T V)) when the cost model prefers it
// CHUNKED: remark: attn-reassociate: lengths are dynamic: the linear form (chunked prefix form, chunk {{[0-9]+}}) when Lq == Lk and the cost model prefers it

func.func @softmax(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @causal_softmax(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @relu(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @causal_gelu(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<gelu, alpha = 0.5>, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @kernel(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @causal_kernel(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @window_softmax(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 20, after = 5>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @dilated_relu(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.dilated<before = 40, after = 10, dilation = 3>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @global_softmax(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.union<[#attn.window<before = 8, after = 0>, #attn.global<[0, 1, 66]>]>]>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @strided_softmax(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.strided<stride = 7>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @fixed_relu(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu2>, pattern = #attn.fixed<stride = 16, c = 4>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @segments_softmax(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>, %segments: tensor<?x?xi32>, %key_segments: tensor<?x?xi32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value segments(%segments : tensor<?x?xi32>) key_segments(%key_segments : tensor<?x?xi32>) {normalizer = #attn.softmax, pattern = #attn.segments}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @per_head_softmax(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.per_head<[#attn.causal, #attn.window<before = 16, after = 16>, #attn.strided<stride = 5>, #attn.union<[#attn.causal, #attn.global<[3]>]>]>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @union_relu(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.union<[#attn.window<before = 32, after = 0>, #attn.strided<stride = 16>]>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
func.func @kernel_fused(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  return %0 : tensor<?x4x?x16xf32>
}
func.func @causal_kernel_fused(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  return %0 : tensor<?x4x?x16xf32>
}
func.func @favor_fused(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 32, seed = 5>, scale = 0.25 : f32}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  return %0 : tensor<?x4x?x16xf32>
}
func.func @favor(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 32, seed = 5>}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}
