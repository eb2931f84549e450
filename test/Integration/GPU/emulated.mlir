// The GPU kernels of attn-lower-to-nvvm-pipeline, run on the CPU by attn-emulate-gpu (one OpenMP thread per GPU thread), against the independent scalar reference. The same kernels run on a GPU in cuda.mlir.
// DEFINE: %{fn} =
// DEFINE: %{tol} =
// DEFINE: %{check} = attn-run %S/Inputs/kernels.mlir --entry %{fn} --target=gpu-emulator --random-inputs --seed 7 --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %S/Inputs/kernels.mlir --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{tol} = --rtol 1e-2 --atol 1e-2
// REDEFINE: %{fn} = mma_causal_gqa_f16
// RUN: %{check}
// REDEFINE: %{fn} = mma_relu_documents_f16
// RUN: %{check}
// REDEFINE: %{fn} = mma_gelu_bigbird_f16
// RUN: %{check}
// REDEFINE: %{fn} = mma_masked_rows_f16
// RUN: %{check}
// REDEFINE: %{tol} = --rtol 2e-2 --atol 2e-2
// REDEFINE: %{fn} = mma_window_bias_gate_bf16
// RUN: %{check}
// REDEFINE: %{fn} = simt_qknorm_bf16
// RUN: %{check}
// REDEFINE: %{tol} = --rtol 1e-4 --atol 1e-5 --max-rel-err 1e-5
// REDEFINE: %{fn} = simt_dense_f32
// RUN: %{check}
// REDEFINE: %{fn} = simt_wide_causal_f32
// RUN: %{check}
// REDEFINE: %{fn} = simt_sigmoid_per_head_f32
// RUN: %{check}
// REDEFINE: %{fn} = linear_elu_causal
// RUN: %{check}
// REDEFINE: %{fn} = lowrank
// RUN: %{check}
// The SIMT kernel on f16 and bf16 inputs too (tensor cores off).
// REDEFINE: %{tol} = --rtol 1e-2 --atol 1e-2
// RUN: attn-run %S/Inputs/kernels.mlir --entry mma_causal_gqa_f16 --target=gpu-emulator --tensor-cores=false --random-inputs --seed 7 --save-inputs %t/simt_f16 --output %t/simt_f16.npy && attn-ref %S/Inputs/kernels.mlir --entry mma_causal_gqa_f16 --inputs %t/simt_f16 --compare %t/simt_f16.npy %{tol}
// REDEFINE: %{tol} = --rtol 2e-2 --atol 2e-2
// RUN: attn-run %S/Inputs/kernels.mlir --entry mma_window_bias_gate_bf16 --target=gpu-emulator --tensor-cores=false --random-inputs --seed 7 --save-inputs %t/simt_bf16 --output %t/simt_bf16.npy && attn-ref %S/Inputs/kernels.mlir --entry mma_window_bias_gate_bf16 --inputs %t/simt_bf16 --compare %t/simt_bf16.npy %{tol}
