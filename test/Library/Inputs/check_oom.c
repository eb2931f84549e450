/* Calls oom.mlir's reference lowering (prefix oom) with lengths whose
 * [Lq, Lk] scores cannot be allocated: 2^20 x 2^20 floats (4 TiB, more than
 * the system has), 2^24 x 2^24 (2^50 bytes, beyond the 2^47 any tensor may
 * have), and 1024 x 1024 under a limit of 1 MiB (oom_set_max_memory). Each
 * call must return ATTN_OPT_ERROR_MEMORY with the size in the message,
 * write nothing, and leave the library usable. */
#include "oom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int call(int64_t l, float *q, float *o) {
  int64_t shape[4] = {1, 1, l, 1};
  for (int64_t i = 0; i < l; ++i)
    o[i] = 42.0f;
  int status = oom_dense(q, shape, q, shape, q, shape, o, shape);
  int untouched = 1;
  for (int64_t i = 0; i < l; ++i)
    untouched &= o[i] == 42.0f;
  printf("L=%lld status=%d untouched=%d: %s\n", (long long)l, status,
         untouched, oom_last_error());
  return status;
}

int main(void) {
  int64_t big = (int64_t)1 << 24;
  float *q = calloc(big, sizeof(float)), *o = malloc(big * sizeof(float));
  if (!q || !o)
    return 2;
  call((int64_t)1 << 20, q, o);
  call(big, q, o);
  /* A limit of 1 MiB: the 4 MiB of scores for L = 1024 are refused. */
  oom_set_max_memory((int64_t)1 << 20);
  call(1024, q, o);
  /* A limit of 64 TiB: no check of the memory available, so malloc itself
   * fails (the test limits the address space) and the generated code's
   * NULL check reports it. */
  oom_set_max_memory((int64_t)1 << 46);
  call((int64_t)1 << 20, q, o);
  oom_set_max_memory(0);
  /* Still usable: 4 equal keys and values 0..3 average to 1.5. */
  for (int i = 0; i < 4; ++i)
    q[i] = (float)i;
  int64_t shape[4] = {1, 1, 4, 1};
  float zeros[4] = {0, 0, 0, 0};
  int status = oom_dense(zeros, shape, zeros, shape, q, shape, o, shape);
  printf("L=4 status=%d o=%.3f %.3f\n", status, o[0], o[3]);
  return 0;
}
