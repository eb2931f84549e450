//===- Outputs.cpp - attn-run's results -----------------------------------===//
//
// What comes out of the entry: the shapes of its results (and the work of
// its attention ops) from its inputs, the comparison with the reference
// lowering (--check), the summary printed of each result, and the files of
// --output and --save-inputs, written as one set once everything succeeded.
//
//===----------------------------------------------------------------------===//

#include "AttnRun.h"
#include "ResultShapes.h"

#include "attn-opt/Conversion/Capabilities.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::attn;

namespace attn_run {

/// The sequences (query and key lengths) of a varlen attention op whose
/// lengths or offsets are arguments of `entry`, from the `inputs`; empty
/// when they are not arguments (then the whole buffers count).
static std::vector<std::pair<int64_t, int64_t>>
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

/// The shapes of `entry`'s results from its arguments' (`args`), through
/// the attention ops, and the work of the attention ops at these sizes (of
/// each sequence of a varlen batch).
void inferResults(func::FuncOp entry, const std::vector<Slot> &args,
                  const std::vector<npy::Array> &inputs,
                  std::vector<Slot> &results, double &flops, double &scoreBytes,
                  double &gradientBytes) {
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
  gradientBytes = 0;
  // The work and the scores' bytes of each attention op, for its
  // gradient's.
  llvm::DenseMap<Operation *, double> forwardFlops, forwardScoreBytes;
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
      for (auto [result, operand] :
           llvm::zip(grad.getResults(), grad.getDifferentiatedOperands()))
        if (auto shape = shapeOfValue(operand))
          known[result] = *shape;
      flops += 2.5 * forwardFlops.lookup(fwd);
      // The reference gradient (where neither the fused nor the
      // linear-time gradient applies) holds about four Lq x Lk f32
      // tensors: the scores, the weights, dP and dS.
      FeatureSet features = grad.getFeatures();
      bool fused = !getFusedBackwardCapability().refusal(features);
      bool linear = isa<KernelAttr>(fwd.getNormalizer()) &&
                    !getLinearGradientCapability().refusal(features);
      if (!fused && !linear)
        gradientBytes += 4 * forwardScoreBytes.lookup(fwd);
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
      forwardScoreBytes[op] =
          4.0 * d.batch * d.queryHeads * d.queryLen * d.keyLen;
      scoreBytes += forwardScoreBytes[op];
      return;
    }
    for (auto [lq, lk] : seqs) {
      d.batch = 1;
      d.queryLen = lq;
      d.keyLen = lk;
      forwardScoreBytes[op] += 4.0 * d.queryHeads * lq * lk;
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

/// Result `i`'s file of run `k` (of `numRuns`): --output's name, or with
/// several runs FILE.K.npy.
static std::string outputPath(size_t i, size_t k, size_t numRuns) {
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

} // namespace attn_run
