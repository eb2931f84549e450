//===- Execute.cpp - Compile and call the entry ---------------------------===//
//
// Compiles the entry (the pipeline of --target or --pipeline and, with
// --check, the reference lowering) and calls it on each run's inputs: the
// generated code's run-time error hooks, the managed buffers of
// --target=cuda, the sequence-parallel calls under mpiexec and --bench.
//
//===----------------------------------------------------------------------===//

#include "AttnRun.h"

#include "attn-opt/Emulation/Passes.h"
#include "attn-opt/Pipelines/Pipelines.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"
#include "attn-opt/Runtime/JIT/HostTarget.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>

using namespace mlir;
using namespace mlir::attn;

namespace attn_run {

namespace {

/// The error the generated code reported through attn_opt_runtime_error
/// (the first one, if several).
FirstRuntimeError runtimeError;

extern "C" void attnRunRuntimeError(int32_t code, int64_t a, int64_t b,
                                    int64_t c) {
  runtimeError.record(code, a, b, c);
}

/// Whether the generated code reported an error during this call
/// (kRuntimeFailedFunction).
extern "C" int32_t attnRunRuntimeFailed() { return runtimeError.failed(); }

/// The communicator of sequence-parallel modules: MPI_COMM_WORLD (0).
extern "C" int64_t attnRunCommunicator() { return 0; }

} // namespace

/// Fails with the generated code's run-time error, if it reported one.
static void failOnRuntimeError(StringRef what) {
  if (std::optional<std::string> message = runtimeError.message())
    fail(what + " reported a run-time error: " + *message);
}

/// libAttnCudaRuntime.so, opened once for --target=cuda (fails with the
/// reason when there is no device): device probe and managed memory for the
/// function's buffers.
const CudaRuntimeLoader &cudaRuntime() {
  static std::unique_ptr<CudaRuntimeLoader> rt = [] {
    std::string error, message;
    std::unique_ptr<CudaRuntimeLoader> loaded =
        CudaRuntimeLoader::open(ATTN_CUDA_RUNTIME, error);
    if (!loaded)
      fail("--target=cuda: " + error);
    if (!loaded->probe(message))
      fail("--target=cuda: " + message);
    return loaded;
  }();
  return *rt;
}

namespace {

/// Managed copies of the arguments and results for --target=cuda, made
/// once: the kernels and the host both reach them, and repeated calls
/// (--bench) find them on the device.
struct DeviceBuffers {
  std::vector<void *> args, outs;
  ~DeviceBuffers() {
    if (args.empty() && outs.empty())
      return;
    const CudaRuntimeLoader &rt = cudaRuntime();
    for (void *p : args)
      rt.free(p);
    for (void *p : outs)
      rt.free(p);
  }
};

} // namespace

/// Wall time of the last compileVariant: the pass pipeline and LLVM.
static double lastPipelineMs = 0, lastLlvmMs = 0;

static double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Lowers a clone of `module` with `build` and JIT-compiles it.
static std::unique_ptr<JitFunction>
compileVariant(ModuleOp module, StringRef entry,
               function_ref<void(OpPassManager &)> build, StringRef what) {
  auto start = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> clone = module.clone();
  auto fn = clone->lookupSymbol<func::FuncOp>(entry);
  fn->setAttr("llvm.emit_c_interface", UnitAttr::get(module.getContext()));
  // Compile only what the entry function needs.
  for (auto other : clone->getOps<func::FuncOp>())
    if (other != fn)
      other.setPrivate();
  PassManager pm(module.getContext());
  // Remarks explain the compiler's decisions; they are noise unless asked
  // for.
  ScopedDiagnosticHandler filter(module.getContext(), [](Diagnostic &d) {
    return success(d.getSeverity() == DiagnosticSeverity::Remark &&
                   !printRemarks);
  });
  pm.addPass(createSymbolDCEPass());
  build(pm);
  if (failed(pm.run(*clone)))
    fail("lowering " + what + " failed (diagnostics above)");
  lastPipelineMs = msSince(start);
  start = std::chrono::steady_clock::now();
  std::vector<std::string> libs = {ATTN_OMP_LIBRARY, ATTN_C_RUNNER_UTILS};
  if (target == "cuda")
    libs.push_back(ATTN_CUDA_RUNTIME);
  std::vector<std::pair<std::string, void *>> symbols = {
      {kRuntimeErrorFunction, reinterpret_cast<void *>(&attnRunRuntimeError)},
      {kRuntimeFailedFunction, reinterpret_cast<void *>(&attnRunRuntimeFailed)},
      {kCommunicatorFunction, reinterpret_cast<void *>(&attnRunCommunicator)}};
  auto jit = JitFunction::compile(*clone, entry, libs, symbols);
  lastLlvmMs = msSince(start);
  if (!jit)
    fail("JIT compilation of " + what +
         " failed: " + llvm::toString(jit.takeError()));
  return std::move(*jit);
}

/// Copies the device's results into `outs`.
static void copyResults(const DeviceBuffers &device,
                        std::vector<npy::Array> &outs) {
  for (auto [i, o] : llvm::enumerate(outs))
    std::memcpy(o.data.data(), device.outs[i], o.data.size());
}

/// Calls `jit` on `args`, writing into fresh result arrays. With `device`,
/// the call reads and writes the managed buffers (copied in on first use)
/// and waits for the GPU; `copyBack` copies the results back (timed calls
/// leave them on the device: reading them would move the pages to the host
/// and the next call would move them back).
static std::vector<npy::Array>
callOnce(JitFunction &jit, std::vector<npy::Array> &args,
         const std::vector<Slot> &results,
         std::vector<npy::Array> *reuse = nullptr,
         DeviceBuffers *device = nullptr, bool copyBack = true) {
  std::vector<npy::Array> outs;
  if (reuse) {
    outs = std::move(*reuse);
  } else {
    for (const Slot &r : results)
      outs.push_back(allocate(r));
  }
  if (device && device->args.empty() && device->outs.empty()) {
    const CudaRuntimeLoader &rt = cudaRuntime();
    for (npy::Array &a : args) {
      void *p = rt.allocManaged(a.data.size());
      std::memcpy(p, a.data.data(), a.data.size());
      device->args.push_back(p);
    }
    for (npy::Array &o : outs)
      device->outs.push_back(rt.allocManaged(o.data.size()));
  }
  std::vector<MemRefDescriptor> descs;
  descs.reserve(args.size() + outs.size());
  for (auto [i, a] : llvm::enumerate(args))
    descs.emplace_back(device ? device->args[i] : a.data.data(), a.shape);
  for (auto [i, o] : llvm::enumerate(outs))
    descs.emplace_back(device ? device->outs[i] : o.data.data(), o.shape);
  std::vector<MemRefDescriptor *> ptrs;
  for (MemRefDescriptor &d : descs)
    ptrs.push_back(&d);
  failOn(jit.call(ptrs));
  failOnRuntimeError("the generated code");
  if (device) {
    cudaRuntime().synchronize();
    if (copyBack)
      copyResults(*device, outs);
  }
  return outs;
}

/// Adds the pipeline that lowers the module to `pm`: --pipeline, else the
/// one of --target (for `gpuChip` with --target=cuda).
static void buildMainPipeline(OpPassManager &pm, const std::string &gpuChip) {
  if (!pipelineText.empty()) {
    if (failed(parsePassPipeline(pipelineText, pm, llvm::errs())))
      fail("invalid --pipeline '" + pipelineText + "'");
    return;
  }
  if (target == "gpu-emulator") {
    GpuKernelsOptions options;
    options.tensorCores = tensorCores;
    buildEmulateGpuPipeline(pm, options);
    return;
  }
  if (target == "cuda") {
    LowerToNVVMOptions options;
    if (!gpuChip.empty())
      options.chip = gpuChip;
    options.format = "bin";
    options.tensorCores = tensorCores;
    buildLowerToNVVMPipeline(pm, options);
    return;
  }
  LowerToLLVMOptions options;
  options.reference = referenceOnly;
  // The kernels' tiles for this machine (the pipeline's default is a fixed
  // AVX-512 target).
  TargetModel host = hostTargetModel();
  options.vectorWidth = host.lanes;
  options.vectorRegisters = host.registers;
  if (host.bf16Dot == TargetModel::Bf16Dot::Native)
    options.bf16Dot = "native";
  buildLowerToLLVMPipeline(pm, options);
}

/// Compiles the entry once for every run: with the chosen pipeline and,
/// with --check, with the reference lowering.
CompiledCode compileEntry(const RunPlan &plan) {
  func::FuncOp entry = plan.entry;
  CompiledCode code;
  auto buildMain = [&](OpPassManager &pm) {
    buildMainPipeline(pm, plan.gpuChip);
  };
  code.jit = compileVariant(*plan.module, entry.getName(), buildMain,
                            "@" + entry.getName().str());
  code.pipelineMs = lastPipelineMs;
  code.llvmMs = lastLlvmMs;
  if (check) {
    auto buildRef = [](OpPassManager &pm) {
      LowerToLLVMOptions options;
      options.reference = true;
      buildLowerToLLVMPipeline(pm, options);
    };
    code.ref = compileVariant(*plan.module, entry.getName(), buildRef,
                              "the reference");
  }
  return code;
}

/// --bench: times `benchRuns` calls of run `k` after a warm-up call (on the
/// device's buffers `dev` with --target=cuda), keeps the last call's results
/// as the run's outputs and prints the times (for run 0, the compile's
/// first).
static void benchRun(const CompiledCode &code, size_t k, Run &run,
                     DeviceBuffers *dev) {
  std::vector<double> ms;
  std::vector<npy::Array> scratch = std::move(run.outputs);
  scratch = callOnce(*code.jit, run.inputs, run.results, &scratch, dev,
                     /*copyBack=*/false); // warm-up
  // Sequence-parallel code counts the bytes it hands to MPI
  // (attn-lower-communication).
  auto bytesSent = reinterpret_cast<int64_t (*)()>(
      mpi ? code.jit->lookup("attn_opt_bytes_sent") : nullptr);
  int64_t bytesBefore = bytesSent ? bytesSent() : 0;
  for (unsigned r = 0; r < benchRuns; ++r) {
    // Under mpiexec: all ranks start together; a call takes as long as
    // its slowest rank.
    if (mpi)
      mpi->barrier();
    auto start = std::chrono::steady_clock::now();
    scratch = callOnce(*code.jit, run.inputs, run.results, &scratch, dev,
                       /*copyBack=*/false);
    auto end = std::chrono::steady_clock::now();
    double t = std::chrono::duration<double, std::milli>(end - start).count();
    ms.push_back(mpi ? mpi->allMax(t) : t);
  }
  if (dev)
    copyResults(*dev, scratch);
  run.outputs = std::move(scratch);
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double median =
      n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double gflops = median > 0 ? run.flops / (median * 1e6) : 0;
  if (k == 0)
    llvm::outs() << llvm::format(
        "compile: pipeline_ms=%.1f llvm_ms=%.1f total_ms=%.1f\n",
        code.pipelineMs, code.llvmMs, code.pipelineMs + code.llvmMs);
  llvm::outs() << llvm::format("work: %.0f flop\n", run.flops);
  llvm::outs() << llvm::format(
      "bench: median_ms=%.3f min_ms=%.3f max_ms=%.3f gflops=%.3f\n", median,
      sorted.front(), sorted.back(), gflops);
  if (bytesSent && benchRuns > 0) {
    double perCall = static_cast<double>(bytesSent() - bytesBefore) / benchRuns;
    double most = mpi->allMax(perCall);
    double total = mpi->allSum(perCall);
    llvm::outs() << llvm::format(
        "comm: bytes_per_call max_rank=%.0f all_ranks=%.0f\n", most, total);
  }
}

/// Executes run `k`: calls the entry, checks the results against the
/// reference (--check), summarizes them and benchmarks (--bench).
void executeRun(RunPlan &plan, const CompiledCode &code, size_t k) {
  Run &run = plan.runs[k];
  if (plan.numRuns > 1) {
    llvm::outs() << "run " << k << ":";
    for (const Slot &a : run.args)
      if (!a.type.hasStaticShape())
        llvm::outs() << " " << a.name << "=" << describeShape(*a.shape);
    llvm::outs() << "\n";
  }
  std::optional<DeviceBuffers> device;
  if (target == "cuda")
    device.emplace();
  DeviceBuffers *dev = device ? &*device : nullptr;
  if (mpi) {
    // Each rank runs its chunk; the reference computes the whole sequence
    // on every rank, and each compares its own rows.
    std::vector<SequenceRun> runs;
    auto local = [&](npy::Array &a) {
      if (runs.empty())
        runs = sequenceRuns(a.shape[2], mpi->size(), mpi->rank(), plan.zigzag,
                            plan.staticOffsets);
      a = sequenceRows(a, runs);
    };
    std::vector<npy::Array> refArrays;
    if (code.ref)
      refArrays = callOnce(*code.ref, run.inputs, run.results);
    for (int64_t i : plan.shardedArgs)
      local(run.inputs[i]);
    if (mpi->rank() == 0)
      llvm::outs() << "sequence-parallel: " << mpi->size() << " rank(s), "
                   << (plan.zigzag ? "zigzag" : "contiguous") << " chunks\n";
    for (int64_t i : plan.shardedResults) {
      Slot &r = run.results[i];
      std::vector<int64_t> shape = *r.shape;
      int64_t rows = 0;
      for (auto [start, length] : runs)
        rows += length;
      shape[2] = rows;
      r.shape = shape;
      if (!refArrays.empty())
        refArrays[i] = sequenceRows(refArrays[i], runs);
    }
    run.outputs = callOnce(*code.jit, run.inputs, run.results);
    bool ok = true;
    for (size_t i = 0; i < refArrays.size(); ++i)
      ok &= compare(run.results[i], run.outputs[i], refArrays[i]);
    bool all = mpi->allMin(ok ? 1 : 0) == 1;
    if (!refArrays.empty() && mpi->rank() == 0)
      llvm::outs() << (all ? "check: ok on all " : "check: FAILED on some of ")
                   << mpi->size() << " rank(s)\n";
    for (size_t i = 0; i < run.results.size(); ++i)
      summarize(run.results[i], run.outputs[i]);
    if (!all)
      fail("--check failed: results differ from the reference lowering");
    if (benchRuns > 0)
      benchRun(code, k, run, dev);
    return;
  }
  run.outputs = callOnce(*code.jit, run.inputs, run.results, nullptr, dev);

  bool ok = true;
  if (code.ref) {
    std::vector<npy::Array> refArrays =
        callOnce(*code.ref, run.inputs, run.results);
    for (size_t i = 0; i < run.results.size(); ++i)
      ok &= compare(run.results[i], run.outputs[i], refArrays[i]);
  }
  for (size_t i = 0; i < run.results.size(); ++i)
    summarize(run.results[i], run.outputs[i]);
  if (!ok)
    fail("--check failed: results differ from the reference lowering");

  if (benchRuns > 0)
    benchRun(code, k, run, dev);
}

} // namespace attn_run
