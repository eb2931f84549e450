/* Calls the kernels of kernels.mlir through the C ABI attn-compile made
 * (header kernels.h, prefix kl) and checks them against plain loops, the
 * error statuses and messages, and calls from 4 threads at once. Prints
 * one line per check; exits 1 on the first failure. */
#define _DEFAULT_SOURCE /* mmap, sysconf */
#include "kernels.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int failures = 0;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                              \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static uint64_t rngState = 12345;
static float uniform(void) {
  rngState = rngState * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((rngState >> 40) / 16777216.0) * 2.0f - 1.0f;
}
static float *randomTensor(int64_t n) {
  float *p = malloc(sizeof(float) * (n ? n : 1));
  for (int64_t i = 0; i < n; ++i)
    p[i] = uniform();
  return p;
}

/* A call that must fail with status `want` and a message holding
 * `needle`; prints "ok <label>: <message>". */
static void expectError(int status, int want, const char *needle,
                        const char *label) {
  CHECK(status == want && strstr(kl_last_error(), needle), "%s: %d %s", label,
        status, kl_last_error());
  printf("ok %s: %s\n", label, kl_last_error());
}

/* n random floats ending where an unmapped page begins (never freed). */
static float *guardedTensor(int64_t n) {
  long page = sysconf(_SC_PAGESIZE);
  size_t bytes = sizeof(float) * (size_t)n;
  size_t mapped = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
  char *base = mmap(NULL, mapped + (size_t)page, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(base != MAP_FAILED, "mmap");
  CHECK(mprotect(base + mapped, (size_t)page, PROT_NONE) == 0, "mprotect");
  float *p = (float *)(base + mapped - bytes);
  for (int64_t i = 0; i < n; ++i)
    p[i] = uniform();
  return p;
}

/* Softmax attention over keys [lo(i), hi(i)] (inclusive), grouped heads,
 * bottom-right aligned; rows with no key are zero. */
static void reference(const float *q, const float *k, const float *v,
                      float *o, int64_t b, int64_t hq, int64_t hkv,
                      int64_t lq, int64_t lk, int64_t d, int64_t dv,
                      int64_t before, int64_t lengthsOrZero) {
  float scale = 1.0f / sqrtf((float)d);
  double *s = malloc(sizeof(double) * (lk ? lk : 1));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t h = 0; h < hq; ++h) {
      int64_t g = h / (hq / hkv);
      for (int64_t i = 0; i < lq; ++i) {
        int64_t pos = i + lk - lq;
        int64_t lo = before < 0 ? 0 : pos - before, hi = pos;
        if (lo < 0)
          lo = 0;
        float *out = o + ((bi * hq + h) * lq + i) * dv;
        for (int64_t c = 0; c < dv; ++c)
          out[c] = 0;
        if (hi < lo || hi < 0)
          continue;
        double m = -INFINITY, sum = 0;
        for (int64_t j = lo; j <= hi; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += (double)q[((bi * hq + h) * lq + i) * d + c] *
                   k[((bi * hkv + g) * lk + j) * d + c];
          s[j] = dot * scale;
          if (s[j] > m)
            m = s[j];
        }
        for (int64_t j = lo; j <= hi; ++j)
          sum += exp(s[j] - m);
        for (int64_t j = lo; j <= hi; ++j) {
          double p = exp(s[j] - m) / sum;
          for (int64_t c = 0; c < dv; ++c)
            out[c] += (float)(p * v[((bi * hkv + g) * lk + j) * dv + c]);
        }
      }
    }
  (void)lengthsOrZero;
  free(s);
}

static void compare(const char *what, const float *out, const float *ref,
                    int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    double err = fabs((double)out[i] - ref[i]);
    CHECK(err <= 1e-4 + 1e-4 * fabs(ref[i]), "%s: element %lld is %g, expected %g",
          what, (long long)i, out[i], ref[i]);
    if (err > worst)
      worst = err;
  }
  printf("ok %s (%lld elements, max error %.2g)\n", what, (long long)n, worst);
}

/* One causal call with B, Lq = Lk = L. */
static int callCausal(int64_t b, int64_t l, const float *q, const float *k,
                      const float *v, float *o) {
  int64_t qs[4] = {b, 4, l, 16}, ks[4] = {b, 2, l, 16}, os[4] = {b, 4, l, 16};
  return kl_causal(q, qs, k, ks, v, ks, o, os);
}

struct Job {
  int64_t b, l;
  float *q, *k, *v, *serial, *threaded;
  int status;
};
static void *runJob(void *arg) {
  struct Job *job = arg;
  for (int r = 0; r < 5 && job->status == 0; ++r)
    job->status =
        callCausal(job->b, job->l, job->q, job->k, job->v, job->threaded);
  return NULL;
}

int main(void) {
  /* Causal, dynamic sizes, several shapes from one library. */
  int64_t shapes[][2] = {{1, 1}, {2, 37}, {1, 128}, {3, 5}};
  for (int s = 0; s < 4; ++s) {
    int64_t b = shapes[s][0], l = shapes[s][1];
    float *q = randomTensor(b * 4 * l * 16), *k = randomTensor(b * 2 * l * 16),
          *v = randomTensor(b * 2 * l * 16);
    float *o = malloc(sizeof(float) * b * 4 * l * 16),
          *r = malloc(sizeof(float) * b * 4 * l * 16);
    int status = callCausal(b, l, q, k, v, o);
    CHECK(status == ATTN_OPT_OK, "causal: status %d: %s", status,
          kl_last_error());
    CHECK(strcmp(kl_last_error(), "") == 0, "message after success: %s",
          kl_last_error());
    reference(q, k, v, r, b, 4, 2, l, l, 16, 16, -1, 0);
    char what[64];
    snprintf(what, sizeof what, "causal B=%lld L=%lld", (long long)b,
             (long long)l);
    compare(what, o, r, b * 4 * l * 16);
    free(q), free(k), free(v), free(o), free(r);
  }

  /* Static shapes. */
  {
    float *q = randomTensor(2 * 67 * 8), *k = randomTensor(2 * 67 * 8),
          *v = randomTensor(2 * 67 * 8);
    float o[2 * 67 * 8], r[2 * 67 * 8];
    int64_t shape[4] = {1, 2, 67, 8};
    int status = kl_window(q, shape, k, shape, v, shape, o, shape);
    CHECK(status == ATTN_OPT_OK, "window: %s", kl_last_error());
    reference(q, k, v, r, 1, 2, 2, 67, 67, 8, 8, 8, 0);
    compare("window", o, r, 2 * 67 * 8);

    /* A static size that differs. */
    int64_t wrong[4] = {1, 2, 66, 8};
    status = kl_window(q, wrong, k, shape, v, shape, o, shape);
    CHECK(status == ATTN_OPT_ERROR_SHAPE, "wrong static size: status %d",
          status);
    CHECK(strstr(kl_last_error(), "kl_window: dimension 2 of argument 0 is "
                                  "66, the function takes 67"),
          "message: %s", kl_last_error());
    printf("ok static size: %s\n", kl_last_error());
    /* A NULL shape, a NULL buffer. */
    status = kl_window(q, shape, k, NULL, v, shape, o, shape);
    CHECK(status == ATTN_OPT_ERROR_VALUE && strstr(kl_last_error(), "NULL"),
          "null shape: %d %s", status, kl_last_error());
    printf("ok null shape: %s\n", kl_last_error());
    status = kl_window(q, shape, k, shape, v, shape, NULL, shape);
    CHECK(status == ATTN_OPT_ERROR_VALUE && strstr(kl_last_error(), "NULL"),
          "null data: %d %s", status, kl_last_error());
    printf("ok null data: %s\n", kl_last_error());
    free(q), free(k), free(v);
  }

  /* Dynamic sizes that disagree; a result buffer of the wrong size; a
   * negative size. */
  {
    float *q = randomTensor(4 * 9 * 16), *k = randomTensor(2 * 9 * 16),
          *v = randomTensor(2 * 9 * 16), *o = randomTensor(4 * 9 * 16);
    int64_t qs[4] = {1, 4, 9, 16}, ks[4] = {1, 2, 9, 16},
            vs[4] = {1, 2, 8, 16}, os[4] = {1, 4, 9, 16};
    expectError(kl_causal(q, qs, k, ks, v, vs, o, os), ATTN_OPT_ERROR_SHAPE,
                "dimension 2 of value (8) differs", "mismatch");
    int64_t small[4] = {1, 4, 8, 16};
    expectError(kl_causal(q, qs, k, ks, v, ks, o, small), ATTN_OPT_ERROR_SHAPE,
                "dimension 2 of the buffer of result 0 is 8, the result has 9",
                "result buffer");
    int64_t negative[4] = {1, 4, -3, 16};
    expectError(kl_causal(q, negative, k, ks, v, ks, o, os),
                ATTN_OPT_ERROR_SHAPE, "negative", "negative");
    free(q), free(k), free(v), free(o);
  }

  /* Varlen lengths out of range: a value error. */
  {
    float *q = randomTensor(2 * 2 * 6 * 8), *o = randomTensor(2 * 2 * 6 * 8);
    int64_t s[4] = {2, 2, 6, 8}, ls[1] = {2};
    int32_t lengths[2] = {3, 7};
    expectError(kl_padded(q, s, q, s, q, s, lengths, ls, o, s),
                ATTN_OPT_ERROR_VALUE, "query_lengths[1] = 7 is outside [0, 6]",
                "lengths");
    lengths[1] = 6;
    int status = kl_padded(q, s, q, s, q, s, lengths, ls, o, s);
    CHECK(status == ATTN_OPT_OK, "lengths in range: %s", kl_last_error());
    free(q), free(o);
  }

  /* The run-time contract of a paged cache: a page table entry outside
   * the pools, key and value pools of different page counts, a length
   * beyond the table's pages. The pools end at an unmapped page, so a
   * read past them would crash instead of passing. */
  {
    float *q = randomTensor(2 * 4 * 16);
    float o[2 * 4 * 8];
    int64_t qs[4] = {2, 4, 1, 16}, ks[4] = {5, 2, 4, 16}, vs[4] = {5, 2, 4, 8},
            os[4] = {2, 4, 1, 8}, ps[2] = {2, 3}, ls[1] = {2};
    float *k = guardedTensor(5 * 2 * 4 * 16), *v = guardedTensor(5 * 2 * 4 * 8);
    int32_t pt[6] = {0, 3, -9, 1, 2, 4}, lengths[2] = {5, 12};
    int status = kl_paged(q, qs, k, ks, v, vs, pt, ps, lengths, ls, o, os);
    CHECK(status == ATTN_OPT_OK, "paged: %s", kl_last_error());
    pt[5] = 5;
    expectError(kl_paged(q, qs, k, ks, v, vs, pt, ps, lengths, ls, o, os),
                ATTN_OPT_ERROR_VALUE, "page_table[5] = 5 is outside [0, 5)",
                "page out of range");
    pt[5] = 4;
    int64_t fewer[4] = {4, 2, 4, 8};
    expectError(kl_paged(q, qs, k, ks, v, fewer, pt, ps, lengths, ls, o, os),
                ATTN_OPT_ERROR_SHAPE, "dimension 0 of value (4) differs",
                "pools");
    lengths[1] = 13;
    expectError(kl_paged(q, qs, k, ks, v, vs, pt, ps, lengths, ls, o, os),
                ATTN_OPT_ERROR_VALUE, "key_lengths[1] = 13 is outside [0, 12]",
                "paged length");
    free(q);
  }

  /* Offsets of packed sequences: decreasing, beyond the rows. */
  {
    float *q = randomTensor(4 * 8 * 16), *k = randomTensor(2 * 8 * 16),
          *v = randomTensor(2 * 8 * 8), *o = randomTensor(4 * 8 * 8);
    int64_t qs[4] = {1, 4, 8, 16}, ks[4] = {1, 2, 8, 16}, vs[4] = {1, 2, 8, 8},
            os[4] = {1, 4, 8, 8}, cs[1] = {3};
    int32_t good[3] = {0, 5, 8}, down[3] = {0, 5, 3}, beyond[3] = {0, 5, 20};
    int status = kl_packed(q, qs, k, ks, v, vs, good, cs, good, cs, o, os);
    CHECK(status == ATTN_OPT_OK, "packed: %s", kl_last_error());
    expectError(kl_packed(q, qs, k, ks, v, vs, down, cs, good, cs, o, os),
                ATTN_OPT_ERROR_VALUE, "query_offsets[2] = 3",
                "decreasing offsets");
    expectError(kl_packed(q, qs, k, ks, v, vs, good, cs, beyond, cs, o, os),
                ATTN_OPT_ERROR_VALUE, "key_offsets[2] = 20", "offsets beyond");
    free(q), free(k), free(v), free(o);
  }

  /* A strided copy (memrefCopy in the run-time support). */
  {
    float x[24], y[6];
    for (int i = 0; i < 24; ++i)
      x[i] = (float)i;
    int64_t xs[2] = {4, 6}, ys[2] = {2, 3};
    CHECK(kl_strided(x, xs, y, ys) == ATTN_OPT_OK, "strided: %s",
          kl_last_error());
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 3; ++c)
        CHECK(y[r * 3 + c] == x[(1 + 2 * r) * 6 + 2 * c],
              "strided[%d][%d] = %g", r, c, y[r * 3 + c]);
    printf("ok strided copy\n");
  }

  /* Threads: the setting, then 4 threads at once on different inputs give
   * the serial results. */
  kl_set_num_threads(1);
  CHECK(kl_num_threads() == 1, "num_threads %d", kl_num_threads());
  kl_set_num_threads(0);
  CHECK(kl_num_threads() >= 1, "num_threads %d", kl_num_threads());
  struct Job jobs[4];
  pthread_t threads[4];
  for (int t = 0; t < 4; ++t) {
    struct Job *j = &jobs[t];
    j->b = 1 + t % 2;
    j->l = 40 + 23 * t;
    int64_t nq = j->b * 4 * j->l * 16, nk = j->b * 2 * j->l * 16;
    j->q = randomTensor(nq), j->k = randomTensor(nk), j->v = randomTensor(nk);
    j->serial = malloc(sizeof(float) * nq);
    j->threaded = malloc(sizeof(float) * nq);
    j->status = callCausal(j->b, j->l, j->q, j->k, j->v, j->serial);
    CHECK(j->status == 0, "serial: %s", kl_last_error());
  }
  for (int t = 0; t < 4; ++t)
    pthread_create(&threads[t], NULL, runJob, &jobs[t]);
  for (int t = 0; t < 4; ++t)
    pthread_join(threads[t], NULL);
  for (int t = 0; t < 4; ++t) {
    struct Job *j = &jobs[t];
    CHECK(j->status == 0, "thread %d: status %d", t, j->status);
    CHECK(memcmp(j->serial, j->threaded,
                 sizeof(float) * j->b * 4 * j->l * 16) == 0,
          "thread %d differs from the serial call", t);
  }
  printf("ok 4 threads at once\n");
  /* The message is per thread: a failure on another thread leaves this
   * thread's message alone. */
  printf("PASS\n");
  return failures;
}
