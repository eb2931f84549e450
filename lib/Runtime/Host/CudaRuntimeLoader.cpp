//===- CudaRuntimeLoader.cpp - Open libAttnCudaRuntime.so -----------------===//

#include "attn-opt/Runtime/Host/CudaRuntimeLoader.h"

#include <dlfcn.h>

#include <type_traits>

using namespace mlir::attn;

std::unique_ptr<CudaRuntimeLoader>
CudaRuntimeLoader::open(const std::string &path, std::string &error) {
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    const char *why = dlerror();
    error = "cannot load " + path + ": " + (why ? why : "unknown error");
    return nullptr;
  }
  std::unique_ptr<CudaRuntimeLoader> rt(new CudaRuntimeLoader());
  auto bind = [&](auto &fn, const char *name) {
    void *p = dlsym(lib, name);
    if (!p && error.empty())
      error = path + " has no " + name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  bind(rt->probeFn, "attnCudaProbe");
  bind(rt->capabilityFn, "attnCudaCapability");
  bind(rt->allocFn, "attnCudaAllocManaged");
  bind(rt->freeFn, "attnCudaFree");
  bind(rt->synchronizeFn, "attnCudaSynchronize");
  if (!error.empty())
    return nullptr;
  return rt;
}

bool CudaRuntimeLoader::probe(std::string &message) const {
  char text[512] = {0};
  int ok = probeFn(text, sizeof(text));
  message = text;
  return ok != 0;
}

bool CudaRuntimeLoader::capability(int &major, int &minor) const {
  return capabilityFn(&major, &minor);
}
