//===- attn-compile.cpp - Compile attn modules into kernel libraries ------===//
//
// attn-compile model.mlir -o libmodel.so [--header model.h]
//     [--static libmodel.a] [--object model.o] [--target=host|x86-64-v3|...]
//     [--features=+avx2,+fma] [--prefix NAME] [--entry NAME]...
//
// Ahead of time: every public function (or the --entry ones) gets an entry
// of the C ABI (attn-export-entries), the CPU pipeline lowers the module,
// LLVM generates code for the target, and the result is linked with the
// run-time support into a shared library, a static library or an object
// file that needs only the C library and the OpenMP runtime
// (docs/Library.md).
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Capabilities.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/InitAttn.h"
#include "attn-opt/Pipelines/Pipelines.h"
#include "attn-opt/Runtime/JIT/HostTarget.h"
#include "attn-opt/Runtime/JIT/ModuleLoader.h"
#include "attn-opt/Runtime/KernelLibrary/KernelLibrary.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("attn-compile options");
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                               cl::cat(category));
cl::opt<std::string> sharedOutput("o", cl::desc("Shared library to write"),
                                  cl::value_desc("libNAME.so"),
                                  cl::cat(category));
cl::opt<std::string> headerOutput("header", cl::desc("C header to write"),
                                  cl::value_desc("NAME.h"), cl::cat(category));
cl::opt<std::string> staticOutput("static", cl::desc("Static library to write"),
                                  cl::value_desc("libNAME.a"),
                                  cl::cat(category));
cl::opt<std::string> objectOutput("object", cl::desc("Object file to write"),
                                  cl::value_desc("NAME.o"), cl::cat(category));
cl::opt<std::string>
    targetOpt("target",
              cl::desc("CPU to generate code for: host (default: this "
                       "machine's CPU and features), x86-64, x86-64-v2, "
                       "x86-64-v3 (AVX2), x86-64-v4 (AVX-512) or any CPU "
                       "name LLVM knows (znver4, sapphirerapids, ...)"),
              cl::init("host"), cl::cat(category));
cl::opt<std::string>
    featuresOpt("features",
                cl::desc("CPU features added to the target's "
                         "(+avx512f,+avx512bf16,-avx512vl,...)"),
                cl::init(""), cl::cat(category));
cl::opt<std::string>
    prefixOpt("prefix",
              cl::desc("Prefix of the C symbols (default: the input's name)"),
              cl::init(""), cl::cat(category));
cl::list<std::string>
    entryOpt("entry", cl::desc("Export only this function (repeatable)"),
             cl::cat(category));
cl::opt<std::string>
    emitOpt("emit",
            cl::desc("Print instead of writing files: mlir (after the "
                     "entries are added), lowered (the LLVM dialect), llvm "
                     "(the library's LLVM IR), header, signatures"),
            cl::init(""), cl::cat(category));
cl::opt<std::string>
    linkerOpt("linker",
              cl::desc("Compiler driver that links shared libraries "
                       "(default: $ATTN_OPT_CC, else the C compiler attn-opt "
                       "was built with)"),
              cl::init(""), cl::cat(category));
cl::opt<std::string> rpathOpt(
    "rpath",
    cl::desc("Run path of the shared library, where the OpenMP runtime is "
             "found (default: the OpenMP library attn-opt was built "
             "with; 'none' for no run path)"),
    cl::init(ATTN_OMP_LIBRARY_DIR), cl::cat(category));
cl::opt<bool> referenceOpt(
    "reference",
    cl::desc("Lower through the reference lowering only (a baseline)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> gradOpt(
    "grad",
    cl::desc("Also export the backward entry F_grad of each function F "
             "returning an attention (attn-differentiate): F's arguments, "
             "then d_output (and d_lse), returning the gradients of query, "
             "key, value (and bias, gate, sinks)"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> mpiOpt(
    "mpi",
    cl::desc("MPI ABI of sequence-parallel modules: mpich (default; "
             "Debian's libmpich) or openmpi (Open MPI, e.g. under mpi4py)"),
    cl::init("mpich"), cl::cat(category));
cl::opt<std::string> mpiLibraryOpt(
    "mpi-library",
    cl::desc("MPI library a sequence-parallel shared library links "
             "(default: libmpich.so.12, or libmpi.so.40 with --mpi=openmpi)"),
    cl::init(""), cl::cat(category));
cl::opt<bool> remarksOpt("print-remarks",
                         cl::desc("Print the compiler's remarks"),
                         cl::init(false), cl::cat(category));
cl::opt<std::string> capabilitiesOpt(
    "capabilities",
    cl::desc("Print what each generator of code supports (json, markdown or "
             "python) and exit"),
    cl::value_desc("format"), cl::cat(category));

/// Temporary files of the compile, removed by fail() (std::exit unwinds
/// no stack) and once they have served.
std::vector<std::string> temporaries;

void removeTemporaries() {
  for (const std::string &t : temporaries)
    llvm::sys::fs::remove(t);
  temporaries.clear();
}

[[noreturn]] void fail(const llvm::Twine &msg) {
  llvm::errs() << "attn-compile: error: " << msg << "\n";
  removeTemporaries();
  std::exit(1);
}

void failOn(llvm::Error err) {
  if (err)
    fail(llvm::toString(std::move(err)));
}

/// The default prefix: the input's file name as a C identifier.
std::string defaultPrefix(StringRef path) {
  std::string stem = llvm::sys::path::stem(path).str();
  for (char &c : stem)
    if (!llvm::isAlnum(c))
      c = '_';
  if (stem.empty() || llvm::isDigit(stem.front()))
    stem = "attn_" + stem;
  return stem;
}

/// The run-time support's bitcode: $ATTN_OPT_RUNTIME_BC, else
/// ../lib/attn-opt/kernel-runtime.bc from this executable (the build and
/// install trees have the same layout).
std::string runtimeBitcode(const char *argv0) {
  if (const char *env = std::getenv("ATTN_OPT_RUNTIME_BC"); env && *env)
    return env;
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  llvm::SmallString<256> path(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(path, "..", "lib", "attn-opt", "kernel-runtime.bc");
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  return path.str().str();
}

/// The target machine for `--target` and `--features` (position-independent
/// code, -O3).
std::unique_ptr<llvm::TargetMachine> createTargetMachine() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string cpu = targetOpt;
  llvm::SubtargetFeatures features;
  if (cpu == "host") {
    cpu = llvm::sys::getHostCPUName().str();
    for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
      features.AddFeature(name, enabled);
  }
  for (StringRef f : llvm::split(StringRef(featuresOpt), ',')) {
    f = f.trim();
    if (f.empty())
      continue;
    if (!f.starts_with("+") && !f.starts_with("-"))
      fail("--features takes +NAME or -NAME entries, got '" + f + "'");
    features.AddFeature(f);
  }
  std::string message;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, message);
  if (!target)
    fail(message);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(triple, cpu, ""));
  if (!sti || !sti->isCPUStringValid(cpu))
    fail("--target: unknown CPU '" + cpu +
         "' (host, x86-64, x86-64-v2, x86-64-v3, x86-64-v4, or a CPU name "
         "LLVM knows)");
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features.getString(), options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    fail("cannot create a target machine for " + cpu);
  return tm;
}

/// The kernels' tiles for the target: 16 lanes and 32 registers with
/// AVX-512F, 8 and 16 with AVX2 or AVX, else 4 and 16; bf16 dot products
/// with AVX512_BF16 where they pay (TargetModel::bf16DotFor).
TargetModel targetModel(llvm::TargetMachine &tm) {
  const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  auto has = [&](StringRef f) { return sti->checkFeatures(("+" + f).str()); };
  int64_t lanes = has("avx512f") ? 16 : has("avx2") || has("avx") ? 8 : 4;
  TargetModel model = *TargetModel::get(lanes);
  model.bf16Dot = TargetModel::bf16DotFor(tm.getTargetCPU().str(),
                                          lanes == 16 && has("avx512bf16"));
  return model;
}

/// Writes `bytes` to `path` (atomically: a temporary file renamed).
void writeFile(StringRef path, StringRef bytes) {
  std::string message;
  auto out = openOutputFile(path, &message);
  if (!out)
    fail(message);
  out->os() << bytes;
  out->keep();
}

/// Whether the generated code calls MPI (a sequence-parallel module): the
/// shared library then links the MPI library.
bool callsMpi = false;

/// Links `object` into the shared library `path` (named `soname`) with the
/// compiler driver.
void linkShared(StringRef object, StringRef path, StringRef soname) {
  std::string driver = linkerOpt;
  if (driver.empty())
    if (const char *env = std::getenv("ATTN_OPT_CC"); env && *env)
      driver = env;
  if (driver.empty())
    driver = ATTN_LINKER_DRIVER;
  auto program = llvm::sys::findProgramByName(driver);
  if (!program)
    fail("cannot find the linker driver '" + driver +
         "' (--linker or $ATTN_OPT_CC)");
  std::vector<std::string> args = {*program,
                                   "-shared",
                                   "-o",
                                   path.str(),
                                   object.str(),
                                   "-Wl,-soname," + soname.str(),
                                   "-Wl,--no-undefined",
                                   "-Wl,--as-needed",
                                   "-L" ATTN_OMP_LIBRARY_DIR,
                                   "-lomp",
                                   "-lm"};
  if (rpathOpt != "none" && !rpathOpt.empty())
    args.push_back("-Wl,-rpath," + rpathOpt);
  if (callsMpi) {
    // The MPI the generated code calls (sequence-parallel modules).
    std::string library = mpiLibraryOpt;
    if (library.empty())
      library = mpiOpt == "openmpi" ? "libmpi.so.40" : "libmpich.so.12";
    args.push_back(llvm::sys::path::has_parent_path(library) ? library
                                                             : "-l:" + library);
  }
  std::vector<StringRef> refs(args.begin(), args.end());
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*program, refs, std::nullopt, {}, 0, 0,
                                     &message);
  if (rc != 0) {
    std::string command;
    for (StringRef a : refs)
      command += (command.empty() ? "" : " ") + a.str();
    fail("linking " + path + " failed" +
         (message.empty() ? "" : ": " + message) + "\n  " + command);
  }
}

/// What the command line and the parsed module decide: the module, the
/// prefix of the C symbols and the entries exported.
struct CompilePlan {
  OwningOpRef<ModuleOp> module;
  std::string prefix;
  std::vector<Entry> entries;
};

/// --grad: adds F_grad next to each function F returning an attention
/// (private when F is), its argument names F's, then d_output (and d_lse).
void addGradients(ModuleOp module,
                  std::map<std::string, std::vector<std::string>> &names) {
  PassManager pm(module.getContext());
  pm.addPass(createAttnDifferentiate());
  if (failed(pm.run(module)))
    fail("--grad: cannot differentiate " + inputFile + " (diagnostics above)");
  for (auto fn : module.getOps<func::FuncOp>()) {
    StringRef name = fn.getName();
    if (!name.ends_with("_grad") || names.count(name.str()))
      continue;
    auto forward = names.find(name.drop_back(5).str());
    if (forward == names.end())
      continue;
    std::vector<std::string> args = forward->second;
    args.push_back("d_output");
    if (fn.getNumArguments() > args.size())
      args.push_back("d_lse");
    names[name.str()] = args;
  }
}

/// Parses the input (its diagnostics reported through `sourceMgr`), checks
/// --prefix, makes the functions that --entry does not name private and
/// describes the entries. Fails on a bad input or option; returns failure
/// when describing the entries failed (with diagnostics).
FailureOr<CompilePlan> planCompile(MLIRContext &context,
                                   llvm::SourceMgr &sourceMgr) {
  auto loaded = loadModule(context, sourceMgr, inputFile, "",
                           /*pickEntry=*/false);
  if (!loaded)
    fail(llvm::toString(loaded.takeError()));
  ModuleOp module = *loaded->module;

  std::string prefix =
      prefixOpt.empty() ? defaultPrefix(inputFile) : prefixOpt.getValue();
  if (!isCIdentifier(prefix))
    fail("--prefix '" + prefix + "' is not a C identifier");

  // --entry: the others stop being public.
  if (!entryOpt.empty()) {
    for (const std::string &name : entryOpt) {
      auto fn = module.lookupSymbol<func::FuncOp>(name);
      if (!fn || fn.isExternal())
        fail("--entry: no function @" + name + " with a body in " + inputFile);
    }
    for (auto fn : module.getOps<func::FuncOp>())
      if (!llvm::is_contained(entryOpt, fn.getName()))
        fn.setPrivate();
  }
  if (gradOpt)
    addGradients(module, loaded->argNamesByFunction);
  FailureOr<std::vector<Entry>> entries =
      describeEntries(module, prefix, loaded->argNamesByFunction);
  if (failed(entries))
    return failure();
  if (entries->empty())
    fail("no public function with a body in " + inputFile);
  return CompilePlan{std::move(loaded->module), prefix, std::move(*entries)};
}

/// --emit=header or --emit=signatures: prints the entries' description and
/// returns true; returns false for any other --emit.
bool printDescription(const CompilePlan &plan) {
  if (emitOpt != "header" && emitOpt != "signatures")
    return false;
  llvm::outs() << (emitOpt == "header"
                       ? emitHeader(plan.entries, plan.prefix,
                                    llvm::sys::path::filename(inputFile))
                       : emitSignatures(plan.entries, plan.prefix))
               << "\n";
  return true;
}

/// Lowers the module in place: the entries, then (unless --emit=mlir) the
/// CPU pipeline for the vectors of `tm`'s target. Fails when a pass fails.
void lowerModule(MLIRContext &context, CompilePlan &plan,
                 llvm::TargetMachine &tm) {
  if (mpiOpt != "mpich" && mpiOpt != "openmpi")
    fail("--mpi takes mpich or openmpi, not '" + mpiOpt + "'");
  // The `mpi` lowering's ABI (attn-partition-sequence keeps a given one).
  if (mpiOpt == "openmpi" &&
      !plan.module->getOperation()->hasAttr("dlti.map")) {
    MLIRContext *ctx = &context;
    DataLayoutEntryInterface entry =
        DataLayoutEntryAttr::get(StringAttr::get(ctx, "MPI:Implementation"),
                                 StringAttr::get(ctx, "OpenMPI"));
    plan.module->getOperation()->setAttr("dlti.map",
                                         MapAttr::get(ctx, {entry}));
  }
  PassManager pm(&context);
  // Sequence-parallel functions become each rank's program first: the
  // entries then take the rank's chunks.
  pm.addPass(createAttnPartitionSequence());
  pm.addPass(createAttnExportEntries());
  pm.addPass(createSymbolDCEPass());
  if (emitOpt != "mlir") {
    LowerToLLVMOptions options;
    options.reference = referenceOpt;
    options.releaseOnError = true; // (the run-time support tracks buffers)
    TargetModel model = targetModel(tm);
    options.vectorWidth = model.lanes;
    options.vectorRegisters = model.registers;
    if (model.bf16Dot == TargetModel::Bf16Dot::Native)
      options.bf16Dot = "native";
    buildLowerToLLVMPipeline(pm, options);
  }
  if (failed(pm.run(*plan.module)))
    fail("lowering " + inputFile + " failed (diagnostics above)");
}

/// The object file of `llvmModule`, generated by `tm`.
llvm::SmallVector<char> emitObject(llvm::TargetMachine &tm,
                                   llvm::Module &llvmModule) {
  llvm::SmallVector<char> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (tm.addPassesToEmitFile(codegen, os, nullptr,
                               llvm::CodeGenFileType::ObjectFile))
      fail("the target cannot emit object files");
    codegen.run(llvmModule);
  }
  return object;
}

/// --static: writes an archive holding the object file (as PREFIX.o).
void writeStaticLibrary(const CompilePlan &plan, StringRef objectBytes) {
  auto buffer = llvm::MemoryBuffer::getMemBuffer(
      objectBytes, plan.prefix + ".o", /*RequiresNullTerminator=*/false);
  std::vector<llvm::NewArchiveMember> members;
  members.emplace_back(buffer->getMemBufferRef());
  llvm::sys::fs::remove(staticOutput);
  failOn(llvm::writeArchive(staticOutput, members,
                            llvm::SymtabWritingMode::NormalSymtab,
                            llvm::object::Archive::K_GNU,
                            /*Deterministic=*/true, /*Thin=*/false));
}

/// -o: links the object file into the shared library, through a temporary
/// object file and a temporary library name.
void writeSharedLibrary(StringRef objectBytes) {
  llvm::SmallString<128> temp;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("attn-compile", "o", fd, temp))
    fail("cannot create a temporary file: " + ec.message());
  temporaries.push_back(temp.str().str());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << objectBytes;
  }
  // Link to a temporary name, then rename: a failed link leaves no
  // partial library.
  std::string partial = sharedOutput + ".partial";
  temporaries.push_back(partial);
  linkShared(temp, partial, llvm::sys::path::filename(sharedOutput));
  if (std::error_code ec = llvm::sys::fs::rename(partial, sharedOutput))
    fail("cannot write " + sharedOutput + ": " + ec.message());
  removeTemporaries();
}

/// Writes the outputs asked for, made from the object file: the header,
/// the object file, the static library, the shared library.
void writeOutputs(const CompilePlan &plan, StringRef objectBytes) {
  if (!headerOutput.empty())
    writeFile(headerOutput, emitHeader(plan.entries, plan.prefix,
                                       llvm::sys::path::filename(inputFile)));
  if (!objectOutput.empty())
    writeFile(objectOutput, objectBytes);
  if (!staticOutput.empty())
    writeStaticLibrary(plan, objectBytes);
  if (!sharedOutput.empty())
    writeSharedLibrary(objectBytes);
}

/// Compiles the input: plans, lowers, generates code and writes the
/// outputs (or prints what --emit asks for). Returns the exit code.
int compile(MLIRContext &context, const char *argv0) {
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  FailureOr<CompilePlan> plan = planCompile(context, sourceMgr);
  if (failed(plan))
    return 1;

  if (printDescription(*plan))
    return 0;
  if (emitOpt.empty() && sharedOutput.empty() && staticOutput.empty() &&
      objectOutput.empty() && headerOutput.empty())
    fail("nothing to write: give -o, --static, --object or --header");

  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine();

  // The entries, then the CPU pipeline for the target's vectors. Remarks
  // are noise unless asked for (here and in the translation to LLVM IR).
  ScopedDiagnosticHandler filter(&context, [](Diagnostic &d) {
    return success(d.getSeverity() == DiagnosticSeverity::Remark &&
                   !remarksOpt);
  });
  lowerModule(context, *plan, *tm);
  if (emitOpt == "mlir" || emitOpt == "lowered") {
    plan->module->print(llvm::outs());
    return 0;
  }

  llvm::LLVMContext llvmContext;
  auto llvmModule =
      buildLibraryModule(*plan->module, llvmContext, plan->entries,
                         plan->prefix, runtimeBitcode(argv0), *tm);
  if (!llvmModule)
    fail(llvm::toString(llvmModule.takeError()));
  if (emitOpt == "llvm") {
    (*llvmModule)->print(llvm::outs(), nullptr);
    return 0;
  }
  if (!emitOpt.empty())
    fail("--emit takes mlir, lowered, llvm, header or signatures");

  for (const llvm::Function &f : **llvmModule)
    callsMpi |= f.isDeclaration() && f.getName().starts_with("MPI_");
  // One object file; the outputs are made from it.
  llvm::SmallVector<char> object = emitObject(*tm, **llvmModule);
  writeOutputs(*plan, StringRef(object.data(), object.size()));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerAttnDialects(registry);
  registerAttnPasses();

  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: compile an attn module ahead of time into a kernel "
      "library with a C ABI (docs/Library.md)\n");
  if (capabilitiesOpt.getNumOccurrences()) {
    // To standard output, or the file `-o` names.
    std::error_code ec;
    llvm::raw_fd_ostream file(
        sharedOutput.empty() ? std::string("-") : sharedOutput.getValue(), ec);
    if (ec) {
      llvm::errs() << "attn-compile: error: " << sharedOutput << ": "
                   << ec.message() << "\n";
      return 1;
    }
    if (printCapabilities(file, capabilitiesOpt))
      return 0;
    llvm::errs() << "attn-compile: error: --capabilities takes json, markdown "
                    "or python, not '"
                 << capabilitiesOpt << "'\n";
    return 1;
  }
  if (inputFile.empty()) {
    llvm::errs() << "attn-compile: error: no input file (attn-compile "
                    "FILE.mlir -o libNAME.so, or --capabilities=FORMAT)\n";
    return 1;
  }
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  return compile(context, argv[0]);
}
