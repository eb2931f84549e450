//===- Pipelines.h - attn-opt code generation pipelines ---------*- C++ -*-===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace func {
class FuncOp;
} // namespace func

namespace attn {

#define GEN_PASS_DECL
#include "attn-opt/Pipelines/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn-opt/Pipelines/Passes.h.inc"

/// Options of `attn-lower-to-llvm-pipeline`.
struct LowerToLLVMOptions : public PassPipelineOptions<LowerToLLVMOptions> {
  PassOptions::Option<bool> reference{
      *this, "reference",
      llvm::cl::desc("Lower attn ops through the reference lowering only "
                     "(convert-attn-to-linalg), as a baseline"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> reassociate{
      *this, "reassociate",
      llvm::cl::desc("Kernelized attention: auto (cost model), linear or "
                     "quadratic (attn-reassociate's mode)"),
      llvm::cl::init("auto")};
  PassOptions::Option<int64_t> chunkSize{
      *this, "chunk-size",
      llvm::cl::desc("Chunk size of the causal linear-attention prefix form "
                     "(0: the cost model's default)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("f32 lanes of the generated kernels (0: the host's)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> chunks{
      *this, "chunks",
      llvm::cl::desc("Pieces each parallel linalg loop nest is cut into"),
      llvm::cl::init(8)};
};

/// attn (and linalg on tensors) to the LLVM dialect for the CPU: the attn
/// lowerings, bufferization (function results become out-parameters),
/// multi-threading through OpenMP, math approximations, LLVM conversion.
void buildLowerToLLVMPipeline(OpPassManager &pm,
                              const LowerToLLVMOptions &options);

/// Registers `attn-lower-to-llvm-pipeline`.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
