//===- CudaRuntime.cpp - The mgpu* functions over a dlopen'ed libcuda -----===//
//
// MLIR's host-side GPU lowering (gpu-to-llvm and the gpu.binary offloading
// translation) emits calls to `mgpu*` functions. Debian does not ship MLIR's
// CUDA runtime wrappers, so this library implements them over the CUDA
// driver API. libcuda is opened with dlopen on first use: the library (and
// every tool that links it) builds and starts on machines without a GPU or a
// driver, and fails with a clear message only when GPU code actually runs.
//
// No CUDA header is needed: the few driver types and enumerators used are
// declared here with the values of cuda.h (CUDA 12/13 ABI).
//
// Memory: `gpu.alloc host_shared` (the form attn-lower-to-nvvm-pipeline uses
// for every host buffer) is managed memory (cuMemAllocManaged), readable and
// writable from the host and from kernels.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Runtime/CUDA/CudaRuntime.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;

constexpr int kStreamNonBlocking = 0x1;
constexpr int kEventDisableTiming = 0x2;
constexpr unsigned kMemAttachGlobal = 0x1;
constexpr int kAttrComputeMajor = 75;
constexpr int kAttrComputeMinor = 76;
constexpr int kFuncAttrMaxDynamicShared = 8;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;
constexpr int kJitOptimizationLevel = 7;
constexpr int kDefaultStaticSharedLimit = 48 * 1024;

/// The driver entry points used, resolved from libcuda.so.1.
struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*driverGetVersion)(int *);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxPushCurrent)(CUcontext);
  CUresult (*ctxPopCurrent)(CUcontext *);
  CUresult (*ctxSynchronize)();
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                               void **);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*funcSetAttribute)(CUfunction, int, int);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  CUresult (*launchKernelEx)(const void *config, CUfunction, void **, void **);
  CUresult (*streamCreate)(CUstream *, unsigned);
  CUresult (*streamDestroy)(CUstream);
  CUresult (*streamSynchronize)(CUstream);
  CUresult (*streamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventDestroy)(CUevent);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventSynchronize)(CUevent);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memGetInfo)(size_t *, size_t *);
  CUresult (*memcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*memsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*memsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*memHostRegister)(void *, size_t, unsigned);
  CUresult (*memHostUnregister)(void *);
  CUresult (*getErrorName)(CUresult, const char **);
  CUresult (*tensorMapEncodeTiled)(void *, int, unsigned, void *,
                                   const uint64_t *, const uint64_t *,
                                   const unsigned *, const unsigned *, int, int,
                                   int, int);
};

struct State {
  Driver d{};
  CUcontext context = nullptr;
  std::string error; // empty when the driver and a device are usable
  std::string deviceName;
  int major = 0, minor = 0;
};

int32_t defaultDevice = 0;
bool initialized = false; // the driver was opened (on defaultDevice)

template <typename Fn>
bool resolve(void *lib, const char *name, Fn &fn, std::string &error) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn && error.empty())
    error = std::string("libcuda.so.1 has no symbol ") + name;
  return fn != nullptr;
}

std::string resultName(const Driver &d, CUresult r) {
  const char *name = nullptr;
  if (d.getErrorName)
    d.getErrorName(r, &name);
  return name ? name : "CUDA error " + std::to_string(r);
}

State &state() {
  static State s;
  static std::once_flag once;
  std::call_once(once, [] {
    initialized = true;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
      s.error = "cannot load the CUDA driver (libcuda.so.1): no NVIDIA driver "
                "is installed on this machine";
      return;
    }
    Driver &d = s.d;
    std::string &e = s.error;
    resolve(lib, "cuInit", d.init, e);
    resolve(lib, "cuDriverGetVersion", d.driverGetVersion, e);
    resolve(lib, "cuDeviceGetCount", d.deviceGetCount, e);
    resolve(lib, "cuDeviceGet", d.deviceGet, e);
    resolve(lib, "cuDeviceGetName", d.deviceGetName, e);
    resolve(lib, "cuDeviceGetAttribute", d.deviceGetAttribute, e);
    resolve(lib, "cuDevicePrimaryCtxRetain", d.primaryCtxRetain, e);
    resolve(lib, "cuCtxPushCurrent_v2", d.ctxPushCurrent, e);
    resolve(lib, "cuCtxPopCurrent_v2", d.ctxPopCurrent, e);
    resolve(lib, "cuCtxSynchronize", d.ctxSynchronize, e);
    resolve(lib, "cuModuleLoadData", d.moduleLoadData, e);
    resolve(lib, "cuModuleLoadDataEx", d.moduleLoadDataEx, e);
    resolve(lib, "cuModuleUnload", d.moduleUnload, e);
    resolve(lib, "cuModuleGetFunction", d.moduleGetFunction, e);
    resolve(lib, "cuFuncSetAttribute", d.funcSetAttribute, e);
    resolve(lib, "cuLaunchKernel", d.launchKernel, e);
    resolve(lib, "cuStreamCreate", d.streamCreate, e);
    // Only needed by cluster launches (sm_90+).
    d.launchKernelEx = reinterpret_cast<decltype(d.launchKernelEx)>(
        dlsym(lib, "cuLaunchKernelEx"));
    resolve(lib, "cuStreamDestroy_v2", d.streamDestroy, e);
    resolve(lib, "cuStreamSynchronize", d.streamSynchronize, e);
    resolve(lib, "cuStreamWaitEvent", d.streamWaitEvent, e);
    resolve(lib, "cuEventCreate", d.eventCreate, e);
    resolve(lib, "cuEventDestroy_v2", d.eventDestroy, e);
    resolve(lib, "cuEventRecord", d.eventRecord, e);
    resolve(lib, "cuEventSynchronize", d.eventSynchronize, e);
    resolve(lib, "cuMemAlloc_v2", d.memAlloc, e);
    resolve(lib, "cuMemAllocManaged", d.memAllocManaged, e);
    resolve(lib, "cuMemFree_v2", d.memFree, e);
    resolve(lib, "cuMemGetInfo_v2", d.memGetInfo, e);
    resolve(lib, "cuMemcpyAsync", d.memcpyAsync, e);
    resolve(lib, "cuMemsetD32Async", d.memsetD32Async, e);
    resolve(lib, "cuMemsetD16Async", d.memsetD16Async, e);
    resolve(lib, "cuMemHostRegister_v2", d.memHostRegister, e);
    resolve(lib, "cuMemHostUnregister", d.memHostUnregister, e);
    resolve(lib, "cuGetErrorName", d.getErrorName, e);
    // Only needed by TMA kernels (CUDA 12+ drivers have it).
    d.tensorMapEncodeTiled = reinterpret_cast<decltype(d.tensorMapEncodeTiled)>(
        dlsym(lib, "cuTensorMapEncodeTiled"));
    if (!e.empty())
      return;
    if (CUresult r = d.init(0)) {
      e = "cuInit failed: " + resultName(d, r) +
          " (no usable NVIDIA GPU or driver)";
      return;
    }
    int count = 0;
    if (CUresult r = d.deviceGetCount(&count)) {
      e = "cuDeviceGetCount failed: " + resultName(d, r);
      return;
    }
    if (defaultDevice < 0 || defaultDevice >= count) {
      e = "no CUDA device " + std::to_string(defaultDevice) + " (" +
          std::to_string(count) + " present)";
      return;
    }
    CUdevice device;
    if (CUresult r = d.deviceGet(&device, defaultDevice)) {
      e = "cuDeviceGet failed: " + resultName(d, r);
      return;
    }
    char name[256] = {0};
    d.deviceGetName(name, sizeof(name) - 1, device);
    s.deviceName = name;
    d.deviceGetAttribute(&s.major, kAttrComputeMajor, device);
    d.deviceGetAttribute(&s.minor, kAttrComputeMinor, device);
    if (CUresult r = d.primaryCtxRetain(&s.context, device))
      e = "cuDevicePrimaryCtxRetain failed: " + resultName(d, r);
  });
  return s;
}

/// The driver, or a fatal error: generated code cannot continue without it.
State &ready() {
  State &s = state();
  if (!s.error.empty()) {
    std::fprintf(stderr, "attn-opt CUDA runtime: %s\n", s.error.c_str());
    std::exit(1);
  }
  return s;
}

void check(CUresult r, const char *what) {
  if (!r)
    return;
  std::fprintf(stderr, "attn-opt CUDA runtime: %s failed: %s\n", what,
               resultName(state().d, r).c_str());
  std::exit(1);
}

/// Makes the primary context current for the scope of a call.
class ScopedContext {
public:
  ScopedContext() : s(ready()) {
    check(s.d.ctxPushCurrent(s.context), "cuCtxPushCurrent");
  }
  ~ScopedContext() { s.d.ctxPopCurrent(nullptr); }
  const Driver &d() const { return s.d; }

private:
  State &s;
};

/// cuMemAlloc's and cuMemAllocManaged's result when the device has no room.
constexpr CUresult kErrorOutOfMemory = 2;

/// Managed memory beyond what the device has free can hang the GPU (pages
/// thrash between host and device): allocations above half of it are
/// refused (0, as when the device is out of memory).
CUdeviceptr allocManaged(const ScopedContext &ctx, size_t size) {
  size_t free = 0, total = 0;
  check(ctx.d().memGetInfo(&free, &total), "cuMemGetInfo");
  if (size > free / 2)
    return 0;
  CUdeviceptr ptr = 0;
  CUresult r = ctx.d().memAllocManaged(&ptr, size, kMemAttachGlobal);
  if (r == kErrorOutOfMemory)
    return 0;
  check(r, "cuMemAllocManaged");
  return ptr;
}

/// A rank-R memref descriptor: allocated, aligned, offset, sizes, strides.
struct Descriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[];
};

} // namespace

//===----------------------------------------------------------------------===//
// Entry points for tools (attn-run)
//===----------------------------------------------------------------------===//

extern "C" int attnCudaProbe(char *message, int64_t size) {
  State &s = state();
  std::string text = s.error.empty()
                         ? s.deviceName + " (sm_" + std::to_string(s.major) +
                               std::to_string(s.minor) + ")"
                         : s.error;
  if (message && size > 0) {
    std::strncpy(message, text.c_str(), size - 1);
    message[size - 1] = 0;
  }
  return s.error.empty() ? 1 : 0;
}

extern "C" bool attnCudaCapability(int *major, int *minor) {
  State &s = state();
  if (!s.error.empty())
    return false;
  *major = s.major;
  *minor = s.minor;
  return true;
}

/// The hosts' (attn-run's, attn-launch's) buffers: a failure ends the
/// process with a message (the generated code's own allocations report
/// through attn_opt_runtime_error instead: mgpuMemAlloc).
extern "C" void *attnCudaAllocManaged(int64_t sizeBytes) {
  ScopedContext ctx;
  size_t size = sizeBytes > 0 ? sizeBytes : 1;
  CUdeviceptr ptr = allocManaged(ctx, size);
  if (!ptr) {
    std::fprintf(stderr,
                 "attn-opt CUDA runtime: no room for a managed buffer of "
                 "%zu MiB (allocations above half of the device's free "
                 "memory are refused)\n",
                 size >> 20);
    std::exit(1);
  }
  return reinterpret_cast<void *>(ptr);
}

extern "C" void attnCudaFree(void *ptr) {
  if (!ptr)
    return;
  ScopedContext ctx;
  check(ctx.d().memFree(reinterpret_cast<CUdeviceptr>(ptr)), "cuMemFree");
}

extern "C" void attnCudaSynchronize() {
  ScopedContext ctx;
  check(ctx.d().ctxSynchronize(), "cuCtxSynchronize");
}

//===----------------------------------------------------------------------===//
// The mgpu* functions of MLIR 22's host lowering
//===----------------------------------------------------------------------===//

extern "C" void *mgpuModuleLoad(void *data, int64_t /*size*/) {
  ScopedContext ctx;
  CUmodule module = nullptr;
  check(ctx.d().moduleLoadData(&module, data), "cuModuleLoadData");
  return module;
}

extern "C" void *mgpuModuleLoadJIT(void *data, int optLevel) {
  ScopedContext ctx;
  CUmodule module = nullptr;
  char log[8192] = {0};
  int options[] = {kJitOptimizationLevel, kJitErrorLogBuffer,
                   kJitErrorLogBufferSize};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel)),
                    log, reinterpret_cast<void *>(sizeof(log))};
  CUresult r = ctx.d().moduleLoadDataEx(&module, data, 3, options, values);
  if (r) {
    std::fprintf(stderr, "attn-opt CUDA runtime: PTX JIT failed: %s\n%s\n",
                 resultName(ctx.d(), r).c_str(), log);
    std::exit(1);
  }
  return module;
}

extern "C" void mgpuModuleUnload(void *module) {
  State &s = state();
  if (s.error.empty() && module)
    s.d.moduleUnload(module);
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  ScopedContext ctx;
  CUfunction fn = nullptr;
  check(ctx.d().moduleGetFunction(&fn, module, name), "cuModuleGetFunction");
  return fn;
}

/// Launches with more than 48 KiB of dynamic shared memory must opt in.
static void allowDynamicShared(const ScopedContext &ctx, void *function,
                               int32_t smem) {
  if (smem > kDefaultStaticSharedLimit)
    check(ctx.d().funcSetAttribute(function, kFuncAttrMaxDynamicShared, smem),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t /*paramsCount*/) {
  ScopedContext ctx;
  allowDynamicShared(ctx, function, smem);
  check(ctx.d().launchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                             blockZ, smem, stream, params, extra),
        "cuLaunchKernel");
}

/// cuda.h's CUlaunchAttribute and CUlaunchConfig.
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } clusterDim;
  } value;
};
struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream stream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};
constexpr int kLaunchAttributeClusterDimension = 4;

extern "C" void
mgpuLaunchClusterKernel(void *function, intptr_t clusterX, intptr_t clusterY,
                        intptr_t clusterZ, intptr_t gridX, intptr_t gridY,
                        intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                        intptr_t blockZ, int32_t smem, void *stream,
                        void **params, void **extra, size_t /*paramsCount*/) {
  ScopedContext ctx;
  if (!ctx.d().launchKernelEx) {
    std::fprintf(stderr, "attn-opt CUDA runtime: the driver has no "
                         "cuLaunchKernelEx (clusters need CUDA 12+)\n");
    std::exit(1);
  }
  allowDynamicShared(ctx, function, smem);
  LaunchAttribute cluster{};
  cluster.id = kLaunchAttributeClusterDimension;
  cluster.value.clusterDim = {static_cast<unsigned>(clusterX),
                              static_cast<unsigned>(clusterY),
                              static_cast<unsigned>(clusterZ)};
  LaunchConfig config{static_cast<unsigned>(gridX),
                      static_cast<unsigned>(gridY),
                      static_cast<unsigned>(gridZ),
                      static_cast<unsigned>(blockX),
                      static_cast<unsigned>(blockY),
                      static_cast<unsigned>(blockZ),
                      static_cast<unsigned>(smem),
                      stream,
                      &cluster,
                      1};
  check(ctx.d().launchKernelEx(&config, function, params, extra),
        "cuLaunchKernelEx");
}

extern "C" void *mgpuStreamCreate() {
  ScopedContext ctx;
  CUstream stream = nullptr;
  check(ctx.d().streamCreate(&stream, kStreamNonBlocking), "cuStreamCreate");
  return stream;
}

extern "C" void mgpuStreamDestroy(void *stream) {
  check(ready().d.streamDestroy(stream), "cuStreamDestroy");
}

extern "C" void mgpuStreamSynchronize(void *stream) {
  check(ready().d.streamSynchronize(stream),
        "cuStreamSynchronize (a kernel failed)");
}

extern "C" void mgpuStreamWaitEvent(void *stream, void *event) {
  check(ready().d.streamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
}

extern "C" void *mgpuEventCreate() {
  ScopedContext ctx;
  CUevent event = nullptr;
  check(ctx.d().eventCreate(&event, kEventDisableTiming), "cuEventCreate");
  return event;
}

extern "C" void mgpuEventDestroy(void *event) {
  check(ready().d.eventDestroy(event), "cuEventDestroy");
}

extern "C" void mgpuEventSynchronize(void *event) {
  check(ready().d.eventSynchronize(event), "cuEventSynchronize");
}

extern "C" void mgpuEventRecord(void *event, void *stream) {
  check(ready().d.eventRecord(event, stream), "cuEventRecord");
}

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                              uint8_t isHostShared) {
  ScopedContext ctx;
  CUdeviceptr ptr = 0;
  size_t size = sizeBytes ? sizeBytes : 1;
  // NULL when the device has no room: the generated code checks it
  // (attn-check-allocations) and reports OutOfMemory through
  // attn_opt_runtime_error instead of launching kernels.
  if (isHostShared) {
    ptr = allocManaged(ctx, size);
  } else {
    CUresult r = ctx.d().memAlloc(&ptr, size);
    if (r == kErrorOutOfMemory)
      return nullptr;
    check(r, "cuMemAlloc");
  }
  return reinterpret_cast<void *>(ptr);
}

extern "C" void mgpuMemFree(void *ptr, void * /*stream*/) {
  if (!ptr)
    return;
  ScopedContext ctx;
  // Frees are ordered after all work of the context, as with gpu.dealloc.
  check(ctx.d().ctxSynchronize(), "cuCtxSynchronize");
  check(ctx.d().memFree(reinterpret_cast<CUdeviceptr>(ptr)), "cuMemFree");
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void *stream) {
  ScopedContext ctx;
  check(ctx.d().memcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                            reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                            stream),
        "cuMemcpyAsync");
}

extern "C" void mgpuMemset32(void *dst, unsigned value, size_t count,
                             void *stream) {
  ScopedContext ctx;
  check(ctx.d().memsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                               stream),
        "cuMemsetD32Async");
}

extern "C" void mgpuMemset16(void *dst, unsigned short value, size_t count,
                             void *stream) {
  ScopedContext ctx;
  check(ctx.d().memsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                               stream),
        "cuMemsetD16Async");
}

/// Bytes spanned by a dense descriptor of `rank`.
static uint64_t denseBytes(int64_t rank, Descriptor *desc,
                           int64_t elementSize) {
  uint64_t elements = 1;
  for (int64_t i = 0; i < rank; ++i)
    elements *= desc->sizesAndStrides[i];
  return elements * elementSize;
}

extern "C" void mgpuMemHostRegisterMemRef(int64_t rank, Descriptor *desc,
                                          int64_t elementSize) {
  ScopedContext ctx;
  check(ctx.d().memHostRegister(desc->aligned + desc->offset * elementSize,
                                denseBytes(rank, desc, elementSize), 0),
        "cuMemHostRegister");
}

extern "C" void mgpuMemHostUnregisterMemRef(int64_t /*rank*/, Descriptor *desc,
                                            int64_t elementSize) {
  ScopedContext ctx;
  check(ctx.d().memHostUnregister(desc->aligned + desc->offset * elementSize),
        "cuMemHostUnregister");
}

/// Chooses the device; only effective before the first other mgpu* call
/// (the runtime keeps one context, on the device chosen then).
extern "C" void mgpuSetDefaultDevice(int32_t device) {
  static bool warned = false;
  if (initialized && device != defaultDevice && !warned) {
    warned = true;
    std::fprintf(stderr,
                 "attn-opt CUDA runtime: mgpuSetDefaultDevice(%d) after "
                 "initialization on device %d has no effect\n",
                 device, defaultDevice);
    return;
  }
  defaultDevice = device;
}

/// A TMA descriptor for a dense memref, copied to device memory (the form
/// nvgpu.tma.create.descriptor's lowering passes to kernels).
extern "C" void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, Descriptor *desc, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *boxDims) {
  ScopedContext ctx;
  if (!ctx.d().tensorMapEncodeTiled) {
    std::fprintf(stderr, "attn-opt CUDA runtime: the driver has no "
                         "cuTensorMapEncodeTiled (TMA needs CUDA 12+)\n");
    std::exit(1);
  }
  if (rank < 1 || rank > 5) {
    std::fprintf(stderr, "attn-opt CUDA runtime: TMA rank %lld unsupported\n",
                 static_cast<long long>(rank));
    std::exit(1);
  }
  // Element sizes by CUtensorMapDataType.
  static const int kElementBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  int64_t elementSize =
      dataType >= 0 && dataType < 13 ? kElementBytes[dataType] : 4;
  alignas(64) unsigned char map[128] = {0};
  uint64_t dims[5], strides[5];
  unsigned box[5], elementStrides[5];
  // The driver takes the innermost dimension first.
  for (int64_t i = 0; i < rank; ++i) {
    dims[i] = desc->sizesAndStrides[rank - 1 - i];
    strides[i] = desc->sizesAndStrides[rank + rank - 1 - i] * elementSize;
    box[i] = boxDims[rank - 1 - i];
    elementStrides[i] = 1;
  }
  check(ctx.d().tensorMapEncodeTiled(
            map, static_cast<int>(dataType), static_cast<unsigned>(rank),
            desc->aligned + desc->offset * elementSize, dims, strides + 1, box,
            elementStrides, static_cast<int>(interleave),
            static_cast<int>(swizzle), static_cast<int>(l2Promotion),
            static_cast<int>(oobFill)),
        "cuTensorMapEncodeTiled");
  CUdeviceptr dmap = 0;
  check(ctx.d().memAlloc(&dmap, sizeof(map)), "cuMemAlloc");
  check(ctx.d().memcpyAsync(dmap, reinterpret_cast<CUdeviceptr>(map),
                            sizeof(map), nullptr),
        "cuMemcpyAsync");
  check(ctx.d().ctxSynchronize(), "cuCtxSynchronize");
  return reinterpret_cast<void *>(dmap);
}
