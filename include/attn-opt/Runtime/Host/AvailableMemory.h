//===- AvailableMemory.h - The memory a process may allocate ---*- C++ -*-===//
//
// What attn-run checks a run against before allocating (docs/attn-run.md,
// --max-memory) and what a kernel library checks a large buffer against
// (lib/KernelRuntime, PREFIX_set_max_memory): MemAvailable, and at most what
// the memory cgroup (v2) leaves. Part of the LLVM-free host library and of
// the kernel libraries' run-time support, so it uses only the C library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOST_AVAILABLEMEMORY_H
#define ATTN_RUNTIME_HOST_AVAILABLEMEMORY_H

#include <cstdint>

namespace mlir::attn {

/// What bounded availableMemory's answer.
enum class MemorySource { Fallback, MemAvailable, Cgroup };

/// The bytes this process may still allocate: MemAvailable from
/// /proc/meminfo (else `fallback`), at most what the cgroup's memory.max
/// leaves above memory.current. A negative `fallback` means unknown: it
/// stays negative when neither file can be read. `source`, if given, says
/// which bound the answer.
int64_t availableMemory(int64_t fallback, MemorySource *source = nullptr);

} // namespace mlir::attn

#endif // ATTN_RUNTIME_HOST_AVAILABLEMEMORY_H
