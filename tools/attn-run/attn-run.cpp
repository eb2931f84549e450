//===- attn-run.cpp - JIT-compile and run an attn module ------------------===//
//
// attn-run FILE.mlir: lowers a module through a pipeline (by default
// attn-lower-to-llvm-pipeline), JIT-compiles it for the host CPU and calls
// one function with .npy or seeded random inputs. --check compares against
// the reference lowering, --bench times it. --target=cuda runs the GPU
// pipeline on an NVIDIA GPU; --target=gpu-emulator runs the same kernels on
// the CPU. See docs/attn-run.md.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/Emulation/Passes.h"
#include "attn-opt/Runtime/Host/AvailableMemory.h"
#include "attn-opt/Runtime/Host/CudaRuntimeLoader.h"
#include "attn-opt/Runtime/Host/MpiLoader.h"
#include "attn-opt/Runtime/Host/Npy.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"
#include "attn-opt/Runtime/Host/SequenceChunks.h"
#include "attn-opt/InitAttn.h"
#include "attn-opt/Pipelines/Pipelines.h"
#include "attn-opt/Runtime/JIT/HostTarget.h"
#include "attn-opt/Runtime/JIT/Jit.h"
#include "attn-opt/Runtime/JIT/ModuleLoader.h"
#include "attn-opt/Support/Random.h"

#include "ResultShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <malloc.h>
#include <map>
#include <optional>
#include <set>
#include <unistd.h>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

static cl::OptionCategory category("attn-run options");

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<input .mlir file>"),
                                      cl::cat(category));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to run (default: the only public "
                       "function with a body)"),
              cl::cat(category));
static cl::opt<std::string> pipelineText(
    "pipeline",
    cl::desc("Pass pipeline lowering the module to the LLVM dialect, as a "
             "pass list (default: attn-lower-to-llvm-pipeline)"),
    cl::cat(category));
static cl::opt<bool> referenceOnly(
    "reference",
    cl::desc("Compile through the reference lowering only "
             "(convert-attn-to-linalg, then the generic CPU lowering)"),
    cl::cat(category));
static cl::opt<std::string> target(
    "target",
    cl::desc("Where to run: cpu (attn-lower-to-llvm-pipeline), cuda (an "
             "NVIDIA GPU through attn-lower-to-nvvm-pipeline and "
             "libAttnCudaRuntime.so), gpu-emulator (the GPU kernels of "
             "attn-lower-to-nvvm-pipeline run on the CPU by attn-emulate-gpu)"),
    cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    chip("chip",
         cl::desc("GPU architecture for --target=cuda (default: the "
                  "device's, sm_90a on compute capability 9.0)"),
         cl::cat(category));
static cl::opt<bool> probeCuda(
    "probe-cuda",
    cl::desc("Print whether --target=cuda can run here (the device, or the "
             "reason it cannot) and exit: 0 if it can"),
    cl::cat(category));
static cl::opt<bool> tensorCores(
    "tensor-cores",
    cl::desc("GPU targets: use the mma.sync kernels for f16/bf16 attention"),
    cl::init(true), cl::cat(category));
static cl::list<std::string>
    inputs("input",
           cl::desc("An input: NAME=FILE.npy (NAME as in the source, e.g. "
                    "query for %query, or argN), or FILE.npy in argument "
                    "order"),
           cl::cat(category));
/// The files --input read (checkOutputs refuses to overwrite one).
static std::vector<std::string> inputPaths;
static cl::list<std::string> shapes(
    "shape",
    cl::desc("NAME=DIMS[,DIMS...]: the shape of a dynamically shaped "
             "argument filled by --random-inputs, e.g. query=1x8x300x64 (an "
             "--input file gives its own; lengths of varlen batches default "
             "to the query's batch). Several shapes run the code compiled "
             "once on each in turn (run K takes the K-th shape of every "
             "list; a single shape serves every run); --save-inputs DIR and "
             "--output FILE.npy then write DIR/K/ and FILE.K.npy"),
    cl::cat(category));
static cl::opt<bool> randomInputs(
    "random-inputs",
    cl::desc("Fill inputs not given by --input with seeded random data: "
             "standard normal floats, sorted segment ids in [0, 4), masks "
             "allowing 3 in 4 entries (true or 0; else false or -inf)"),
    cl::cat(category));
// --seed and --bench are read as text and checked by attn-run (LLVM's
// integer parsers answer "-1" with their own message).
static cl::opt<std::string> seedText("seed",
                                     cl::desc("Seed of --random-inputs (0 to "
                                              "2^64 - 1)"),
                                     cl::value_desc("N"), cl::init("0"),
                                     cl::cat(category));
static uint64_t seed = 0;
static cl::opt<double>
    inputScale("input-scale",
               cl::desc("Multiply random float inputs by this factor"),
               cl::init(1.0), cl::cat(category));
static cl::opt<std::string>
    saveInputs("save-inputs", cl::desc("Write the inputs used to DIR/NAME.npy"),
               cl::value_desc("DIR"), cl::cat(category));
static cl::list<std::string>
    outputs("output", cl::desc("Write result N (in order) to FILE.npy"),
            cl::cat(category));
static cl::opt<bool> grad(
    "grad",
    cl::desc(
        "Run the backward pass of the entry @F instead (attn-differentiate's "
        "@F_grad): its arguments are @F's, then the cotangent d_output "
        "(and d_lse when @F returns the log-sum-exp); its results are the "
        "gradients of query, key, value (and bias, gate, sinks)"),
    cl::cat(category));
static cl::opt<bool>
    check("check",
          cl::desc("Also run the reference lowering and compare: fail if any "
                   "|out - ref| > atol + rtol * |ref|"),
          cl::cat(category));
static cl::opt<double>
    rtolOpt("rtol",
            cl::desc("Relative tolerance of --check (default 1e-4 for f32, "
                     "2e-2 for f16 and bf16)"),
            cl::init(-1), cl::cat(category));
static cl::opt<double>
    atolOpt("atol",
            cl::desc("Absolute tolerance of --check (default 1e-5 for f32, "
                     "2e-2 for f16 and bf16)"),
            cl::init(-1), cl::cat(category));
static cl::opt<bool>
    printRemarks("remarks",
                 cl::desc("Print the passes' remarks (decisions such as "
                          "attn-reassociate's)"),
                 cl::cat(category));
static cl::opt<std::string> maxMemory(
    "max-memory",
    cl::desc("Refuse to run (before allocating) when a run's inputs, outputs "
             "and workspace need more than this many bytes: a number with an "
             "optional K, M, G or T (powers of 1024) (default: the memory "
             "available, MemAvailable or the cgroup's limit)"),
    cl::value_desc("BYTES"), cl::cat(category));
static cl::opt<std::string>
    benchText("bench", cl::desc("Time N calls after one warm-up call"),
              cl::value_desc("N"), cl::init("0"), cl::cat(category));
static unsigned benchRuns = 0;
/// `--threads N`: libLLVM already registers a `threads` option, so attn-run
/// takes this one out of argv before parsing (see main).
static unsigned threads = 0;

namespace {

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

/// One argument or result of the entry function: its type (sizes may be
/// dynamic) and, once known, its concrete shape.
struct Slot {
  std::string name;
  RankedTensorType type;
  npy::DType dtype;
  std::optional<std::vector<int64_t>> shape;
};

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

/// Fails with the generated code's run-time error, if it reported one.
void failOnRuntimeError(StringRef what) {
  if (std::optional<std::string> message = runtimeError.message())
    fail(what + " reported a run-time error: " + *message);
}

/// True if `shape` conforms to `type`: same rank, equal static sizes.
bool conforms(ArrayRef<int64_t> shape, RankedTensorType type) {
  if (static_cast<int64_t>(shape.size()) != type.getRank())
    return false;
  for (auto [s, d] : llvm::zip(shape, type.getShape()))
    if (!ShapedType::isDynamic(d) && s != d)
      return false;
  return true;
}

/// "1x?x64" of a shape with dynamic sizes.
std::string describeShape(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") +
         (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s;
}

npy::DType dtypeOf(RankedTensorType type, const llvm::Twine &what) {
  Type et = type.getElementType();
  if (et.isF32())
    return npy::DType::F32;
  if (et.isF16())
    return npy::DType::F16;
  if (et.isBF16())
    return npy::DType::BF16;
  if (et.isInteger(32))
    return npy::DType::I32;
  if (et.isInteger(64))
    return npy::DType::I64;
  if (et.isInteger(1))
    return npy::DType::Bool;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  fail(what + " has unsupported type " + s +
       " (supported elements: f32, f16, bf16, i32, i64, i1)");
}

std::string describe(RankedTensorType type) {
  return describeShape(type.getShape()) + "x" +
         npy::name(dtypeOf(type, "tensor"));
}

npy::Array allocate(const Slot &slot) {
  npy::Array a;
  a.type = slot.dtype;
  a.shape = *slot.shape;
  a.data.assign(a.numElements() * npy::byteWidth(a.type), 0);
  return a;
}

/// How an argument serves the attention ops of the entry: as varlen lengths
/// of `rows` (the query or key argument), or as offsets.
struct VarlenRole {
  bool offsets = false;
  int64_t rowsArg = -1;  ///< the query or key argument, or -1
  int64_t queryArg = -1; ///< the query argument, or -1
};

/// Random lengths in [0, rows] or random offsets splitting `rows` rows.
npy::Array randomVarlen(const Slot &slot, const VarlenRole &role, int64_t rows,
                        uint64_t seedValue, int64_t index) {
  npy::Array a = allocate(slot);
  SplitMix64 rng(deriveSeed(seedValue, index));
  int64_t n = a.numElements();
  if (!role.offsets) {
    for (int64_t i = 0; i < n; ++i)
      npy::storeFloat(a, i, static_cast<float>(rng.below(rows + 1)));
    return a;
  }
  // 0, sorted cut points, rows.
  std::vector<int64_t> cuts = {0};
  for (int64_t i = 1; i + 1 < n; ++i)
    cuts.push_back(static_cast<int64_t>(rng.below(rows + 1)));
  if (n > 1)
    cuts.push_back(rows);
  std::sort(cuts.begin(), cuts.end());
  for (int64_t i = 0; i < n; ++i)
    npy::storeFloat(a, i, static_cast<float>(cuts[i]));
  return a;
}

npy::Array randomArray(const Slot &slot, uint64_t seedValue, int64_t index,
                       bool isMask = false) {
  npy::Array a = allocate(slot);
  SplitMix64 rng(deriveSeed(seedValue, index));
  int64_t n = a.numElements();
  if (isMask) {
    // Masks: allowed (true, or 0 for an additive mask) with probability
    // 3/4, else masked (false, or -inf).
    for (int64_t i = 0; i < n; ++i) {
      bool allowed = rng.below(4) != 0;
      npy::storeFloat(a, i,
                      a.type == npy::DType::Bool
                          ? (allowed ? 1.0f : 0.0f)
                          : (allowed ? 0.0f : -INFINITY));
    }
    return a;
  }
  if (a.type == npy::DType::I32 || a.type == npy::DType::I64) {
    // Segment ids: each row sorted, like packed documents.
    int64_t row = a.shape.empty() ? 1 : a.shape.back();
    for (int64_t start = 0; start < n; start += row) {
      std::vector<int64_t> ids(row);
      for (int64_t &id : ids)
        id = static_cast<int64_t>(rng.below(4));
      std::sort(ids.begin(), ids.end());
      for (int64_t i = 0; i < row; ++i)
        npy::storeFloat(a, start + i, static_cast<float>(ids[i]));
    }
    return a;
  }
  for (int64_t i = 0; i < n; ++i)
    npy::storeFloat(a, i, static_cast<float>(rng.normal() * inputScale));
  return a;
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

/// Wall time of the last compileVariant: the pass pipeline and LLVM.
double lastPipelineMs = 0, lastLlvmMs = 0;

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Lowers a clone of `module` with `build` and JIT-compiles it.
std::unique_ptr<JitFunction>
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
void copyResults(const DeviceBuffers &device, std::vector<npy::Array> &outs) {
  for (auto [i, o] : llvm::enumerate(outs))
    std::memcpy(o.data.data(), device.outs[i], o.data.size());
}

/// Calls `jit` on `args`, writing into fresh result arrays. With `device`,
/// the call reads and writes the managed buffers (copied in on first use)
/// and waits for the GPU; `copyBack` copies the results back (timed calls
/// leave them on the device: reading them would move the pages to the host
/// and the next call would move them back).
std::vector<npy::Array> callOnce(JitFunction &jit,
                                 std::vector<npy::Array> &args,
                                 const std::vector<Slot> &results,
                                 std::vector<npy::Array> *reuse = nullptr,
                                 DeviceBuffers *device = nullptr,
                                 bool copyBack = true) {
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

/// Compares `out` with `ref`; prints the errors, returns true within
/// tolerance.
bool compare(const Slot &slot, const npy::Array &out, const npy::Array &ref) {
  bool lowPrecision =
      slot.dtype == npy::DType::F16 || slot.dtype == npy::DType::BF16;
  double rtol = rtolOpt >= 0 ? rtolOpt : (lowPrecision ? 2e-2 : 1e-4);
  double atol = atolOpt >= 0 ? atolOpt : (lowPrecision ? 2e-2 : 1e-5);
  double maxAbs = 0, maxRef = 0, worstRatio = 0;
  int64_t bad = 0, firstBad = -1, n = out.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double o = npy::loadFloat(out, i), r = npy::loadFloat(ref, i);
    double err = std::fabs(o - r);
    if (std::isnan(o) != std::isnan(r))
      err = INFINITY;
    else if (std::isnan(o))
      err = 0;
    maxAbs = std::max(maxAbs, err);
    maxRef = std::max(maxRef, std::fabs(r));
    double limit = atol + rtol * std::fabs(r);
    worstRatio = std::max(worstRatio, err / limit);
    if (!(err <= limit)) {
      if (firstBad < 0)
        firstBad = i;
      ++bad;
    }
  }
  double rel = maxRef > 0 ? maxAbs / maxRef : maxAbs;
  llvm::outs() << llvm::format(
      "check %s: max_abs_err=%.3e max_rel_err=%.3e (rtol=%.1e atol=%.1e) ",
      slot.name.c_str(), maxAbs, rel, rtol, atol);
  if (bad == 0) {
    llvm::outs() << "ok\n";
    return true;
  }
  llvm::outs() << llvm::format(
      "FAILED: %lld of %lld elements out of tolerance, first at flat index "
      "%lld (%g vs reference %g)\n",
      static_cast<long long>(bad), static_cast<long long>(n),
      static_cast<long long>(firstBad), npy::loadFloat(out, firstBad),
      npy::loadFloat(ref, firstBad));
  return false;
}

void summarize(const Slot &slot, const npy::Array &a) {
  double sum = 0, absMax = 0;
  int64_t n = a.numElements(), nonFinite = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = npy::loadFloat(a, i);
    if (!std::isfinite(v)) {
      ++nonFinite;
      continue;
    }
    sum += v;
    absMax = std::max(absMax, std::fabs(v));
  }
  llvm::outs() << llvm::format("result %s: %s mean=%.6g max_abs=%.6g",
                               slot.name.c_str(), a.describe().c_str(),
                               n ? sum / n : 0.0, absMax);
  if (nonFinite)
    llvm::outs() << " non_finite=" << nonFinite;
  llvm::outs() << "\n";
}

/// The sequences (query and key lengths) of a varlen attention op whose
/// lengths or offsets are arguments of `entry`, from the `inputs`; empty
/// when they are not arguments (then the whole buffers count).
std::vector<std::pair<int64_t, int64_t>>
varlenSequences(func::FuncOp entry, AttentionOp op,
                const std::vector<npy::Array> &inputs,
                const std::vector<int64_t> &q, const std::vector<int64_t> &k) {
  auto arrayOf = [&](Value v) -> const npy::Array * {
    auto arg = dyn_cast_or_null<BlockArgument>(v);
    if (!arg || arg.getOwner() != &entry.front())
      return nullptr;
    return &inputs[arg.getArgNumber()];
  };
  auto at = [](const npy::Array *a, int64_t i) {
    return static_cast<int64_t>(npy::loadFloat(*a, i));
  };
  std::vector<std::pair<int64_t, int64_t>> seqs;
  if (op.isPacked()) {
    const npy::Array *cq = arrayOf(op.getQueryOffsets()),
                     *ck = arrayOf(op.getKeyOffsets());
    if (!cq || !ck)
      return {};
    for (int64_t s = 0; s + 1 < cq->numElements(); ++s)
      seqs.push_back({at(cq, s + 1) - at(cq, s), at(ck, s + 1) - at(ck, s)});
    return seqs;
  }
  const npy::Array *lq = arrayOf(op.getQueryLengths()),
                   *lk = arrayOf(op.getKeyLengths());
  if ((op.getQueryLengths() && !lq) || (op.getKeyLengths() && !lk))
    return {};
  for (int64_t b = 0; b < q[0]; ++b)
    seqs.push_back({lq ? at(lq, b) : q[2], lk ? at(lk, b) : k[2]});
  return seqs;
}

/// Parses --max-memory: a byte count with an optional K, M, G or T.
std::optional<double> parseBytes(llvm::StringRef text) {
  double scale = 1;
  if (!text.empty()) {
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K':
      scale = 1024.0;
      break;
    case 'M':
      scale = 1024.0 * 1024;
      break;
    case 'G':
      scale = 1024.0 * 1024 * 1024;
      break;
    case 'T':
      scale = 1024.0 * 1024 * 1024 * 1024;
      break;
    }
    if (scale != 1)
      text = text.drop_back();
  }
  uint64_t value;
  if (text.empty() || text.getAsInteger(10, value))
    return std::nullopt;
  return static_cast<double>(value) * scale;
}

/// The bytes this process may still allocate (availableMemory, with the
/// machine's RAM as a fallback) and what bounds them.
std::pair<double, std::string> availableMemoryAndSource() {
  double ram = static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
               static_cast<double>(sysconf(_SC_PAGESIZE));
  MemorySource source;
  double bytes =
      static_cast<double>(availableMemory(static_cast<int64_t>(ram), &source));
  switch (source) {
  case MemorySource::MemAvailable:
    return {bytes, "the memory available (MemAvailable)"};
  case MemorySource::Cgroup:
    return {bytes, "the memory its cgroup leaves (memory.max)"};
  case MemorySource::Fallback:
    break;
  }
  return {bytes, "the machine's memory"};
}

/// The bytes of an array of `shape` and `dtype`.
double arrayBytes(const std::vector<int64_t> &shape, npy::DType dtype) {
  double bytes = npy::byteWidth(dtype);
  for (int64_t d : shape)
    bytes *= static_cast<double>(d);
  return bytes;
}

/// Fails, naming the bytes, when run `k` needs more than the limit.
void checkMemory(size_t k, double needed, llvm::StringRef what) {
  static std::optional<std::pair<double, std::string>> limit;
  if (!limit) {
    if (maxMemory.getNumOccurrences())
      limit = {*parseBytes(maxMemory), "--max-memory"};
    else
      limit = availableMemoryAndSource();
  }
  if (needed <= limit->first)
    return;
  auto human = [](double bytes) {
    const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    double v = bytes;
    while (v >= 1024 && u < 5) {
      v /= 1024;
      ++u;
    }
    return u == 0
               ? llvm::formatv("{0:F0} bytes", v).str()
               : llvm::formatv("{0:F0} bytes ({1:F1} {2})", bytes, v, units[u])
                     .str();
  };
  fail(llvm::formatv("run {0} needs {1} for its {2}, more than the {3} of "
                     "{4}; nothing was allocated (smaller sizes, or "
                     "--max-memory)",
                     k, human(needed), what, human(limit->first), limit->second)
           .str());
}

/// The shapes of `entry`'s results from its arguments' (`args`), through
/// the attention ops, and the work of the attention ops at these sizes (of
/// each sequence of a varlen batch).
void inferResults(func::FuncOp entry, const std::vector<Slot> &args,
                  const std::vector<npy::Array> &inputs,
                  std::vector<Slot> &results, double &flops,
                  double &scoreBytes) {
  attn_run::KnownSizes sizes;
  auto &known = sizes.shapes;
  for (auto [i, a] : llvm::enumerate(args))
    known[entry.getArgument(i)] = *a.shape;
  auto shapeOfValue = [&](Value v) -> std::optional<std::vector<int64_t>> {
    if (const std::vector<int64_t> *shape = sizes.shapeOf(v))
      return *shape;
    return std::nullopt;
  };
  flops = 0;
  scoreBytes = 0;
  // The work of each attention op, for its gradient's.
  llvm::DenseMap<Operation *, double> forwardFlops;
  entry.walk([&](Operation *op) {
    // Sharding annotations keep the (global) shape.
    if (auto shardOp = dyn_cast<shard::ShardOp>(op)) {
      if (auto shape = shapeOfValue(shardOp.getSrc()))
        known[shardOp.getResult()] = *shape;
      return;
    }
    if (auto grad = dyn_cast<AttentionGradOp>(op)) {
      // Each gradient has its operand's shape; the backward pass does 2.5
      // times the forward's work (five products of the scores' size, the
      // forward has two).
      AttentionOp fwd = grad.getForwardOp();
      SmallVector<std::pair<Value, Value>> pairs = {
          {grad.getGradQuery(), fwd.getQuery()},
          {grad.getGradKey(), fwd.getKey()},
          {grad.getGradValue(), fwd.getValue()},
          {grad.getGradBias(), fwd.getBias()},
          {grad.getGradGate(), fwd.getGate()},
          {grad.getGradSinks(), fwd.getSinks()}};
      for (auto [result, operand] : pairs)
        if (result)
          if (auto shape = shapeOfValue(operand))
            known[result] = *shape;
      flops += 2.5 * forwardFlops.lookup(fwd);
      return;
    }
    auto attention = dyn_cast<AttentionOp>(op);
    if (!attention) {
      if (auto f = dyn_cast<FlopCountOpInterface>(op))
        flops += f.getFlopCount();
      attn_run::propagateSizes(op, sizes);
      return;
    }
    auto q = shapeOfValue(attention.getQuery());
    auto k = shapeOfValue(attention.getKey());
    auto v = shapeOfValue(attention.getValue());
    if (!q || !k || !v)
      return;
    known[attention.getResult()] = {(*q)[0], (*q)[1], (*q)[2], (*v)[3]};
    if (Value lse = attention.getLse())
      known[lse] = {(*q)[0], (*q)[1], (*q)[2]};
    AttentionDims d = attention.getDims();
    // (Shapes only, with no inputs: a varlen batch's work is not known.)
    if (attention.isVarlen() && inputs.empty())
      return;
    auto seqs = attention.isVarlen()
                    ? varlenSequences(entry, attention, inputs, *q, *k)
                    : std::vector<std::pair<int64_t, int64_t>>{};
    if (seqs.empty()) {
      d.batch = (*q)[0];
      d.queryLen = (*q)[2];
      d.keyLen = (*k)[2];
      forwardFlops[op] = attention.getFlopCount(d);
      flops += forwardFlops[op];
      scoreBytes += 4.0 * d.batch * d.queryHeads * d.queryLen * d.keyLen;
      return;
    }
    for (auto [lq, lk] : seqs) {
      d.batch = 1;
      d.queryLen = lq;
      d.keyLen = lk;
      scoreBytes += 4.0 * d.queryHeads * lq * lk;
      if (lq > 0 && lk > 0)
        forwardFlops[op] += attention.getFlopCount(d);
    }
    flops += forwardFlops[op];
  });
  auto returned = cast<func::ReturnOp>(entry.front().getTerminator());
  for (auto [i, r] : llvm::enumerate(results)) {
    Value value = returned.getOperand(i);
    r.shape = shapeOfValue(value);
    if (r.shape)
      continue;
    // Name the op whose sizes attn-run does not follow.
    Operation *def = value.getDefiningOp();
    std::string source =
        def ? def->getName().getStringRef().str() : "an argument";
    fail(r.name + " of @" + entry.getName() + " has the dynamic type " +
         describe(r.type) +
         " that attn-run cannot size from the inputs: its sizes come from " +
         source +
         ", which attn-run does not follow (it follows attention ops, "
         "casts, elementwise and linalg ops, tensor.empty and tensor.dim)");
  }
}

/// One run: the entry's argument and result slots at this run's shapes, its
/// inputs, then its outputs, and the work of its attention ops.
struct Run {
  std::vector<Slot> args, results;
  std::vector<npy::Array> inputs, outputs;
  double flops = 0;
};

/// What the command line and the parsed module decide: the entry function,
/// its argument and result slots, the inputs given, the shapes of every run
/// and how the arguments serve the attention ops.
struct RunPlan {
  /// The GPU architecture of --target=cuda (--chip, else the device's).
  std::string gpuChip;
  OwningOpRef<ModuleOp> module;
  func::FuncOp entry;
  /// The source names of the entry's arguments.
  std::vector<std::string> names;
  /// The entry's argument and result slots; sizes may be dynamic.
  std::vector<Slot> args, results;
  /// The arguments --input gives.
  std::vector<std::optional<npy::Array>> values;
  /// --shape: the shapes of each argument, one per run (or one for all).
  std::vector<std::vector<std::vector<int64_t>>> shapeLists;
  size_t numRuns = 1;
  /// How arguments serve the attention ops: as varlen lengths or offsets,
  /// as mask tensors.
  std::map<int64_t, VarlenRole> roles;
  std::set<int64_t> maskArgs;
  /// --grad: the argument numbers of the cotangents d_output (and d_lse),
  /// -1 when absent, and the attention they belong to.
  int64_t dOutputArg = -1, dLseArg = -1;
  AttentionOp gradForward;
  std::vector<Run> runs;
  /// Sequence parallelism (a shard.grid in the module): the arguments and
  /// results sharded along the sequence, the chunk order and static chunk
  /// offsets (SequenceChunks.h).
  std::set<int64_t> shardedArgs, shardedResults;
  bool zigzag = false;
  std::vector<int64_t> staticOffsets;
};

/// The compiled entry: by the chosen pipeline (and how long that took)
/// and, with --check, by the reference lowering.
struct CompiledCode {
  std::unique_ptr<JitFunction> jit, ref;
  double pipelineMs = 0, llvmMs = 0;
};

/// --probe-cuda: prints whether --target=cuda can run here (the device, or
/// the reason it cannot). Returns the exit code: 0 if it can.
int probeCudaDevice() {
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
void checkOptions() {
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
std::string chooseGpuChip() {
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
void differentiateEntry(RunPlan &plan) {
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
RunPlan parseModule(MLIRContext &context, llvm::SourceMgr &sourceMgr,
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
void makeSlots(RunPlan &plan) {
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

/// Reads the --input files (named or positional), giving their arguments'
/// shapes.
void readInputs(RunPlan &plan) {
  func::FuncOp entry = plan.entry;
  std::vector<Slot> &args = plan.args;
  std::vector<std::optional<npy::Array>> &values = plan.values;
  values.resize(args.size());
  size_t positional = 0;
  for (const std::string &spec : inputs) {
    StringRef s(spec);
    size_t index;
    StringRef path;
    if (s.contains('=') && !s.ends_with(".npy=")) {
      std::pair<StringRef, StringRef> parts = s.split('=');
      StringRef name = parts.first, p = parts.second;
      auto it =
          llvm::find_if(args, [&](const Slot &a) { return a.name == name; });
      if (it == args.end()) {
        std::string known;
        for (const Slot &a : args)
          known += (known.empty() ? "" : ", ") + a.name;
        fail("--input " + spec + ": @" + entry.getName() +
             " has no argument named '" + name + "' (arguments: " + known +
             ")");
      }
      index = it - args.begin();
      path = p;
    } else {
      while (positional < args.size() && values[positional])
        ++positional;
      if (positional == args.size())
        fail("--input " + spec + ": more inputs than arguments");
      index = positional;
      path = s;
    }
    if (values[index])
      fail("--input " + spec + ": argument " + args[index].name +
           " is given twice");
    std::string error;
    std::optional<npy::Array> array = npy::read(path.str(), error);
    inputPaths.push_back(path.str());
    if (!array)
      fail(error);
    Slot &slot = args[index];
    if (array->type != slot.dtype || !conforms(array->shape, slot.type))
      fail(path + ": holds " + array->describe() + " but argument " +
           slot.name + " of @" + entry.getName() + " is " +
           describe(slot.type));
    slot.shape = array->shape;
    values[index] = std::move(*array);
  }
}

/// Reads --shape NAME=DIMS[,DIMS...]: the shapes of a dynamically shaped
/// argument, one per run; a single shape serves every run. Sets the number
/// of runs.
void parseShapes(RunPlan &plan) {
  func::FuncOp entry = plan.entry;
  const std::vector<Slot> &args = plan.args;
  std::vector<std::vector<std::vector<int64_t>>> &shapeLists = plan.shapeLists;
  size_t &numRuns = plan.numRuns;
  shapeLists.resize(args.size());
  for (const std::string &spec : shapes) {
    StringRef name, list;
    std::tie(name, list) = StringRef(spec).split('=');
    auto it =
        llvm::find_if(args, [&](const Slot &a) { return a.name == name; });
    if (it == args.end() || list.empty())
      fail("--shape " + spec +
           ": expected NAME=DIMS with NAME an argument "
           "of @" +
           entry.getName());
    size_t index = it - args.begin();
    if (plan.values[index])
      fail("--shape " + spec + ": " + name + " is given by --input");
    if (!shapeLists[index].empty())
      fail("--shape " + spec + ": " + name + " has a --shape already");
    SmallVector<StringRef> dimsList;
    list.split(dimsList, ',');
    for (StringRef dims : dimsList) {
      std::vector<int64_t> shape;
      SmallVector<StringRef> parts;
      dims.split(parts, 'x');
      for (StringRef d : parts) {
        int64_t v;
        if (d.getAsInteger(10, v) || v < 0)
          fail("--shape " + spec + ": '" + d + "' is not a size");
        shape.push_back(v);
      }
      if (!conforms(shape, it->type))
        fail("--shape " + spec + ": " + name + " of @" + entry.getName() +
             " is " + describe(it->type) + ", not " + dims);
      shapeLists[index].push_back(shape);
    }
    if (shapeLists[index].size() > 1) {
      if (numRuns > 1 && numRuns != shapeLists[index].size())
        fail("--shape " + spec + ": " + llvm::Twine(shapeLists[index].size()) +
             " shapes, but another --shape gives " + llvm::Twine(numRuns));
      numRuns = shapeLists[index].size();
    }
  }
}

/// Finds how arguments serve the attention ops: as varlen lengths or
/// offsets, as mask tensors.
void findArgumentRoles(RunPlan &plan) {
  func::FuncOp entry = plan.entry;
  entry.walk([&](AttentionOp op) {
    auto mark = [&](Value operand, Value rows, bool offsets) {
      int64_t i = operand ? argIndexOf(entry, operand) : -1;
      if (i >= 0)
        plan.roles[i] = {offsets, argIndexOf(entry, rows),
                         argIndexOf(entry, op.getQuery())};
    };
    mark(op.getQueryLengths(), op.getQuery(), false);
    mark(op.getKeyLengths(), op.getKey(), false);
    mark(op.getQueryOffsets(), op.getQuery(), true);
    mark(op.getKeyOffsets(), op.getKey(), true);
    if (Value m = op.getMask(); m && argIndexOf(entry, m) >= 0)
      plan.maskArgs.insert(argIndexOf(entry, m));
  });
}

/// Fails when run `k` needs more memory than the limit for its inputs
/// (given, or of its arguments' shapes), `results` (twice with --check)
/// and, with the reference lowering, `scoreBytes` of scores.
void checkRunMemory(const RunPlan &plan, size_t k, const Run &run,
                    const std::vector<Slot> &results, double scoreBytes) {
  bool reference = referenceOnly || check;
  double bytes = 0;
  for (size_t i = 0; i < run.args.size(); ++i)
    bytes += plan.values[i] ? plan.values[i]->data.size()
                            : arrayBytes(*run.args[i].shape, run.args[i].dtype);
  for (const Slot &r : results)
    bytes += (check ? 2 : 1) * arrayBytes(*r.shape, r.dtype);
  if (reference)
    bytes += scoreBytes;
  checkMemory(k, bytes,
              reference ? "inputs, outputs and the reference lowering's "
                          "scores"
                        : "inputs and outputs");
}

/// The inputs of `run`: those --input gives, the others seeded random data
/// from `runSeed` (with --random-inputs, which needs their shapes).
void drawInputs(const RunPlan &plan, Run &run, uint64_t runSeed) {
  func::FuncOp entry = plan.entry;
  for (auto [i, slot] : llvm::enumerate(run.args)) {
    if (plan.values[i]) {
      run.inputs.push_back(*plan.values[i]);
      continue;
    }
    if (!randomInputs)
      fail("no input for argument " + slot.name + " of @" + entry.getName() +
           " (use --input or --random-inputs)");
    if (!slot.shape)
      fail("argument " + slot.name + " of @" + entry.getName() +
           " has the dynamic type " + describe(slot.type) +
           "; give its shape with --shape " + slot.name +
           "=DIMS, or an --input");
    auto role = plan.roles.find(i);
    if (role == plan.roles.end()) {
      run.inputs.push_back(
          randomArray(slot, runSeed, i, plan.maskArgs.count(i) != 0));
      continue;
    }
    int64_t r = role->second.rowsArg;
    if (r < 0 || !run.args[r].shape)
      fail("argument " + slot.name +
           " holds varlen lengths or offsets of rows whose size is not "
           "known here; give it with --input");
    run.inputs.push_back(
        randomVarlen(slot, role->second, (*run.args[r].shape)[2], runSeed, i));
  }
}

/// Plans run `k`: its shapes, its memory, its inputs, its result shapes
/// and its work.
/// --grad: the cotangents d_output and d_lse default to the shapes of the
/// attention's output (B x Hq x Lq x Dv) and log-sum-exp (B x Hq x Lq).
void defaultCotangentShapes(const RunPlan &plan, Run &run) {
  if (plan.dOutputArg < 0)
    return;
  auto shapeOf = [&](Value v) -> std::optional<std::vector<int64_t>> {
    auto arg = dyn_cast<BlockArgument>(v);
    if (arg && arg.getOwner()->getParentOp() == plan.entry)
      return run.args[arg.getArgNumber()].shape;
    auto type = cast<RankedTensorType>(v.getType());
    if (!type.hasStaticShape())
      return std::nullopt;
    return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
  };
  AttentionOp forward = plan.gradForward;
  auto q = shapeOf(forward.getQuery());
  auto v = shapeOf(forward.getValue());
  if (!q || !v)
    return;
  std::vector<int64_t> out = {(*q)[0], (*q)[1], (*q)[2], (*v)[3]};
  if (!run.args[plan.dOutputArg].shape)
    run.args[plan.dOutputArg].shape = out;
  if (plan.dLseArg >= 0 && !run.args[plan.dLseArg].shape)
    run.args[plan.dLseArg].shape =
        std::vector<int64_t>(out.begin(), out.end() - 1);
}

void planRun(RunPlan &plan, size_t k) {
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
    double flops = 0, scoreBytes = 0;
    inferResults(plan.entry, run.args, {}, results, flops, scoreBytes);
    checkRunMemory(plan, k, run, results, scoreBytes);
  }
  drawInputs(plan, run, runSeed);
  double scoreBytes = 0;
  inferResults(plan.entry, run.args, run.inputs, run.results, run.flops,
               scoreBytes);
  // Again with the inputs: a varlen batch's scores are known now.
  checkRunMemory(plan, k, run, run.results, scoreBytes);
}

/// Every run's inputs, result shapes and work, before compiling: a bad
/// shape fails fast.
void planRuns(RunPlan &plan) {
  plan.runs.resize(plan.numRuns);
  for (size_t k = 0; k < plan.runs.size(); ++k)
    planRun(plan, k);
}

/// Adds the pipeline that lowers the module to `pm`: --pipeline, else the
/// one of --target (for `gpuChip` with --target=cuda).
void buildMainPipeline(OpPassManager &pm, const std::string &gpuChip) {
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

/// Sequence parallelism: which arguments and results of the entry are
/// sharded along the sequence (through shard.shard), and how; opens MPI.
void findSequenceSharding(RunPlan &plan) {
  if (plan.module->getOps<shard::GridOp>().empty())
    return;
  // The reference computes the whole sequence in one process.
  if (referenceOnly)
    return;
  if (target != "cpu")
    fail("a module sharded along the sequence (shard.grid) runs on "
         "--target cpu only for now (docs/SequenceParallel.md)");
  func::FuncOp entry = plan.entry;
  for (BlockArgument arg : entry.getArguments())
    for (Operation *user : arg.getUsers())
      if (auto s = dyn_cast<shard::ShardOp>(user)) {
        plan.shardedArgs.insert(arg.getArgNumber());
        if (auto sharding = s.getSharding().getDefiningOp<shard::ShardingOp>())
          plan.staticOffsets.assign(
              sharding.getStaticShardedDimsOffsets().begin(),
              sharding.getStaticShardedDimsOffsets().end());
      }
  auto returned = cast<func::ReturnOp>(entry.front().getTerminator());
  for (auto [i, v] : llvm::enumerate(returned.getOperands()))
    if (v.getDefiningOp<shard::ShardOp>())
      plan.shardedResults.insert(i);
  entry.walk([&](AttentionOp op) {
    if (auto order = op->getAttrOfType<StringAttr>("attn.sequence_order"))
      plan.zigzag |= order.getValue() == "zigzag";
  });
  std::string error;
  mpi = MpiLoader::open(error);
  if (!mpi)
    fail(error);
  if (mpi->size() > 1 && (!outputs.empty() || !saveInputs.empty()))
    fail("--output and --save-inputs are not supported under mpiexec yet "
         "(each rank holds a chunk of the sequence)");
  if (mpi->rank() != 0) {
    // One report: rank 0 prints the results; the others only their errors.
    llvm::outs().flush();
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::close(null);
    }
  }
}

/// The rows of `array` (dimension 2) this rank holds: its runs, in order.
npy::Array sequenceRows(const npy::Array &array,
                        const std::vector<SequenceRun> &runs) {
  npy::Array out;
  out.type = array.type;
  out.shape = array.shape;
  int64_t rows = 0;
  for (auto [start, length] : runs)
    rows += length;
  out.shape[2] = rows;
  int64_t outer = array.shape[0] * array.shape[1];
  int64_t inner = 1;
  for (size_t d = 3; d < array.shape.size(); ++d)
    inner *= array.shape[d];
  size_t element =
      array.data.size() / std::max<int64_t>(array.numElements(), 1);
  out.data.resize(static_cast<size_t>(outer * rows * inner) * element);
  uint8_t *dst = out.data.data();
  for (int64_t o = 0; o < outer; ++o)
    for (auto [start, length] : runs) {
      size_t bytes = static_cast<size_t>(length * inner) * element;
      const uint8_t *src =
          array.data.data() +
          static_cast<size_t>((o * array.shape[2] + start) * inner) * element;
      std::memcpy(dst, src, bytes);
      dst += bytes;
    }
  return out;
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
void benchRun(const CompiledCode &code, size_t k, Run &run,
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

/// Result `i`'s file of run `k` (of `numRuns`): --output's name, or with
/// several runs FILE.K.npy.
std::string outputPath(size_t i, size_t k, size_t numRuns) {
  llvm::SmallString<256> path(outputs[i]);
  if (numRuns > 1)
    llvm::sys::path::replace_extension(path, std::to_string(k) + ".npy");
  return path.str().str();
}

/// Before anything runs: every output can be written (npy::outputTarget:
/// not a directory, device or FIFO; a link written through) and is neither
/// an input (writing it would replace the data being read) nor another
/// output.
void checkOutputs(const RunPlan &plan) {
  std::vector<std::string> paths;
  for (size_t k = 0; k < plan.numRuns; ++k)
    for (size_t i = 0; i < outputs.size(); ++i)
      paths.push_back(outputPath(i, k, plan.numRuns));
  for (auto [n, path] : llvm::enumerate(paths)) {
    std::string error;
    if (!npy::outputTarget(path, error))
      fail(error);
    bool same = false;
    for (const std::string &input : inputPaths)
      if (!llvm::sys::fs::equivalent(path, input, same) && same)
        fail(path + ": is the same file as the input " + input +
             "; write the output to another file");
    for (size_t m = 0; m < n; ++m)
      if (paths[m] == path ||
          (!llvm::sys::fs::equivalent(path, paths[m], same) && same))
        fail(path + ": given for two outputs");
  }
}

/// Everything succeeded: now writes the files, as one set (with several
/// runs, run K's inputs go to DIR/K/ and its outputs to FILE.K.npy). Either
/// every file is written, or none is, no directory is left that was not
/// there, and existing files stay as they were.
void writeFiles(const RunPlan &plan) {
  std::vector<npy::FileToWrite> files;
  std::vector<std::string> createdDirs;
  auto removeCreatedDirs = [&] {
    for (auto it = createdDirs.rbegin(); it != createdDirs.rend(); ++it)
      llvm::sys::fs::remove(*it);
  };
  auto makeDir = [&](const llvm::SmallString<256> &dir) {
    // Create each missing level, remembering it.
    llvm::SmallVector<std::string> missing;
    for (llvm::StringRef d = dir; !d.empty() && !llvm::sys::fs::exists(d);
         d = llvm::sys::path::parent_path(d))
      missing.push_back(d.str());
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      if (std::error_code ec = llvm::sys::fs::create_directory(*it)) {
        removeCreatedDirs();
        fail(*it + ": " + ec.message());
      }
      createdDirs.push_back(*it);
    }
  };
  for (auto [k, run] : llvm::enumerate(plan.runs)) {
    if (!saveInputs.empty()) {
      llvm::SmallString<256> dir(saveInputs);
      if (plan.numRuns > 1)
        llvm::sys::path::append(dir, std::to_string(k));
      makeDir(dir);
      for (size_t i = 0; i < run.args.size(); ++i) {
        llvm::SmallString<256> path(dir);
        llvm::sys::path::append(path, run.args[i].name + ".npy");
        files.push_back({path.str().str(), &run.inputs[i]});
      }
    }
    for (size_t i = 0; i < outputs.size(); ++i)
      files.push_back({outputPath(i, k, plan.numRuns), &run.outputs[i]});
  }
  std::string error;
  if (!npy::writeAll(files, error)) {
    removeCreatedDirs();
    fail(error);
  }
}

/// attn-run: checks the options, parses the module and plans every run,
/// compiles the entry once, executes the runs and then writes the files.
/// Returns the exit code.
int run(MLIRContext &context) {
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

} // namespace

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

  // Take `--threads N` / `--threads=N` out of argv (see `threads`).
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
    if (value.getAsInteger(10, threads) || threads == 0) {
      llvm::errs() << "attn-run: error: --threads takes a positive integer, "
                      "got '"
                   << value << "'\n";
      return 1;
    }
  }
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      static_cast<int>(args.size()), args.data(),
      "attn-run: lower an attn module, JIT-compile it and run a function\n\n"
      "  --threads=<N>  OpenMP threads (default: all cores)\n");

  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  return run(context);
}
