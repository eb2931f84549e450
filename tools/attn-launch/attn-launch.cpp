//===- attn-launch.cpp - Run an ahead-of-time compiled attn function ------===//
//
// attn-launch CASE.so --entry NAME --arg TYPE:SHAPE... --result TYPE:SHAPE
//
// Runs a function compiled ahead of time by attn-lower-to-nvvm-pipeline
// (then mlir-translate and clang -shared; see scripts/gpu-check.sh
// --bundle) on an NVIDIA GPU, on a machine with no LLVM or MLIR: it needs
// only libAttnCudaRuntime.so and the driver. Inputs come from .npy files
// (--inputs DIR: arg0.npy, arg1.npy, ... or the source names) or seeded
// random data (as attn-run --random-inputs); --expect compares the result
// with a .npy (e.g. attn-run's CPU reference), --bench times calls.
//
// Deliberately free of LLVM: it links only the LLVM-free host library
// (.npy files, memref descriptors, the CUDA runtime loader, the run-time
// error messages). It defines and exports attn_opt_runtime_error (and
// attn_opt_runtime_failed), which the code of modules with dynamic sizes
// or varlen operands calls when a run-time size breaks the op's contract:
// attn-launch then fails with the message and writes no output.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Runtime/Host/CudaRuntimeLoader.h"
#include "attn-opt/Runtime/Host/MemRefDescriptor.h"
#include "attn-opt/Runtime/Host/Npy.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"
#include "attn-opt/Support/Random.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "attn-launch: error: %s\n", message.c_str());
  std::exit(1);
}

using mlir::attn::npy::DType;

/// The first error the generated code reported during a call.
mlir::attn::FirstRuntimeError runtimeError;

/// Fails with the generated code's run-time error, if it reported one.
void failOnRuntimeError() {
  if (std::optional<std::string> message = runtimeError.message())
    fail("the generated code reported a run-time error: " + *message);
}

struct Tensor {
  DType type;
  std::vector<int64_t> shape;
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t bytes() const {
    return elements() * mlir::attn::npy::byteWidth(type);
  }
};

/// "bf16:1x16x4096x128".
Tensor parseTensor(const std::string &s) {
  size_t colon = s.find(':');
  if (colon == std::string::npos)
    fail("expected TYPE:SHAPE, got '" + s + "'");
  std::optional<DType> type = mlir::attn::npy::parseDType(s.substr(0, colon));
  if (!type)
    fail("unknown element type '" + s.substr(0, colon) +
         "' (f32, f16, bf16, i32, i64)");
  Tensor t{*type, {}};
  std::stringstream dims(s.substr(colon + 1));
  std::string d;
  while (std::getline(dims, d, 'x'))
    t.shape.push_back(std::stoll(d));
  return t;
}

double load(const Tensor &t, const void *data, int64_t i) {
  return mlir::attn::npy::loadElement(t.type, data, i);
}

void store(const Tensor &t, void *data, int64_t i, double v) {
  mlir::attn::npy::storeElement(t.type, data, i, v);
}

/// Reads a .npy of `expected`'s type and shape into `data`.
void readNpy(const std::string &path, const Tensor &expected, void *data) {
  std::string error;
  std::optional<mlir::attn::npy::Array> a = mlir::attn::npy::read(path, error);
  if (!a)
    fail(error);
  if (a->type != expected.type || a->shape != expected.shape) {
    mlir::attn::npy::Array want{expected.type, expected.shape, {}};
    fail(path + ": holds " + a->describe() + ", expected " + want.describe());
  }
  std::memcpy(data, a->data.data(), a->data.size());
}

void writeNpy(const std::string &path, const Tensor &t, const void *data) {
  const auto *bytes = static_cast<const uint8_t *>(data);
  mlir::attn::npy::Array a{t.type, t.shape,
                           std::vector<uint8_t>(bytes, bytes + t.bytes())};
  std::string error;
  if (!mlir::attn::npy::write(path, a, error))
    fail(error);
}

template <typename T>
T symbol(void *lib, const char *name, const std::string &from) {
  void *p = dlsym(lib, name);
  if (!p)
    fail(from + " has no symbol " + name);
  return reinterpret_cast<T>(p);
}

} // namespace

/// The hook of the generated code (attn-opt/Runtime/Host/RuntimeErrors.h),
/// exported so that the dlopen'ed code finds it.
extern "C" void attn_opt_runtime_error(int32_t code, int64_t a, int64_t b,
                                       int64_t c) {
  runtimeError.record(code, a, b, c);
}

/// Whether the running call reported an error (kRuntimeFailedFunction),
/// exported with the hook.
extern "C" int32_t attn_opt_runtime_failed() { return runtimeError.failed(); }

namespace {

/// What the command line decides: the library and its entry, the
/// arguments' and result's types and shapes, where inputs come from, the
/// check, the output and the bench.
struct LaunchPlan {
  std::string lib, entry, runtime, inputs, expect, output;
  std::vector<Tensor> args, results;
  std::vector<std::string> names;
  double rtol = 2e-2, atol = 2e-2, flops = 0;
  uint64_t seed = 0;
  int bench = 0, segmentsEqual = 0;
  bool host = false;
};

/// Reads the options into `plan`. Returns false when --help printed the
/// usage (nothing more to do); fails on a bad option.
bool parseOptions(int argc, char **argv, LaunchPlan &plan) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--entry")
      plan.entry = value();
    else if (a == "--arg")
      plan.args.push_back(parseTensor(value()));
    else if (a == "--result")
      plan.results.push_back(parseTensor(value()));
    else if (a == "--runtime")
      plan.runtime = value();
    else if (a == "--inputs")
      plan.inputs = value();
    else if (a == "--names") {
      std::stringstream ss(value());
      std::string n;
      while (std::getline(ss, n, ','))
        plan.names.push_back(n);
    } else if (a == "--expect")
      plan.expect = value();
    else if (a == "--output")
      plan.output = value();
    else if (a == "--rtol")
      plan.rtol = std::stod(value());
    else if (a == "--atol")
      plan.atol = std::stod(value());
    else if (a == "--flops")
      plan.flops = std::stod(value());
    else if (a == "--seed")
      plan.seed = std::stoull(value());
    else if (a == "--bench")
      plan.bench = std::stoi(value());
    else if (a == "--segments-equal")
      plan.segmentsEqual = std::stoi(value());
    else if (a == "--host")
      plan.host = true;
    else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: attn-launch CASE.so --entry NAME --arg TYPE:SHAPE... "
          "--result TYPE:SHAPE [--runtime libAttnCudaRuntime.so] [--inputs "
          "DIR [--names a,b,...]] [--seed S] [--segments-equal K] [--expect "
          "FILE.npy --rtol R --atol A] [--output FILE.npy] [--bench N "
          "--flops F] [--host]\n");
      return false;
    } else if (!a.empty() && a[0] != '-' && plan.lib.empty())
      plan.lib = a;
    else
      fail("unknown option " + a);
  }
  return true;
}

/// Checks what the options must give and defaults the runtime to
/// ../lib/libAttnCudaRuntime.so next to `argv0`.
void completePlan(const char *argv0, LaunchPlan &plan) {
  if (plan.lib.empty() || plan.entry.empty() || plan.results.size() != 1)
    fail("need CASE.so, --entry and one --result (see --help)");
  if (plan.args.size() + plan.results.size() > 8)
    fail("at most 7 arguments");
  if (plan.runtime.empty()) {
    std::string self = argv0;
    size_t slash = self.rfind('/');
    plan.runtime = (slash == std::string::npos ? std::string(".")
                                               : self.substr(0, slash)) +
                   "/../lib/libAttnCudaRuntime.so";
  }
}

/// Where the buffers live and how a call completes: the managed memory of
/// libAttnCudaRuntime.so, or with --host (CPU code, e.g. compiled with
/// attn-lower-to-nvvm-pipeline's emulate option, to test this tool) plain
/// host memory.
struct Memory {
  std::unique_ptr<mlir::attn::CudaRuntimeLoader> rt; ///< null with --host

  void *allocManaged(int64_t n) const {
    return rt ? rt->allocManaged(n) : std::malloc(n);
  }
  void freeManaged(void *p) const {
    if (rt)
      rt->free(p);
    else
      std::free(p);
  }
  void synchronize() const {
    if (rt)
      rt->synchronize();
  }
};

/// Opens the runtime (unless --host), failing when there is no device.
Memory openRuntime(const LaunchPlan &plan) {
  Memory memory;
  if (!plan.host) {
    std::string error, message;
    memory.rt = mlir::attn::CudaRuntimeLoader::open(plan.runtime, error);
    if (!memory.rt)
      fail(error);
    if (!memory.rt->probe(message))
      fail(message);
  }
  return memory;
}

/// Loads the case's library and returns its entry's C interface.
void *loadEntry(const LaunchPlan &plan) {
  void *code = dlopen(plan.lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!code)
    fail(std::string("cannot load ") + plan.lib + ": " + dlerror());
  return symbol<void *>(code, ("_mlir_ciface_" + plan.entry).c_str(), plan.lib);
}

/// Fills argument `i` at `p`: from --inputs DIR, else seeded random data
/// (sorted segment ids for integers, standard normal floats).
void fillArgument(const LaunchPlan &plan, size_t i, void *p) {
  const Tensor &t = plan.args[i];
  if (!plan.inputs.empty()) {
    std::string name =
        i < plan.names.size() ? plan.names[i] : "arg" + std::to_string(i);
    readNpy(plan.inputs + "/" + name + ".npy", t, p);
    return;
  }
  int64_t n = t.elements();
  if (t.type == DType::I32 || t.type == DType::I64) {
    int64_t row = t.shape.empty() ? 1 : t.shape.back();
    mlir::attn::SplitMix64 rng(mlir::attn::deriveSeed(plan.seed, i));
    for (int64_t s = 0; s < n; s += row) {
      std::vector<int64_t> ids(row);
      for (int64_t j = 0; j < row; ++j)
        ids[j] = plan.segmentsEqual > 0 ? j * plan.segmentsEqual / row
                                        : static_cast<int64_t>(rng.below(4));
      std::sort(ids.begin(), ids.end());
      for (int64_t j = 0; j < row; ++j)
        store(t, p, s + j, static_cast<double>(ids[j]));
    }
    return;
  }
  mlir::attn::SplitMix64 rng(mlir::attn::deriveSeed(plan.seed, i));
  for (int64_t j = 0; j < n; ++j)
    store(t, p, j, rng.normal());
}

/// The buffers of the arguments (filled) and, last, of the result: managed,
/// so the host fills and reads them.
std::vector<void *> allocateBuffers(const LaunchPlan &plan,
                                    const Memory &memory) {
  std::vector<void *> buffers;
  for (size_t i = 0; i < plan.args.size(); ++i) {
    void *p = memory.allocManaged(plan.args[i].bytes());
    buffers.push_back(p);
    fillArgument(plan, i, p);
  }
  const Tensor &res = plan.results[0];
  void *out = memory.allocManaged(res.bytes());
  buffers.push_back(out);
  return buffers;
}

/// A call of the entry `fn` on `p`, the addresses of its buffers'
/// descriptors (which must outlive the call).
std::function<void()> bindCall(void *fn, const std::vector<void *> &p) {
  using V = void *;
  std::function<void()> call;
  switch (p.size()) {
  case 2:
    call = [=] { reinterpret_cast<void (*)(V, V)>(fn)(p[0], p[1]); };
    break;
  case 3:
    call = [=] { reinterpret_cast<void (*)(V, V, V)>(fn)(p[0], p[1], p[2]); };
    break;
  case 4:
    call = [=] {
      reinterpret_cast<void (*)(V, V, V, V)>(fn)(p[0], p[1], p[2], p[3]);
    };
    break;
  case 5:
    call = [=] {
      reinterpret_cast<void (*)(V, V, V, V, V)>(fn)(p[0], p[1], p[2], p[3],
                                                    p[4]);
    };
    break;
  case 6:
    call = [=] {
      reinterpret_cast<void (*)(V, V, V, V, V, V)>(fn)(p[0], p[1], p[2], p[3],
                                                       p[4], p[5]);
    };
    break;
  case 7:
    call = [=] {
      reinterpret_cast<void (*)(V, V, V, V, V, V, V)>(fn)(
          p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
    };
    break;
  default:
    call = [=] {
      reinterpret_cast<void (*)(V, V, V, V, V, V, V, V)>(fn)(
          p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    };
  }
  return call;
}

/// --expect: compares the result at `out` with the .npy and prints the
/// errors. Returns the exit status: 1 if any element is out of tolerance.
int checkExpected(const LaunchPlan &plan, const void *out) {
  const Tensor &res = plan.results[0];
  double rtol = plan.rtol, atol = plan.atol;
  std::vector<char> ref(res.bytes());
  readNpy(plan.expect, res, ref.data());
  double maxAbs = 0, maxRef = 0;
  int64_t bad = 0, n = res.elements();
  for (int64_t i = 0; i < n; ++i) {
    double o = load(res, out, i), r = load(res, ref.data(), i);
    double err = std::isnan(o) != std::isnan(r) ? INFINITY
                 : std::isnan(o)                ? 0
                                                : std::fabs(o - r);
    maxAbs = std::max(maxAbs, err);
    maxRef = std::max(maxRef, std::fabs(r));
    if (!(err <= atol + rtol * std::fabs(r)))
      ++bad;
  }
  std::printf("check: max_abs_err=%.3e max_rel_err=%.3e (rtol=%.1e "
              "atol=%.1e) %s\n",
              maxAbs, maxRef > 0 ? maxAbs / maxRef : maxAbs, rtol, atol,
              bad ? "FAILED" : "ok");
  if (bad) {
    std::printf("  %lld of %lld elements out of tolerance\n",
                static_cast<long long>(bad), static_cast<long long>(n));
    return 1;
  }
  return 0;
}

/// --bench: times `plan.bench` calls and prints their median, minimum,
/// maximum and the rate of --flops.
void benchCalls(const LaunchPlan &plan, const std::function<void()> &call,
                const Memory &memory) {
  std::vector<double> ms;
  for (int r = 0; r < plan.bench; ++r) {
    auto start = std::chrono::steady_clock::now();
    call();
    memory.synchronize();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  double median = ms.size() % 2
                      ? ms[ms.size() / 2]
                      : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  std::printf("bench: median_ms=%.3f min_ms=%.3f max_ms=%.3f gflops=%.3f\n",
              median, ms.front(), ms.back(),
              median > 0 ? plan.flops / (median * 1e6) : 0.0);
}

} // namespace

int main(int argc, char **argv) {
  LaunchPlan plan;
  if (!parseOptions(argc, argv, plan))
    return 0;
  completePlan(argv[0], plan);

  // The runtime first, global: the case's mgpu* calls bind to it.
  Memory memory = openRuntime(plan);
  void *fn = loadEntry(plan);

  std::vector<void *> buffers = allocateBuffers(plan, memory);
  const Tensor &res = plan.results[0];
  void *out = buffers.back();
  std::vector<mlir::attn::MemRefDescriptor> descs;
  for (size_t i = 0; i < plan.args.size(); ++i)
    descs.emplace_back(buffers[i], plan.args[i].shape);
  descs.emplace_back(out, res.shape);
  std::vector<void *> p;
  for (auto &d : descs)
    p.push_back(d.get());
  std::function<void()> call = bindCall(fn, p);

  call();
  memory.synchronize();
  failOnRuntimeError();
  int status = 0;
  if (!plan.expect.empty())
    status = checkExpected(plan, out);
  if (!plan.output.empty())
    writeNpy(plan.output, res, out);
  if (plan.bench > 0)
    benchCalls(plan, call, memory);
  for (void *b : buffers)
    memory.freeManaged(b);
  return status;
}
