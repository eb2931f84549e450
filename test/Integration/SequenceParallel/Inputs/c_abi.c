/* c-abi.test: the C ABI of a sequence-parallel kernel library on a
 * communicator of the caller's. The world's ranks split into two groups
 * (even and odd world ranks, ordered backwards), each running its own
 * attention over its own sequence with uneven chunks; every rank checks its
 * rows against the whole-sequence entry of the same library, and a group
 * whose ranks pass chunk sizes that do not add up gets an error status on
 * every rank (no hang). */
#include "sp.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HQ = 4, HKV = 2, D = 16 };

static float value(int64_t seed, int64_t i) {
  uint64_t x = (uint64_t)(seed * 1000003 + i) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return (float)((x >> 11) % 2001) / 1000.0f - 1.0f;
}

/* Rows [first, first + n) of a [1, H, L, D] tensor of `seed`. */
static float *rows(int64_t seed, int64_t h, int64_t length, int64_t first,
                   int64_t n) {
  float *x = malloc(sizeof(float) * (size_t)(h * (n ? n : 1) * D));
  for (int64_t a = 0; a < h; ++a)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t d = 0; d < D; ++d)
        x[(a * n + r) * D + d] = value(seed, (a * length + first + r) * D + d);
  return x;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int world, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int color = world % 2;
  MPI_Comm group;
  MPI_Comm_split(MPI_COMM_WORLD, color, -world, &group);
  int rank, ranks;
  MPI_Comm_rank(group, &rank);
  MPI_Comm_size(group, &ranks);

  /* Group 0: 131 rows, group 1: 77; rank r's chunk has 2r + 3 + extra rows
     (the last rank takes what is left). */
  int64_t length = color ? 77 : 131, first = 0, n = 0;
  for (int r = 0; r <= rank; ++r) {
    first += n;
    n = r == ranks - 1 ? length - first : 2 * r + 3 + color;
  }
  int64_t seed = 17 + color;
  float *q = rows(seed, HQ, length, first, n);
  float *k = rows(seed + 100, HKV, length, first, n);
  float *v = rows(seed + 200, HKV, length, first, n);
  float *o = malloc(sizeof(float) * (size_t)(HQ * n * D + 1));
  int64_t qs[4] = {1, HQ, n, D}, ks[4] = {1, HKV, n, D};
  sp_set_num_threads(1);
  sp_set_communicator((int64_t)group);
  int32_t status = sp_sharded(q, qs, k, ks, v, ks, o, qs);
  if (status != ATTN_OPT_OK) {
    printf("rank %d: error %d: %s\n", world, status, sp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  /* The whole sequence on this process: the reference of these rows. */
  float *fq = rows(seed, HQ, length, 0, length);
  float *fk = rows(seed + 100, HKV, length, 0, length);
  float *fv = rows(seed + 200, HKV, length, 0, length);
  float *fo = malloc(sizeof(float) * (size_t)(HQ * length * D));
  int64_t fqs[4] = {1, HQ, length, D}, fks[4] = {1, HKV, length, D};
  if (sp_whole(fq, fqs, fk, fks, fv, fks, fo, fqs) != ATTN_OPT_OK) {
    printf("rank %d: whole: %s\n", world, sp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double err = 0;
  for (int64_t a = 0; a < HQ; ++a)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t d = 0; d < D; ++d)
        err = fmax(err, fabs(o[(a * n + r) * D + d] -
                             fo[(a * length + first + r) * D + d]));
  double worst;
  MPI_Allreduce(&err, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  /* Keys one row short on the group's last rank: every rank of the group
     reports the disagreement. */
  int64_t short_ks[4] = {1, HKV, rank == ranks - 1 ? n - 1 : n, D};
  int32_t bad = sp_sharded(q, qs, k, short_ks, v, short_ks, o, qs);
  int failed = bad == ATTN_OPT_ERROR_SHAPE, all;
  MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (world == 0)
    printf("ranks %d, max error %.3g, bad sizes %s: %s\n", size, worst,
           all ? "refused on every rank" : "NOT refused",
           sp_last_error());
  if (world == 0 && worst < 1e-4 && all)
    printf("PASS\n");
  MPI_Comm_free(&group);
  MPI_Finalize();
  return 0;
}
