//===- Pipelines.cpp - attn-opt code generation pipelines -----------------===//

#include "attn-opt/Pipelines/Pipelines.h"

#include "attn-opt/Conversion/Passes.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/GPU/Passes.h"
#include "attn-opt/Support/TargetModel.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/OptimizeForNVVM.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::attn;

/// One-shot bufferization; function results become out-parameters with
/// identity layouts. Buffers whose type the analysis does not know (such as
/// those that scf.if yields from tensor.empty in the run-time checks'
/// guards) get identity layouts too: with the default fully dynamic ones,
/// the guarded results of dynamically shaped attention would have dynamic
/// strides and be copied element by element on return.
static void addBufferization(OpPassManager &pm) {
  // The caller's input buffers are never written.
  pm.addNestedPass<func::FuncOp>(createAttnReadOnlyArguments());
  // Each kernel reads its operands where it runs (CSE merged the reads).
  pm.addNestedPass<func::FuncOp>(createAttnSeparateBufferReads());
  // Each result its own buffer (a tensor returned twice is copied).
  pm.addNestedPass<func::FuncOp>(createAttnDistinctResults());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.unknownTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // The constants' globals named and ordered by first use: the same module
  // gives the same IR whatever order bufferization made them in.
  pm.addPass(createAttnOrderConstantGlobals());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // Kernel-library entries (attn-compile) compute in the caller's buffers.
  pm.addNestedPass<func::FuncOp>(createAttnForwardEntryOutputs());
}

/// Ownership-based deallocation.
static void addDeallocation(OpPassManager &pm) {
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createCanonicalizerPass());
}

void mlir::attn::addCpuToLLVMPasses(OpPassManager &pm, bool releaseOnError) {
  // Dynamic allocations of impossible sizes refused (checked below).
  pm.addPass(createAttnGuardAllocationSizes());
  pm.addPass(createConvertVectorToSCFPass());
  // (The transfers' buffers allocated once, not per loop iteration.)
  pm.addPass(createAttnHoistStackBuffers());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // (x86vector: the kernels' AVX512_BF16 dot products, bf16-dot=native.)
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Every heap allocation checked: an error instead of a NULL dereference.
  AttnCheckAllocationsOptions checks;
  checks.releaseOnError = releaseOnError;
  pm.addPass(createAttnCheckAllocations(checks));
  pm.addPass(createCanonicalizerPass());
}

void mlir::attn::buildLowerToLLVMPipeline(OpPassManager &pm,
                                          const LowerToLLVMOptions &options) {
  // Graphs: TOSA to linalg (also for the reference); then, unless this is
  // the reference, elementwise ops fused and attention raised.
  pm.addNestedPass<func::FuncOp>(tosa::createTosaToLinalgNamed());
  pm.addNestedPass<func::FuncOp>(tosa::createTosaToLinalg());
  pm.addNestedPass<func::FuncOp>(createTosaToArithPass());
  pm.addNestedPass<func::FuncOp>(createTosaToTensorPass());
  // One function per entry (helpers such as a graph's head split inlined),
  // so that the passes below see whole graphs: the kernels then read a
  // head split's transposed operands as views of its input.
  if (!options.reference)
    pm.addPass(createInlinerPass());
  if (options.raise && !options.reference) {
    // Raised before fusion (which moves reshapes, e.g. the GQA broadcasts'
    // collapse_shape, through the contractions) and after it (which merges
    // masks and scales into one op); misses are reported the second time.
    pm.addPass(createCanonicalizerPass());
    AttnRaiseOptions quiet;
    quiet.missRemarks = false;
    pm.addNestedPass<func::FuncOp>(createAttnRaise(quiet));
    pm.addPass(createLinalgElementwiseOpFusionPass());
    pm.addNestedPass<func::FuncOp>(createAttnRaise());
    // The raised operands' transposes composed (K^T transposed back).
    pm.addPass(createCanonicalizerPass());
  }
  // Attention sharded along the sequence: the program of one rank (the
  // reference computes the whole op on every rank).
  AttnPartitionSequenceOptions partition;
  partition.replicate = options.reference;
  pm.addPass(createAttnPartitionSequence(partition));
  // Gradients before anything rewrites their forward ops; then attn
  // rewrites, then the remaining attn ops to linalg on tensors.
  if (!options.reference) {
    AttnFlashBackwardOptions backward;
    backward.vectorWidth = options.vectorWidth;
    backward.vectorRegisters = options.vectorRegisters;
    backward.bf16Dot = options.bf16Dot;
    pm.addPass(createAttnFlashBackward(backward));
  }
  // (Kernelized attention's gradient in linear time but in the reference.)
  ConvertAttnGradToLinalgOptions grads;
  grads.linearKernelized = !options.reference;
  pm.addPass(createConvertAttnGradToLinalg(grads));
  if (!options.reference) {
    pm.addPass(createAttnInferMask());
    pm.addPass(createAttnProjectLowRank());
    AttnReassociateOptions reassociate;
    reassociate.mode = options.reassociate;
    reassociate.chunkSize = options.chunkSize;
    pm.addPass(createAttnReassociate(reassociate));
    // (The fused kernels first: they take the causal chunked form too.)
    AttnLinearKernelsOptions linear;
    linear.vectorWidth = options.vectorWidth;
    linear.vectorRegisters = options.vectorRegisters;
    pm.addPass(createAttnLinearKernels(linear));
    pm.addPass(createAttnLowerChunkedLinear());
    AttnBlockSparseOptions blockSparse;
    blockSparse.vectorWidth = options.vectorWidth;
    blockSparse.vectorRegisters = options.vectorRegisters;
    blockSparse.bf16Dot = options.bf16Dot;
    pm.addPass(createAttnBlockSparse(blockSparse));
    AttnLowerPointwiseOptions pointwise;
    pointwise.vectorWidth = options.vectorWidth;
    pointwise.vectorRegisters = options.vectorRegisters;
    pointwise.bf16Dot = options.bf16Dot;
    pm.addPass(createAttnLowerPointwise(pointwise));
    AttnFlashOptions flash;
    flash.vectorWidth = options.vectorWidth;
    flash.vectorRegisters = options.vectorRegisters;
    flash.bf16Dot = options.bf16Dot;
    pm.addPass(createAttnFlash(flash));
    AttnLshKernelsOptions lsh;
    lsh.vectorWidth = options.vectorWidth;
    lsh.vectorRegisters = options.vectorRegisters;
    pm.addPass(createAttnLshKernels(lsh));
  }
  pm.addPass(createConvertAttnToLinalg());
  // linalg.softmax and other aggregates of the rest of the graph.
  pm.addNestedPass<func::FuncOp>(createAttnDecomposeAggregates());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Threads: the graph's contractions in row chunks (register-tiled and
  // vectorized after bufferization), the outer parallel loops of every
  // other linalg op, as scf.forall.
  // (The reference keeps them as loops: --check then also checks the
  // vectorized contractions.)
  std::optional<TargetModel> target =
      TargetModel::get(options.vectorWidth, options.vectorRegisters);
  if (!options.reference) {
    AttnTileContractionsOptions contractions;
    contractions.chunks = options.chunks;
    // (An invalid target: attn-vectorize-contractions reports it.)
    contractions.rowTile = target ? registerRows(*target) : 1;
    pm.addNestedPass<func::FuncOp>(createAttnTileContractions(contractions));
  }
  AttnParallelizeLinalgOptions parallel;
  parallel.chunks = options.chunks;
  pm.addNestedPass<func::FuncOp>(createAttnParallelizeLinalg(parallel));
  pm.addPass(createCanonicalizerPass());

  addBufferization(pm);
  if (!options.reference) {
    AttnVectorizeContractionsOptions vectorize;
    vectorize.vectorWidth = options.vectorWidth;
    vectorize.vectorRegisters = options.vectorRegisters;
    pm.addNestedPass<func::FuncOp>(createAttnVectorizeContractions(vectorize));
  }
  addDeallocation(pm);
  // Communication (sequence-parallel attention) to the mpi dialect.
  pm.addPass(createAttnLowerCommunication());

  // Loops, threads, math.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(createAttnScheduleThreads());
  pm.addPass(createCanonicalizerPass());
  // (16 lanes: the AVX-512 target, whose exp takes vscalefps.)
  AttnMathApproximationOptions math;
  math.avx512 = options.vectorWidth == 16;
  pm.addPass(createAttnMathApproximation(math));

  addCpuToLLVMPasses(pm, options.releaseOnError);
}

void mlir::attn::buildGpuKernelsPipeline(OpPassManager &pm,
                                         const GpuKernelsConfig &config) {
  // Gradients (reference lowering); attn rewrites; softmax and pointwise
  // attention to fused GPU kernels; the rest to linalg on tensors.
  pm.addPass(createConvertAttnGradToLinalg());
  pm.addPass(createAttnInferMask());
  pm.addPass(createAttnProjectLowRank());
  AttnReassociateOptions reassociate;
  reassociate.mode = config.reassociate;
  reassociate.chunkSize = config.chunkSize;
  pm.addPass(createAttnReassociate(reassociate));
  pm.addPass(createAttnLowerChunkedLinear());
  ConvertAttnToGPUOptions gpu;
  gpu.tensorCores = config.tensorCores;
  gpu.blockK = config.blockK;
  pm.addPass(createConvertAttnToGPU(gpu));
  pm.addPass(createConvertAttnToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  addBufferization(pm);

  // Every other parallel loop nest: blocks x threads. Kernels are outlined
  // before deallocation (which cannot look into kernel bodies).
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createAttnGpuMapLoops());
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createAttnGpuSinkConstants());
  pm.addPass(createGpuKernelOutliningPass());
  addDeallocation(pm);
}

void mlir::attn::buildLowerToNVVMPipeline(OpPassManager &pm,
                                          const LowerToNVVMOptions &options) {
  buildGpuKernelsPipeline(pm, options.config());

  // Host buffers kernels can reach; kernels lowered to NVVM (this follows
  // MLIR's gpu-lower-to-nvvm-pipeline, with the toolkit set).
  pm.addPass(createAttnGpuHostMemory());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createAttnLegalizeForNVVM());
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  pm.addNestedPass<gpu::GPUModuleOp>(createStripDebugInfoPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(LLVM::createNVVMOptimizeForTargetPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  std::string toolkit = options.toolkit;
  if (toolkit.empty()) {
    const char *env = std::getenv("CUDA_HOME");
    toolkit = env && *env ? env : "/usr/local/cuda";
  }
  binary.toolkitPath = toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Device allocations checked like the CPU's heap allocations: an error
  // instead of a kernel launched on a NULL buffer.
  pm.addPass(createAttnCheckAllocations());
}

std::string mlir::attn::checkNVVMChip(StringRef chip) {
  StringRef digits = chip;
  if (digits.consume_front("sm_") &&
      (digits.ends_with("a") || digits.ends_with("f")))
    digits = digits.drop_back();
  unsigned number = 0;
  if (chip.starts_with("sm_") && (digits.size() == 2 || digits.size() == 3) &&
      llvm::all_of(digits, llvm::isDigit) && !digits.getAsInteger(10, number) &&
      number >= 50)
    return "";
  return ("chip '" + chip +
          "' is not an NVIDIA GPU architecture (sm_80, sm_90a, ...)")
      .str();
}

std::string mlir::attn::checkNVVMOptions(const LowerToNVVMOptions &options) {
  std::string chipError = checkNVVMChip(options.chip);
  if (!chipError.empty())
    return chipError;
  std::string format = options.format;
  if (format != "isa" && format != "bin" && format != "fatbin")
    return "format '" + format + "' is not isa, bin or fatbin";
  return "";
}

void mlir::attn::registerAttnPipelines() {
  registerAttnCodegenPasses();
  PassPipelineRegistration<LowerToLLVMOptions>(
      "attn-lower-to-llvm-pipeline",
      "Lower attn (and linalg on tensors) to the LLVM dialect for the CPU: "
      "attn lowerings, bufferization, OpenMP threads, math approximations",
      buildLowerToLLVMPipeline);
  // (Registered with its options checked: a bad chip or format is an
  // error of the pipeline, not a crash or a warning later.)
  registerPassPipeline(
      "attn-lower-to-nvvm-pipeline",
      "Lower attn to GPU kernels for NVIDIA GPUs: fused flash/pointwise/"
      "block-sparse kernels (mma.sync for f16/bf16), other attention through "
      "parallel loops mapped to blocks and threads, managed host buffers, "
      "NVVM, PTX/cubin for the chosen chip, host code calling mgpu*",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        LowerToNVVMOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string error = checkNVVMOptions(options);
        if (!error.empty())
          return errorHandler("attn-lower-to-nvvm-pipeline: " + error);
        buildLowerToNVVMPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(LowerToNVVMOptions());
      });
}
