//===- Passes.td - The GPU emulator ------------------------*- tablegen -*-===//
//
// A test and debugging aid, kept out of the production libraries: GPU
// kernels run on the CPU. Registered in attn-opt and used by attn-run
// (--target=gpu-emulator), not by the plugin.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EMULATION_PASSES_TD
#define ATTN_EMULATION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnEmulateGpu : Pass<"attn-emulate-gpu", "::mlir::ModuleOp"> {
  let summary = "Run GPU kernels on the CPU, one OpenMP thread per GPU thread";
  let description = [{
    A test and debugging aid: rewrites every `gpu.launch` and every
    `gpu.launch_func` of a `gpu.func` (after gpu-kernel-outlining) into host
    code with the kernel's exact semantics, so GPU kernels are checked
    numerically on machines without a GPU; the `gpu.module`s are then
    removed. Blocks run one after the other;
    the threads of a block are an `omp.parallel` team of `blockDim` threads:

    - `gpu.barrier` is `omp.barrier`;
    - workgroup attributions are buffers allocated per block, shared by the
      team;
    - `gpu.shuffle` (xor, down, up, idx; `valid` and the value as the op
      defines them for lanes below `width`) and `nvgpu.mma.sync`
      (m16n8k16, f16/bf16 inputs, f32 accumulators; the fragment layout of
      the PTX ISA) exchange lane values through a per-block scratch buffer
      between two barriers;
    - thread and block ids (launch arguments or `gpu.thread_id`,
      `gpu.block_id`, `gpu.lane_id`, dims) come from the team's thread
      number and the block loops.

    Kernels must be barrier-uniform (every thread reaches every barrier,
    shuffle and mma), as CUDA requires of `__syncthreads` and
    `mma.sync.aligned`. Other GPU ops are rejected with a diagnostic; a run
    aborts if OpenMP gives a team smaller than the block, or an mma runs in
    a partial warp.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::omp::OpenMPDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

#endif // ATTN_EMULATION_PASSES_TD
