//===- CudaRuntime.h - attn-opt's CUDA runtime library ----------*- C++ -*-===//
//
// libAttnCudaRuntime.so implements the `mgpu*` functions that MLIR's host
// GPU lowering calls (module load, kernel launch, streams, events, memory),
// over the CUDA driver API opened with dlopen("libcuda.so.1"). It builds and
// loads on machines without CUDA; calling into it there prints
//   attn-opt CUDA runtime: cannot load the CUDA driver (libcuda.so.1): ...
// and exits. Use it with any MLIR runner:
//   mlir-runner --shared-libs=<build>/lib/libAttnCudaRuntime.so ...
//
// These extra entry points let a tool check for a device first and hand
// kernels managed (host-and-device) buffers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDA_CUDARUNTIME_H
#define ATTN_RUNTIME_CUDA_CUDARUNTIME_H

#include <cstdint>

extern "C" {
/// 1 when a device can be used, with its name and compute capability in
/// `message`; 0 with the reason otherwise. Never exits.
int attnCudaProbe(char *message, int64_t size);
/// The device's compute capability; false without a device.
bool attnCudaCapability(int *major, int *minor);
/// Managed memory of `sizeBytes` (accessible from host and device).
void *attnCudaAllocManaged(int64_t sizeBytes);
void attnCudaFree(void *ptr);
/// Waits for all work on the device.
void attnCudaSynchronize();
}

#endif // ATTN_RUNTIME_CUDA_CUDARUNTIME_H
