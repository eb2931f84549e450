//===- HostTarget.cpp - The target model of the host CPU ------------------===//

#include "attn-opt/Runtime/JIT/HostTarget.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir::attn;

TargetModel mlir::attn::hostTargetModel() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](llvm::StringRef f) {
    auto it = features.find(f);
    return it != features.end() && it->second;
  };
  int64_t lanes = has("avx512f") ? 16 : has("avx2") || has("avx") ? 8 : 4;
  TargetModel model = *TargetModel::get(lanes);
  // The JIT compiles for the host's features, AVX512_BF16 included; bf16
  // dot products where they pay on this CPU.
  model.bf16Dot = TargetModel::bf16DotFor(llvm::sys::getHostCPUName().str(),
                                          lanes == 16 && has("avx512bf16"));
  return model;
}
