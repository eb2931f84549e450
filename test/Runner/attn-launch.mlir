// The ahead-of-time path of scripts/gpu-check.sh --bundle, on the CPU:
// GPU kernels compiled through attn-emulate-gpu-pipeline (the kernels of
// attn-lower-to-nvvm-pipeline as CPU code), mlir-translate and clang -shared, run by attn-launch
// (--host: plain memory, no CUDA runtime) on inputs saved by attn-run and
// compared with attn-run's CPU reference.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-opt %S/../Integration/GPU/Inputs/kernels.mlir --llvm-request-c-wrappers --attn-emulate-gpu-pipeline -o %t/k.mlir 2>/dev/null
// RUN: %mlir_translate --mlir-to-llvmir %t/k.mlir -o %t/k.ll
// RUN: %clang -shared -fPIC -O1 -Wno-override-module %t/k.ll -o %t/k.so -rtlib=compiler-rt -L%llvm_lib_dir -lomp -Wl,-rpath,%llvm_lib_dir
// RUN: attn-run %S/../Integration/GPU/Inputs/kernels.mlir --entry mma_causal_gqa_f16 --reference --random-inputs --seed 3 --save-inputs %t/in1 --output %t/ref1.npy
// RUN: attn-launch %t/k.so --host --entry mma_causal_gqa_f16 --arg f16:1x4x100x32 --arg f16:1x2x100x32 --arg f16:1x2x100x16 --result f16:1x4x100x16 --names query,key,value --inputs %t/in1 --expect %t/ref1.npy --rtol 1e-2 --atol 1e-2 --output %t/out1.npy | FileCheck %s
// RUN: attn-run %S/../Integration/GPU/Inputs/kernels.mlir --entry simt_dense_f32 --reference --random-inputs --seed 5 --output %t/ref2.npy
// Random inputs of attn-launch are attn-run's (same seed, same generator).
// RUN: attn-launch %t/k.so --host --entry simt_dense_f32 --arg f32:2x4x37x16 --arg f32:2x2x101x16 --arg f32:2x2x101x8 --result f32:2x4x37x8 --seed 5 --expect %t/ref2.npy --rtol 1e-4 --atol 1e-5 --bench 3 --flops 1000000 | FileCheck %s --check-prefixes=CHECK,BENCH
// A wrong expectation fails.
// RUN: not attn-launch %t/k.so --host --entry simt_dense_f32 --arg f32:2x4x37x16 --arg f32:2x2x101x16 --arg f32:2x2x101x8 --result f32:2x4x37x8 --seed 6 --expect %t/ref2.npy --rtol 1e-4 --atol 1e-5 | FileCheck %s --check-prefix=BAD
// RUN: not attn-launch %t/k.so --host --entry simt_dense_f32 --arg f32:2x4x37x16 --arg f32:2x2x101x16 --arg f32:2x2x101x8 --result f32:2x4x37x8 --inputs %t/in1 --names query,key,value 2>&1 | FileCheck %s --check-prefix=SHAPE
// Dynamic sizes: one compiled library, two shapes; a size mismatch is
// reported by the generated code through attn-launch's hook, with no output.
// RUN: attn-run %S/../Integration/GPU/Inputs/kernels.mlir --entry dyn_mma_causal_f16 --reference --random-inputs --seed 3 --shape query=2x4x17x32,1x4x40x32 --shape key=2x2x17x32,1x2x130x32 --shape value=2x2x17x16,1x2x130x16 --save-inputs %t/dyn --output %t/dyn.npy
// RUN: attn-launch %t/k.so --host --entry dyn_mma_causal_f16 --arg f16:2x4x17x32 --arg f16:2x2x17x32 --arg f16:2x2x17x16 --result f16:2x4x17x16 --names query,key,value --inputs %t/dyn/0 --expect %t/dyn.0.npy --rtol 1e-2 --atol 1e-2 | FileCheck %s
// RUN: attn-launch %t/k.so --host --entry dyn_mma_causal_f16 --arg f16:1x4x40x32 --arg f16:1x2x130x32 --arg f16:1x2x130x16 --result f16:1x4x40x16 --names query,key,value --inputs %t/dyn/1 --expect %t/dyn.1.npy --rtol 1e-2 --atol 1e-2 | FileCheck %s
// RUN: not attn-launch %t/k.so --host --entry dyn_mma_causal_f16 --arg f16:2x4x17x32 --arg f16:3x2x17x32 --arg f16:3x2x17x16 --result f16:2x4x17x16 --output %t/bad.npy 2>&1 | FileCheck %s --check-prefix=RUNTIME
// RUN: not test -e %t/bad.npy
// RUNTIME: attn-launch: error: the generated code reported a run-time error: attn.attention: dimension 0 of key (3) differs from dimension 0 of query (2)
// CHECK: check: max_abs_err={{.*}} ok
// BENCH: bench: median_ms={{[0-9.]+}} min_ms={{[0-9.]+}} max_ms={{[0-9.]+}} gflops={{[0-9.]+}}
// BAD: FAILED
// SHAPE: attn-launch: error: {{.*}}query.npy: holds 1x4x100x32xf16, expected 2x4x37x16xf32
