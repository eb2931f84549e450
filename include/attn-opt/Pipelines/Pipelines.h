//===- Pipelines.h - attn-opt code generation pipelines ---------*- C++ -*-===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "attn-opt/Codegen/Passes.h"

#include "mlir/IR/OpDefinition.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace attn {

/// Options of `attn-lower-to-llvm-pipeline`.
struct LowerToLLVMOptions : public PassPipelineOptions<LowerToLLVMOptions> {
  PassOptions::Option<bool> reference{
      *this, "reference",
      llvm::cl::desc("Lower attn ops through the reference lowering only, "
                     "and the graph's contractions as loops "
                     "(convert-attn-to-linalg), as a baseline"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> raise{
      *this, "raise",
      llvm::cl::desc("Raise attention written as TOSA or linalg ops to "
                     "attn.attention first (TOSA to linalg, elementwise "
                     "fusion, attn-raise; docs/Raising.md)"),
      llvm::cl::init(true)};
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
      llvm::cl::desc("f32 lanes per vector register of the target CPU "
                     "(4: SSE, 8: AVX2, 16: AVX-512; attn-run passes the "
                     "host's)"),
      llvm::cl::init(16)};
  PassOptions::Option<int64_t> vectorRegisters{
      *this, "vector-registers",
      llvm::cl::desc("Vector registers of the target CPU (0: 32 with 16 "
                     "lanes, else 16)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("bf16 dot products of pairs in the kernels: none, "
                     "native (AVX512_BF16; attn-run passes it when the host "
                     "has it) or emulated (portable vector ops, for tests)"),
      llvm::cl::init("none")};
  PassOptions::Option<int64_t> chunks{
      *this, "chunks",
      llvm::cl::desc("Pieces each parallel linalg loop nest is cut into"),
      llvm::cl::init(8)};
  PassOptions::Option<bool> releaseOnError{
      *this, "release-on-error",
      llvm::cl::desc("After a failed allocation, free the buffers held "
                     "(attn-check-allocations; for kernel libraries, whose "
                     "run-time support defines __attn_rt_mark/release)"),
      llvm::cl::init(false)};
};

/// attn (and linalg on tensors) to the LLVM dialect for the CPU: the attn
/// lowerings, bufferization (function results become out-parameters),
/// multi-threading through OpenMP, math approximations, LLVM conversion.
void buildLowerToLLVMPipeline(OpPassManager &pm,
                              const LowerToLLVMOptions &options);

/// What the GPU pipelines do with attention before the target: the front
/// shared by attn-lower-to-nvvm-pipeline and the emulator's pipeline.
struct GpuKernelsConfig {
  bool tensorCores = true;
  int64_t blockK = 0;
  std::string reassociate = "auto";
  int64_t chunkSize = 0;
};

/// The options of GpuKernelsConfig, for the GPU pipelines' option structs.
template <typename Derived>
struct GpuKernelsOptionsBase : public PassPipelineOptions<Derived> {
  mlir::detail::PassOptions::Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("Use mma.sync kernels for f16/bf16 attention"),
      llvm::cl::init(true)};
  mlir::detail::PassOptions::Option<int64_t> blockK{
      *this, "block-k",
      llvm::cl::desc("Keys per shared-memory block (0: by size)"),
      llvm::cl::init(0)};
  mlir::detail::PassOptions::Option<std::string> reassociate{
      *this, "reassociate",
      llvm::cl::desc("Kernelized attention: auto, linear or quadratic"),
      llvm::cl::init("auto")};
  mlir::detail::PassOptions::Option<int64_t> chunkSize{
      *this, "chunk-size",
      llvm::cl::desc("Chunk size of the causal linear-attention prefix form"),
      llvm::cl::init(0)};

  GpuKernelsConfig config() const {
    return {tensorCores, blockK, reassociate, chunkSize};
  }
};

/// Options of the emulator's pipeline (the front only).
struct GpuKernelsOptions : public GpuKernelsOptionsBase<GpuKernelsOptions> {};

/// Options of `attn-lower-to-nvvm-pipeline`.
struct LowerToNVVMOptions : public GpuKernelsOptionsBase<LowerToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture (sm_80, sm_90a, ...)"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (default: +ptx80)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binary format: isa (PTX), bin (cubin), fatbin"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level", llvm::cl::desc("Optimization level of NVPTX"),
      llvm::cl::init(3)};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit (ptxas, libdevice); default $CUDA_HOME "
                     "or /usr/local/cuda"),
      llvm::cl::init("")};
};

/// The front of the GPU pipelines: attn rewrites; softmax and pointwise
/// attention to fused GPU kernels; the rest to linalg, bufferized, its
/// parallel loops mapped to blocks and threads; kernels outlined; buffers
/// deallocated.
void buildGpuKernelsPipeline(OpPassManager &pm, const GpuKernelsConfig &config);

/// The CPU tail: vector and structured control flow to the LLVM dialect,
/// allocations checked (`releaseOnError`: attn-check-allocations' option).
void addCpuToLLVMPasses(OpPassManager &pm, bool releaseOnError = false);

/// Why `chip` is not an NVIDIA GPU architecture the NVPTX backend can
/// target (`sm_` and two or three digits, at least 50, an optional `a` or
/// `f` suffix: sm_80, sm_90a, sm_100f); "" when it is one.
std::string checkNVVMChip(llvm::StringRef chip);

/// The options' errors (chip, binary format), "" when they are valid.
std::string checkNVVMOptions(const LowerToNVVMOptions &options);

/// attn to GPU kernels (buildGpuKernelsPipeline), host buffers in managed
/// memory, kernels to NVVM and a gpu.binary for `chip`, host code to LLVM
/// calling the mgpu* runtime.
void buildLowerToNVVMPipeline(OpPassManager &pm,
                              const LowerToNVVMOptions &options);

/// Registers `attn-lower-to-llvm-pipeline` and `attn-lower-to-nvvm-pipeline`.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
