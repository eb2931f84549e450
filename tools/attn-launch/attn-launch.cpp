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
// Deliberately free of LLVM: its own small .npy reader and writer.
//
//===----------------------------------------------------------------------===//

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
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "attn-launch: error: %s\n", message.c_str());
  std::exit(1);
}

enum class DType { F32, F16, BF16, I32, I64 };

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
    int w = type == DType::F16 || type == DType::BF16 ? 2
            : type == DType::I64                      ? 8
                                                      : 4;
    return elements() * w;
  }
};

DType parseType(const std::string &s) {
  if (s == "f32")
    return DType::F32;
  if (s == "f16")
    return DType::F16;
  if (s == "bf16")
    return DType::BF16;
  if (s == "i32")
    return DType::I32;
  if (s == "i64")
    return DType::I64;
  fail("unknown element type '" + s + "' (f32, f16, bf16, i32, i64)");
}

const char *npyDescr(DType t) {
  switch (t) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<u2"; // bf16 bits, as attn-run writes them
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  }
  return "";
}

/// "bf16:1x16x4096x128".
Tensor parseTensor(const std::string &s) {
  size_t colon = s.find(':');
  if (colon == std::string::npos)
    fail("expected TYPE:SHAPE, got '" + s + "'");
  Tensor t{parseType(s.substr(0, colon)), {}};
  std::stringstream dims(s.substr(colon + 1));
  std::string d;
  while (std::getline(dims, d, 'x'))
    t.shape.push_back(std::stoll(d));
  return t;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 31, man = h & 1023;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31)
    v = man ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(man | 1024), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

uint16_t floatToHalf(float f) {
  // Round to nearest even through the float's bits.
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 255) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (((x >> 23) & 255) == 255)
    return sign | 0x7c00 | (man ? 0x200 : 0);
  if (exp >= 31)
    return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10)
      return sign;
    man |= 0x800000;
    uint32_t shift = 14 - exp;
    uint32_t h = man >> shift;
    uint32_t rest = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (h & 1)))
      ++h;
    return sign | h;
  }
  uint32_t h = sign | (exp << 10) | (man >> 13);
  uint32_t rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h;
  return h;
}

float bf16ToFloat(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f))
    return 0x7fc0;
  x += 0x7fff + ((x >> 16) & 1);
  return x >> 16;
}

double load(const Tensor &t, const void *data, int64_t i) {
  switch (t.type) {
  case DType::F32:
    return static_cast<const float *>(data)[i];
  case DType::F16:
    return halfToFloat(static_cast<const uint16_t *>(data)[i]);
  case DType::BF16:
    return bf16ToFloat(static_cast<const uint16_t *>(data)[i]);
  case DType::I32:
    return static_cast<const int32_t *>(data)[i];
  case DType::I64:
    return static_cast<double>(static_cast<const int64_t *>(data)[i]);
  }
  return 0;
}

void store(const Tensor &t, void *data, int64_t i, double v) {
  switch (t.type) {
  case DType::F32:
    static_cast<float *>(data)[i] = static_cast<float>(v);
    break;
  case DType::F16:
    static_cast<uint16_t *>(data)[i] = floatToHalf(static_cast<float>(v));
    break;
  case DType::BF16:
    static_cast<uint16_t *>(data)[i] = floatToBf16(static_cast<float>(v));
    break;
  case DType::I32:
    static_cast<int32_t *>(data)[i] = static_cast<int32_t>(v);
    break;
  case DType::I64:
    static_cast<int64_t *>(data)[i] = static_cast<int64_t>(v);
    break;
  }
}

/// Reads a C-order .npy of `expected`'s type and shape into `data`.
void readNpy(const std::string &path, const Tensor &expected, void *data) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail("cannot open " + path);
  char magic[8];
  in.read(magic, 8);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    fail(path + ": not a .npy file");
  uint32_t headerLen = 0;
  if (magic[6] == 1) {
    uint16_t n;
    in.read(reinterpret_cast<char *>(&n), 2);
    headerLen = n;
  } else {
    in.read(reinterpret_cast<char *>(&headerLen), 4);
  }
  std::string header(headerLen, ' ');
  in.read(header.data(), headerLen);
  if (!in)
    fail(path + ": truncated header");
  std::string descr = npyDescr(expected.type);
  if (header.find("'" + descr + "'") == std::string::npos)
    fail(path + ": expected dtype " + descr + ", header " + header);
  if (header.find("'fortran_order': True") != std::string::npos)
    fail(path + ": Fortran order unsupported");
  std::string shape = "(";
  for (size_t i = 0; i < expected.shape.size(); ++i)
    shape += std::to_string(expected.shape[i]) +
             (expected.shape.size() == 1 ? "," : i + 1 < expected.shape.size() ? ", " : "");
  shape += ")";
  if (header.find(shape) == std::string::npos)
    fail(path + ": expected shape " + shape + ", header " + header);
  in.read(static_cast<char *>(data), expected.bytes());
  if (in.gcount() != expected.bytes())
    fail(path + ": truncated data");
}

void writeNpy(const std::string &path, const Tensor &t, const void *data) {
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i)
    shape += std::to_string(t.shape[i]) +
             (t.shape.size() == 1 ? "," : i + 1 < t.shape.size() ? ", " : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + npyDescr(t.type) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t n = header.size();
  out.write(reinterpret_cast<const char *>(&n), 2);
  out.write(header.data(), header.size());
  out.write(static_cast<const char *>(data), t.bytes());
  if (!out)
    fail("cannot write " + path);
}

/// A rank-R memref descriptor over `data`.
std::vector<int64_t> descriptor(void *data, const std::vector<int64_t> &shape) {
  int64_t rank = shape.size();
  std::vector<int64_t> d(3 + 2 * rank);
  d[0] = d[1] = reinterpret_cast<int64_t>(data);
  d[2] = 0;
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    d[3 + i] = shape[i];
    d[3 + rank + i] = stride;
    stride *= shape[i];
  }
  return d;
}

template <typename T>
T symbol(void *lib, const char *name, const std::string &from) {
  void *p = dlsym(lib, name);
  if (!p)
    fail(from + " has no symbol " + name);
  return reinterpret_cast<T>(p);
}

} // namespace

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
  void *(*allocManaged)(int64_t) = +[](int64_t n) { return std::malloc(n); };
  void (*freeManaged)(void *) = +[](void *p) { std::free(p); };
  void (*synchronize)() = +[] {};
  if (!host) {
    void *rt = dlopen(runtime.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!rt)
      fail(std::string("cannot load ") + runtime + ": " + dlerror());
    auto probe =
        symbol<int (*)(char *, int64_t)>(rt, "attnCudaProbe", runtime);
    char message[512];
    if (!probe(message, sizeof(message)))
      fail(message);
    allocManaged =
        symbol<void *(*)(int64_t)>(rt, "attnCudaAllocManaged", runtime);
    freeManaged = symbol<void (*)(void *)>(rt, "attnCudaFree", runtime);
    synchronize = symbol<void (*)()>(rt, "attnCudaSynchronize", runtime);
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
      std::string name = i < names.size() ? names[i] : "arg" + std::to_string(i);
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

  std::vector<std::vector<int64_t>> descs;
  for (size_t i = 0; i < args.size(); ++i)
    descs.push_back(descriptor(buffers[i], args[i].shape));
  descs.push_back(descriptor(out, res.shape));
  std::vector<void *> p;
  for (auto &d : descs)
    p.push_back(d.data());
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
    double median = ms.size() % 2 ? ms[ms.size() / 2]
                                  : 0.5 * (ms[ms.size() / 2 - 1] +
                                           ms[ms.size() / 2]);
    std::printf("bench: median_ms=%.3f min_ms=%.3f max_ms=%.3f gflops=%.3f\n",
                median, ms.front(), ms.back(),
                median > 0 ? flops / (median * 1e6) : 0.0);
  }
  for (void *b : buffers)
    freeManaged(b);
  return status;
}
