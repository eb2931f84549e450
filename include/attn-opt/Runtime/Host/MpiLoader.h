//===- MpiLoader.h - Open MPICH for sequence-parallel code ------*- C++ -*-===//
//
// Sequence-parallel attention (attn-partition-sequence) calls MPI from the
// generated code (the `mpi` dialect's MPICH lowering). The tools do not
// link MPI: they open libmpich with dlopen (its symbols global, so that the
// generated code binds to them) only when a module is sharded, initialize
// it and ask for the rank, the number of ranks and a few collectives. Part
// of the LLVM-free host library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOST_MPILOADER_H
#define ATTN_RUNTIME_HOST_MPILOADER_H

#include <cstdint>
#include <memory>
#include <string>

namespace mlir::attn {

class MpiLoader {
public:
  /// Opens MPICH (libmpich.so.12, or $ATTN_MPI_LIBRARY) and calls
  /// MPI_Init unless the process already did. Returns null and sets
  /// `error` when the library or an entry point is missing or MPI_Init
  /// fails.
  static std::unique_ptr<MpiLoader> open(std::string &error);
  ~MpiLoader();

  int rank() const { return rankValue; }
  int size() const { return sizeValue; }
  /// The minimum of `value` over every rank of MPI_COMM_WORLD.
  int64_t allMin(int64_t value) const;
  /// The maximum of `value` over every rank.
  double allMax(double value) const;
  /// The sum of `value` over every rank.
  double allSum(double value) const;
  void barrier() const;
  /// Ends this rank after a failure, and every rank with it. When every
  /// rank fails alike (a run-time check all ranks make identically) they
  /// meet in a barrier within `graceSeconds`, finalize and exit with `code`:
  /// an orderly end, so mpiexec forwards every rank's message. Otherwise
  /// (the others are busy or waiting for this one) MPI_Abort ends them all,
  /// after a short pause that lets the message reach mpiexec first. Never
  /// waits longer than `graceSeconds`.
  [[noreturn]] void endAfterFailure(int code, double graceSeconds = 2.0);

private:
  MpiLoader() = default;
  void *handle = nullptr;
  bool initializedHere = false;
  int rankValue = 0, sizeValue = 1;
  int (*allreduceFn)(const void *, void *, int, int, int, int) = nullptr;
  int (*barrierFn)(int) = nullptr;
  int (*abortFn)(int, int) = nullptr;
  int (*ibarrierFn)(int, int *) = nullptr;
  int (*testFn)(int *, int *, void *) = nullptr;
  int (*finalizeFn)() = nullptr;
};

} // namespace mlir::attn

#endif // ATTN_RUNTIME_HOST_MPILOADER_H
