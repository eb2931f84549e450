//===- ModuleLoader.cpp - Load a module and find the function to run ------===//

#include "attn-opt/Runtime/JIT/ModuleLoader.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

using namespace mlir;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<LoadedModule>
mlir::attn::loadModule(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                       StringRef path, StringRef entryName, bool pickEntry) {
  std::string message;
  auto file = openInputFile(path, &message);
  if (!file)
    return error(message);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  Block parsed;
  AsmParserState state;
  ParserConfig config(&context);
  if (failed(parseAsmSourceFile(sourceMgr, &parsed, config, &state)))
    return error("cannot parse " + path);
  LoadedModule loaded;
  loaded.module =
      mlir::detail::constructContainerOpForParserIfNecessary<ModuleOp>(
          &parsed, &context, UnknownLoc::get(&context));
  if (!loaded.module)
    return error("cannot parse " + path);
  if (failed(verify(*loaded.module)))
    return error(path + " does not verify (diagnostics above)");

  ModuleOp module = *loaded.module;
  // The source names of a function's arguments ("" where there are none).
  auto sourceNames = [&](func::FuncOp fn) {
    std::vector<std::string> names;
    const AsmParserState::BlockDefinition *def =
        state.getBlockDef(&fn.getBody().front());
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      std::string name;
      if (def && i < def->arguments.size()) {
        llvm::SMRange r = def->arguments[i].loc;
        name = StringRef(r.Start.getPointer(),
                         r.End.getPointer() - r.Start.getPointer())
                   .drop_front() // '%'
                   .str();
      }
      names.push_back(name);
    }
    return names;
  };
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      loaded.argNamesByFunction[fn.getName().str()] = sourceNames(fn);
  if (!pickEntry)
    return loaded;

  func::FuncOp entry;
  if (!entryName.empty()) {
    entry = module.lookupSymbol<func::FuncOp>(entryName);
    if (!entry || entry.isExternal())
      return error("no function @" + entryName + " with a body in " + path);
  } else {
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal() || fn.isPrivate())
        continue;
      if (entry)
        return error(path + " has several public functions (@" +
                     entry.getName() + ", @" + fn.getName() +
                     "); choose one with --entry");
      entry = fn;
    }
    if (!entry)
      return error("no public function with a body in " + path);
  }
  loaded.entry = entry;
  for (auto [i, name] :
       llvm::enumerate(loaded.argNamesByFunction[entry.getName().str()]))
    loaded.argNames.push_back(name.empty() ? "arg" + std::to_string(i) : name);
  return loaded;
}
