//===- MpiLoader.cpp - Open MPICH for sequence-parallel code ------------===//

#include "attn-opt/Runtime/Host/MpiLoader.h"

#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <thread>

using namespace mlir::attn;

namespace {
// MPICH's ABI (mpi.h): handles are ints. The `mpi` dialect's lowering
// assumes the same (MPIImplTraits, "MPICH").
constexpr int kCommWorld = 0x44000000;
constexpr int kInt64 = 0x4c00083a;
constexpr int kDouble = 0x4c00080b;
constexpr int kMin = 0x58000002;
constexpr int kMax = 0x58000001;
constexpr int kSum = 0x58000003;
void *const kStatusIgnore = reinterpret_cast<void *>(1);
} // namespace

std::unique_ptr<MpiLoader> MpiLoader::open(std::string &error) {
  const char *path = std::getenv("ATTN_MPI_LIBRARY");
  if (!path || !*path)
    path = "libmpich.so.12";
  void *handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char *why = dlerror();
    error = std::string("cannot open MPI (") + path +
            "): " + (why ? why : "unknown error") +
            " (install Debian's mpich and libmpich-dev: scripts/deps.sh)";
    return nullptr;
  }
  std::unique_ptr<MpiLoader> mpi(new MpiLoader());
  mpi->handle = handle;
  auto sym = [&](const char *name) {
    void *p = dlsym(handle, name);
    if (!p && error.empty())
      error = std::string("MPI library ") + path + " has no " + name;
    return p;
  };
  auto initFn = reinterpret_cast<int (*)(int *, char ***)>(sym("MPI_Init"));
  auto initializedFn = reinterpret_cast<int (*)(int *)>(sym("MPI_Initialized"));
  auto rankFn = reinterpret_cast<int (*)(int, int *)>(sym("MPI_Comm_rank"));
  auto sizeFn = reinterpret_cast<int (*)(int, int *)>(sym("MPI_Comm_size"));
  mpi->allreduceFn =
      reinterpret_cast<int (*)(const void *, void *, int, int, int, int)>(
          sym("MPI_Allreduce"));
  mpi->barrierFn = reinterpret_cast<int (*)(int)>(sym("MPI_Barrier"));
  mpi->abortFn = reinterpret_cast<int (*)(int, int)>(sym("MPI_Abort"));
  mpi->finalizeFn = reinterpret_cast<int (*)()>(sym("MPI_Finalize"));
  mpi->ibarrierFn = reinterpret_cast<int (*)(int, int *)>(sym("MPI_Ibarrier"));
  mpi->testFn =
      reinterpret_cast<int (*)(int *, int *, void *)>(sym("MPI_Test"));
  if (!error.empty())
    return nullptr;
  int initialized = 0;
  initializedFn(&initialized);
  if (!initialized) {
    if (initFn(nullptr, nullptr) != 0) {
      error = "MPI_Init failed";
      return nullptr;
    }
    mpi->initializedHere = true;
  }
  rankFn(kCommWorld, &mpi->rankValue);
  sizeFn(kCommWorld, &mpi->sizeValue);
  return mpi;
}

MpiLoader::~MpiLoader() {
  if (initializedHere)
    finalizeFn();
}

int64_t MpiLoader::allMin(int64_t value) const {
  int64_t out = value;
  allreduceFn(&value, &out, 1, kInt64, kMin, kCommWorld);
  return out;
}

double MpiLoader::allMax(double value) const {
  double out = value;
  allreduceFn(&value, &out, 1, kDouble, kMax, kCommWorld);
  return out;
}

double MpiLoader::allSum(double value) const {
  double out = value;
  allreduceFn(&value, &out, 1, kDouble, kSum, kCommWorld);
  return out;
}

void MpiLoader::barrier() const { barrierFn(kCommWorld); }

void MpiLoader::endAfterFailure(int code, double graceSeconds) {
  using Clock = std::chrono::steady_clock;
  int request = 0;
  int done = 0;
  if (ibarrierFn(kCommWorld, &request) == 0) {
    auto deadline = Clock::now() + std::chrono::duration<double>(graceSeconds);
    while (!done && Clock::now() < deadline) {
      if (testFn(&request, &done, kStatusIgnore) != 0)
        break;
      if (!done)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  if (done) {
    // Every rank failed and got here: an orderly end.
    if (initializedHere)
      finalizeFn();
    initializedHere = false;
    std::_Exit(code);
  }
  // Another rank is elsewhere (in the ring, waiting for this one): end them
  // all, once this rank's message had time to reach mpiexec.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  abortFn(kCommWorld, code);
  std::_Exit(code);
}
