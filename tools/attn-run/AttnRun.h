//===- AttnRun.h - What attn-run's files share ------------------*- C++ -*-===//
//
// The command-line options (Options.cpp), the plan of the runs and the
// functions that one of attn-run's files defines and another calls:
// attn-run.cpp plans, Inputs.cpp draws the inputs, Execute.cpp compiles and
// calls the entry, Outputs.cpp sizes, checks and writes the results.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_ATTNRUN_H
#define ATTN_RUN_ATTNRUN_H

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Runtime/Host/CudaRuntimeLoader.h"
#include "attn-opt/Runtime/Host/MpiLoader.h"
#include "attn-opt/Runtime/Host/Npy.h"
#include "attn-opt/Runtime/Host/SequenceChunks.h"
#include "attn-opt/Runtime/JIT/Jit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace attn_run {

//===----------------------------------------------------------------------===//
// Options (Options.cpp)
//===----------------------------------------------------------------------===//

/// The category of attn-run's options (the only ones --help shows).
extern llvm::cl::OptionCategory category;
/// The input .mlir file.
extern llvm::cl::opt<std::string> inputFile;
/// --entry: the function to run (default: the only public one with a body).
extern llvm::cl::opt<std::string> entryName;
/// --pipeline: the pass pipeline lowering the module to the LLVM dialect.
extern llvm::cl::opt<std::string> pipelineText;
/// --reference: compile through the reference lowering only.
extern llvm::cl::opt<bool> referenceOnly;
/// --target: where to run (cpu, cuda, gpu-emulator).
extern llvm::cl::opt<std::string> target;
/// --chip: the GPU architecture for --target=cuda.
extern llvm::cl::opt<std::string> chip;
/// --probe-cuda: print whether --target=cuda can run here and exit.
extern llvm::cl::opt<bool> probeCuda;
/// --tensor-cores: GPU targets use the mma.sync kernels for f16/bf16.
extern llvm::cl::opt<bool> tensorCores;
/// --input: NAME=FILE.npy or FILE.npy in argument order.
extern llvm::cl::list<std::string> inputs;
/// The files --input read (checkOutputs refuses to overwrite one).
extern std::vector<std::string> inputPaths;
/// --shape NAME=DIMS[,DIMS...]: the shapes of a dynamically shaped argument,
/// one per run.
extern llvm::cl::list<std::string> shapes;
/// --random-inputs: fill the inputs --input does not give with seeded random
/// data.
extern llvm::cl::opt<bool> randomInputs;
/// --seed as given (checkOptions reads it into `seed`).
extern llvm::cl::opt<std::string> seedText;
/// The seed of --random-inputs.
extern uint64_t seed;
/// --input-scale: the factor of random float inputs.
extern llvm::cl::opt<double> inputScale;
/// --save-inputs DIR: write the inputs used to DIR/NAME.npy.
extern llvm::cl::opt<std::string> saveInputs;
/// --output FILE.npy: the file of each result, in order.
extern llvm::cl::list<std::string> outputs;
/// --grad: run the backward pass of the entry instead.
extern llvm::cl::opt<bool> grad;
/// --check: also run the reference lowering and compare.
extern llvm::cl::opt<bool> check;
/// --rtol and --atol: the tolerances of --check (-1: the dtype's default).
extern llvm::cl::opt<double> rtolOpt, atolOpt;
/// --remarks: print the passes' remarks.
extern llvm::cl::opt<bool> printRemarks;
/// --max-memory: the bytes a run may need (default: the memory available).
extern llvm::cl::opt<std::string> maxMemory;
/// --bench as given (checkOptions reads it into `benchRuns`).
extern llvm::cl::opt<std::string> benchText;
/// --bench: the number of timed calls (0: no benchmark).
extern unsigned benchRuns;
/// `--threads N`: libLLVM already registers a `threads` option, so attn-run
/// takes this one out of argv before parsing (see main).
extern unsigned threads;

//===----------------------------------------------------------------------===//
// Failing (attn-run.cpp)
//===----------------------------------------------------------------------===//

/// MPI, opened for a sharded module (sequence-parallel attention).
extern std::unique_ptr<mlir::attn::MpiLoader> mpi;

/// A user-facing failure: prints "attn-run: error: ..." and exits with 1.
/// Output files are written only after everything succeeded, so failing
/// here never leaves one behind. Under mpiexec the failure ends every rank
/// (MpiLoader::endAfterFailure: an orderly end when all ranks fail alike,
/// MPI_Abort otherwise), so that none waits forever for this one.
[[noreturn]] void fail(const llvm::Twine &message);

/// Fails with `error`'s message, if it is an error.
void failOn(llvm::Error error);

//===----------------------------------------------------------------------===//
// The plan of the runs
//===----------------------------------------------------------------------===//

/// One argument or result of the entry function: its type (sizes may be
/// dynamic) and, once known, its concrete shape.
struct Slot {
  std::string name;
  mlir::RankedTensorType type;
  mlir::attn::npy::DType dtype;
  std::optional<std::vector<int64_t>> shape;
};

/// How an argument serves the attention ops of the entry: as varlen lengths
/// of `rows` (the query or key argument), or as offsets.
struct VarlenRole {
  bool offsets = false;
  int64_t rowsArg = -1;  ///< the query or key argument, or -1
  int64_t queryArg = -1; ///< the query argument, or -1
};

/// One run: the entry's argument and result slots at this run's shapes, its
/// inputs, then its outputs, and the work of its attention ops.
struct Run {
  std::vector<Slot> args, results;
  std::vector<mlir::attn::npy::Array> inputs, outputs;
  double flops = 0;
};

/// What the command line and the parsed module decide: the entry function,
/// its argument and result slots, the inputs given, the shapes of every run
/// and how the arguments serve the attention ops.
struct RunPlan {
  /// The GPU architecture of --target=cuda (--chip, else the device's).
  std::string gpuChip;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp entry;
  /// The source names of the entry's arguments.
  std::vector<std::string> names;
  /// The entry's argument and result slots; sizes may be dynamic.
  std::vector<Slot> args, results;
  /// The arguments --input gives.
  std::vector<std::optional<mlir::attn::npy::Array>> values;
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
  mlir::attn::AttentionOp gradForward;
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
  std::unique_ptr<mlir::attn::JitFunction> jit, ref;
  double pipelineMs = 0, llvmMs = 0;
};

/// The index of `v` among the arguments of `entry`, or -1.
int64_t argIndexOf(mlir::func::FuncOp entry, mlir::Value v);

//===----------------------------------------------------------------------===//
// Inputs (Inputs.cpp)
//===----------------------------------------------------------------------===//

/// "1x?x64" of a shape with dynamic sizes.
std::string describeShape(llvm::ArrayRef<int64_t> shape);

/// The .npy element type of `type`; fails, naming `what`, when attn-run
/// does not support it.
mlir::attn::npy::DType dtypeOf(mlir::RankedTensorType type,
                               const llvm::Twine &what);

/// "1x?x64xf32" of a tensor type.
std::string describe(mlir::RankedTensorType type);

/// A zero-filled array of `slot`'s element type and (known) shape.
mlir::attn::npy::Array allocate(const Slot &slot);

/// Reads the --input files (named or positional), giving their arguments'
/// shapes.
void readInputs(RunPlan &plan);

/// Reads --shape NAME=DIMS[,DIMS...]: the shapes of a dynamically shaped
/// argument, one per run; a single shape serves every run. Sets the number
/// of runs.
void parseShapes(RunPlan &plan);

/// Finds how arguments serve the attention ops: as varlen lengths or
/// offsets, as mask tensors.
void findArgumentRoles(RunPlan &plan);

/// The inputs of `run`: those --input gives, the others seeded random data
/// from `runSeed` (with --random-inputs, which needs their shapes).
void drawInputs(const RunPlan &plan, Run &run, uint64_t runSeed);

/// --grad: the cotangents d_output and d_lse default to the shapes of the
/// attention's output (B x Hq x Lq x Dv) and log-sum-exp (B x Hq x Lq).
void defaultCotangentShapes(const RunPlan &plan, Run &run);

/// Sequence parallelism: which arguments and results of the entry are
/// sharded along the sequence (through shard.shard), and how; opens MPI.
void findSequenceSharding(RunPlan &plan);

/// The rows of `array` (dimension 2) this rank holds: its runs, in order.
mlir::attn::npy::Array
sequenceRows(const mlir::attn::npy::Array &array,
             const std::vector<mlir::attn::SequenceRun> &runs);

/// Parses --max-memory: a byte count with an optional K, M, G or T.
std::optional<double> parseBytes(llvm::StringRef text);

/// Fails when run `k` needs more memory than the limit for its inputs
/// (given, or of its arguments' shapes), `results` (twice with --check),
/// with the reference lowering `scoreBytes` of scores, and always
/// `gradientBytes` (the reference gradient's `Lq x Lk` tensors).
void checkRunMemory(const RunPlan &plan, size_t k, const Run &run,
                    const std::vector<Slot> &results, double scoreBytes,
                    double gradientBytes = 0);

//===----------------------------------------------------------------------===//
// Compiling and calling (Execute.cpp)
//===----------------------------------------------------------------------===//

/// libAttnCudaRuntime.so, opened once for --target=cuda (fails with the
/// reason when there is no device): device probe and managed memory for the
/// function's buffers.
const mlir::attn::CudaRuntimeLoader &cudaRuntime();

/// Compiles the entry once for every run: with the chosen pipeline and,
/// with --check, with the reference lowering.
CompiledCode compileEntry(const RunPlan &plan);

/// Executes run `k`: calls the entry, checks the results against the
/// reference (--check), summarizes them and benchmarks (--bench).
void executeRun(RunPlan &plan, const CompiledCode &code, size_t k);

//===----------------------------------------------------------------------===//
// Outputs (Outputs.cpp)
//===----------------------------------------------------------------------===//

/// The shapes of `entry`'s results from its arguments' (`args`), through
/// the attention ops, and the work of the attention ops at these sizes (of
/// each sequence of a varlen batch); `gradientBytes`: those of the
/// `Lq x Lk` tensors of the gradients no fused or linear-time kernel
/// computes (the reference gradient's).
void inferResults(mlir::func::FuncOp entry, const std::vector<Slot> &args,
                  const std::vector<mlir::attn::npy::Array> &inputs,
                  std::vector<Slot> &results, double &flops, double &scoreBytes,
                  double &gradientBytes);

/// Compares `out` with `ref`; prints the errors, returns true within
/// tolerance.
bool compare(const Slot &slot, const mlir::attn::npy::Array &out,
             const mlir::attn::npy::Array &ref);

/// Prints result `a` of `slot`: its shape and type, the mean and largest
/// magnitude of its finite elements, and how many are not finite.
void summarize(const Slot &slot, const mlir::attn::npy::Array &a);

/// Before anything runs: every output can be written (npy::outputTarget:
/// not a directory, device or FIFO; a link written through) and is neither
/// an input (writing it would replace the data being read) nor another
/// output.
void checkOutputs(const RunPlan &plan);

/// Everything succeeded: now writes the files, as one set (with several
/// runs, run K's inputs go to DIR/K/ and its outputs to FILE.K.npy). Either
/// every file is written, or none is, no directory is left that was not
/// there, and existing files stay as they were.
void writeFiles(const RunPlan &plan);

} // namespace attn_run

#endif // ATTN_RUN_ATTNRUN_H
