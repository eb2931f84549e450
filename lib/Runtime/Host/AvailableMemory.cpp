//===- AvailableMemory.cpp - The memory a process may still allocate ------===//
//
// Compiled into the host library and into the kernel libraries' run-time
// support (lib/KernelRuntime): the C library only.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Runtime/Host/AvailableMemory.h"

#include <cstdio>
#include <cstring>

using namespace mlir::attn;

/// The first integer of `path` after `key` on a line that starts with it
/// (the file's first line if `key` is empty); -1 if there is none (the
/// cgroup's "max" reads none).
static int64_t readNumber(const char *path, const char *key) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char line[256];
  int64_t value = -1;
  size_t keyLength = strlen(key);
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, key, keyLength) != 0)
      continue;
    long long v;
    if (sscanf(line + keyLength, "%lld", &v) == 1)
      value = v;
    break;
  }
  fclose(f);
  return value;
}

int64_t mlir::attn::availableMemory(int64_t fallback, MemorySource *source) {
  int64_t available = fallback;
  MemorySource from = MemorySource::Fallback;
  if (int64_t kb = readNumber("/proc/meminfo", "MemAvailable:"); kb >= 0) {
    available = kb * 1024;
    from = MemorySource::MemAvailable;
  }
  int64_t max = readNumber("/sys/fs/cgroup/memory.max", "");
  int64_t current = readNumber("/sys/fs/cgroup/memory.current", "");
  if (max >= 0 && current >= 0) {
    int64_t room = max > current ? max - current : 0;
    if (available < 0 || room < available) {
      available = room;
      from = MemorySource::Cgroup;
    }
  }
  if (source)
    *source = from;
  return available;
}
