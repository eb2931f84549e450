// The GPU kernels of attn-lower-to-nvvm-pipeline, run on the CPU by attn-emulate-gpu (one OpenMP thread per GPU thread), against the independent scalar reference. The same kernels run on a GPU in cuda.mlir.
// Not in the sanitizer stage (CI time): the emulator and the GPU kernels'
// compiler paths run under ASan and UBSan in lse.mlir, nan-confinement.mlir,
// Runner/runtime-errors.mlir and the Conversion/AttnToGPU tests.
// UNSUPPORTED: asan
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
// REDEFINE: %{fn} = mma_modifiers_f16
// RUN: %{check}
// REDEFINE: %{fn} = mma_mods_f16
// RUN: %{check}
// REDEFINE: %{tol} = --rtol 2e-2 --atol 2e-2
// REDEFINE: %{fn} = mma_window_bias_gate_bf16
// RUN: %{check}
// REDEFINE: %{fn} = simt_qknorm_bf16
// RUN: %{check}
// REDEFINE: %{tol} = --rtol 1e-4 --atol 1e-5 --max-rel-err 1e-5
// REDEFINE: %{fn} = simt_dense_f32
// RUN: %{check}
// REDEFINE: %{fn} = simt_modifiers_f32
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
// Dynamic sizes: one compilation, six shapes (B x Lq x Lk = 1x1x1, 2x17x17,
// 1x100x100, 1x130x130, 2x40x130, 1x70x33); varlen batches with random
// lengths (padded) and offsets (packed) at three sizes.
// RUN: attn-run %S/Inputs/kernels.mlir --entry dyn_mma_causal_f16 --target=gpu-emulator --random-inputs --seed 7 --shape query=1x4x1x32,2x4x17x32,1x4x100x32,1x4x130x32,2x4x40x32,1x4x70x32 --shape key=1x2x1x32,2x2x17x32,1x2x100x32,1x2x130x32,2x2x130x32,1x2x33x32 --shape value=1x2x1x16,2x2x17x16,1x2x100x16,1x2x130x16,2x2x130x16,1x2x33x16 --save-inputs %t/dyn_mma --output %t/dyn_mma.npy > %t/dyn_mma.out && attn-ref %S/Inputs/kernels.mlir --entry dyn_mma_causal_f16 --inputs %t/dyn_mma --compare %t/dyn_mma.npy --runs 6 --rtol 1e-2 --atol 1e-2
// RUN: attn-run %S/Inputs/kernels.mlir --entry dyn_simt_window_f32 --target=gpu-emulator --random-inputs --seed 7 --shape query=1x2x1x16,2x2x17x16,1x2x100x16,2x2x40x16,1x2x70x16 --shape key=1x1x1x16,2x1x17x16,1x1x100x16,2x1x130x16,1x1x33x16 --shape value=1x1x1x8,2x1x17x8,1x1x100x8,2x1x130x8,1x1x33x8 --save-inputs %t/dyn_simt --output %t/dyn_simt.npy > %t/dyn_simt.out && attn-ref %S/Inputs/kernels.mlir --entry dyn_simt_window_f32 --inputs %t/dyn_simt --compare %t/dyn_simt.npy --runs 5 --rtol 1e-4 --atol 1e-5
// RUN: attn-run %S/Inputs/kernels.mlir --entry padded_mma_f16 --target=gpu-emulator --random-inputs --seed 7 --shape query=3x2x1x16,3x2x65x16,3x2x130x16 --shape key=3x2x1x16,3x2x65x16,3x2x130x16 --shape value=3x2x1x16,3x2x65x16,3x2x130x16 --save-inputs %t/padded_mma --output %t/padded_mma.npy > %t/padded_mma.out && attn-ref %S/Inputs/kernels.mlir --entry padded_mma_f16 --inputs %t/padded_mma --compare %t/padded_mma.npy --runs 3 --rtol 1e-2 --atol 1e-2
// RUN: attn-run %S/Inputs/kernels.mlir --entry packed_simt_f32 --target=gpu-emulator --random-inputs --seed 7 --shape query=1x2x1x16,1x2x100x16,1x2x200x16 --shape key=1x2x1x16,1x2x150x16,1x2x120x16 --shape value=1x2x1x8,1x2x150x8,1x2x120x8 --shape cq=2,4,6 --shape ck=2,4,6 --save-inputs %t/packed_simt --output %t/packed_simt.npy > %t/packed_simt.out && attn-ref %S/Inputs/kernels.mlir --entry packed_simt_f32 --inputs %t/packed_simt --compare %t/packed_simt.npy --runs 3 --rtol 1e-4 --atol 1e-5
