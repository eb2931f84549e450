//===- Inputs.cpp - attn-run's inputs -------------------------------------===//
//
// What goes into the entry: the element types and shapes of its arguments,
// the .npy files of --input, the shapes of --shape, the seeded random data
// of --random-inputs (varlen lengths and offsets, masks, segment ids), the
// cotangents of --grad, the chunks of the sequence each rank holds, and the
// memory a run needs before any of it is allocated.
//
//===----------------------------------------------------------------------===//

#include "AttnRun.h"

#include "attn-opt/Runtime/Host/AvailableMemory.h"
#include "attn-opt/Support/Random.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::attn;

namespace attn_run {

/// True if `shape` conforms to `type`: same rank, equal static sizes.
static bool conforms(ArrayRef<int64_t> shape, RankedTensorType type) {
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

/// Random lengths in [0, rows] or random offsets splitting `rows` rows.
static npy::Array randomVarlen(const Slot &slot, const VarlenRole &role,
                               int64_t rows, uint64_t seedValue,
                               int64_t index) {
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

static npy::Array randomArray(const Slot &slot, uint64_t seedValue,
                              int64_t index, bool isMask = false) {
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

/// --grad: the cotangents d_output and d_lse default to the shapes of the
/// attention's output (B x Hq x Lq x Dv) and log-sum-exp (B x Hq x Lq).
void defaultCotangentShapes(const RunPlan &plan, Run &run) {
  if (plan.dOutputArg < 0)
    return;
  auto shapeOf = [&](Value v) -> std::optional<std::vector<int64_t>> {
    // (A sharded operand: the argument's whole-sequence shape.)
    if (auto s = v.getDefiningOp<shard::ShardOp>())
      v = s.getSrc();
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
static std::pair<double, std::string> availableMemoryAndSource() {
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
static double arrayBytes(const std::vector<int64_t> &shape, npy::DType dtype) {
  double bytes = npy::byteWidth(dtype);
  for (int64_t d : shape)
    bytes *= static_cast<double>(d);
  return bytes;
}

/// Fails, naming the bytes, when run `k` needs more than the limit.
static void checkMemory(size_t k, double needed, llvm::StringRef what) {
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

/// Fails when run `k` needs more memory than the limit for its inputs
/// (given, or of its arguments' shapes), `results` (twice with --check)
/// and, with the reference lowering, `scoreBytes` of scores.
void checkRunMemory(const RunPlan &plan, size_t k, const Run &run,
                    const std::vector<Slot> &results, double scoreBytes,
                    double gradientBytes) {
  bool reference = referenceOnly || check;
  double bytes = 0;
  for (size_t i = 0; i < run.args.size(); ++i)
    bytes += plan.values[i] ? plan.values[i]->data.size()
                            : arrayBytes(*run.args[i].shape, run.args[i].dtype);
  for (const Slot &r : results)
    bytes += (check ? 2 : 1) * arrayBytes(*r.shape, r.dtype);
  if (reference)
    bytes += scoreBytes;
  bytes += gradientBytes;
  std::string what = reference ? "inputs, outputs and the reference "
                                 "lowering's scores"
                               : "inputs and outputs";
  if (gradientBytes > 0)
    what += " (with the reference gradient's Lq x Lk tensors)";
  checkMemory(k, bytes, what);
}

} // namespace attn_run
