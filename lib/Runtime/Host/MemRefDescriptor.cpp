//===- MemRefDescriptor.cpp - Memref descriptors over host data -----------===//

#include "attn-opt/Runtime/Host/MemRefDescriptor.h"

using namespace mlir::attn;

MemRefDescriptor::MemRefDescriptor(void *data,
                                   const std::vector<int64_t> &shape) {
  int64_t rank = shape.size();
  storage.assign(3 + 2 * rank, 0);
  auto ptr = reinterpret_cast<int64_t>(data);
  storage[0] = ptr;
  storage[1] = ptr;
  storage[2] = 0;
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    storage[3 + d] = shape[d];
    storage[3 + rank + d] = stride;
    stride *= shape[d];
  }
}
