//===- GpuKernel.h - Fused attention kernels for NVIDIA GPUs ----*- C++ -*-===//
//
// The GPU targets of the fused-kernel frame (attn-opt/Conversion/AttnKernel/
// KernelFrame.h), behind convert-attn-to-gpu. For one softmax or pointwise
// attention (any mask pattern, GQA/MQA, bias, gate, segments) they emit one
// `gpu.launch`:
//
//   grid    (query tiles, query heads, batch), heaviest (last) tiles first
//   block   `threads` threads; K/V blocks of `blockK` keys staged in shared
//           memory by coalesced, vectorized cooperative loads
//   loop    over the key blocks of the tile's row of the compile-time block
//           layout: full blocks without a mask, partial blocks masked
//           through the mask library's IR emitter, empty blocks never
//           visited; segment-bound masks skip blocks at run time
//
// The walk over the layout, masks, bias, the online softmax, pointwise
// weights and the epilogue are the frame's. Two kernels fill it:
//
//   SIMT   every element type, f32 arithmetic. `rowThreads` adjacent threads
//          own one query row (each a slice of D and Dv in registers); a
//          score is a register dot product plus a butterfly shuffle over
//          the row's threads; softmax is online per 16 keys.
//   MMA    f16/bf16 on tensor cores (sm_80+): each warp owns 16 query rows;
//          S = Q K^T and O += P V are nvgpu.mma.sync m16n8k16 with f32
//          accumulators; P is rebuilt from the S accumulators in registers
//          (the C layout of two n8 tiles is the A layout of one k16 step);
//          row statistics are reduced across the four lanes of a quad (the
//          frame's row combination).
//
// The same IR runs on the CPU through attn-emulate-gpu (one OS thread per
// GPU thread), which is how the kernels are checked numerically on machines
// without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_GPUKERNEL_H
#define ATTN_CONVERSION_ATTNTOGPU_GPUKERNEL_H

#include "attn-opt/Conversion/AttnKernel/KernelSpec.h"

#include <string>

namespace mlir::attn {

struct GpuKernelPlan {
  enum class Kind { Simt, Mma };
  Kind kind = Kind::Simt;
  int64_t blockQ = 0;     ///< queries per thread block (the layout's rows)
  int64_t blockK = 0;     ///< keys per shared-memory block
  int64_t threads = 0;    ///< threads per block
  int64_t rowThreads = 1; ///< SIMT: threads sharing one query row
  /// Why the SIMT kernel was chosen when tensor cores were allowed.
  std::string simtReason;
  /// Static shared memory of the K and V blocks.
  int64_t sharedBytes = 0;
};

/// Static shared memory a kernel with `plan` needs (K and V blocks).
int64_t gpuKernelSharedBytes(const KernelSpec &spec, const GpuKernelPlan &plan);

/// Static shared memory per block without opting in (48 KiB on every chip).
constexpr int64_t kGpuStaticSharedLimit = 48 * 1024;

/// Chooses the kernel and its sizes. `tensorCores` allows the MMA kernel;
/// `blockK` > 0 forces the key block (a multiple of 16).
GpuKernelPlan planGpuKernel(const KernelSpec &spec, bool tensorCores,
                            int64_t blockK);

/// Emits the kernel at `b` and returns the op's results: the result tensor
/// and, with spec.results.lse, the log-sum-exp tensor. `layout` has blocks of
/// (plan.blockQ, plan.blockK) when the spec has a compile-time layout, else
/// it is null (blocks classified at run time).
SmallVector<Value> buildGpuKernel(ImplicitLocOpBuilder &b,
                                  const KernelSpec &spec,
                                  const GpuKernelPlan &plan,
                                  const BlockLayout *layout);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOGPU_GPUKERNEL_H
