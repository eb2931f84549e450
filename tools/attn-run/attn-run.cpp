//===- attn-run.cpp - JIT-compile and run an attn module ------------------===//
//
// attn-run FILE.mlir: lowers a module through a pipeline (by default
// attn-lower-to-llvm-pipeline), JIT-compiles it for the host CPU and calls
// one function with .npy or seeded random inputs. --check compares against
// the reference lowering, --bench times it. --target=cuda runs the GPU
// pipeline on an NVIDIA GPU; --target=gpu-emulator runs the same kernels on
// the CPU. See docs/attn-run.md.
//
// This file checks the options, parses the module, plans every run (its
// shapes, inputs, result shapes and memory) and drives them. The others:
//   AttnRun.h        what the files share (options, the plan, functions)
//   Options.cpp      the command-line options
//   Inputs.cpp       what goes in: .npy inputs, --shape, random data, the
//                    chunks of the sequence each rank holds, memory checks
//   Execute.cpp      compiling and calling the entry, --bench
//   Outputs.cpp      the results: their shapes, --check, the summary, files
//   ResultShapes.cpp sizes through the ops around the attention
//
//===----------------------------------------------------------------------===//

#include "AttnRun.h"

#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/Emulation/Passes.h"
#include "attn-opt/InitAttn.h"
#include "attn-opt/Pipelines/Pipelines.h"
#include "attn-opt/Runtime/JIT/ModuleLoader.h"
#include "attn-opt/Support/Random.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <malloc.h>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

namespace attn_run {

/// MPI, opened for a sharded module (sequence-parallel attention).
std::unique_ptr<MpiLoader> mpi;

/// A user-facing failure: prints "attn-run: error: ..." and exits with 1.
/// Output files are written only after everything succeeded, so failing
/// here never leaves one behind. Under mpiexec the failure ends every rank
/// (MpiLoader::endAfterFailure: an orderly end when all ranks fail alike,
/// MPI_Abort otherwise), so that none waits forever for this one.
[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::outs().flush();
  // One write, so that the lines of several ranks do not interleave.
  std::string line = "attn-run: error: ";
  if (mpi && mpi->size() > 1)
    line += "rank " + std::to_string(mpi->rank()) + ": ";
  line += message.str() + "\n";
  llvm::errs() << line;
  llvm::errs().flush();
  if (mpi && mpi->size() > 1)
    mpi->endAfterFailure(1);
  std::exit(1);
}

void failOn(llvm::Error error) {
  if (error)
    fail(llvm::toString(std::move(error)));
}

/// --probe-cuda: prints whether --target=cuda can run here (the device, or
/// the reason it cannot). Returns the exit code: 0 if it can.
static int probeCudaDevice() {
  std::string error, message;
  std::unique_ptr<CudaRuntimeLoader> rt =
      CudaRuntimeLoader::open(ATTN_CUDA_RUNTIME, error);
  if (!rt) {
    llvm::outs() << "cuda: unavailable: " << error << "\n";
    return 1;
  }
  bool ok = rt->probe(message);
  llvm::outs() << "cuda: " << (ok ? "" : "unavailable: ") << message << "\n";
  return ok ? 0 : 1;
}

/// Checks the options before anything runs, reading --seed and --bench.
static void checkOptions() {
  if (target != "cpu" && target != "cuda" && target != "gpu-emulator")
    fail("unknown --target '" + target +
         "' (supported: cpu, cuda, gpu-emulator)");
  if (referenceOnly && target != "cpu")
    fail("--reference runs on the CPU only (use --target=cpu)");
  // Options checked before anything runs (defaults: -1, the dtype's).
  for (auto [name, opt] :
       {std::pair("--rtol", &rtolOpt), std::pair("--atol", &atolOpt)})
    if (opt->getNumOccurrences() && !(std::isfinite(*opt) && *opt >= 0))
      fail(std::string(name) + " must be a finite number >= 0, not '" +
           std::to_string(*opt) + "'");
  if (entryName.getNumOccurrences() && entryName.empty())
    fail("--entry needs a function name");
  if (llvm::StringRef(seedText).getAsInteger(10, seed))
    fail("--seed needs an integer from 0 to 2^64 - 1, not '" + seedText + "'");
  if (llvm::StringRef(benchText).getAsInteger(10, benchRuns))
    fail("--bench needs a count of calls (0 to 2^32 - 1), not '" + benchText +
         "'");
  if (maxMemory.getNumOccurrences() && !parseBytes(maxMemory))
    fail("--max-memory needs a byte count (a number with an optional K, M, G "
         "or T), not '" +
         maxMemory + "'");
  for (const std::string &o : outputs)
    if (o == "-" || o.empty())
      fail("--output '" + o +
           "': results are .npy files; give a file name (standard output is "
           "not supported)");
  if (std::string error = chip.empty() ? "" : checkNVVMChip(chip);
      !error.empty())
    fail("--" + error);
}

/// The GPU architecture: --chip, else with --target=cuda the device's
/// (failing when there is no device).
static std::string chooseGpuChip() {
  std::string gpuChip = chip;
  if (target == "cuda") {
    const CudaRuntimeLoader &rt = cudaRuntime(); // fails without a device
    int major = 0, minor = 0;
    if (gpuChip.empty() && rt.capability(major, minor))
      gpuChip = "sm_" + std::to_string(major) + std::to_string(minor) +
                (major == 9 && minor == 0 ? "a" : "");
  }
  return gpuChip;
}

/// --grad: the entry becomes its backward function (attn-differentiate's
/// `@F_grad`), whose last arguments are the cotangents `d_output` (and
/// `d_lse`).
static void differentiateEntry(RunPlan &plan) {
  std::string name = (plan.entry.getName() + "_grad").str();
  PassManager pm(plan.module->getContext());
  pm.addPass(createAttnDifferentiate());
  if (failed(pm.run(*plan.module)))
    fail("--grad: cannot differentiate @" + plan.entry.getName() +
         " (diagnostics above)");
  auto gradFn = plan.module->lookupSymbol<func::FuncOp>(name);
  if (!gradFn)
    fail("--grad: @" + plan.entry.getName() +
         " has no attn.attention to differentiate");
  unsigned n = plan.entry.getNumArguments();
  plan.dOutputArg = n;
  plan.names.push_back("d_output");
  if (gradFn.getNumArguments() == n + 2) {
    plan.dLseArg = n + 1;
    plan.names.push_back("d_lse");
  }
  plan.entry = gradFn;
  gradFn.walk(
      [&](AttentionGradOp op) { plan.gradForward = op.getForwardOp(); });
}

/// Parses the input (diagnostics through `sourceMgr`) and chooses the entry
/// function, remembering the source names of its arguments.
static RunPlan parseModule(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                           std::string gpuChip) {
  auto loaded = loadModule(context, sourceMgr, inputFile, entryName);
  if (!loaded)
    fail(llvm::toString(loaded.takeError()));
  RunPlan plan;
  plan.gpuChip = std::move(gpuChip);
  plan.module = std::move(loaded->module);
  plan.entry = loaded->entry;
  plan.names = std::move(loaded->argNames);
  if (grad)
    differentiateEntry(plan);
  return plan;
}

/// Fills the argument and result slots of the entry (static shapes only
/// known yet) and checks --output against the results.
static void makeSlots(RunPlan &plan) {
  func::FuncOp entry = plan.entry;
  const std::vector<std::string> &names = plan.names;
  std::vector<Slot> &args = plan.args, &results = plan.results;
  FunctionType fnType = entry.getFunctionType();
  for (auto [i, t] : llvm::enumerate(fnType.getInputs())) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt)
      fail("argument " + names[i] + " of @" + entry.getName() +
           " must be a ranked tensor");
    args.push_back(
        {names[i], rt,
         dtypeOf(rt, "argument " + names[i] + " of @" + entry.getName()),
         std::nullopt});
    if (rt.hasStaticShape())
      args.back().shape =
          std::vector<int64_t>(rt.getShape().begin(), rt.getShape().end());
  }
  for (auto [i, t] : llvm::enumerate(fnType.getResults())) {
    auto rt = dyn_cast<RankedTensorType>(t);
    std::string name = "result" + std::to_string(i);
    if (!rt)
      fail(name + " of @" + entry.getName() + " must be a ranked tensor");
    results.push_back({name, rt, dtypeOf(rt, name), std::nullopt});
  }
  if (outputs.size() > results.size())
    fail("--output given " + llvm::Twine(outputs.size()) + " times but @" +
         entry.getName() + " has " + llvm::Twine(results.size()) + " results");
}

/// The index of `v` among the arguments of `entry`, or -1.
int64_t argIndexOf(func::FuncOp entry, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &entry.front())
    return -1;
  return arg.getArgNumber();
}

/// Plans run `k`: its shapes, its memory, its inputs, its result shapes
/// and its work.
static void planRun(RunPlan &plan, size_t k) {
  Run &run = plan.runs[k];
  run.args = plan.args;
  run.results = plan.results;
  for (auto [i, list] : llvm::enumerate(plan.shapeLists))
    if (!list.empty())
      run.args[i].shape = list[list.size() == 1 ? 0 : k];
  // Lengths default to the query's batch.
  for (auto &[i, role] : plan.roles)
    if (!role.offsets && !run.args[i].shape && role.queryArg >= 0 &&
        run.args[role.queryArg].shape)
      run.args[i].shape =
          std::vector<int64_t>{(*run.args[role.queryArg].shape)[0]};
  defaultCotangentShapes(plan, run);
  uint64_t runSeed = k == 0 ? seed : deriveSeed(seed, 1000 + k);
  // The memory, before any input is drawn (a module that needs more than
  // there is fails here, in a moment, instead of in operator new or after
  // minutes of drawing inputs).
  if (llvm::all_of(run.args, [](const Slot &a) { return a.shape; })) {
    // Shapes only (no inputs yet: a varlen batch's scores count later).
    std::vector<Slot> results = run.results;
    double flops = 0, scoreBytes = 0, gradientBytes = 0;
    inferResults(plan.entry, run.args, {}, results, flops, scoreBytes,
                 gradientBytes);
    checkRunMemory(plan, k, run, results, scoreBytes, gradientBytes);
  }
  drawInputs(plan, run, runSeed);
  double scoreBytes = 0, gradientBytes = 0;
  inferResults(plan.entry, run.args, run.inputs, run.results, run.flops,
               scoreBytes, gradientBytes);
  // Again with the inputs: a varlen batch's scores are known now.
  checkRunMemory(plan, k, run, run.results, scoreBytes, gradientBytes);
}

/// Every run's inputs, result shapes and work, before compiling: a bad
/// shape fails fast.
static void planRuns(RunPlan &plan) {
  plan.runs.resize(plan.numRuns);
  for (size_t k = 0; k < plan.runs.size(); ++k)
    planRun(plan, k);
}

/// attn-run: checks the options, parses the module and plans every run,
/// compiles the entry once, executes the runs and then writes the files.
/// Returns the exit code.
static int run(MLIRContext &context) {
  if (probeCuda)
    return probeCudaDevice();
  checkOptions();
  std::string gpuChip = chooseGpuChip();
  if (threads > 0)
    setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);

  if (inputFile.empty())
    fail("no input file (usage: attn-run FILE.mlir [options])");

  // Parse, remembering the source names of the arguments.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  RunPlan plan = parseModule(context, sourceMgr, gpuChip);
  makeSlots(plan);
  // Inputs: named, positional, or random.
  readInputs(plan);
  parseShapes(plan);
  findArgumentRoles(plan);
  findSequenceSharding(plan);
  planRuns(plan);
  checkOutputs(plan);

  // Compile once; run every shape set.
  CompiledCode code = compileEntry(plan);
  for (size_t k = 0; k < plan.runs.size(); ++k)
    executeRun(plan, code, k);

  writeFiles(plan);
  return 0;
}

} // namespace attn_run

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // The generated code's large buffers come from the heap and go back to it
  // (glibc: no mapping per buffer, no trimming), so that a call reuses the
  // pages of the last instead of faulting in fresh mappings: the kernels,
  // not the page faults, are what --bench measures (docs/attn-run.md).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerAttnDialects(registry);
  registerAllPasses();
  registerAttnPasses();
  registerAttnEmulation();

  // Take `--threads N` / `--threads=N` out of argv (see `attn_run::threads`).
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i) {
    StringRef a(argv[i]);
    StringRef value;
    if ((a == "--threads" || a == "-threads") && i + 1 < argc)
      value = argv[++i];
    else if (a.consume_front("--threads=") || a.consume_front("-threads="))
      value = a;
    else {
      args.push_back(argv[i]);
      continue;
    }
    if (value.getAsInteger(10, attn_run::threads) || attn_run::threads == 0) {
      llvm::errs() << "attn-run: error: --threads takes a positive integer, "
                      "got '"
                   << value << "'\n";
      return 1;
    }
  }
  cl::HideUnrelatedOptions(attn_run::category);
  cl::ParseCommandLineOptions(
      static_cast<int>(args.size()), args.data(),
      "attn-run: lower an attn module, JIT-compile it and run a function\n\n"
      "  --threads=<N>  OpenMP threads (default: all cores)\n");

  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  return attn_run::run(context);
}
