//===- Passes.td - GPU passes of attn-opt's pipeline -------*- tablegen -*-===//
//
// The steps of attn-lower-to-nvvm-pipeline that are not about attention:
// mapping the remaining parallel loops to blocks and threads, sinking
// constants into kernels, host-shared buffers, and two gaps of MLIR 22's
// NVVM lowering.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_GPU_PASSES_TD
#define ATTN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnGpuMapLoops : Pass<"attn-gpu-map-loops"> {
  let summary = "Map the host's parallel loops to GPU blocks and threads";
  let description = [{
    For the code that convert-attn-to-gpu does not cover (the reference
    lowering of linear, low-rank, LSH and relative attention, the
    reassociated kernelized forms, layer norms, type conversions): every
    outermost `scf.parallel` outside a GPU kernel is collapsed to one
    dimension, tiled by `threads`, and annotated so that
    `convert-parallel-loops-to-gpu` makes the tiles blocks and the
    iterations threads (one output element per thread, the innermost
    dimension across consecutive threads, so accesses are coalesced).
    Reductions inside an iteration stay sequential loops of that thread.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"256",
           "threads per block">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def AttnGpuSinkConstants : Pass<"attn-gpu-sink-constants"> {
  let summary = "Clone constants used by gpu.launch bodies into the bodies";
  let description = [{
    `gpu.launch` is not isolated from above, so canonicalization hoists the
    constants of kernel bodies to the enclosing function; MLIR 22's kernel
    outlining sinks only some of them back and passes the rest (float and
    vector constants) as kernel arguments. Run right before
    gpu-kernel-outlining, this pass clones every constant-like op a launch
    body uses into the body, so kernels keep their constants as immediates.
    `memref.get_global` of a constant global (the kernels' block-layout and
    mask tables) is sunk too: outlining then copies the global into the
    kernel module, where it lives in device memory with the code. Globals
    above 64 KiB (a FAVOR+ projection of many features) are not sunk: they
    reach kernels as arguments, copied once into managed memory by
    `attn-gpu-host-memory`, since ptxas would take seconds per megabyte of
    PTX data.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AttnGpuHostMemory : Pass<"attn-gpu-host-memory", "::mlir::ModuleOp"> {
  let summary = "Give GPU kernels host-shared (managed) buffers";
  let description = [{
    After bufferization and deallocation, outside GPU kernels:
    `memref.alloc` becomes `gpu.alloc host_shared` (CUDA managed memory,
    readable and writable by host code and kernels), `memref.dealloc` the
    matching `gpu.dealloc`, and every `memref.get_global` that a kernel
    reads is copied once into a host-shared buffer. Function arguments must
    already be device-accessible (attn-run passes managed memory).
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def AttnLegalizeForNVVM : Pass<"attn-legalize-for-nvvm"> {
  let summary = "Prepare GPU kernels for MLIR 22's NVVM lowering";
  let description = [{
    Two gaps of MLIR 22's GPU-to-NVVM lowering that the attention kernels
    hit:

    - nvgpu-to-nvvm handles f16 `nvgpu.mma.sync` but fails on bf16 ("failed
      to deduce operand PTX types"): the bf16 m16n8k16 form is lowered here
      directly to `nvvm.mma.sync` (operands packed into i32 registers, f32
      accumulators);
    - workgroup attributions of `gpu.func` become shared globals aligned to
      their element type unless they carry `llvm.align`: every attribution
      without one gets 16 bytes, the alignment the kernels' 16-byte vector
      loads and stores of shared memory claim.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::vector::VectorDialect",
  ];
}

#endif // ATTN_GPU_PASSES_TD
