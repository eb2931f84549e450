//===- attn-ref.cpp - Check attn-run's output against the scalar reference ===//
//
// attn-ref FILE.mlir --entry F --inputs DIR --compare OUT.npy
// attn-ref FILE.mlir --entry F --inputs DIR --grad GDIR
//
// Reads the attn op of function F (its operands must be arguments of F),
// loads F's inputs from DIR/NAME.npy (as `attn-run --save-inputs DIR`
// writes them), computes the op with the independent scalar reference in
// double precision and compares with OUT.npy: every element must satisfy
// |out - ref| <= atol + rtol * |ref|, and with --max-rel-err the normwise
// error max|out - ref| / max|ref| must not exceed it.
//
// With --grad GDIR it checks gradients instead (or as well, with --compare):
// the attn.attention of F is differentiated by the reference (reverse-mode
// differentiation of the scalar code, ref::attentionGrad) with the cotangent
// of its output read from GDIR/d_output.npy and, when the op has a
// log-sum-exp result and GDIR/d_lse.npy exists, that of the log-sum-exp.
// The gradient of each differentiable operand (query, key and value always;
// bias, gate and sinks when the op has them) is compared, by the same rule,
// with GDIR/d_NAME.npy, NAME being the operand's argument name as for DIR
// (an argument used as two operands gets the sum of their gradients). Every
// one of these files must exist. A paged KV cache is not differentiated.
//
// With --runs N it checks N runs of one compiled module at several sizes,
// as `attn-run --shape` with N shapes per argument writes them: inputs in
// DIR/K/, the output in OUT.K.npy and the gradients in GDIR/K/ for
// K = 0 .. N-1.
//
//===----------------------------------------------------------------------===//

#include "ScalarReference.h"

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/InitAttn.h"
#include "attn-opt/Runtime/Host/Npy.h"
#include "attn-opt/Runtime/JIT/ModuleLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<input .mlir file>"));
static cl::opt<std::string> entryName("entry", cl::desc("Function"));
static cl::opt<std::string> inputDir("inputs", cl::Required,
                                     cl::desc("Directory of NAME.npy inputs"));
static cl::opt<std::string> compareFile("compare",
                                        cl::desc("Output .npy to check"));
static cl::opt<std::string>
    gradDir("grad", cl::desc("Check the gradients of attn.attention: "
                             "directory of d_output.npy (and d_lse.npy) and "
                             "the expected d_NAME.npy"));
static cl::opt<double> rtolOpt("rtol", cl::init(1e-4));
static cl::opt<double> atolOpt("atol", cl::init(1e-5));
static cl::opt<double> maxRelErr("max-rel-err", cl::init(-1),
                                 cl::desc("Bound on max|out-ref| / max|ref|"));
static cl::opt<bool>
    lseOpt("lse", cl::init(false),
           cl::desc("Check the log-sum-exp result of attn.attention (its "
                    "second result) instead of the attention"));
static cl::opt<unsigned>
    runs("runs", cl::init(0),
         cl::desc("Check N runs: inputs in DIR/K, outputs in OUT.K.npy"));

[[noreturn]] static void fail(const llvm::Twine &msg) {
  llvm::errs() << "attn-ref: error: " << msg << "\n";
  std::exit(1);
}

static ref::Tensor toTensor(const npy::Array &a) {
  ref::Tensor t(a.shape);
  for (int64_t i = 0; i < a.numElements(); ++i)
    t.data[i] = npy::loadFloat(a, i);
  return t;
}

static ref::Pattern toPattern(MaskPatternAttrInterface attr) {
  ref::Pattern p;
  auto parts = [](ArrayRef<MaskPatternAttrInterface> list) {
    std::vector<ref::Pattern> out;
    for (MaskPatternAttrInterface a : list)
      out.push_back(toPattern(a));
    return out;
  };
  llvm::TypeSwitch<Attribute>(attr)
      .Case([&](CausalAttr) { p.kind = ref::Pattern::Causal; })
      .Case([&](WindowAttr a) {
        p.kind = ref::Pattern::Window;
        p.a = a.getBefore();
        p.b = a.getAfter();
      })
      .Case([&](DilatedAttr a) {
        p.kind = ref::Pattern::Dilated;
        p.a = a.getBefore();
        p.b = a.getAfter();
        p.c = a.getDilation();
      })
      .Case([&](GlobalAttr a) {
        p.kind = ref::Pattern::Global;
        p.tokens.assign(a.getTokens().begin(), a.getTokens().end());
      })
      .Case([&](StridedAttr a) {
        p.kind = ref::Pattern::Strided;
        p.a = a.getStride();
      })
      .Case([&](FixedAttr a) {
        p.kind = ref::Pattern::Fixed;
        p.a = a.getStride();
        p.b = a.getC();
      })
      .Case([&](RandomAttr a) {
        p.kind = ref::Pattern::Random;
        p.a = a.getBlocks();
        p.b = a.getBlockSize();
        p.seed = a.getSeed();
      })
      .Case([&](BlockAttr a) {
        p.kind = ref::Pattern::Block;
        p.a = a.getSize();
        for (StringAttr row : a.getLayout())
          p.layout.push_back(row.str());
      })
      .Case([&](SegmentsAttr) { p.kind = ref::Pattern::Segments; })
      .Case([&](UnionAttr a) {
        p.kind = ref::Pattern::Union;
        p.parts = parts(a.getPatterns());
      })
      .Case([&](IntersectAttr a) {
        p.kind = ref::Pattern::Intersect;
        p.parts = parts(a.getPatterns());
      })
      .Case([&](PerHeadAttr a) {
        p.kind = ref::Pattern::PerHead;
        p.parts = parts(a.getPatterns());
      })
      .Default([](Attribute a) { fail("unknown pattern attribute"); });
  return p;
}

static std::optional<double> optionalScale(std::optional<APFloat> s) {
  if (!s)
    return std::nullopt;
  return s->convertToDouble();
}

/// The inputs of one run: the operands of the attn op, which must be
/// arguments of the entry, read from DIR/NAME.npy.
class Inputs {
public:
  Inputs(const LoadedModule &loaded, std::string dir)
      : loaded(loaded), dir(std::move(dir)) {}

  /// The argument of the entry that operand `v` is.
  BlockArgument argument(Value v) const {
    func::FuncOp entry = loaded.entry;
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner()->getParentOp() != entry)
      fail("operands of the attn op must be arguments of @" + entry.getName());
    return arg;
  }
  /// The name of the argument that operand `v` is.
  std::string name(Value v) const {
    return loaded.argNames[argument(v).getArgNumber()];
  }
  /// The input tensor of an operand (a function argument), or null.
  ref::Tensor *operator()(Value v) {
    if (!v)
      return nullptr;
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name(v) + ".npy");
    owned.push_back(
        std::make_unique<ref::Tensor>(readTensor(path.str().str())));
    return owned.back().get();
  }

  static ref::Tensor readTensor(const std::string &path) {
    std::string error;
    std::optional<npy::Array> array = npy::read(path, error);
    if (!array)
      fail(error);
    return toTensor(*array);
  }

private:
  const LoadedModule &loaded;
  std::string dir;
  std::vector<std::unique_ptr<ref::Tensor>> owned;
};

/// The attn op of the entry (exactly one).
static Operation *findAttnOp(func::FuncOp entry) {
  Operation *attnOp = nullptr;
  entry.walk([&](Operation *op) {
    if (isa<AttnDialect>(op->getDialect()) && !isa<YieldOp>(op)) {
      if (attnOp)
        fail("@" + entry.getName() + " has more than one attn op");
      attnOp = op;
    }
  });
  if (!attnOp)
    fail("@" + entry.getName() + " has no attn op");
  return attnOp;
}

//===----------------------------------------------------------------------===//
// Score and mask regions
//===----------------------------------------------------------------------===//

namespace {
/// attn.attention's score and mask regions, interpreted operation by
/// operation from the arith and math semantics: every value a double
/// (integers exactly, far below 2^53) with its derivative with respect to
/// the score argument (forward mode), captured tensors read at clamped
/// indices. Shares nothing with the compiler's lowering of the regions.
class RegionInterpreter {
public:
  struct Num {
    double v = 0, d = 0;
  };

  RegionInterpreter(Region &region, std::vector<const ref::Tensor *> captures)
      : region(region), captures(std::move(captures)) {}

  /// A floating-point read of a captured tensor: the capture and the
  /// element (row-major).
  struct Read {
    Operation *op;
    size_t capture;
    int64_t element;
  };

  /// The region's result at `leading` (the score's tangent in its `d`);
  /// with `seed`, the tangent is the result's derivative with respect to
  /// that read instead (the score's `d` set to 0 by the caller); the
  /// floating-point reads of captured tensors are appended to `reads`.
  Num run(ArrayRef<Num> leading, Operation *seed = nullptr,
          std::vector<Read> *reads = nullptr) const {
    Block &block = region.front();
    llvm::DenseMap<Value, Num> env;
    unsigned n = leading.size();
    for (unsigned i = 0; i < n; ++i)
      env[block.getArgument(i)] = leading[i];
    for (Operation &op : block) {
      if (auto yield = dyn_cast<YieldOp>(op))
        return env.lookup(yield.getValue());
      SmallVector<Num> in;
      for (Value v : op.getOperands())
        in.push_back(env.lookup(v));
      Num r = eval(op, in, n);
      if (auto e = dyn_cast<tensor::ExtractOp>(op);
          e && isa<FloatType>(e.getType())) {
        r.d = &op == seed ? 1.0 : 0.0;
        if (reads)
          reads->push_back({&op, captureOf(e.getTensor(), n),
                            elementOf(e.getTensor(), in, n)});
      }
      env[op.getResult(0)] = r;
    }
    fail("a region without attn.yield");
  }

private:
  static size_t captureOf(Value tensor, unsigned firstCapture) {
    return cast<BlockArgument>(tensor).getArgNumber() - firstCapture;
  }
  /// The row-major element of a read at `in[1..]` (clamped).
  int64_t elementOf(Value tensor, ArrayRef<Num> in,
                    unsigned firstCapture) const {
    const ref::Tensor &t = *captures[captureOf(tensor, firstCapture)];
    int64_t flat = 0;
    for (size_t i = 0; i < t.shape.size(); ++i) {
      int64_t at = std::clamp<int64_t>(int64_t(in[1 + i].v), 0, t.shape[i] - 1);
      flat = flat * t.shape[i] + at;
    }
    return flat;
  }

  static double floorDiv(double a, double b) { return std::floor(a / b); }
  static double truncDiv(double a, double b) { return std::trunc(a / b); }

  Num eval(Operation &op, ArrayRef<Num> in, unsigned firstCapture) const {
    auto a = [&] { return in[0]; };
    auto b = [&] { return in[1]; };
    auto c = [](double v) { return Num{v, 0}; };
    Type type = op.getResult(0).getType();
    StringRef name = op.getName().getStringRef();
    // Integers.
    if (auto k = dyn_cast<arith::ConstantOp>(op)) {
      if (auto i = dyn_cast<IntegerAttr>(k.getValue()))
        return c(type.isInteger(1) ? (i.getValue().isZero() ? 0 : 1)
                                   : double(i.getValue().getSExtValue()));
      return c(cast<FloatAttr>(k.getValue()).getValueAsDouble());
    }
    if (name == "arith.addi")
      return c(a().v + b().v);
    if (name == "arith.subi")
      return c(a().v - b().v);
    if (name == "arith.muli")
      return c(a().v * b().v);
    if (name == "arith.divsi" || name == "arith.divui")
      return c(truncDiv(a().v, b().v));
    if (name == "arith.floordivsi")
      return c(floorDiv(a().v, b().v));
    if (name == "arith.ceildivsi" || name == "arith.ceildivui")
      return c(std::ceil(a().v / b().v));
    if (name == "arith.remsi" || name == "arith.remui")
      return c(std::fmod(a().v, b().v));
    if (name == "arith.minsi" || name == "arith.minui")
      return c(std::min(a().v, b().v));
    if (name == "arith.maxsi" || name == "arith.maxui")
      return c(std::max(a().v, b().v));
    if (name == "arith.andi")
      return c(double(int64_t(a().v) & int64_t(b().v)));
    if (name == "arith.ori")
      return c(double(int64_t(a().v) | int64_t(b().v)));
    if (name == "arith.xori")
      return c(double(int64_t(a().v) ^ int64_t(b().v)));
    if (name == "math.absi")
      return c(std::fabs(a().v));
    if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      double x = a().v, y = b().v;
      using P = arith::CmpIPredicate;
      switch (cmp.getPredicate()) {
      case P::eq:
        return c(x == y);
      case P::ne:
        return c(x != y);
      case P::slt:
      case P::ult:
        return c(x < y);
      case P::sle:
      case P::ule:
        return c(x <= y);
      case P::sgt:
      case P::ugt:
        return c(x > y);
      case P::sge:
      case P::uge:
        return c(x >= y);
      }
    }
    if (name == "arith.select")
      return a().v != 0 ? in[1] : in[2];
    if (isa<arith::ExtSIOp, arith::IndexCastOp>(op) &&
        op.getOperand(0).getType().isInteger(1))
      return c(-a().v);
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp>(op))
      return c(a().v);
    if (name == "arith.trunci")
      return c(type.isInteger(1) ? double(int64_t(a().v) & 1) : a().v);
    if (name == "arith.sitofp" || name == "arith.uitofp")
      return c(a().v);
    if (name == "arith.fptosi" || name == "arith.fptoui")
      return c(std::trunc(a().v));
    // Floats, with the derivative.
    if (name == "arith.addf")
      return {a().v + b().v, a().d + b().d};
    if (name == "arith.subf")
      return {a().v - b().v, a().d - b().d};
    if (name == "arith.mulf")
      return {a().v * b().v, a().d * b().v + a().v * b().d};
    if (name == "arith.divf")
      return {a().v / b().v, (a().d * b().v - a().v * b().d) / (b().v * b().v)};
    if (name == "arith.negf")
      return {-a().v, -a().d};
    if (name == "arith.maximumf" || name == "arith.maxnumf")
      return a().v >= b().v ? a() : b();
    if (name == "arith.minimumf" || name == "arith.minnumf")
      return a().v <= b().v ? a() : b();
    if (name == "arith.extf" || name == "arith.truncf")
      return a();
    if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
      double x = a().v, y = b().v;
      bool unordered = std::isnan(x) || std::isnan(y);
      using P = arith::CmpFPredicate;
      switch (cmp.getPredicate()) {
      case P::AlwaysFalse:
        return c(0);
      case P::AlwaysTrue:
        return c(1);
      case P::OEQ:
        return c(!unordered && x == y);
      case P::OGT:
        return c(!unordered && x > y);
      case P::OGE:
        return c(!unordered && x >= y);
      case P::OLT:
        return c(!unordered && x < y);
      case P::OLE:
        return c(!unordered && x <= y);
      case P::ONE:
        return c(!unordered && x != y);
      case P::ORD:
        return c(!unordered);
      case P::UEQ:
        return c(unordered || x == y);
      case P::UGT:
        return c(unordered || x > y);
      case P::UGE:
        return c(unordered || x >= y);
      case P::ULT:
        return c(unordered || x < y);
      case P::ULE:
        return c(unordered || x <= y);
      case P::UNE:
        return c(unordered || x != y);
      case P::UNO:
        return c(unordered);
      }
    }
    if (name == "math.tanh") {
      double t = std::tanh(a().v);
      return {t, (1 - t * t) * a().d};
    }
    if (name == "math.exp") {
      double e = std::exp(a().v);
      return {e, e * a().d};
    }
    if (name == "math.log")
      return {std::log(a().v), a().d / a().v};
    if (name == "math.sqrt") {
      double r = std::sqrt(a().v);
      return {r, a().d / (2 * r)};
    }
    if (name == "math.absf")
      return {std::fabs(a().v), a().v < 0 ? -a().d : a().d};
    if (name == "math.erf")
      return {std::erf(a().v),
              2 / std::sqrt(M_PI) * std::exp(-a().v * a().v) * a().d};
    if (name == "math.sin")
      return {std::sin(a().v), std::cos(a().v) * a().d};
    if (name == "math.cos")
      return {std::cos(a().v), -std::sin(a().v) * a().d};
    if (name == "math.floor")
      return c(std::floor(a().v));
    if (name == "math.ceil")
      return c(std::ceil(a().v));
    if (auto e = dyn_cast<tensor::ExtractOp>(op))
      return c(captures[captureOf(e.getTensor(), firstCapture)]
                   ->data[elementOf(e.getTensor(), in, firstCapture)]);
    if (auto d = dyn_cast<tensor::DimOp>(op)) {
      const ref::Tensor &t =
          *captures[cast<BlockArgument>(d.getSource()).getArgNumber() -
                    firstCapture];
      return c(double(t.shape[int64_t(b().v)]));
    }
    fail("attn-ref cannot interpret '" + name.str() + "' in a region");
  }

  Region &region;
  std::vector<const ref::Tensor *> captures;
};
} // namespace

/// The regions of `op` as the reference's functions, their captured
/// tensors read through `input`.
static void bindRegions(AttentionOp op, ref::AttentionSpec &spec,
                        std::vector<const ref::Tensor *> captures) {
  using Num = RegionInterpreter::Num;
  if (!op.getMaskMod().empty()) {
    auto interp =
        std::make_shared<RegionInterpreter>(op.getMaskMod(), captures);
    spec.maskMod = [interp](int64_t b, int64_t h, int64_t q, int64_t k) {
      Num args[] = {{double(b)}, {double(h)}, {double(q)}, {double(k)}};
      return interp->run(args).v != 0;
    };
  }
  if (!op.getScoreMod().empty()) {
    auto interp =
        std::make_shared<RegionInterpreter>(op.getScoreMod(), captures);
    spec.scoreMod = [interp](double s, int64_t b, int64_t h, int64_t q,
                             int64_t k) {
      Num args[] = {
          {s, 1.0}, {double(b)}, {double(h)}, {double(q)}, {double(k)}};
      Num r = interp->run(args);
      return std::make_pair(r.v, r.d);
    };
    // The captured tensors' gradients (attn-differentiate's): one forward
    // run per floating-point read, seeded at it.
    spec.captures = captures;
    spec.scoreModReads = [interp](double s, int64_t b, int64_t h, int64_t q,
                                  int64_t k) {
      Num args[] = {{s}, {double(b)}, {double(h)}, {double(q)}, {double(k)}};
      std::vector<RegionInterpreter::Read> reads;
      interp->run(args, nullptr, &reads);
      std::vector<ref::AttentionSpec::CaptureRead> partials;
      for (const RegionInterpreter::Read &r : reads)
        partials.push_back({r.capture, r.element, interp->run(args, r.op).d});
      return partials;
    };
  }
}

/// The reference's description of an attn.attention, its operand tensors
/// read through `input`.
static ref::AttentionSpec attentionSpec(AttentionOp op, Inputs &input) {
  ref::AttentionSpec spec;
  Attribute norm = op.getNormalizer();
  if (isa<SoftmaxAttr>(norm)) {
    spec.normalizer = ref::AttentionSpec::Normalizer::Softmax;
  } else if (auto p = dyn_cast<PointwiseAttr>(norm)) {
    spec.normalizer = ref::AttentionSpec::Normalizer::Pointwise;
    spec.fn = stringifyPointwiseFn(p.getFn()).str();
    spec.alpha = p.getAlpha().convertToDouble();
  } else {
    auto k = cast<KernelAttr>(norm);
    spec.normalizer = ref::AttentionSpec::Normalizer::Kernel;
    spec.featureMap = stringifyFeatureMap(k.getFeatureMap()).str();
    spec.features = k.getFeatures();
    spec.orthogonal = k.getOrthogonal();
    spec.seed = k.getSeed();
    spec.eps = k.getEps().convertToDouble();
  }
  spec.scale = optionalScale(op.getScale());
  spec.qkNormEps = optionalScale(op.getQkNormEps());
  if (auto pattern = op.getPatternAttr())
    spec.pattern = toPattern(pattern);
  spec.bias = input(op.getBias());
  spec.gate = input(op.getGate());
  spec.segQ = input(op.getQuerySegments());
  spec.segK = op.getKeySegments() ? input(op.getKeySegments()) : spec.segQ;
  spec.projection = input(op.getProjection());
  spec.queryLengths = input(op.getQueryLengths());
  spec.keyLengths = input(op.getKeyLengths());
  spec.queryOffsets = input(op.getQueryOffsets());
  spec.keyOffsets = input(op.getKeyOffsets());
  spec.mask = input(op.getMask());
  spec.maskIsBool = op.hasBoolMask();
  spec.softcap = optionalScale(op.getSoftcap());
  spec.alibiSlopes = input(op.getAlibiSlopes());
  spec.sinks = input(op.getSinks());
  spec.pageTable = input(op.getPageTable());
  std::vector<const ref::Tensor *> captures;
  for (Value c : op.getCaptures())
    captures.push_back(input(c));
  bindRegions(op, spec, std::move(captures));
  return spec;
}

/// Compares `file` with the reference result `expected` and prints the
/// report line `ref-check LABEL: ...`; whether every element is within
/// tolerance (and the normwise error within --max-rel-err).
static bool compare(const ref::Tensor &expected, const std::string &file,
                    const std::string &label) {
  std::string readError;
  std::optional<npy::Array> actual = npy::read(file, readError);
  if (!actual)
    fail(readError);
  if (actual->shape != expected.shape)
    fail(file + ": holds " + actual->describe() +
         " but the reference result has another shape");
  double maxAbs = 0, maxRef = 0, errSq = 0, refSq = 0;
  int64_t bad = 0, firstBad = -1;
  for (int64_t i = 0; i < expected.size(); ++i) {
    double o = npy::loadFloat(*actual, i), r = expected.data[i];
    // (Equal infinities match: the log-sum-exp of a row with no key.)
    double err = o == r ? 0.0 : std::isfinite(o) ? std::fabs(o - r) : INFINITY;
    maxAbs = std::max(maxAbs, err);
    if (std::isfinite(r)) {
      maxRef = std::max(maxRef, std::fabs(r));
      refSq += r * r;
    }
    errSq += err * err;
    if (!(err <= atolOpt + rtolOpt * std::fabs(r))) {
      if (firstBad < 0)
        firstBad = i;
      ++bad;
    }
  }
  double rel = maxRef > 0 ? maxAbs / maxRef : maxAbs;
  double fro = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
  llvm::outs() << llvm::format("ref-check %s: max_abs_err=%.3e "
                               "max_rel_err=%.3e fro_rel_err=%.3e ",
                               label.c_str(), maxAbs, rel, fro);
  bool ok = bad == 0 && (maxRelErr < 0 || rel <= maxRelErr);
  if (ok) {
    llvm::outs() << "ok\n";
    return true;
  }
  if (bad)
    llvm::outs() << llvm::format(
        "FAILED: %lld elements out of tolerance (rtol=%.1e atol=%.1e), first "
        "at %lld: %g vs reference %g\n",
        static_cast<long long>(bad), rtolOpt.getValue(), atolOpt.getValue(),
        static_cast<long long>(firstBad), npy::loadFloat(*actual, firstBad),
        expected.data[firstBad]);
  else
    llvm::outs() << llvm::format("FAILED: max_rel_err above %.1e\n",
                                 maxRelErr.getValue());
  return false;
}

/// Checks one run: inputs in `dir`, the output in `file`.
static bool checkRun(const LoadedModule &loaded, const std::string &dir,
                     const std::string &file, const std::string &label) {
  func::FuncOp entry = loaded.entry;
  Inputs input(loaded, dir);
  Operation *attnOp = findAttnOp(entry);

  ref::Tensor expected =
      llvm::TypeSwitch<Operation *, ref::Tensor>(attnOp)
          .Case([&](AttentionOp op) {
            ref::AttentionSpec spec = attentionSpec(op, input);
            if (lseOpt && !op.getLse())
              fail("--lse: the attn.attention of @" + entry.getName() +
                   " has no log-sum-exp result");
            ref::Tensor lse;
            ref::Tensor out =
                ref::attention(*input(op.getQuery()), *input(op.getKey()),
                               *input(op.getValue()), spec, &lse);
            return lseOpt ? lse : out;
          })
          .Case([&](LowRankAttentionOp op) {
            return ref::lowrankAttention(
                *input(op.getQuery()), *input(op.getKey()),
                *input(op.getValue()), *input(op.getKeyProj()),
                *input(op.getValueProj()), optionalScale(op.getScale()));
          })
          .Case([&](LshAttentionOp op) {
            ref::LshSpec spec{static_cast<int64_t>(op.getNumHashes()),
                              static_cast<int64_t>(op.getNumBuckets()),
                              static_cast<int64_t>(op.getChunkSize()),
                              static_cast<uint64_t>(op.getSeed()),
                              op.getCausal(),
                              optionalScale(op.getScale())};
            return ref::lshAttention(*input(op.getQk()), *input(op.getValue()),
                                     spec);
          })
          .Case([&](RelativeAttentionOp op) {
            return ref::relativeAttention(
                *input(op.getQuery()), *input(op.getKey()),
                *input(op.getValue()), *input(op.getPosEmb()),
                *input(op.getContentBias()), *input(op.getPositionBias()),
                input(op.getMemoryKey()), input(op.getMemoryValue()),
                optionalScale(op.getScale()));
          })
          .Default([](Operation *op) -> ref::Tensor {
            fail("no scalar reference for " + op->getName().getStringRef());
          });
  return compare(expected, file, "@" + entry.getName().str() + label);
}

/// Checks the gradients of one run: inputs in `dir`, the cotangents and the
/// gradients to check in `gdir`.
static bool checkGradRun(const LoadedModule &loaded, const std::string &dir,
                         const std::string &gdir, const std::string &label) {
  func::FuncOp entry = loaded.entry;
  Inputs input(loaded, dir);
  auto op = dyn_cast<AttentionOp>(findAttnOp(entry));
  if (!op)
    fail("--grad: the attn op of @" + entry.getName() +
         " is not attn.attention");
  ref::AttentionSpec spec = attentionSpec(op, input);
  if (spec.pageTable)
    fail("--grad: a paged KV cache is not differentiated");
  ref::Tensor *q = input(op.getQuery()), *k = input(op.getKey()),
              *v = input(op.getValue());

  auto gradFile = [&](const std::string &name) {
    llvm::SmallString<256> path(gdir);
    llvm::sys::path::append(path, name + ".npy");
    return path.str().str();
  };
  ref::Tensor dOut = Inputs::readTensor(gradFile("d_output"));
  if (dOut.shape !=
      std::vector<int64_t>{q->dim(0), q->dim(1), q->dim(2), v->dim(3)})
    fail(gradFile("d_output") + ": not shaped like the output of @" +
         entry.getName());
  std::optional<ref::Tensor> dLse;
  if (op.getLse() && llvm::sys::fs::exists(gradFile("d_lse"))) {
    dLse = Inputs::readTensor(gradFile("d_lse"));
    if (dLse->shape != std::vector<int64_t>{q->dim(0), q->dim(1), q->dim(2)})
      fail(gradFile("d_lse") + ": not shaped like the log-sum-exp of @" +
           entry.getName());
  }
  ref::AttentionGrads grads =
      ref::attentionGrad(*q, *k, *v, spec, dOut, dLse ? &*dLse : nullptr);

  // The gradient of each argument: the sum over the operands it is.
  std::vector<std::pair<Value, const ref::Tensor *>> operands = {
      {op.getQuery(), &grads.query},
      {op.getKey(), &grads.key},
      {op.getValue(), &grads.value}};
  if (op.getBias())
    operands.push_back({op.getBias(), &grads.bias});
  if (op.getGate())
    operands.push_back({op.getGate(), &grads.gate});
  if (op.getSinks())
    operands.push_back({op.getSinks(), &grads.sinks});
  if (op.getAlibiSlopes())
    operands.push_back({op.getAlibiSlopes(), &grads.alibiSlopes});
  if (op.getProjection())
    operands.push_back({op.getProjection(), &grads.projection});
  // The floating-point tensors a score region captures (as
  // attn-differentiate returns them).
  for (auto [c, value] : llvm::enumerate(op.getCaptures()))
    if (!grads.captures.empty() &&
        isa<FloatType>(getElementTypeOrSelf(value.getType())))
      operands.push_back({value, &grads.captures[c]});
  std::vector<unsigned> order;
  std::map<unsigned, ref::Tensor> argGrads;
  for (auto [value, grad] : operands) {
    unsigned arg = input.argument(value).getArgNumber();
    auto [it, inserted] = argGrads.try_emplace(arg, *grad);
    if (inserted) {
      order.push_back(arg);
      continue;
    }
    for (int64_t i = 0; i < grad->size(); ++i)
      it->second.data[i] += grad->data[i];
  }

  bool ok = true;
  for (unsigned arg : order) {
    std::string name = "d_" + loaded.argNames[arg];
    ok &= compare(argGrads[arg], gradFile(name),
                  "@" + entry.getName().str() + label + " " + name);
  }
  return ok;
}

/// Checks one run: the output (with --compare) and the gradients (with
/// --grad); `run` K of --runs reads DIR/K, OUT.K.npy and GDIR/K.
static bool check(const LoadedModule &loaded, std::optional<unsigned> run) {
  std::string dir = inputDir, file = compareFile, gdir = gradDir, label;
  if (run) {
    std::string k = std::to_string(*run);
    llvm::SmallString<256> path(inputDir);
    llvm::sys::path::append(path, k);
    dir = path.str().str();
    path = compareFile;
    llvm::sys::path::replace_extension(path, k + ".npy");
    file = path.str().str();
    path = gradDir;
    llvm::sys::path::append(path, k);
    gdir = path.str().str();
    label = " run " + k;
  }
  bool ok = true;
  if (!compareFile.empty())
    ok &= checkRun(loaded, dir, file, label);
  if (!gradDir.empty())
    ok &= checkGradRun(loaded, dir, gdir, label);
  return ok;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "attn scalar reference checker\n");
  if (compareFile.empty() && gradDir.empty())
    fail("nothing to check: give --compare OUT.npy (the output) or --grad "
         "GDIR (the gradients), or both");
  if (lseOpt && compareFile.empty())
    fail("--lse checks the log-sum-exp result: it needs --compare");
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAttnDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  auto loaded = loadModule(context, sourceMgr, inputFile, entryName);
  if (!loaded)
    fail(llvm::toString(loaded.takeError()));
  if (runs == 0)
    return check(*loaded, std::nullopt) ? 0 : 1;
  bool ok = true;
  for (unsigned k = 0; k < runs; ++k)
    ok &= check(*loaded, k);
  return ok ? 0 : 1;
}
