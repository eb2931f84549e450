//===- CudaRuntimeLoader.h - Open libAttnCudaRuntime.so ---------*- C++ -*-===//
//
// The one way the tools reach a GPU: libAttnCudaRuntime.so (the mgpu*
// functions and the attnCuda* entry points of Runtime/CudaRuntime.h),
// opened with dlopen. attn-run (JIT-compiled code) and attn-launch
// (ahead-of-time code) both use it. Part of the LLVM-free host library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOST_CUDARUNTIMELOADER_H
#define ATTN_RUNTIME_HOST_CUDARUNTIMELOADER_H

#include <cstdint>
#include <memory>
#include <string>

namespace mlir::attn {

class CudaRuntimeLoader {
public:
  /// Opens the runtime at `path` with its symbols global, so that the mgpu*
  /// calls of code loaded afterwards bind to it. Returns null and sets
  /// `error` when the library or one of its entry points is missing.
  static std::unique_ptr<CudaRuntimeLoader> open(const std::string &path,
                                                 std::string &error);

  /// True when a device can be used; `message` names it (or says why not).
  bool probe(std::string &message) const;
  /// The device's compute capability; false without a device.
  bool capability(int &major, int &minor) const;
  /// Managed (host and device) memory, and its release.
  void *allocManaged(int64_t bytes) const { return allocFn(bytes); }
  void free(void *ptr) const { freeFn(ptr); }
  /// Waits for all work on the device.
  void synchronize() const { synchronizeFn(); }

private:
  CudaRuntimeLoader() = default;
  int (*probeFn)(char *, int64_t) = nullptr;
  bool (*capabilityFn)(int *, int *) = nullptr;
  void *(*allocFn)(int64_t) = nullptr;
  void (*freeFn)(void *) = nullptr;
  void (*synchronizeFn)() = nullptr;
};

} // namespace mlir::attn

#endif // ATTN_RUNTIME_HOST_CUDARUNTIMELOADER_H
