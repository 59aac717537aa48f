/* Drives a model compiled with a symbolic batch through the raw C ABI: runs
 * it at several batches in one session with the heap allocator counted (no
 * call may allocate), checks each batch against batch-1 runs of the same
 * samples, reads the output shapes back, and checks the refusals.
 *
 * usage: symbolic_batch_driver MODEL.so   (one float32 input and output)
 * Exit status 0 when every check holds; each failure is printed. */
#include "abi_driver.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  void *so = open_model(argv[1]);
  if (!so)
    return 2;
  const kiln_model_info *info = ((info_fn)dlsym(so, "kiln_get_model_info"))();
  dims_fn get_dims = (dims_fn)dlsym(so, "kiln_get_dims_info");
  create_fn create = (create_fn)dlsym(so, "kiln_session_create");
  run_fn run = (run_fn)dlsym(so, "kiln_run");
  shape_fn out_shape = (shape_fn)dlsym(so, "kiln_get_output_shape");
  if (!get_dims || !out_shape || !get_dims()) {
    printf("FAILED: the model has no symbolic dimensions\n");
    return 1;
  }
  const kiln_dims_info *dims = get_dims();
  int64_t max = dims->symbols[0].max;
  const kiln_tensor_info *in = &info->inputs[0], *out = &info->outputs[0];
  size_t in_per = 4, out_per = 4; /* float32 elements of one sample */
  for (int32_t d = 1; d < in->rank; ++d)
    in_per *= (size_t)in->shape[d];
  for (int32_t d = 1; d < out->rank; ++d)
    out_per *= (size_t)out->shape[d];

  float *x = malloc(in_per * (size_t)max), *y = malloc(out_per * (size_t)max);
  float *one = malloc(out_per);
  for (size_t i = 0; i < in_per / 4 * (size_t)max; ++i)
    x[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
  kiln_session *s = NULL;
  kiln_status st = create(NULL, &s);
  CHECK(st.code == KILN_OK, "session: %s", st.message);
  if (st.code)
    return 1;
  int64_t batches[] = {1, 3, 8, 13, max};
  for (size_t k = 0; k < sizeof(batches) / sizeof(batches[0]); ++k) {
    int64_t n = batches[k];
    if (n > max)
      continue;
    int64_t in_shape[8], want[8];
    memcpy(in_shape, in->shape, sizeof(int64_t) * (size_t)in->rank);
    in_shape[0] = n;
    kiln_tensor ti = {x, in_per * (size_t)n, in->dtype, in->rank, in_shape};
    /* The output by its byte count alone (shape NULL). */
    kiln_tensor to = {y, out_per * (size_t)n, out->dtype, out->rank, NULL};
    run(s, &ti, 1, &to, 1); /* warm up (lazy binding, pools) */
    counting = 1;
    allocations = 0;
    st = run(s, &ti, 1, &to, 1);
    counting = 0;
    CHECK(st.code == KILN_OK, "batch %lld: %s", (long long)n, st.message);
    CHECK(allocations == 0, "batch %lld: kiln_run allocated %lu times",
          (long long)n, allocations);
    st = out_shape(s, 0, want, (size_t)out->rank);
    CHECK(st.code == KILN_OK && want[0] == n,
          "batch %lld: kiln_get_output_shape gave %lld", (long long)n,
          (long long)want[0]);
    /* Each sample as a batch of one gives the same numbers. */
    for (int64_t i = 0; i < n; ++i) {
      kiln_tensor xi = {x + (size_t)i * in_per / 4, in_per, in->dtype, 0, NULL};
      kiln_tensor yi = {one, out_per, out->dtype, 0, NULL};
      st = run(s, &xi, 1, &yi, 1);
      CHECK(st.code == KILN_OK, "sample %lld: %s", (long long)i, st.message);
      for (size_t j = 0; j < out_per / 4; ++j) {
        float a = one[j], b = y[(size_t)i * out_per / 4 + j];
        if (fabsf(a - b) > 1e-4f * (1.0f + fabsf(a))) {
          CHECK(0, "batch %lld sample %lld element %zu: %g, alone %g",
                (long long)n, (long long)i, j, b, a);
          break;
        }
      }
    }
  }
  /* Refusals: out of range, a disagreeing output, a partial sample. */
  int64_t big[8];
  memcpy(big, in->shape, sizeof(int64_t) * (size_t)in->rank);
  big[0] = max + 1;
  kiln_tensor tb = {x, in_per * (size_t)(max + 1), in->dtype, in->rank, big};
  kiln_tensor to = {y, out_per * (size_t)(max + 1), out->dtype, 0, NULL};
  st = run(s, &tb, 1, &to, 1);
  CHECK(st.code == KILN_INVALID_ARGUMENT && strstr(st.message, "outside the range"),
        "out of range: %s", st.message);
  kiln_tensor t2 = {x, in_per * 2, in->dtype, 0, NULL};
  kiln_tensor o3 = {y, out_per * 3, out->dtype, 0, NULL};
  st = run(s, &t2, 1, &o3, 1);
  CHECK(st.code == KILN_INVALID_ARGUMENT && strstr(st.message, "must agree"),
        "disagreeing batch: %s", st.message);
  kiln_tensor half = {x, in_per + 4, in->dtype, 0, NULL};
  st = run(s, &half, 1, &o3, 1);
  CHECK(st.code == KILN_INVALID_ARGUMENT && strstr(st.message, "whole number"),
        "partial sample: %s", st.message);
  printf("%s: %d failures\n", argv[1], failures);
  return failures ? 1 : 0;
}
