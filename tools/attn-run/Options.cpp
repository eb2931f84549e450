//===- Options.cpp - attn-run's command-line options ----------------------===//
//
// The options of attn-run and the values derived from them (checkOptions
// in attn-run.cpp reads --seed and --bench; main takes --threads out of
// argv).
//
//===----------------------------------------------------------------------===//

#include "AttnRun.h"

#include "llvm/Support/CommandLine.h"

namespace cl = llvm::cl;

namespace attn_run {

cl::OptionCategory category("attn-run options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir file>"),
                               cl::cat(category));
cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to run (default: the only public "
                       "function with a body)"),
              cl::cat(category));
cl::opt<std::string> pipelineText(
    "pipeline",
    cl::desc("Pass pipeline lowering the module to the LLVM dialect, as a "
             "pass list (default: attn-lower-to-llvm-pipeline)"),
    cl::cat(category));
cl::opt<bool> referenceOnly(
    "reference",
    cl::desc("Compile through the reference lowering only "
             "(convert-attn-to-linalg, then the generic CPU lowering)"),
    cl::cat(category));
cl::opt<std::string> target(
    "target",
    cl::desc("Where to run: cpu (attn-lower-to-llvm-pipeline), cuda (an "
             "NVIDIA GPU through attn-lower-to-nvvm-pipeline and "
             "libAttnCudaRuntime.so), gpu-emulator (the GPU kernels of "
             "attn-lower-to-nvvm-pipeline run on the CPU by attn-emulate-gpu)"),
    cl::init("cpu"), cl::cat(category));
cl::opt<std::string>
    chip("chip",
         cl::desc("GPU architecture for --target=cuda (default: the "
                  "device's, sm_90a on compute capability 9.0)"),
         cl::cat(category));
cl::opt<bool> probeCuda(
    "probe-cuda",
    cl::desc("Print whether --target=cuda can run here (the device, or the "
             "reason it cannot) and exit: 0 if it can"),
    cl::cat(category));
cl::opt<bool> tensorCores(
    "tensor-cores",
    cl::desc("GPU targets: use the mma.sync kernels for f16/bf16 attention"),
    cl::init(true), cl::cat(category));
cl::list<std::string>
    inputs("input",
           cl::desc("An input: NAME=FILE.npy (NAME as in the source, e.g. "
                    "query for %query, or argN), or FILE.npy in argument "
                    "order"),
           cl::cat(category));
/// The files --input read (checkOutputs refuses to overwrite one).
std::vector<std::string> inputPaths;
cl::list<std::string> shapes(
    "shape",
    cl::desc("NAME=DIMS[,DIMS...]: the shape of a dynamically shaped "
             "argument filled by --random-inputs, e.g. query=1x8x300x64 (an "
             "--input file gives its own; lengths of varlen batches default "
             "to the query's batch). Several shapes run the code compiled "
             "once on each in turn (run K takes the K-th shape of every "
             "list; a single shape serves every run); --save-inputs DIR and "
             "--output FILE.npy then write DIR/K/ and FILE.K.npy"),
    cl::cat(category));
cl::opt<bool> randomInputs(
    "random-inputs",
    cl::desc("Fill inputs not given by --input with seeded random data: "
             "standard normal floats, sorted segment ids in [0, 4), masks "
             "allowing 3 in 4 entries (true or 0; else false or -inf)"),
    cl::cat(category));
// --seed and --bench are read as text and checked by attn-run (LLVM's
// integer parsers answer "-1" with their own message).
cl::opt<std::string> seedText("seed",
                              cl::desc("Seed of --random-inputs (0 to "
                                       "2^64 - 1)"),
                              cl::value_desc("N"), cl::init("0"),
                              cl::cat(category));
uint64_t seed = 0;
cl::opt<double>
    inputScale("input-scale",
               cl::desc("Multiply random float inputs by this factor"),
               cl::init(1.0), cl::cat(category));
cl::opt<std::string>
    saveInputs("save-inputs", cl::desc("Write the inputs used to DIR/NAME.npy"),
               cl::value_desc("DIR"), cl::cat(category));
cl::list<std::string> outputs("output",
                              cl::desc("Write result N (in order) to FILE.npy"),
                              cl::cat(category));
cl::opt<bool> grad(
    "grad",
    cl::desc(
        "Run the backward pass of the entry @F instead (attn-differentiate's "
        "@F_grad): its arguments are @F's, then the cotangent d_output "
        "(and d_lse when @F returns the log-sum-exp); its results are the "
        "gradients of query, key, value (and bias, gate, sinks)"),
    cl::cat(category));
cl::opt<bool>
    check("check",
          cl::desc("Also run the reference lowering and compare: fail if any "
                   "|out - ref| > atol + rtol * |ref|"),
          cl::cat(category));
cl::opt<double>
    rtolOpt("rtol",
            cl::desc("Relative tolerance of --check (default 1e-4 for f32, "
                     "2e-2 for f16 and bf16)"),
            cl::init(-1), cl::cat(category));
cl::opt<double>
    atolOpt("atol",
            cl::desc("Absolute tolerance of --check (default 1e-5 for f32, "
                     "2e-2 for f16 and bf16)"),
            cl::init(-1), cl::cat(category));
cl::opt<bool>
    printRemarks("remarks",
                 cl::desc("Print the passes' remarks (decisions such as "
                          "attn-reassociate's)"),
                 cl::cat(category));
cl::opt<std::string> maxMemory(
    "max-memory",
    cl::desc("Refuse to run (before allocating) when a run's inputs, outputs "
             "and workspace need more than this many bytes: a number with an "
             "optional K, M, G or T (powers of 1024) (default: the memory "
             "available, MemAvailable or the cgroup's limit)"),
    cl::value_desc("BYTES"), cl::cat(category));
cl::opt<std::string> benchText("bench",
                               cl::desc("Time N calls after one warm-up call"),
                               cl::value_desc("N"), cl::init("0"),
                               cl::cat(category));
unsigned benchRuns = 0;
/// `--threads N`: libLLVM already registers a `threads` option, so attn-run
/// takes this one out of argv before parsing (see main).
unsigned threads = 0;

} // namespace attn_run
