//===- KernelRuntime.cpp - Run-time support of attn-compile's libraries ---===//
//
// Compiled to LLVM bitcode at build time (kernel-runtime.bc) and linked by
// attn-compile into every kernel library it makes, then internalized: a
// library exports only its own entries and the functions below with the
// library's prefix (`__attn_rt_api_NAME` becomes `PREFIX_NAME`). It must
// need nothing but the C library and the OpenMP runtime, so it uses no C++
// library facility (no exceptions, no RTTI, no std::).
//
// State: the status and message of the call running on each thread (TLS,
// so concurrent calls from several threads do not interfere), and the
// thread count set for the library.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Runtime/Host/AvailableMemory.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace mlir::attn;

extern "C" {
// The OpenMP runtime (libomp); declared here to need no omp.h.
void omp_set_num_threads(int);
int omp_get_max_threads(void);
}

namespace {
/// What a call on this thread reports.
struct CallState {
  const char *function;
  int32_t status;
  /// The thread count this thread's OpenMP ICV was last set to by an entry
  /// (0: never set), and the ICV's value before that.
  int32_t appliedThreads;
  int32_t defaultThreads;
  char message[512];
};
thread_local CallState state;

/// The thread count of the library (0: OpenMP's default).
int32_t numThreads = 0;

/// The MPI communicator this thread's calls of sequence-parallel entries
/// use, as the integer the `mpi` dialect's lowering holds a handle in (0:
/// MPI_COMM_WORLD).
thread_local int64_t communicator = 0;

/// Status codes of the C ABI (docs/Library.md).
constexpr int32_t kShapeError = 1;
constexpr int32_t kValueError = 2;
constexpr int32_t kMemoryError = 3;
} // namespace

extern "C" {

/// Called by the generated code once per failed run-time check; the first
/// error of a call is kept.
void attn_opt_runtime_error(int32_t code, int64_t a, int64_t b, int64_t c) {
  if (state.status != 0)
    return;
  state.status = isShapeError(code)    ? kShapeError
                 : isMemoryError(code) ? kMemoryError
                                       : kValueError;
  int n = snprintf(state.message, sizeof(state.message),
                   "%s: ", state.function ? state.function : "attn-opt");
  if (n < 0 || n >= static_cast<int>(sizeof(state.message)))
    n = 0;
  formatRuntimeError(state.message + n, sizeof(state.message) - n, code, a, b,
                     c);
}

/// Whether the running call has reported an error (generated code asks
/// after calling a function of its module that checks allocations).
int32_t attn_opt_runtime_failed(void) { return state.status != 0; }

/// Starts a call of the entry `function` (its C name) on this thread.
void __attn_rt_begin(const char *function) {
  state.function = function;
  state.status = 0;
  state.message[0] = '\0';
  int32_t n = __atomic_load_n(&numThreads, __ATOMIC_RELAXED);
  if (n == state.appliedThreads)
    return;
  if (state.appliedThreads == 0)
    state.defaultThreads = omp_get_max_threads();
  omp_set_num_threads(n > 0 ? n : state.defaultThreads);
  state.appliedThreads = n > 0 ? n : 0;
}

/// Ends the call: its status (0: success).
int32_t __attn_rt_end(void) { return state.status; }

/// The message of the calling thread's last call ("" if it succeeded).
const char *__attn_rt_api_last_error(void) { return state.message; }

/// The OpenMP threads every later call of this library uses (0 or
/// negative: OpenMP's default, OMP_NUM_THREADS or the cores).
void __attn_rt_api_set_num_threads(int32_t n) {
  __atomic_store_n(&numThreads, n > 0 ? n : 0, __ATOMIC_RELAXED);
}

/// The MPI communicator of this thread's later calls of sequence-parallel
/// entries: an MPI_Comm as an integer (MPICH: the int handle; Open MPI: the
/// pointer), 0 for MPI_COMM_WORLD.
void __attn_rt_api_set_communicator(int64_t comm) { communicator = comm; }

/// Read by the generated code of sequence-parallel entries (the
/// communicator of attn-lower-communication).
int64_t attn_opt_communicator(void) { return communicator; }

/// The thread count a call starting now on this thread would use.
int32_t __attn_rt_api_num_threads(void) {
  int32_t n = __atomic_load_n(&numThreads, __ATOMIC_RELAXED);
  if (n > 0)
    return n;
  return state.appliedThreads == 0 ? omp_get_max_threads()
                                   : state.defaultThreads;
}

//===----------------------------------------------------------------------===//
// The generated code's heap buffers: attn-compile points its malloc and free
// at these, which keep the bytes the library holds, refuse a buffer beyond
// the limit of PREFIX_set_max_memory, and (without a limit) a large buffer
// the system does not have available: an overcommitting kernel would grant
// it and kill the process later. A refused buffer is a NULL the generated
// code checks (attn-check-allocations): the call fails with
// ATTN_OPT_ERROR_MEMORY and this message.
//===----------------------------------------------------------------------===//

namespace {
/// What precedes each buffer: its size, and its place in the list of the
/// buffers its thread holds (newest first, so sequence numbers descend).
/// The generated code frees a buffer on the thread that allocated it (a
/// parallel iteration's buffers live in the iteration; the others on the
/// calling thread), so the lists need no lock.
struct Header {
  Header *prev, *next;
  /// The bytes it counts towards heldBytes (0 for a small buffer).
  int64_t size;
  uint64_t sequence;
};
/// Bytes before each buffer (64 keeps any alignment malloc gives).
constexpr size_t kHeader = 64;
static_assert(sizeof(Header) <= kHeader, "the header fits");
thread_local Header *newestBuffer = nullptr;
thread_local uint64_t allocations = 0;
/// Without a limit, buffers from this size on are checked against the
/// memory available.
constexpr int64_t kAskSystemFrom = int64_t(64) << 20;
/// Buffers from this size on count towards the bytes held. The kernels'
/// scratch tiles (a few kB, allocated per tile in parallel loops) do not:
/// a counter shared by every thread, touched for each tile, would cost
/// more than the tile.
constexpr int64_t kCountFrom = int64_t(64) << 10;
/// The limit (0: none) and the bytes held, over all calls.
int64_t maxMemory = 0;
int64_t heldBytes = 0;

} // namespace

extern "C" {
void *__attn_rt_malloc(size_t size) {
  int64_t n = static_cast<int64_t>(size);
  int64_t limit = __atomic_load_n(&maxMemory, __ATOMIC_RELAXED);
  if (n < 0 || n > INT64_MAX - static_cast<int64_t>(kHeader))
    return nullptr;
  int64_t counted = n >= kCountFrom ? n : 0;
  int64_t before =
      counted ? __atomic_fetch_add(&heldBytes, counted, __ATOMIC_RELAXED) : 0;
  auto refuse = [&]() -> void * {
    if (counted)
      __atomic_fetch_sub(&heldBytes, counted, __ATOMIC_RELAXED);
    return nullptr;
  };
  if (limit > 0 && counted && (before > limit || n > limit - before)) {
    attn_opt_runtime_error(static_cast<int32_t>(RuntimeError::MemoryLimit), n,
                           limit, before);
    return refuse();
  }
  if (limit == 0 && n >= kAskSystemFrom) {
    int64_t available = availableMemory(/*fallback=*/-1);
    if (available >= 0 && n > available) {
      attn_opt_runtime_error(static_cast<int32_t>(RuntimeError::OutOfMemory), n,
                             available, 0);
      return refuse();
    }
  }
  auto *h = static_cast<Header *>(malloc(size + kHeader));
  if (!h)
    return refuse();
  h->size = counted;
  h->sequence = ++allocations;
  h->prev = nullptr;
  h->next = newestBuffer;
  if (newestBuffer)
    newestBuffer->prev = h;
  newestBuffer = h;
  return reinterpret_cast<char *>(h) + kHeader;
}

void __attn_rt_free(void *buffer) {
  if (!buffer)
    return;
  auto *h = reinterpret_cast<Header *>(static_cast<char *>(buffer) - kHeader);
  if (h->prev)
    h->prev->next = h->next;
  else if (newestBuffer == h)
    newestBuffer = h->next;
  if (h->next)
    h->next->prev = h->prev;
  if (h->size)
    __atomic_fetch_sub(&heldBytes, h->size, __ATOMIC_RELAXED);
  free(h);
}

/// A mark of the buffers this thread holds (attn-check-allocations'
/// release-on-error takes one on entry)...
uint64_t __attn_rt_mark(void) { return allocations; }

/// ... and frees those allocated on this thread since, after a failed
/// allocation: an error leaks nothing.
void __attn_rt_release(uint64_t mark) {
  while (newestBuffer && newestBuffer->sequence > mark)
    __attn_rt_free(reinterpret_cast<char *>(newestBuffer) + kHeader);
}

/// The most bytes the generated code of the library may hold at once in
/// its own buffers of 64 kB or more, over all calls (0 or negative: no
/// limit, but a buffer of 64 MiB or more must fit in the memory
/// available).
void __attn_rt_api_set_max_memory(int64_t bytes) {
  __atomic_store_n(&maxMemory, bytes > 0 ? bytes : 0, __ATOMIC_RELAXED);
}
} // extern "C"

//===----------------------------------------------------------------------===//
// memrefCopy: MLIR's memref.copy lowering calls it for buffers whose layout
// is not the identity (the JIT gets it from libmlir_c_runner_utils).
//===----------------------------------------------------------------------===//

struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

/// The fields of a ranked descriptor: two pointers, the offset, then
/// `rank` sizes and `rank` strides.
struct MemRefFields {
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
};

static MemRefFields fieldsOf(const UnrankedMemRef &m) {
  auto *d = static_cast<char *>(m.descriptor);
  MemRefFields f;
  std::memcpy(&f.aligned, d + sizeof(void *), sizeof(void *));
  std::memcpy(&f.offset, d + 2 * sizeof(void *), sizeof(int64_t));
  f.sizes = reinterpret_cast<const int64_t *>(d + 2 * sizeof(void *) +
                                              sizeof(int64_t));
  f.strides = f.sizes + m.rank;
  return f;
}

void memrefCopy(int64_t elementSize, UnrankedMemRef *src, UnrankedMemRef *dst) {
  int64_t rank = src->rank;
  MemRefFields s = fieldsOf(*src), d = fieldsOf(*dst);
  for (int64_t r = 0; r < rank; ++r)
    if (s.sizes[r] == 0)
      return;
  char *in = s.aligned + s.offset * elementSize;
  char *out = d.aligned + d.offset * elementSize;
  if (rank == 0) {
    std::memcpy(out, in, elementSize);
    return;
  }
  // An odometer over the indices; the innermost dimension is copied
  // element by element (its strides may not be 1).
  int64_t index[16] = {0};
  if (rank > 16)
    return;
  int64_t inOffset = 0, outOffset = 0;
  for (;;) {
    std::memcpy(out + outOffset * elementSize, in + inOffset * elementSize,
                elementSize);
    int64_t r = rank - 1;
    for (; r >= 0; --r) {
      ++index[r];
      inOffset += s.strides[r];
      outOffset += d.strides[r];
      if (index[r] < s.sizes[r])
        break;
      inOffset -= s.strides[r] * index[r];
      outOffset -= d.strides[r] * index[r];
      index[r] = 0;
    }
    if (r < 0)
      return;
  }
}

//===----------------------------------------------------------------------===//
// __truncsfbf2: LLVM lowers f32 -> bf16 truncation to this call on CPUs
// without AVX512_BF16 (compiler-rt has it; the libgcc of Debian 12 does
// not). Round to nearest even; NaNs stay quiet NaNs.
//===----------------------------------------------------------------------===//

__bf16 __truncsfbf2(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint16_t result;
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    result = static_cast<uint16_t>((bits >> 16) | 0x40u);
  else
    result =
        static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  __bf16 out;
  std::memcpy(&out, &result, sizeof(out));
  return out;
}

} // extern "C"
