//===- KernelLibrary.cpp - Kernel libraries with a C ABI ------------------===//

#include "attn-opt/Runtime/KernelLibrary/KernelLibrary.h"
#include "attn-opt/Pipelines/Pipelines.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/Internalize.h"

using namespace mlir;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

bool mlir::attn::isCIdentifier(StringRef name) {
  static const llvm::StringSet<> keywords = {
      "auto",     "break",     "case",     "char",     "const",   "continue",
      "default",  "do",        "double",   "else",     "enum",    "extern",
      "float",    "for",       "goto",     "if",       "inline",  "int",
      "long",     "register",  "restrict", "return",   "short",   "signed",
      "sizeof",   "static",    "struct",   "switch",   "typedef", "union",
      "unsigned", "void",      "volatile", "while",    "bool",    "class",
      "delete",   "new",       "this",     "template", "private", "public",
      "operator", "namespace", "true",     "false"};
  if (name.empty() || llvm::isDigit(name.front()) || keywords.contains(name))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// The MLIR and C spellings of an element type the entries take.
static std::pair<std::string, std::string> elementTypeNames(Type type) {
  if (type.isF32())
    return {"f32", "float"};
  if (type.isF64())
    return {"f64", "double"};
  if (type.isF16())
    return {"f16", "uint16_t"};
  if (type.isBF16())
    return {"bf16", "uint16_t"};
  unsigned width = type.getIntOrFloatBitWidth();
  if (width == 1)
    return {"i1", "uint8_t"};
  return {"i" + std::to_string(width), "int" + std::to_string(width) + "_t"};
}

FailureOr<std::vector<Entry>> mlir::attn::describeEntries(
    ModuleOp module, StringRef prefix,
    const std::map<std::string, std::vector<std::string>> &argNames) {
  std::vector<Entry> entries;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (!fn.isPublic() || fn.isExternal())
      continue;
    if (!isCIdentifier(fn.getName()))
      return fn.emitOpError()
             << "cannot be exported: its name is not a C identifier";
    Entry entry;
    entry.function = fn.getName().str();
    entry.symbol = (prefix + "_" + fn.getName()).str();
    auto names = argNames.find(entry.function);
    llvm::StringSet<> used;
    auto describe = [&](Type t, std::string name, StringRef what,
                        StringRef kind,
                        size_t index) -> FailureOr<EntryTensor> {
      auto tensor = dyn_cast<RankedTensorType>(t);
      if (!tensor || !isEntryElementType(tensor.getElementType()))
        return fn.emitOpError()
               << kind << " " << index << " has type " << t
               << "; a kernel library's entries take ranked tensors of f16, "
                  "bf16, f32, f64, i1, i8, i16, i32 or i64";
      EntryTensor e;
      if (!isCIdentifier(name) || used.contains(name) ||
          used.contains(name + "_shape"))
        name = what.str();
      used.insert(name);
      used.insert(name + "_shape");
      e.name = name;
      std::tie(e.elementType, e.cType) =
          elementTypeNames(tensor.getElementType());
      e.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
      return e;
    };
    for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
      std::string name;
      if (names != argNames.end() && i < names->second.size())
        name = names->second[i];
      FailureOr<EntryTensor> e =
          describe(t, name, "arg" + std::to_string(i), "argument", i);
      if (failed(e))
        return failure();
      entry.args.push_back(std::move(*e));
    }
    auto ret =
        fn.isExternal()
            ? func::ReturnOp()
            : dyn_cast<func::ReturnOp>(fn.getBody().back().getTerminator());
    for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
      std::string name = "result" + std::to_string(i);
      FailureOr<EntryTensor> e = describe(t, name, name, "result", i);
      if (failed(e))
        return failure();
      for (auto [d, size] : llvm::enumerate(e->shape))
        e->sizeOf.push_back(size == ShapedType::kDynamic && ret &&
                                    fn.getBody().hasOneBlock()
                                ? traceEntrySize(fn, ret.getOperand(i), d)
                                : std::pair<int64_t, int64_t>(-1, -1));
      entry.results.push_back(std::move(*e));
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

//===----------------------------------------------------------------------===//
// Header and signatures
//===----------------------------------------------------------------------===//

static std::string describeShape(const EntryTensor &t) {
  std::string s = t.elementType + "[";
  for (auto [i, size] : llvm::enumerate(t.shape)) {
    if (i)
      s += ", ";
    s += size == ShapedType::kDynamic ? "?" : std::to_string(size);
  }
  return s + "]";
}

std::string mlir::attn::emitHeader(ArrayRef<Entry> entries, StringRef prefix,
                                   StringRef source) {
  std::string guard = (prefix.upper() + "_ATTN_OPT_H");
  std::string h;
  llvm::raw_string_ostream os(h);
  os << "/* Generated by attn-compile from " << source
     << ". Do not edit.\n"
        " *\n"
        " * The C ABI of attn-opt kernel libraries (docs/Library.md): each\n"
        " * tensor is a pointer to dense row-major data followed by its\n"
        " * sizes (rank many int64_t; static sizes are checked, dynamic ones\n"
        " * taken). Results are written into the caller's buffers, which\n"
        " * must not overlap the arguments. f16 and bf16 are uint16_t bit\n"
        " * patterns, i1 is one byte (0 or 1). Each entry returns\n"
        " * ATTN_OPT_OK or an error status; "
     << prefix
     << "_last_error() then says why.\n"
        " * Calls from several threads at once are safe. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdint.h>\n\n"
        "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
        "#ifndef ATTN_OPT_STATUS_DEFINED\n#define ATTN_OPT_STATUS_DEFINED\n"
        "/* Status of an entry. */\n"
        "enum attn_opt_status {\n"
        "  ATTN_OPT_OK = 0,\n"
        "  /* A size is negative, differs from a static size, or the sizes\n"
        "     disagree (e.g. key and value lengths, a result buffer). */\n"
        "  ATTN_OPT_ERROR_SHAPE = 1,\n"
        "  /* A value breaks the contract: varlen lengths or offsets out of\n"
        "     range, a NULL pointer for a non-empty tensor. */\n"
        "  ATTN_OPT_ERROR_VALUE = 2,\n"
        "  /* The generated code could not allocate a result or workspace\n"
        "     buffer (out of memory, or more than 2^47 bytes). */\n"
        "  ATTN_OPT_ERROR_MEMORY = 3\n"
        "};\n#endif\n\n";
  for (const Entry &e : entries) {
    os << "/* @" << e.function << "(";
    for (auto [i, a] : llvm::enumerate(e.args))
      os << (i ? ", " : "") << a.name << ": " << describeShape(a);
    os << ") -> (";
    for (auto [i, r] : llvm::enumerate(e.results))
      os << (i ? ", " : "") << r.name << ": " << describeShape(r);
    os << ") */\n";
    os << "int32_t " << e.symbol << "(";
    bool first = true;
    auto param = [&](const EntryTensor &t, bool output) {
      os << (first ? "" : ",\n    ") << (output ? "" : "const ") << t.cType
         << " *" << t.name << ", const int64_t *" << t.name << "_shape";
      first = false;
    };
    for (const EntryTensor &a : e.args)
      param(a, false);
    for (const EntryTensor &r : e.results)
      param(r, true);
    if (first)
      os << "void";
    os << ");\n\n";
  }
  os << "/* The message of this thread's last call of an entry (\"\" if it\n"
        "   succeeded). Valid until the thread's next call. */\n"
     << "const char *" << prefix << "_last_error(void);\n\n"
     << "/* The OpenMP threads later calls use (n <= 0: the default,\n"
        "   OMP_NUM_THREADS or every core). */\n"
     << "void " << prefix << "_set_num_threads(int32_t n);\n\n"
     << "/* The MPI communicator this thread's later calls of\n"
        "   sequence-parallel entries use (docs/SequenceParallel.md): an\n"
        "   MPI_Comm as an integer, (int64_t)comm with MPICH,\n"
        "   (int64_t)(intptr_t)comm with Open MPI; 0: MPI_COMM_WORLD. */\n"
     << "void " << prefix << "_set_communicator(int64_t comm);\n\n"
     << "/* The threads a call starting now on this thread would use. */\n"
     << "int32_t " << prefix << "_num_threads(void);\n\n"
     << "/* The most bytes the library's generated code may hold at once in\n"
        "   its own buffers of 64 kB or more (workspaces), over all calls;\n"
        "   a call that would exceed it fails with ATTN_OPT_ERROR_MEMORY.\n"
        "   0 (the default): no limit, but a buffer of 64 MiB or more must\n"
        "   fit in the memory the system has available. */\n"
     << "void " << prefix << "_set_max_memory(int64_t bytes);\n\n"
     << "/* The entries and their tensors as JSON. */\n"
     << "const char *" << prefix << "_signatures(void);\n\n"
     << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n#endif /* "
     << guard << " */\n";
  return h;
}

std::string mlir::attn::emitSignatures(ArrayRef<Entry> entries,
                                       StringRef prefix) {
  auto tensor = [](const EntryTensor &t) {
    llvm::json::Array shape, sizeOf;
    for (int64_t s : t.shape)
      shape.push_back(s == ShapedType::kDynamic ? llvm::json::Value(-1)
                                                : llvm::json::Value(s));
    for (auto [arg, dim] : t.sizeOf)
      sizeOf.push_back(arg < 0
                           ? llvm::json::Value(nullptr)
                           : llvm::json::Value(llvm::json::Array{arg, dim}));
    llvm::json::Object o{{"name", t.name},
                         {"dtype", t.elementType},
                         {"shape", std::move(shape)}};
    if (!t.sizeOf.empty())
      o["size_of"] = std::move(sizeOf);
    return o;
  };
  llvm::json::Array list;
  for (const Entry &e : entries) {
    llvm::json::Array args, results;
    for (const EntryTensor &a : e.args)
      args.push_back(tensor(a));
    for (const EntryTensor &r : e.results)
      results.push_back(tensor(r));
    list.push_back(llvm::json::Object{{"function", e.function},
                                      {"symbol", e.symbol},
                                      {"args", std::move(args)},
                                      {"results", std::move(results)}});
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::json::Value(llvm::json::Object{
      {"version", 1}, {"prefix", prefix}, {"entries", std::move(list)}});
  return s;
}

//===----------------------------------------------------------------------===//
// The LLVM module
//===----------------------------------------------------------------------===//

/// Prefix of the run-time support's functions the library exports.
static constexpr llvm::StringLiteral kApiPrefix = "__attn_rt_api_";

/// The run-time support's definitions of library functions LLVM's code
/// generation calls (KernelRuntime.cpp).
static constexpr llvm::StringLiteral kLibcalls[] = {"__truncsfbf2"};

/// Adds `int32_t SYMBOL(T *p0, const int64_t *s0, ...)` calling the entry's
/// C interface with memref descriptors built from the pointers and sizes.
static llvm::Error addCEntry(llvm::Module &m, const Entry &e) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Function *target =
      m.getFunction("_mlir_ciface_" + e.function + "__entry");
  if (!target)
    return error("the lowered module has no _mlir_ciface_" + e.function +
                 "__entry (was attn-export-entries run?)");
  auto *ptr = llvm::PointerType::get(ctx, 0);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  SmallVector<const EntryTensor *> tensors;
  for (const EntryTensor &a : e.args)
    tensors.push_back(&a);
  for (const EntryTensor &r : e.results)
    tensors.push_back(&r);
  if (target->arg_size() != tensors.size())
    return error("_mlir_ciface_" + e.function + "__entry takes " +
                 llvm::Twine(target->arg_size()) + " arguments, expected " +
                 llvm::Twine(tensors.size()));

  SmallVector<llvm::Type *> params(2 * tensors.size(), ptr);
  auto *fn =
      llvm::Function::Create(llvm::FunctionType::get(i32, params, false),
                             llvm::GlobalValue::ExternalLinkage, e.symbol, m);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  for (auto [k, t] : llvm::enumerate(tensors)) {
    fn->getArg(2 * k)->setName(t->name);
    fn->getArg(2 * k + 1)->setName(t->name + "_shape");
  }
  auto begin = m.getOrInsertFunction(
      "__attn_rt_begin",
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false));
  auto end = m.getOrInsertFunction("__attn_rt_end",
                                   llvm::FunctionType::get(i32, {}, false));
  auto report = m.getOrInsertFunction(
      kRuntimeErrorFunction,
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {i32, i64, i64, i64},
                              false));

  auto *entryBlock = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::IRBuilder<> b(entryBlock);
  b.CreateCall(begin, {b.CreateGlobalString(e.symbol, e.symbol + ".name")});
  // When `bad` holds: report a NULL pointer of tensor `k` and return.
  auto reportNullIf = [&](llvm::Value *bad, size_t k, bool shapePointer) {
    auto *null = llvm::BasicBlock::Create(ctx, "null", fn);
    auto *next = llvm::BasicBlock::Create(ctx, "next", fn);
    b.CreateCondBr(bad, null, next);
    b.SetInsertPoint(null);
    b.CreateCall(report,
                 {b.getInt32(static_cast<int32_t>(RuntimeError::NullPointer)),
                  b.getInt64(static_cast<int64_t>(k)),
                  b.getInt64(shapePointer ? 1 : 0), b.getInt64(0)});
    b.CreateRet(b.CreateCall(end));
    b.SetInsertPoint(next);
  };
  SmallVector<llvm::Value *> descriptors;
  for (auto [k, t] : llvm::enumerate(tensors)) {
    int64_t rank = t->shape.size();
    llvm::Value *data = fn->getArg(2 * k), *shape = fn->getArg(2 * k + 1);
    SmallVector<llvm::Type *> fields = {ptr, ptr, i64};
    if (rank) {
      fields.push_back(llvm::ArrayType::get(i64, rank));
      fields.push_back(llvm::ArrayType::get(i64, rank));
    }
    auto *descType = llvm::StructType::get(ctx, fields);
    // Allocas in the entry block (it stays the first block).
    llvm::IRBuilder<> allocaBuilder(entryBlock, entryBlock->begin());
    llvm::Value *desc = allocaBuilder.CreateAlloca(descType);
    b.CreateStore(data, b.CreateStructGEP(descType, desc, 0));
    b.CreateStore(data, b.CreateStructGEP(descType, desc, 1));
    b.CreateStore(b.getInt64(0), b.CreateStructGEP(descType, desc, 2));
    llvm::Value *elements = b.getInt64(1);
    if (rank) {
      // A NULL shape is reported, not read.
      reportNullIf(b.CreateIsNull(shape), k, /*shapePointer=*/true);
      SmallVector<llvm::Value *> sizes;
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(
            b.CreateLoad(i64, b.CreateConstInBoundsGEP1_64(i64, shape, d)));
      llvm::Value *stride = b.getInt64(1);
      for (int64_t d = rank - 1; d >= 0; --d) {
        b.CreateStore(sizes[d], b.CreateGEP(descType, desc,
                                            {b.getInt32(0), b.getInt32(3),
                                             b.getInt32(d)}));
        b.CreateStore(
            stride, b.CreateGEP(descType, desc,
                                {b.getInt32(0), b.getInt32(4), b.getInt32(d)}));
        stride = b.CreateMul(stride, sizes[d]);
        elements = b.CreateMul(elements, sizes[d]);
      }
    }
    // A NULL pointer is fine for an empty tensor only.
    reportNullIf(b.CreateAnd(b.CreateIsNull(data),
                             b.CreateICmpNE(elements, b.getInt64(0))),
                 k, /*shapePointer=*/false);
    descriptors.push_back(desc);
  }
  b.CreateCall(target, descriptors);
  b.CreateRet(b.CreateCall(end));
  return llvm::Error::success();
}

/// Adds `const char *NAME(void)` returning `text`.
static void addStringFunction(llvm::Module &m, StringRef name, StringRef text) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::PointerType::get(ctx, 0), {}, false),
      llvm::GlobalValue::ExternalLinkage, name, m);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateRet(b.CreateGlobalString(text, (name + ".text").str()));
}

/// MLIR 22's Open MPI lowering names the reduction operators as
/// `ompi_mpi_sum`, ...; Open MPI's library exports them as `ompi_mpi_op_sum`
/// (mpi.h: MPI_SUM is &ompi_mpi_op_sum). Renames the declarations.
static void fixOpenMpiOperators(llvm::Module &m) {
  static constexpr llvm::StringLiteral kOps[] = {
      "sum", "max",  "min",  "prod",   "land",   "band",   "lor",
      "bor", "lxor", "bxor", "minloc", "maxloc", "replace"};
  for (llvm::StringRef op : kOps) {
    llvm::GlobalVariable *g = m.getGlobalVariable(("ompi_mpi_" + op).str());
    if (g && g->isDeclaration() &&
        !m.getNamedValue(("ompi_mpi_op_" + op).str()))
      g->setName("ompi_mpi_op_" + op);
  }
}

llvm::Expected<std::unique_ptr<llvm::Module>> mlir::attn::buildLibraryModule(
    ModuleOp module, llvm::LLVMContext &context, ArrayRef<Entry> entries,
    StringRef prefix, StringRef runtimeBitcode, llvm::TargetMachine &tm) {
  std::unique_ptr<llvm::Module> m =
      translateModuleToLLVMIR(module, context, prefix);
  if (!m)
    return error("translation to LLVM IR failed");
  fixOpenMpiOperators(*m);
  ExecutionEngine::setupTargetTripleAndDataLayout(m.get(), &tm);

  llvm::StringSet<> exported;
  for (const Entry &e : entries) {
    if (llvm::Error err = addCEntry(*m, e))
      return std::move(err);
    exported.insert(e.symbol);
  }
  addStringFunction(*m, (prefix + "_signatures").str(),
                    emitSignatures(entries, prefix));
  exported.insert((prefix + "_signatures").str());

  // The generated code's heap buffers through the run-time support's
  // accounting (KernelRuntime.cpp; the support's own calls stay libc's).
  for (auto [from, to] :
       {std::pair<StringRef, StringRef>{"malloc", "__attn_rt_malloc"},
        {"free", "__attn_rt_free"}})
    if (llvm::Function *f = m->getFunction(from)) {
      llvm::FunctionCallee callee =
          m->getOrInsertFunction(to, f->getFunctionType());
      f->replaceAllUsesWith(callee.getCallee());
      f->eraseFromParent();
    }

  // The run-time support.
  auto buffer = llvm::MemoryBuffer::getFile(runtimeBitcode);
  if (!buffer)
    return error("cannot read the run-time support " + runtimeBitcode + ": " +
                 buffer.getError().message());
  auto runtime = llvm::parseBitcodeFile((*buffer)->getMemBufferRef(), context);
  if (!runtime)
    return runtime.takeError();
  (*runtime)->setTargetTriple(m->getTargetTriple());
  (*runtime)->setDataLayout(m->getDataLayout());
  if (llvm::Linker::linkModules(*m, std::move(*runtime)))
    return error("cannot link the run-time support " + runtimeBitcode);
  for (llvm::Function &f : m->functions()) {
    if (!f.getName().starts_with(kApiPrefix) || f.isDeclaration())
      continue;
    std::string name =
        (prefix + "_" + f.getName().drop_front(kApiPrefix.size())).str();
    f.setName(name);
    exported.insert(name);
  }
  // Functions code generation may call (libcalls appear only after the IR
  // is optimized, so they cannot be internal): weak, hidden, so that
  // several kernel libraries link into one program and none exports them.
  for (StringRef name : kLibcalls)
    if (llvm::Function *f = m->getFunction(name); f && !f->isDeclaration()) {
      f->setLinkage(llvm::GlobalValue::WeakAnyLinkage);
      f->setVisibility(llvm::GlobalValue::HiddenVisibility);
    }
  // One set of functions a library exports; everything else internal (the
  // code of the MLIR functions, their C interfaces, the run-time support).
  llvm::internalizeModule(*m, [&](const llvm::GlobalValue &gv) {
    return exported.contains(gv.getName()) ||
           llvm::is_contained(kLibcalls, gv.getName());
  });
  if (llvm::verifyModule(*m, &llvm::errs()))
    return error("the library's LLVM module does not verify");
  auto optimize = makeOptimizingTransformer(3, 0, &tm);
  if (llvm::Error err = optimize(m.get()))
    return std::move(err);
  return std::move(m);
}
