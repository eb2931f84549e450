//===- attn-opt-fuzz.cpp - libFuzzer target of attn-opt -------------------===//
//
// Each input is MLIR text (a file of lit tests split at `// -----`, as
// attn-opt -split-input-file reads it). Each part is parsed (with the
// dialects the pipelines take as input: attn, func, arith, math, tensor,
// linalg, tosa and shard, and the ops of attn's score/mask regions) and
// verified; a module that verifies then goes
// through the CPU pipeline to the LLVM dialect and the
// NVVM pipeline to PTX text (chip sm_90a, format isa; no ptxas). Diagnostics
// are expected and swallowed: the target looks for crashes, hangs,
// out-of-memory and sanitizer reports, not for errors. Contexts live across
// inputs (as attn-opt keeps one for all parts of a file) and are renewed
// every 256 modules; a fresh context per module cost 7x the executions.
//
// Built with -fsanitize=fuzzer (plus ASan and UBSan) when the project is
// configured with ATTN_ENABLE_FUZZER=ON: scripts/fuzz.sh configures
// build-fuzz so and runs a campaign over the seed corpus (the lit tests and
// examples) with the dictionary utils/fuzz/attn.dict.
//
// Besides libFuzzer's byte mutations (with the dictionary), a custom
// mutator makes the edits that found the crashes of issue 18: an integer
// literal (a size or an attribute value) replaced by 0, 1, 2^30, 2^31,
// INT64_MAX or a neighbour; and a mask pattern wrapped in composed patterns
// a few to a few hundred levels deep.
//
// ATTN_FUZZ_PIPELINES=none|cpu|all (default all) chooses what runs after
// verification.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/InitAttn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace mlir;

namespace {

/// What runs after verification.
enum class Pipelines { None, Cpu, All };

struct Globals {
  /// What inputs may use (the parser loads only these), and everything the
  /// pipelines need (added once an input parsed).
  DialectRegistry inputRegistry, registry;
  Pipelines pipelines = Pipelines::All;

  Globals() {
    inputRegistry
        .insert<arith::ArithDialect, func::FuncDialect, linalg::LinalgDialect,
                math::MathDialect, shard::ShardDialect, tensor::TensorDialect,
                tosa::TosaDialect>();
    attn::registerAttnDialects(inputRegistry);
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registerAllGPUToLLVMIRTranslations(registry);
    registerAllPasses();
    attn::registerAttnDialects(registry);
    attn::registerAttnPasses();
    if (const char *p = std::getenv("ATTN_FUZZ_PIPELINES")) {
      if (!std::strcmp(p, "none"))
        pipelines = Pipelines::None;
      else if (!std::strcmp(p, "cpu"))
        pipelines = Pipelines::Cpu;
    }
  }
};

Globals &globals() {
  static Globals g;
  return g;
}

/// True if every op of `module` is one the attn pipelines are meant for
/// (the input dialects above).
bool onlyAttention(ModuleOp module) {
  WalkResult r = module.walk([](Operation *op) {
    StringRef ns = op->getDialect() ? op->getDialect()->getNamespace() : "";
    if (isa<ModuleOp>(op) ||
        llvm::is_contained({"func", "attn", "arith", "math", "tensor", "linalg",
                            "tosa", "shard"},
                           ns))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !r.wasInterrupted();
}

/// The contexts and pass managers inputs run in. Like attn-opt
/// -split-input-file, which parses every part of a file in one context, the
/// target reuses its contexts from input to input (creating a context and
/// loading the pipelines' dialects per module cost more than the rest of the
/// work); they are made afresh every `kRenewEvery` modules so that uniqued
/// attributes and types do not pile up.
struct Contexts {
  static constexpr unsigned kRenewEvery = 256;
  /// Parses and verifies inputs: it knows the input dialects only.
  std::unique_ptr<MLIRContext> input;
  /// Runs the pipelines on a module that verified in `input`, parsed again
  /// from the same text (so it holds the same ops and attributes).
  std::unique_ptr<MLIRContext> lowering;
  std::unique_ptr<PassManager> cpu, nvvm;
  unsigned uses = 0;

  void renew(Globals &g) {
    cpu.reset();
    nvvm.reset();
    input = std::make_unique<MLIRContext>(g.inputRegistry,
                                          MLIRContext::Threading::DISABLED);
    lowering = std::make_unique<MLIRContext>(g.registry,
                                             MLIRContext::Threading::DISABLED);
    for (MLIRContext *c : {input.get(), lowering.get()}) {
      // Errors are the expected answer to most inputs.
      c->getDiagEngine().registerHandler([](Diagnostic &) {});
      c->loadAllAvailableDialects();
    }
    cpu = makePipeline("builtin.module(attn-lower-to-llvm-pipeline)");
    nvvm = makePipeline("builtin.module(attn-lower-to-nvvm-pipeline{"
                        "chip=sm_90a format=isa})");
    uses = 0;
  }

  std::unique_ptr<PassManager> makePipeline(StringRef pipeline) {
    auto pm = std::make_unique<PassManager>(lowering.get());
    if (failed(parsePassPipeline(pipeline, *pm)))
      std::abort(); // the pipelines are the project's own: a bug here
    return pm;
  }
};

/// Whether `text` holds input that crashes MLIR 22's own parser, outside
/// attn-opt's reach: linalg.broadcast, linalg.transpose and linalg.reduce
/// parse their `dimensions = [...]` / `permutation = [...]` with a helper
/// (parseDenseI64ArrayAttr in LinalgOps.cpp) that stores the attribute
/// without checking that it parsed, so a malformed list is a null
/// attribute and a segfault (stock mlir-opt crashes the same way). Such
/// inputs are skipped (any `dimensions =` or `permutation =` not followed
/// by a list of i64, so also the generic form's `array<i64: ...>`): the
/// campaign looks for attn-opt's bugs.
bool hitsUpstreamParserCrash(StringRef text) {
  for (StringRef key : {"dimensions", "permutation"}) {
    size_t at = 0;
    while ((at = text.find(key, at)) != StringRef::npos) {
      at += key.size();
      StringRef rest = text.drop_front(at).ltrim();
      if (!rest.consume_front("="))
        continue;
      rest = rest.ltrim();
      if (!rest.consume_front("["))
        return true;
      size_t end = rest.find(']');
      if (end == StringRef::npos)
        return true;
      StringRef list = rest.take_front(end).trim();
      if (list.empty())
        continue;
      SmallVector<StringRef> items;
      list.split(items, ',');
      for (StringRef item : items) {
        // An i64 literal (a value beyond i64 does not parse either).
        int64_t value;
        if (item.trim().getAsInteger(10, value))
          return true;
      }
    }
  }
  return false;
}

void fuzzOne(StringRef part) {
  Globals &g = globals();
  if (hitsUpstreamParserCrash(part))
    return;
  // MLIR's lexer reads up to a NUL at the end of its buffer (as the
  // MemoryBuffers of attn-opt -split-input-file have): a part cut out of a
  // larger input has none, and a comment running to its end would read on.
  std::string text = part.str();
  static Contexts contexts;
  if (!contexts.input || ++contexts.uses >= Contexts::kRenewEvery)
    contexts.renew(g);
  {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(text, contexts.input.get());
    if (!module || g.pipelines == Pipelines::None || !onlyAttention(*module))
      return;
  }
  // The module again in the context that has the pipelines' dialects (the
  // same text: the same ops and attributes); the NVVM pipeline gets a copy
  // (the CPU pipeline rewrites the module in place).
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, contexts.lowering.get());
  if (!module)
    std::abort(); // it parsed and verified in the input context
  OwningOpRef<ModuleOp> forNvvm;
  if (g.pipelines == Pipelines::All)
    forNvvm = module->clone();
  (void)contexts.cpu->run(*module);
  if (forNvvm)
    (void)contexts.nvvm->run(*forNvvm);
}

} // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

/// Replaces the integer literal at a random place of `text` by an edge value.
static bool mutateInteger(std::string &text, std::mt19937_64 &rng) {
  static const char *edges[] = {"0",
                                "1",
                                "2",
                                "1073741823",
                                "1073741824",
                                "1073741825",
                                "2147483647",
                                "2147483648",
                                "4294967296",
                                "9223372036854775806",
                                "9223372036854775807",
                                "9223372036854775808",
                                "-1"};
  std::vector<std::pair<size_t, size_t>> numbers;
  for (size_t i = 0; i < text.size();) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      size_t j = i;
      while (j < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[j])))
        ++j;
      numbers.push_back({i, j - i});
      i = j;
    } else {
      ++i;
    }
  }
  if (numbers.empty())
    return false;
  auto [at, len] = numbers[rng() % numbers.size()];
  text.replace(at, len, edges[rng() % std::size(edges)]);
  return true;
}

/// Wraps the pattern after a random `pattern = ` in `levels` composed
/// patterns.
static bool mutateNesting(std::string &text, std::mt19937_64 &rng) {
  const std::string key = "pattern = ";
  std::vector<size_t> places;
  for (size_t at = text.find(key); at != std::string::npos;
       at = text.find(key, at + 1))
    places.push_back(at + key.size());
  if (places.empty())
    return false;
  size_t begin = places[rng() % places.size()];
  // The pattern attribute ends at the bracket depth it started at.
  size_t end = begin;
  int depth = 0;
  for (; end < text.size(); ++end) {
    char c = text[end];
    if (c == '<' || c == '[')
      ++depth;
    else if ((c == '>' || c == ']') && --depth < 0)
      break;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  std::string pattern = text.substr(begin, end - begin);
  static const char *kinds[] = {"#attn.intersect<[", "#attn.union<["};
  int levels = std::vector<int>{1, 2, 5, 31, 32, 33, 300}[rng() % 7];
  std::string wrapped = pattern;
  for (int l = 0; l < levels; ++l)
    wrapped = std::string(kinds[rng() % 2]) + wrapped + ", #attn.causal]>";
  text.replace(begin, end - begin, wrapped);
  return true;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  std::mt19937_64 rng(seed);
  unsigned choice = rng() % 8;
  if (choice < 6)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string text(reinterpret_cast<const char *>(data), size);
  bool changed =
      choice == 6 ? mutateInteger(text, rng) : mutateNesting(text, rng);
  if (!changed || text.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  globals();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  // Split like -split-input-file.
  StringRef rest = text;
  const StringRef marker = "// -----";
  while (true) {
    size_t at = rest.find(marker);
    fuzzOne(rest.substr(0, at));
    if (at == StringRef::npos)
      break;
    rest = rest.substr(at + marker.size());
  }
  return 0;
}
