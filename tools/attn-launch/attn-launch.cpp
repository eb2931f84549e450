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

#include "attn-opt/Host/CudaRuntimeLoader.h"
#include "attn-opt/Host/MemRefDescriptor.h"
#include "attn-opt/Host/Npy.h"
#include "attn-opt/Host/RuntimeErrors.h"
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

/// The hook of the generated code (attn-opt/Host/RuntimeErrors.h),
/// exported so that the dlopen'ed code finds it.
extern "C" void attn_opt_runtime_error(int32_t code, int64_t a, int64_t b,
                                       int64_t c) {
  runtimeError.record(code, a, b, c);
}

/// Whether the running call reported an error (kRuntimeFailedFunction),
/// exported with the hook.
extern "C" int32_t attn_opt_runtime_failed() { return runtimeError.failed(); }

int main(int argc, char **argv) {
  std::string lib, entry, runtime, inputs, expect, output;
  std::vector<Tensor> args, results;
  std::vector<std::string> names;
  double rtol = 2e-2, atol = 2e-2, flops = 0;
  uint64_t seed = 0;
  int bench = 0, segmentsEqual = 0;
  bool host = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--entry")
      entry = value();
    else if (a == "--arg")
      args.push_back(parseTensor(value()));
    else if (a == "--result")
      results.push_back(parseTensor(value()));
    else if (a == "--runtime")
      runtime = value();
    else if (a == "--inputs")
      inputs = value();
    else if (a == "--names") {
      std::stringstream ss(value());
      std::string n;
      while (std::getline(ss, n, ','))
        names.push_back(n);
    } else if (a == "--expect")
      expect = value();
    else if (a == "--output")
      output = value();
    else if (a == "--rtol")
      rtol = std::stod(value());
    else if (a == "--atol")
      atol = std::stod(value());
    else if (a == "--flops")
      flops = std::stod(value());
    else if (a == "--seed")
      seed = std::stoull(value());
    else if (a == "--bench")
      bench = std::stoi(value());
    else if (a == "--segments-equal")
      segmentsEqual = std::stoi(value());
    else if (a == "--host")
      host = true;
    else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: attn-launch CASE.so --entry NAME --arg TYPE:SHAPE... "
          "--result TYPE:SHAPE [--runtime libAttnCudaRuntime.so] [--inputs "
          "DIR [--names a,b,...]] [--seed S] [--segments-equal K] [--expect "
          "FILE.npy --rtol R --atol A] [--output FILE.npy] [--bench N "
          "--flops F] [--host]\n");
      return 0;
    } else if (!a.empty() && a[0] != '-' && lib.empty())
      lib = a;
    else
      fail("unknown option " + a);
  }
  if (lib.empty() || entry.empty() || results.size() != 1)
    fail("need CASE.so, --entry and one --result (see --help)");
  if (args.size() + results.size() > 8)
    fail("at most 7 arguments");
  if (runtime.empty()) {
    std::string self = argv[0];
    size_t slash = self.rfind('/');
    runtime = (slash == std::string::npos ? std::string(".")
                                          : self.substr(0, slash)) +
              "/../lib/libAttnCudaRuntime.so";
  }

  // The runtime first, global: the case's mgpu* calls bind to it. --host
  // runs CPU code (e.g. compiled with attn-lower-to-nvvm-pipeline's
  // emulate option, to test this tool) with plain host memory.
  std::function<void *(int64_t)> allocManaged = [](int64_t n) {
    return std::malloc(n);
  };
  std::function<void(void *)> freeManaged = [](void *p) { std::free(p); };
  std::function<void()> synchronize = [] {};
  std::unique_ptr<mlir::attn::CudaRuntimeLoader> rt;
  if (!host) {
    std::string error, message;
    rt = mlir::attn::CudaRuntimeLoader::open(runtime, error);
    if (!rt)
      fail(error);
    if (!rt->probe(message))
      fail(message);
    allocManaged = [&](int64_t n) { return rt->allocManaged(n); };
    freeManaged = [&](void *p) { rt->free(p); };
    synchronize = [&] { rt->synchronize(); };
  }
  void *code = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!code)
    fail(std::string("cannot load ") + lib + ": " + dlerror());
  void *fn = symbol<void *>(code, ("_mlir_ciface_" + entry).c_str(), lib);

  // Buffers: managed, so the host fills and reads them.
  std::vector<void *> buffers;
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor &t = args[i];
    void *p = allocManaged(t.bytes());
    buffers.push_back(p);
    if (!inputs.empty()) {
      std::string name =
          i < names.size() ? names[i] : "arg" + std::to_string(i);
      readNpy(inputs + "/" + name + ".npy", t, p);
      continue;
    }
    int64_t n = t.elements();
    if (t.type == DType::I32 || t.type == DType::I64) {
      int64_t row = t.shape.empty() ? 1 : t.shape.back();
      mlir::attn::SplitMix64 rng(mlir::attn::deriveSeed(seed, i));
      for (int64_t s = 0; s < n; s += row) {
        std::vector<int64_t> ids(row);
        for (int64_t j = 0; j < row; ++j)
          ids[j] = segmentsEqual > 0 ? j * segmentsEqual / row
                                     : static_cast<int64_t>(rng.below(4));
        std::sort(ids.begin(), ids.end());
        for (int64_t j = 0; j < row; ++j)
          store(t, p, s + j, static_cast<double>(ids[j]));
      }
      continue;
    }
    mlir::attn::SplitMix64 rng(mlir::attn::deriveSeed(seed, i));
    for (int64_t j = 0; j < n; ++j)
      store(t, p, j, rng.normal());
  }
  const Tensor &res = results[0];
  void *out = allocManaged(res.bytes());
  buffers.push_back(out);

  std::vector<mlir::attn::MemRefDescriptor> descs;
  for (size_t i = 0; i < args.size(); ++i)
    descs.emplace_back(buffers[i], args[i].shape);
  descs.emplace_back(out, res.shape);
  std::vector<void *> p;
  for (auto &d : descs)
    p.push_back(d.get());
  using V = void *;
  std::function<void()> call;
  switch (p.size()) {
  case 2:
    call = [&] { reinterpret_cast<void (*)(V, V)>(fn)(p[0], p[1]); };
    break;
  case 3:
    call = [&] { reinterpret_cast<void (*)(V, V, V)>(fn)(p[0], p[1], p[2]); };
    break;
  case 4:
    call = [&] {
      reinterpret_cast<void (*)(V, V, V, V)>(fn)(p[0], p[1], p[2], p[3]);
    };
    break;
  case 5:
    call = [&] {
      reinterpret_cast<void (*)(V, V, V, V, V)>(fn)(p[0], p[1], p[2], p[3],
                                                    p[4]);
    };
    break;
  case 6:
    call = [&] {
      reinterpret_cast<void (*)(V, V, V, V, V, V)>(fn)(p[0], p[1], p[2], p[3],
                                                       p[4], p[5]);
    };
    break;
  case 7:
    call = [&] {
      reinterpret_cast<void (*)(V, V, V, V, V, V, V)>(fn)(
          p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
    };
    break;
  default:
    call = [&] {
      reinterpret_cast<void (*)(V, V, V, V, V, V, V, V)>(fn)(
          p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    };
  }

  call();
  synchronize();
  failOnRuntimeError();
  int status = 0;
  if (!expect.empty()) {
    std::vector<char> ref(res.bytes());
    readNpy(expect, res, ref.data());
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
      status = 1;
    }
  }
  if (!output.empty())
    writeNpy(output, res, out);
  if (bench > 0) {
    std::vector<double> ms;
    for (int r = 0; r < bench; ++r) {
      auto start = std::chrono::steady_clock::now();
      call();
      synchronize();
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
                median > 0 ? flops / (median * 1e6) : 0.0);
  }
  for (void *b : buffers)
    freeManaged(b);
  return status;
}
