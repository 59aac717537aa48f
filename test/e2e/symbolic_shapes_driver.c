/* Drives the model of check_symbolic_shapes.py (input x [2, seq, 64]; outputs
 * y [2, seq, 32] row by row, z [2, 32] a mean over seq, att [2, seq, seq])
 * through the raw C ABI at run-time sizes: one session runs several lengths
 * with the heap allocator counted (no call may allocate), every output shape
 * is read back, the rows of y and the leading block of att at a length n
 * equal those of a run at the maximum whose input starts with the same rows,
 * and malformed calls are refused with a status, never a crash.
 *
 * usage: symbolic_shapes_driver MODEL.so
 * Exit status 0 when every check holds; each failure is printed. */
#include "abi_driver.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { kMax = 512, kIn = 64, kOut = 32 };
static create_fn create;
static run_fn run;
static shape_fn out_shape;

/* x at length n: the first n rows of each of the two batch entries of
 * `full` ([2, kMax, kIn]), packed. */
static void prefix(const float *full, int64_t n, float *x) {
  for (int b = 0; b < 2; ++b)
    memcpy(x + (size_t)b * n * kIn, full + (size_t)b * kMax * kIn,
           sizeof(float) * (size_t)n * kIn);
}

/* Runs at length n into y, z, att (each sized for kMax). */
static kiln_status run_at(kiln_session *s, const float *x, int64_t n, float *y,
                          float *z, float *att) {
  int64_t xs[3] = {2, n, kIn};
  kiln_tensor in = {(void *)x, sizeof(float) * 2 * (size_t)n * kIn,
                    KILN_DTYPE_FLOAT32, 3, xs};
  kiln_tensor out[3] = {
      {y, sizeof(float) * 2 * (size_t)n * kOut, KILN_DTYPE_FLOAT32, 0, NULL},
      {z, sizeof(float) * 2 * kOut, KILN_DTYPE_FLOAT32, 0, NULL},
      {att, sizeof(float) * 2 * (size_t)n * (size_t)n, KILN_DTYPE_FLOAT32, 0, NULL}};
  return run(s, &in, 1, out, 3);
}

static int close_to(float a, float b) {
  return fabsf(a - b) <= 1e-5f + 1e-5f * fabsf(b);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  void *so = open_model(argv[1]);
  if (!so)
    return 2;
  dims_fn get_dims = (dims_fn)dlsym(so, "kiln_get_dims_info");
  create = (create_fn)dlsym(so, "kiln_session_create");
  run = (run_fn)dlsym(so, "kiln_run");
  out_shape = (shape_fn)dlsym(so, "kiln_get_output_shape");
  destroy_fn destroy = (destroy_fn)dlsym(so, "kiln_session_destroy");
  const kiln_dims_info *dims = get_dims ? get_dims() : NULL;
  if (!dims || !(dims->flags & KILN_DIMS_RUNTIME_EXTENTS) ||
      dims->num_symbols != 1 || dims->symbols[0].max != kMax) {
    printf("FAILED: the model does not run 'seq' 1..%d at run-time sizes\n",
           kMax);
    return 1;
  }
  CHECK(dims->input_symbols[0][1] == 0 && dims->output_symbols[2][2] == 0,
        "the dims table does not mark seq on x and att");

  size_t xn = 2 * (size_t)kMax * kIn;
  float *full = malloc(sizeof(float) * xn), *x = malloc(sizeof(float) * xn);
  float *y0 = malloc(sizeof(float) * 2 * kMax * kOut), *z0 = malloc(sizeof(float) * 2 * kOut);
  float *a0 = malloc(sizeof(float) * 2 * kMax * kMax);
  float *y = malloc(sizeof(float) * 2 * kMax * kOut), *z = malloc(sizeof(float) * 2 * kOut);
  float *att = malloc(sizeof(float) * 2 * kMax * kMax);
  fill_random(full, xn, 7);
  kiln_session *s = new_session(create);
  if (!s)
    return 1;
  kiln_status st;
  int64_t shape[3];
  st = out_shape(s, 0, shape, 3);
  CHECK(st.code == KILN_INVALID_ARGUMENT && strstr(st.message, "no successful"),
        "an output shape before any run was not refused: %s", st.message);

  st = run_at(s, full, kMax, y0, z0, a0);
  CHECK(!st.code, "run at %d: %s", kMax, st.message);

  const int64_t lengths[] = {1, 37, 200, kMax, 3};
  counting = 1;
  for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]); ++k) {
    int64_t n = lengths[k];
    prefix(full, n, x);
    counting = 0; /* only kiln_run is counted */
    memset(y, 0xff, sizeof(float) * 2 * kMax * kOut);
    counting = 1;
    st = run_at(s, x, n, y, z, att);
    counting = 0;
    CHECK(!st.code, "run at %lld: %s", (long long)n, st.message);
    CHECK(!out_shape(s, 0, shape, 3).code && shape[0] == 2 && shape[1] == n &&
              shape[2] == kOut,
          "y at %lld has the shape %lldx%lldx%lld", (long long)n,
          (long long)shape[0], (long long)shape[1], (long long)shape[2]);
    CHECK(!out_shape(s, 2, shape, 3).code && shape[1] == n && shape[2] == n,
          "att at %lld has the shape %lldx%lldx%lld", (long long)n,
          (long long)shape[0], (long long)shape[1], (long long)shape[2]);
    int bad = 0;
    for (int b = 0; b < 2; ++b)
      for (int64_t i = 0; i < n; ++i) {
        for (int j = 0; j < kOut; ++j)
          bad += !close_to(y[(b * n + i) * kOut + j],
                           y0[(b * kMax + i) * kOut + j]);
        for (int64_t j = 0; j < n; ++j)
          bad += !close_to(att[(b * n + i) * n + j],
                           a0[((size_t)b * kMax + i) * kMax + j]);
      }
    CHECK(!bad, "at %lld, %d values of y or att differ from the run at %d",
          (long long)n, bad, kMax);
    counting = 1;
  }
  counting = 0;
  CHECK(allocations == 0, "kiln_run allocated %lu times", allocations);

  /* Malformed calls: each a status naming the problem. */
  int64_t xs[3] = {2, 5, kIn};
  kiln_tensor in = {x, sizeof(float) * 2 * 5 * kIn, KILN_DTYPE_FLOAT32, 3, xs};
  kiln_tensor out[3] = {
      {y, sizeof(float) * 2 * 5 * kOut, KILN_DTYPE_FLOAT32, 0, NULL},
      {z, sizeof(float) * 2 * kOut, KILN_DTYPE_FLOAT32, 0, NULL},
      {att, sizeof(float) * 2 * 25, KILN_DTYPE_FLOAT32, 0, NULL}};
  struct {
    const char *what, *expect;
  } cases[] = {{"no shape", "give its shape"},
               {"rank 2", "rank is 2"},
               {"seq 0", "outside the range 1..512"},
               {"seq 513", "outside the range 1..512"},
               {"a static axis of 63", "dimension 2 is 63"},
               {"a byte count of another shape", "its shape needs"},
               {"att too small", "at these input sizes it needs"},
               {"a float64 input", "dtype is"}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    kiln_tensor i2 = in, o2[3] = {out[0], out[1], out[2]};
    int64_t s2[3] = {2, 5, kIn};
    i2.shape = s2;
    switch (c) {
    case 0: i2.shape = NULL; break;
    case 1: i2.rank = 2; break;
    case 2: s2[1] = 0; i2.bytes = 0; break;
    case 3: s2[1] = 513; i2.bytes = sizeof(float) * 2 * 513 * kIn; break;
    case 4: s2[2] = 63; break;
    case 5: i2.bytes -= sizeof(float); break;
    case 6: o2[2].bytes -= sizeof(float); break;
    case 7: i2.dtype = KILN_DTYPE_FLOAT64; break;
    }
    st = run(s, &i2, 1, o2, 3);
    CHECK(st.code == KILN_INVALID_ARGUMENT && strstr(st.message, cases[c].expect),
          "%s: got status %d '%s', expected one with '%s'", cases[c].what,
          (int)st.code, st.message, cases[c].expect);
  }
  st = run(s, &in, 1, out, 3);
  CHECK(!st.code, "a good call after the refusals: %s", st.message);
  destroy(s);
  printf("%s: %d failures\n", argv[1], failures);
  return failures ? 1 : 0;
}
