//===- Pipelines.cpp - attn-opt code generation pipelines -----------------===//

#include "attn-opt/Pipelines/Pipelines.h"
#include "attn-opt/Conversion/Passes.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::buildLowerToLLVMPipeline(OpPassManager &pm,
                                          const LowerToLLVMOptions &options) {
  // attn rewrites, then the remaining attn ops to linalg on tensors.
  if (!options.reference) {
    AttnReassociateOptions reassociate;
    reassociate.mode = options.reassociate;
    reassociate.chunkSize = options.chunkSize;
    pm.addPass(createAttnReassociate(reassociate));
    pm.addPass(createAttnLowerChunkedLinear());
    AttnBlockSparseOptions blockSparse;
    blockSparse.vectorWidth = options.vectorWidth;
    pm.addPass(createAttnBlockSparse(blockSparse));
    AttnLowerPointwiseOptions pointwise;
    pointwise.vectorWidth = options.vectorWidth;
    pm.addPass(createAttnLowerPointwise(pointwise));
    AttnFlashOptions flash;
    flash.vectorWidth = options.vectorWidth;
    pm.addPass(createAttnFlash(flash));
  }
  pm.addPass(createConvertAttnToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Threads: outer parallel loops of every linalg op become scf.forall.
  AttnParallelizeLinalgOptions parallel;
  parallel.chunks = options.chunks;
  pm.addNestedPass<func::FuncOp>(createAttnParallelizeLinalg(parallel));
  pm.addPass(createCanonicalizerPass());

  // Buffers: function results become out-parameters with identity layouts.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createCanonicalizerPass());

  // Loops, threads, math.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createAttnMathApproximation());

  // To LLVM.
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::attn::registerAttnPipelines() {
  registerAttnCodegenPasses();
  PassPipelineRegistration<LowerToLLVMOptions>(
      "attn-lower-to-llvm-pipeline",
      "Lower attn (and linalg on tensors) to the LLVM dialect for the CPU: "
      "attn lowerings, bufferization, OpenMP threads, math approximations",
      buildLowerToLLVMPipeline);
}
