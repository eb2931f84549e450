//===- MemRefDescriptor.h - Memref descriptors over host data ---*- C++ -*-===//
//
// The ranked memref descriptor that MLIR's C interface
// (`_mlir_ciface_*`, `llvm.emit_c_interface`) passes by pointer:
// `{allocated, aligned, offset, sizes[R], strides[R]}`, here over
// caller-owned, contiguous (row-major) data. Part of the LLVM-free host
// library: the JIT runner and the runner of ahead-of-time code both call
// compiled functions through it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOST_MEMREFDESCRIPTOR_H
#define ATTN_RUNTIME_HOST_MEMREFDESCRIPTOR_H

#include <cstdint>
#include <vector>

namespace mlir::attn {

class MemRefDescriptor {
public:
  MemRefDescriptor(void *data, const std::vector<int64_t> &shape);
  /// The descriptor's address, as the C interface takes it.
  void *get() { return storage.data(); }

private:
  std::vector<int64_t> storage;
};

} // namespace mlir::attn

#endif // ATTN_RUNTIME_HOST_MEMREFDESCRIPTOR_H
